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

/** The server's settings document (one row, id 1). */
export interface SettingsTable {
  id: number;
  /** JSON of the Settings object (modules/system/settings.ts). */
  data: string;
  revision: number;
  updated_at: string;
  updated_by: string | null;
}

export interface LocationsTable {
  id: string;
  name: string;
  address: string | null;
  /** IANA time zone: schedules on this location's screens mean local time here. */
  time_zone: string;
  latitude: number | null;
  longitude: number | null;
  notes: string | null;
  created_at: string;
  updated_at: string;
}

export interface ScreensTable {
  id: string;
  name: string;
  location_id: string | null;
  notes: string | null;
  orientation: string;
  /** JSON array of strings. */
  tags: string;
  disabled_at: string | null;
  revoked_at: string | null;
  player_family: string | null;
  player_architecture: string | null;
  player_version: string | null;
  last_heartbeat_at: string | null;
  last_liveness_at: string | null;
  last_seen_at: string | null;
  last_seen_ms: number | null;
  /** JSON: the last heartbeat's status document (noise history left out). */
  last_status: string | null;
  last_address: string | null;
  /** The status last recorded in the history (transitions are logged by a sweep). */
  known_status: string;
  /** The heartbeat interval last told to the player; online/stale thresholds derive from it. */
  expected_interval_sec: number;
  /** Bumped whenever what the screen should play may have changed (revision.ts). */
  manifest_revision: number;
  /** JSON policy document, or null. */
  policy: string | null;
  /** JSON power-assist schedule, or null. */
  power_assist: string | null;
  /** 'on' | 'off': what power assist last asked for. */
  power_assist_state: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeviceCredentialsTable {
  id: string;
  screen_id: string;
  public_id: string;
  /** SHA-256 hex of the secret part. */
  secret_hash: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface PairingSessionsTable {
  id: string;
  code: string;
  poll_secret_hash: string;
  status: 'pending' | 'approved' | 'rejected' | 'enrolled';
  player_family: string | null;
  player_version: string | null;
  device_name: string | null;
  address: string | null;
  screen_id: string | null;
  replaces_screen: number;
  enrollment_token_hash: string | null;
  enrollment_expires_at: string | null;
  decided_by: string | null;
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  enrolled_at: string | null;
}

export interface ScreenGroupsTable {
  id: string;
  name: string;
  description: string | null;
  policy: string | null;
  /** JSON span (video wall) configuration, or null. */
  span: string | null;
  created_at: string;
  updated_at: string;
}

export interface ScreenGroupMembersTable {
  group_id: string;
  screen_id: string;
  added_at: string;
}

export interface ScreenCommandsTable {
  id: string;
  screen_id: string;
  type: string;
  params: string;
  state: 'queued' | 'delivered' | 'acknowledged' | 'succeeded' | 'failed' | 'expired';
  created_by: string | null;
  source: string;
  created_at: string;
  expires_at: string;
  delivered_at: string | null;
  acknowledged_at: string | null;
  completed_at: string | null;
  result: string | null;
  screenshot_sha256: string | null;
  screenshot_type: string | null;
}

export interface ScreenHistoryTable {
  id: string;
  screen_id: string;
  at: string;
  at_ms: number;
  kind: string;
  detail: string;
}

export interface NoiseBucketsTable {
  screen_id: string;
  started_at: string;
  started_ms: number;
  average_level: number;
  peak_level: number;
  monitored_ms: number;
  warning_ms: number;
  loud_ms: number;
  trigger_count: number | null;
  received_at: string;
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
  /** Bumped by every change; `If-Match` names it (412 when stale). */
  revision: number;
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

/** A data source (issue 17): a provider and its config; secrets inside `config` are sealed. */
export interface DataSourcesTable {
  id: string;
  name: string;
  provider: string;
  /** JSON config; every secret value (the provider's secretPaths) is {"$sealed": "v1...."}. */
  config: string;
  /** JSON [{name, type}]: the manual table's declared columns, or the last snapshot's. */
  columns: string;
  /** null for providers that do not refresh (manual table). */
  refresh_interval_sec: number | null;
  time_zone: string;
  /** Bumped on every change people make (If-Match); a refresh does not bump it. */
  revision: number;
  created_by: string | null;
  updated_by: string | null;
  created_at: string;
  updated_at: string;
}

/** The current data of a source: what outputs are built from. */
export interface DataSourceSnapshotsTable {
  source_id: string;
  /** Bumped when the data changes (a fetch that changes nothing keeps it). */
  revision: number;
  /** sha256 of the canonical JSON of {columns, rows}. */
  sha256: string;
  columns: string;
  rows: string;
  row_count: number;
  size_bytes: number;
  warnings: string;
  fetched_at: string;
}

/** What the last successful fetch left for a conditional GET, and the refresh schedule. */
export interface DataSourceFetchStateTable {
  source_id: string;
  etag: string | null;
  last_modified: string | null;
  body_sha256: string | null;
  /** null: not scheduled (manual tables). */
  next_fetch_at: string | null;
  consecutive_failures: number;
  last_attempt_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  last_error_code: string | null;
}

/** The last fetch attempts of a source (bounded per source), for diagnostics. */
export interface DataSourceAttemptsTable {
  /** UUIDv7: sorts by time. */
  id: string;
  source_id: string;
  at: string;
  url: string;
  outcome: 'data' | 'unchanged' | 'failed';
  status: number | null;
  bytes: number;
  latency_ms: number;
  error: string | null;
  error_code: string | null;
}

export type DataSourceAccessLevel = 'viewer' | 'editor' | 'owner';

export interface DataSourceGrantsTable {
  source_id: string;
  user_id: string;
  level: DataSourceAccessLevel;
  granted_by: string | null;
  created_at: string;
  updated_at: string;
}

/** A manual table's rows, in order; `values` is a JSON object of cells. */
export interface DataSourceRowsTable {
  id: string;
  source_id: string;
  position: number;
  values: string;
  created_at: string;
  updated_at: string;
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
  password_links: PasswordLinksTable;
  settings: SettingsTable;
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
  locations: LocationsTable;
  screens: ScreensTable;
  device_credentials: DeviceCredentialsTable;
  pairing_sessions: PairingSessionsTable;
  screen_groups: ScreenGroupsTable;
  screen_group_members: ScreenGroupMembersTable;
  screen_commands: ScreenCommandsTable;
  screen_history: ScreenHistoryTable;
  noise_buckets: NoiseBucketsTable;
  playlists: PlaylistsTable;
  playlist_items: PlaylistItemsTable;
  layouts: LayoutsTable;
  layout_revisions: LayoutRevisionsTable;
  schedules: SchedulesTable;
  schedule_targets: ScheduleTargetsTable;
  playlist_assignments: PlaylistAssignmentsTable;
  manifest_deps: ManifestDepsTable;
  data_sources: DataSourcesTable;
  data_source_snapshots: DataSourceSnapshotsTable;
  data_source_fetch_state: DataSourceFetchStateTable;
  data_source_attempts: DataSourceAttemptsTable;
  data_source_grants: DataSourceGrantsTable;
  data_source_rows: DataSourceRowsTable;
}
