/**
 * Who this player says it is: its family (from the URL's kiosk flag) and the heartbeat
 * status document it sends (spec 2.2, DESIGN.md section 6.2).
 */
import { PLAYER_VERSION } from './protocol.js';

/**
 * `desktop-linux` when launched by the Linux installer's kiosk unit (`?kiosk=1`);
 * absent otherwise: a plain browser is the web family, which the spec records as absent.
 */
export function playerFamilyFromSearch(search: string): 'desktop-linux' | undefined {
  const params = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  const kiosk = params.get('kiosk');
  return kiosk !== null && ['1', 'true', 'yes'].includes(kiosk.toLowerCase()) ? 'desktop-linux' : undefined;
}

/** What plays right now, as the heartbeat's playback identifiers. */
export interface NowPlaying {
  playlistId?: string | null;
  layoutId?: string | null;
  itemId?: string | null;
  assetId?: string | null;
  scheduleId?: string | null;
  campaignId?: string | null;
}

export interface CacheStatus {
  items: number;
  bytes: number;
  missing: number;
  failed: number;
}

export interface HeartbeatInput {
  playerFamily?: string | undefined;
  /** This player's version (version.ts); the compiled PLAYER_VERSION when unsaid. */
  playerVersion?: string | undefined;
  nowPlaying: NowPlaying;
  manifestRevision: string | number | null;
  display?: { width: number; height: number } | undefined;
  cache?: CacheStatus | undefined;
  /** The browser's storage estimate (navigator.storage.estimate()), when it gives one. */
  storage?: { quota?: number | undefined; usage?: number | undefined } | undefined;
  socketConnected?: boolean;
  startedAt?: string;
  userAgent?: string;
  lastError?: string | null;
  /** The noise meter's state when it is on (derived numbers only). */
  noiseMeter?: { status: string; currentLevel?: number; pendingHistory?: unknown[] } | undefined;
}

/** The heartbeat body: only the fields that have a value (the status document is additive). */
export function buildHeartbeat(input: HeartbeatInput): Record<string, unknown> {
  const body: Record<string, unknown> = { playerVersion: input.playerVersion ?? PLAYER_VERSION };
  if (input.playerFamily) body.playerFamily = input.playerFamily;
  const ids: Array<[keyof NowPlaying, string]> = [
    ['playlistId', 'currentPlaylistId'],
    ['layoutId', 'currentLayoutId'],
    ['itemId', 'currentItemId'],
    ['assetId', 'currentAssetId'],
    ['scheduleId', 'currentScheduleId'],
    ['campaignId', 'currentCampaignId'],
  ];
  for (const [from, to] of ids) {
    const value = input.nowPlaying[from];
    if (typeof value === 'string' && value) body[to] = value;
  }
  if (input.manifestRevision !== null && input.manifestRevision !== undefined) body.manifestRevision = input.manifestRevision;
  if (input.display) body.display = { width: Math.round(input.display.width), height: Math.round(input.display.height) };
  if (input.cache) body.cache = { ...input.cache };
  // Free room for media, read by campaign preflight (docs/player-protocol.md "storage").
  const { quota, usage } = input.storage ?? {};
  if (typeof quota === 'number' && typeof usage === 'number' && quota > 0) {
    body.storage = { freeBytes: Math.max(0, Math.round(quota - usage)), totalBytes: Math.round(quota) };
  }
  if (input.socketConnected !== undefined) body.socketConnected = input.socketConnected;
  if (input.startedAt) body.playerStartedAt = input.startedAt;
  if (input.userAgent) body.userAgent = input.userAgent.slice(0, 300);
  if (input.lastError) body.lastError = input.lastError.slice(0, 500);
  if (input.noiseMeter) body.noiseMeter = input.noiseMeter;
  return body;
}

/** The heartbeat interval the server asked for, within sane bounds (5 s .. 10 min); 30 s when unsaid. */
export function heartbeatIntervalMs(sec: unknown): number {
  const n = typeof sec === 'number' && Number.isFinite(sec) ? sec : 30;
  return Math.min(600, Math.max(5, n)) * 1000;
}
