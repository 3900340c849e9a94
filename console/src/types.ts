/** Resource shapes the console reads (DESIGN.md section 11; fields added by modules are optional here). */
export interface Variant {
  id: string;
  purpose: 'player' | 'thumbnail' | 'poster' | 'preview' | string;
  contentType: string;
  width: number | null;
  height: number | null;
  sizeBytes: number;
  sha256: string;
}
export interface Asset {
  id: string;
  kind: 'image' | 'video' | 'audio' | 'pdf' | 'website' | 'widget';
  state: 'uploading' | 'processing' | 'ready' | 'failed' | 'archived';
  name: string;
  sizeBytes: number | null;
  contentType: string | null;
  width: number | null;
  height: number | null;
  durationMs: number | null;
  folderId: string | null;
  tags: string[];
  failureReason: string | null;
  progress: number | null;
  website?: { url: string } | null;
  createdAt: string;
  updatedAt: string;
  archivedAt?: string | null;
  variants: Variant[];
}
export interface Folder {
  id: string;
  name: string;
  parentId: string | null;
  path: string[];
  assetCount: number;
}
export interface Tag {
  id: string;
  name: string;
  color: string | null;
  assetCount: number;
}

export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 && i > 0 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

export function formatDuration(ms: number | null | undefined): string {
  if (!ms && ms !== 0) return '—';
  const s = Math.round(ms / 1000);
  const m = Math.floor(s / 60);
  return m ? `${m}:${String(s % 60).padStart(2, '0')}` : `${s} s`;
}

export interface Screen {
  id: string;
  name: string;
  status: 'online' | 'offline' | 'stale' | 'pending';
  disabled: boolean;
  revoked: boolean;
  playerFamily: string | null;
  playerArchitecture: string | null;
  playerVersion: string | null;
  locationId: string | null;
  timeZone: string | null;
  /** Its location's zone, else the server's default time zone. */
  effectiveTimeZone?: string;
  timeZoneSource?: 'location' | 'server-default';
  commandSupport?: Record<string, { supported: boolean; reason: string | null }>;
  lastScreenshot?: { commandId: string; url: string; takenAt: string | null } | null;
  manifestRevision?: number;
  groupIds: string[];
  notes: string | null;
  tags: string[];
  lastSeenAt: string | null;
  lastStatus: Record<string, unknown> | null;
  /** What it shows (server-resolved names); `planned`: not reported, what the plan says plays now. */
  nowShowing: NowShowing | null;
  socketConnected: boolean;
  createdAt: string;
}
export interface NowShowing {
  planned: boolean;
  reportedAt: string | null;
  assetId: string | null;
  assetName: string | null;
  playlistId: string | null;
  playlistName: string | null;
  layoutId: string | null;
  layoutName: string | null;
  scheduleId: string | null;
  scheduleName: string | null;
}
export interface Group {
  id: string;
  name: string;
  description: string | null;
  screenIds: string[];
  memberCount: number;
}
export interface Location {
  id: string;
  name: string;
  address: string | null;
  timeZone: string;
  screenCount: number;
}
export interface Command {
  id: string;
  type: string;
  state: 'queued' | 'delivered' | 'acknowledged' | 'succeeded' | 'failed' | 'expired';
  createdAt: string;
  completedAt: string | null;
  result: Record<string, unknown> | null;
}
export interface PlaylistSummary {
  id: string;
  name: string;
  description: string;
  revision: number;
  itemCount: number;
  updatedAt: string;
}
export interface PlaylistItem {
  id: string;
  position: number;
  type: 'asset' | 'widget' | 'playlist';
  assetId: string | null;
  playlistId: string | null;
  label: string | null;
  assetKind: string | null;
  assetState: string | null;
  durationMs: number | null;
  effectiveDurationMs: number;
  validFrom: string | null;
  validUntil: string | null;
  /** ISO weekdays 1 (Monday) .. 7 with HH:MM times, in each screen's time zone. */
  dayparts: Daypart[];
  transition: { type: 'none' | 'fade' | 'slide'; durationMs: number };
  enabled: boolean;
}
export interface Daypart {
  days: number[];
  from: string;
  to: string;
}
export interface Playlist extends PlaylistSummary {
  items: PlaylistItem[];
  durationMs: number;
}
export interface LayoutSummary {
  id: string;
  name: string;
  revision: number;
  width: number;
  height: number;
  zoneCount: number;
  publishedRevisionNumber: number | null;
  publishedAt: string | null;
  hasUnpublishedChanges: boolean;
  updatedAt: string;
}
