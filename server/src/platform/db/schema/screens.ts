/** Screens: locations, screens and their credentials, pairing, groups, commands, history, noise. */

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
  /**
   * The screen's stable number (migration 0480), which the noise tables are keyed by: given on
   * insert by a trigger (leave it out), never changed.
   */
  num?: number;
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

/** One ten-second noise bucket (migration 0480: keyed by the screen's number and the start in epoch ms). */
export interface NoiseBucketsTable {
  screen_num: number;
  started_ms: number;
  average_level: number;
  peak_level: number;
  monitored_ms: number;
  warning_ms: number;
  loud_ms: number;
  trigger_count: number | null;
  received_ms: number;
}
