/** Accounts: users, sessions, throttling, second factors, tokens, password links. */

export interface UsersTable {
  id: string;
  email: string;
  display_name: string;
  role: 'owner' | 'admin' | 'publisher' | 'editor' | 'viewer';
  password_hash: string | null;
  disabled_at: string | null;
  /** TOTP seed sealed with ServerSecrets (AES-GCM), once confirmed. */
  totp_secret_sealed: string | null;
  /** A seed being enrolled, until confirmed with a code. */
  totp_pending_sealed: string | null;
  totp_enabled: number;
  /** Last accepted TOTP time step: a code works once. */
  totp_last_step: number | null;
  /** JSON console preferences. */
  preferences: string;
  created_at: string;
  updated_at: string;
}

export interface SessionsTable {
  /** SHA-256 of the cookie's session key: the key itself is never stored. */
  id: string;
  user_id: string | null;
  data: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
}

export interface AuthThrottleTable {
  key: string;
  failures: number;
  window_started_at: string;
  locks: number;
  locked_until: string | null;
}

export interface RecoveryCodesTable {
  id: string;
  user_id: string;
  code_hash: string;
  used_at: string | null;
  created_at: string;
}

export interface PasskeysTable {
  id: string;
  user_id: string;
  /** base64url WebAuthn credential id. */
  credential_id: string;
  public_key: Buffer;
  counter: number;
  /** JSON array of transports. */
  transports: string;
  device_type: string | null;
  backed_up: number;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export interface IntegrationTokensTable {
  id: string;
  public_id: string;
  /** SHA-256 hex of the secret part. */
  secret_hash: string;
  name: string;
  /** JSON array of capabilities. */
  capabilities: string;
  created_by: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** JSON array of the manual tables (data source ids) a manual_table_rows:write token may write. */
  data_source_ids: string;
}

/** One-time set-password links (migration 0250): only the token's SHA-256 is stored. */
export interface PasswordLinksTable {
  id: string;
  user_id: string;
  token_hash: string;
  created_by: string | null;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  /** 1 when a newer link for the same user ended this one (used_at is then when). */
  superseded: number;
}
