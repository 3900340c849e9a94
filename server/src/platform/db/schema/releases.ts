/** Player releases and update deployments (migration 0460; docs/player-releases.md, docs/update-deployments.md). */

export type ReleaseFamily = 'desktop-linux' | 'android' | 'web' | 'edge';

export interface PlayerReleasesTable {
  id: string;
  family: ReleaseFamily;
  /** semver, as `semver.clean` gives it */
  version: string;
  channel: 'stable' | 'beta';
  notes: string;
  source: 'upload' | 'release-source';
  /** The release source's id for it; null for uploads. */
  source_release_id: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface PlayerReleaseArtifactsTable {
  release_id: string;
  /** As the heartbeat reports it (`x86_64`, `aarch64`); `any` for the web family and an APK without native code. */
  architecture: string;
  kind: 'apk' | 'tarball' | 'deb' | 'web';
  file_name: string;
  size_bytes: number;
  sha256: string;
  /** base64 Ed25519 signature over the 32-byte SHA-256 digest; null when the source does not sign. */
  signature: string | null;
  /** Where the release source serves it; null for uploads. */
  remote_url: string | null;
  /** Relative to the data directory, once the verified bytes are here. */
  stored_path: string | null;
  cache_state: 'remote' | 'downloading' | 'cached' | 'failed';
  cache_bytes: number;
  cache_error: string | null;
  updated_at: string;
}

export interface ReleaseSourceTable {
  /** Always 1: one release source. */
  id: number;
  url: string;
  state: 'pending' | 'connected' | 'denied' | 'expired' | 'failed';
  device_code_sealed: string | null;
  user_code: string | null;
  verification_uri: string | null;
  verification_uri_complete: string | null;
  interval_sec: number | null;
  expires_at: string | null;
  next_poll_at: string | null;
  token_sealed: string | null;
  error: string | null;
  connected_at: string | null;
  checked_at: string | null;
  updated_at: string;
}

export interface UpdateDeploymentsTable {
  id: string;
  release_id: string;
  state: 'running' | 'paused' | 'cancelled' | 'completed';
  /** JSON: the targets as sent (screens/targets.ts TargetsInput). */
  targets: string;
  /** JSON: `[{percent} | {screens}]`, the canary first. */
  waves: string;
  /** Failed screens that pause the rollout. */
  failure_threshold: number;
  wave_wait_sec: number;
  confirm_timeout_sec: number;
  /** JSON `{start: 'HH:MM', end: 'HH:MM'}` in each screen's local time, or null for any time. */
  maintenance_window: string | null;
  current_wave: number;
  wave_started_at: string | null;
  paused_reason: string | null;
  revision: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export type DeploymentScreenState = 'skipped' | 'pending' | 'offered' | 'downloading' | 'downloaded' | 'installing' | 'installed' | 'failed' | 'cancelled';

export interface UpdateDeploymentScreensTable {
  deployment_id: string;
  screen_id: string;
  /** 0 = the canary; null when skipped. */
  wave: number | null;
  state: DeploymentScreenState;
  skip_reason: string | null;
  /** 0..1 while downloading. */
  progress: number | null;
  error: string | null;
  from_version: string | null;
  installed_version: string | null;
  offered_at: string | null;
  confirmed_at: string | null;
  updated_at: string;
}
