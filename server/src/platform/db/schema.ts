/**
 * Kysely's view of the database. Each migration that adds or changes a table updates
 * the matching interface here. Times are stored as ISO-8601 UTC text with milliseconds.
 */
export interface SchemaMigrationsTable {
  version: number;
  name: string;
  applied_at: string;
}

/** Small key/value facts about this installation (instance id, ...). */
export interface MetaTable {
  key: string;
  value: string;
}

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
}

/** The server's settings document (one row, id 1). */
export interface SettingsTable {
  id: number;
  /** JSON of the Settings object (modules/system/settings.ts). */
  data: string;
  revision: number;
  updated_at: string;
  updated_by: string | null;
}

/** Content (issue 6): playlists, layouts, schedules, assignments, manifest dependencies. */
export interface PlaylistsTable {
  id: string;
  name: string;
  description: string;
  /** Bumped on every change of the playlist or its items: If-Match compares it. */
  revision: number;
  /** JSON TagRule or null. */
  tag_rule: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface PlaylistItemsTable {
  id: string;
  playlist_id: string;
  position: number;
  asset_id: string | null;
  widget_id: string | null;
  child_playlist_id: string | null;
  duration_ms: number | null;
  transition_type: string;
  transition_ms: number;
  valid_from: string | null;
  valid_until: string | null;
  /** JSON array of {days, from, to}. */
  dayparts: string;
  enabled: number;
  created_at: string;
  updated_at: string;
}

export interface LayoutsTable {
  id: string;
  name: string;
  description: string;
  revision: number;
  /** JSON LayoutContent being edited. */
  draft: string;
  published_revision_id: string | null;
  published_at: string | null;
  preview_sha256: string | null;
  preview_content_type: string | null;
  preview_updated_at: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface LayoutRevisionsTable {
  id: string;
  layout_id: string;
  number: number;
  /** JSON LayoutContent, immutable. */
  content: string;
  note: string;
  created_by: string | null;
  created_at: string;
}

export interface SchedulesTable {
  id: string;
  name: string;
  content_type: 'playlist' | 'layout' | 'campaign';
  playlist_id: string | null;
  layout_id: string | null;
  campaign_id: string | null;
  starts_at: string;
  ends_at: string | null;
  rrule: string | null;
  time_zone: string;
  follow_screen_zone: number;
  priority: number;
  enabled: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface ScheduleTargetsTable {
  schedule_id: string;
  target_type: 'screen' | 'group' | 'location';
  target_id: string;
}

export interface PlaylistAssignmentsTable {
  target_type: 'screen' | 'group';
  target_id: string;
  playlist_id: string;
  updated_by: string | null;
  updated_at: string;
}

export interface ManifestDepsTable {
  screen_id: string;
  kind: string;
  ref_id: string;
}

export interface Database {
  schema_migrations: SchemaMigrationsTable;
  meta: MetaTable;
  users: UsersTable;
  sessions: SessionsTable;
  auth_throttle: AuthThrottleTable;
  recovery_codes: RecoveryCodesTable;
  passkeys: PasskeysTable;
  integration_tokens: IntegrationTokensTable;
  settings: SettingsTable;
  playlists: PlaylistsTable;
  playlist_items: PlaylistItemsTable;
  layouts: LayoutsTable;
  layout_revisions: LayoutRevisionsTable;
  schedules: SchedulesTable;
  schedule_targets: ScheduleTargetsTable;
  playlist_assignments: PlaylistAssignmentsTable;
  manifest_deps: ManifestDepsTable;
}
