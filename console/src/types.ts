import type { components } from './api-schema';

type Schemas = components['schemas'];

/** Resource shapes the console reads: the server's own (api-schema.ts, generated from the routes) where the console reads them whole; hand-written ones are views the console builds. */
export type Variant = Schemas['AssetVariant'];
export type Asset = Schemas['Asset'];
export type Folder = Schemas['ContentFolder'];
export type Tag = Schemas['ContentTag'];

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

export type Screen = Schemas['Screen'];
export type NowShowing = Schemas['NowShowing'];
export type Group = Schemas['ScreenGroup'];
export type Location = Schemas['Location'];
export type Command = Schemas['ScreenCommand'];
export type PlaylistSummary = Schemas['PlaylistSummary'];
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
export type Daypart = Schemas['Daypart'];
export interface Playlist extends PlaylistSummary {
  items: PlaylistItem[];
  durationMs: number;
}
export type LayoutSummary = Schemas['LayoutSummary'];

type Operations = import('./api-schema').operations;
/** The `data` of an operation's 200 answer, as the server declares it. */
type DataOf<Op extends keyof Operations> = Operations[Op]['responses'] extends { 200: { content: { 'application/json': { data: infer D } } } } ? D : never;

export type Schedule = Schemas['Schedule'];
/** One segment of a schedule preview: what plays, from when to when, and why. */
export type ScheduleSegment = DataOf<'postSchedulesPreview'>['timeline'][number];
