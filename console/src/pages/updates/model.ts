import { ApiError, api } from '../../api';

/**
 * Player releases and update deployments as the console reads them (issue 23; the shapes of
 * /work/briefs/release-contract.md, docs/player-releases.md and docs/update-deployments.md).
 */

export type Family = 'desktop-linux' | 'android' | 'web' | 'edge';
export type Channel = 'stable' | 'beta';
export type CacheState = 'remote' | 'downloading' | 'cached' | 'failed';

export interface ReleaseArtifact {
  architecture: string;
  kind: 'apk' | 'tarball' | 'deb' | 'web';
  fileName: string;
  sizeBytes: number;
  sha256: string;
  signed: boolean;
  cacheState: CacheState;
  cachedBytes: number;
  error: string | null;
}

export interface Release {
  id: string;
  family: Family;
  version: string;
  channel: Channel;
  notes: string;
  source: 'upload' | 'release-source';
  sourceReleaseId: string | null;
  cached: boolean;
  architectures: ReleaseArtifact[];
  createdAt: string;
  updatedAt: string;
}

export type SourceState = 'pending' | 'connected' | 'denied' | 'expired' | 'failed';

export interface ReleaseSource {
  url: string;
  state: SourceState;
  userCode: string | null;
  verificationUri: string | null;
  verificationUriComplete: string | null;
  expiresAt: string | null;
  intervalSec: number | null;
  connectedAt: string | null;
  checkedAt: string | null;
  error: string | null;
}

export interface ReleaseList {
  releases: Release[];
  releaseSource: ReleaseSource | null;
}

export interface CheckResult {
  checkedAt: string;
  releases: Release[];
  newer: { family: Family; architecture: string; currentVersion: string | null; latestVersion: string }[];
}

export type WaveSpec = { screens: number } | { percent: number };

export interface Wave {
  index: number;
  screens?: number;
  percent?: number;
  size: number;
  state: 'pending' | 'active' | 'done';
  startedAt: string | null;
  completedAt: string | null;
}

export type ScreenState = 'skipped' | 'pending' | 'offered' | 'downloading' | 'downloaded' | 'installing' | 'installed' | 'failed' | 'cancelled';

export interface DeploymentScreen {
  screenId: string;
  name: string;
  wave: number | null;
  state: ScreenState;
  progress: number | null;
  error: string | null;
  skipReason: string | null;
  fromVersion: string | null;
  installedVersion: string | null;
  offeredAt: string | null;
  confirmedAt: string | null;
}

export interface Counts {
  total: number;
  skipped: number;
  pending: number;
  offered: number;
  inProgress: number;
  installed: number;
  failed: number;
  cancelled: number;
}

export type DeploymentState = 'running' | 'paused' | 'cancelled' | 'completed';

export interface Deployment {
  id: string;
  releaseId: string;
  release: { family: Family; version: string; channel: Channel };
  state: DeploymentState;
  targets: { all?: boolean; screenIds?: string[]; groupIds?: string[]; locationIds?: string[] };
  waves: Wave[];
  currentWave: number;
  failureThreshold: number;
  waveWaitSec: number;
  confirmTimeoutSec: number;
  maintenanceWindow: { start: string; end: string } | null;
  pausedReason: string | null;
  counts: Counts;
  screens?: DeploymentScreen[];
  createdAt: string;
  updatedAt: string;
  revision: number;
}

export const FAMILIES: { value: Family; label: string }[] = [
  { value: 'desktop-linux', label: 'Linux player' },
  { value: 'android', label: 'Android player' },
  { value: 'web', label: 'Browser player (/play)' },
  { value: 'edge', label: 'Edge player' },
];
export const familyLabel = (f: string) => FAMILIES.find((x) => x.value === f)?.label ?? f;

/** Architectures as the heartbeat reports them; `any` fits every one (web builds, APKs). */
export const ARCHITECTURES = ['any', 'x86_64', 'aarch64'] as const;
export const architectureLabel = (a: string) => (a === 'any' ? 'any architecture' : a);
/** Families whose artifacts are built per architecture: the upload form asks for one. */
export const NEEDS_ARCHITECTURE: Family[] = ['desktop-linux', 'edge'];

export const KIND_LABEL: Record<ReleaseArtifact['kind'], string> = { apk: 'APK', tarball: 'tarball', deb: 'Debian package', web: 'web build' };

export const CACHE_LABEL: Record<CacheState, string> = {
  remote: 'not downloaded',
  downloading: 'downloading',
  cached: 'here',
  failed: 'download failed',
};

export const SOURCE_STATE_LABEL: Record<SourceState, string> = {
  pending: 'waiting for approval',
  connected: 'connected',
  denied: 'refused',
  expired: 'the code expired',
  failed: 'failed',
};

export const DEPLOYMENT_STATE_LABEL: Record<DeploymentState, string> = {
  running: 'running',
  paused: 'paused',
  cancelled: 'cancelled',
  completed: 'completed',
};

export const SCREEN_STATE_LABEL: Record<ScreenState, string> = {
  skipped: 'skipped',
  pending: 'waiting for its wave',
  offered: 'offered',
  downloading: 'downloading',
  downloaded: 'downloaded',
  installing: 'installing',
  installed: 'installed',
  failed: 'failed',
  cancelled: 'cancelled',
};

export const SKIP_REASON_LABEL: Record<string, string> = {
  family_mismatch: 'another kind of player',
  architecture_mismatch: 'no build for its architecture',
  never_reported: 'it never reported its player',
  already_current: 'already runs this version or newer',
};

/** Why a deployment is paused, in words (the detail page's notice). */
export const PAUSED_REASON_LABEL: Record<string, string> = {
  failure_threshold: 'Paused: too many failures',
  manual: 'Paused by you',
};

/** The same, after the "paused" badge of the list ("paused by you"). */
export const PAUSED_REASON_SHORT: Record<string, string> = {
  failure_threshold: 'too many failures',
  manual: 'by you',
};

export const pausedWords = (reason: string | null): string => PAUSED_REASON_LABEL[reason ?? ''] ?? (reason ? `Paused: ${reason}` : 'Paused');

export const ERROR_LABEL: Record<string, string> = {
  confirmation_timeout: 'the screen did not confirm the new version in time',
  superseded: 'a newer deployment took this screen over',
  cancelled: 'the deployment was cancelled',
};

/** Badge colour for a state. */
export function tone(state: string): 'ok' | 'warn' | 'bad' | '' {
  if (state === 'installed' || state === 'completed' || state === 'cached' || state === 'connected') return 'ok';
  if (state === 'failed' || state === 'denied' || state === 'expired') return 'bad';
  if (state === 'paused' || state === 'downloading' || state === 'installing' || state === 'downloaded' || state === 'offered' || state === 'pending')
    return 'warn';
  return '';
}

/**
 * The list answers `{data: [Release], releaseSource}`: the envelope carries the source beside
 * `data`, so this reads the whole body (api.get returns `data` only).
 */
export async function loadReleases(): Promise<ReleaseList> {
  let res: Response;
  try {
    res = await fetch('/api/v1/player-releases', { headers: { accept: 'application/json' }, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'network', 'The server cannot be reached. Check the connection and try again.');
  }
  const body = (await res.json().catch(() => null)) as {
    data?: Release[];
    releaseSource?: ReleaseSource | null;
    error?: { code?: string; message?: string; details?: unknown };
  } | null;
  if (!res.ok || !body?.data) {
    // 401 and the like: the common client handles them (sign-in again) and throws the envelope's error.
    if (res.status === 401) await api.get('player-releases');
    throw new ApiError(res.status, body?.error?.code ?? 'internal', body?.error?.message ?? `The server answered ${res.status}`, body?.error?.details);
  }
  return { releases: body.data, releaseSource: body.releaseSource ?? null };
}

export const shortSha = (sha: string) => sha.slice(0, 12);

/** "canary: 1 screen", "50 % of the screens". */
export function waveWords(w: { screens?: number; percent?: number }, index: number): string {
  const name = index === 0 ? 'Canary' : `Wave ${index + 1}`;
  if (w.screens !== undefined) return `${name}: ${w.screens} screen${w.screens === 1 ? '' : 's'}`;
  return `${name}: up to ${w.percent} % of the screens`;
}

export const DEFAULT_WAVES: WaveSpec[] = [{ screens: 1 }, { percent: 50 }, { percent: 100 }];

export const ACTIVE_STATES: ScreenState[] = ['offered', 'downloading', 'downloaded', 'installing'];
