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

export interface JobsTable {
  id: string;
  kind: string;
  /** JSON. */
  payload: string;
  state: 'queued' | 'running' | 'done' | 'failed';
  attempts: number;
  max_attempts: number;
  run_after: string;
  /** 0..1 while running. */
  progress: number | null;
  last_error: string | null;
  locked_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A stored media file, content-addressed: media/<aa>/<bb>/<sha256>. */
export interface MediaFilesTable {
  sha256: string;
  size_bytes: number;
  content_type: string;
  created_at: string;
}

export interface ContentFoldersTable {
  id: string;
  name: string;
  parent_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface ContentCollectionsTable {
  id: string;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export interface ContentTagsTable {
  id: string;
  name: string;
  color: string | null;
  created_at: string;
}

/** A partial tus upload; its bytes are uploads/<id>.part. */
export interface UploadsTable {
  id: string;
  length_bytes: number;
  offset_bytes: number;
  /** JSON of the decoded Upload-Metadata. */
  metadata: string;
  filename: string | null;
  filetype: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  expires_at: string;
}

export type AssetKind = 'image' | 'video' | 'audio' | 'pdf' | 'website' | 'widget';
export type AssetState = 'uploading' | 'processing' | 'ready' | 'failed' | 'archived';

export interface AssetsTable {
  id: string;
  kind: AssetKind;
  state: AssetState;
  /** The state an archived asset returns to on restore. */
  state_before_archive: AssetState | null;
  name: string;
  /** The original file (null for websites and widgets). */
  sha256: string | null;
  size_bytes: number | null;
  content_type: string | null;
  original_filename: string | null;
  width: number | null;
  height: number | null;
  duration_ms: number | null;
  page_count: number | null;
  folder_id: string | null;
  failure_reason: string | null;
  /** 0..1 while processing. */
  progress: number | null;
  /** JSON: codecs, rotation, animated, ... */
  metadata: string;
  /** JSON website settings (kind 'website'). */
  website: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

export type VariantPurpose = 'player' | 'thumbnail' | 'poster' | 'preview';

export interface AssetVariantsTable {
  id: string;
  asset_id: string;
  purpose: VariantPurpose;
  content_type: string;
  width: number | null;
  height: number | null;
  /** PDF page number (1-based) of a page image. */
  page: number | null;
  size_bytes: number;
  sha256: string;
  created_at: string;
}

export interface AssetTagsTable {
  asset_id: string;
  tag_id: string;
}

export interface AssetCollectionsTable {
  asset_id: string;
  collection_id: string;
  added_at: string;
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
  jobs: JobsTable;
  media_files: MediaFilesTable;
  content_folders: ContentFoldersTable;
  content_collections: ContentCollectionsTable;
  content_tags: ContentTagsTable;
  uploads: UploadsTable;
  assets: AssetsTable;
  asset_variants: AssetVariantsTable;
  asset_tags: AssetTagsTable;
  asset_collections: AssetCollectionsTable;
  playlists: PlaylistsTable;
  playlist_items: PlaylistItemsTable;
  layouts: LayoutsTable;
  layout_revisions: LayoutRevisionsTable;
  schedules: SchedulesTable;
  schedule_targets: ScheduleTargetsTable;
  playlist_assignments: PlaylistAssignmentsTable;
  manifest_deps: ManifestDepsTable;
}
