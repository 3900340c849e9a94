import type { Db } from '../../platform/db/database.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { offsetAt, wallClock } from '../../platform/time/zone-clock.js';
import { instanceScreenIds } from '../plugins/index.js';
import { localDay } from '../screens/index.js';
import { cachedSettings } from '../system/index.js';
import { type GrainRow, grainSums, noiseInstance, type SourceTable, screenRows } from './noise-reports.repo.js';

/**
 * The noise history reports (docs/noise-reports.md). Every figure is a sum over slots whose
 * bounds are instants; the source is the coarsest table whose grain divides every bound
 * (hours, minutes, else the raw ten-second buckets), grouped in SQL on that grain and
 * assigned to slots here, so a report is exact whatever its zone (a half-hour offset reads
 * minutes grouped by 30 minutes).
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
export const MAX_RANGE_DAYS = 400;
export const AUTO_POINTS = 1000;
export const MAX_POINTS = 10_000;

export const RESOLUTIONS = ['10s', '1m', '5m', '1h', '1d'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];
const WIDTH: Record<Resolution, number> = { '10s': 10 * SECOND, '1m': MINUTE, '5m': 5 * MINUTE, '1h': HOUR, '1d': DAY };

export interface Sums {
  bucketCount: number;
  monitoredMs: number;
  levelMs: number;
  peakLevel: number | null;
  warningMs: number;
  loudMs: number;
  triggerCount: number;
}
const empty = (): Sums => ({ bucketCount: 0, monitoredMs: 0, levelMs: 0, peakLevel: null, warningMs: 0, loudMs: 0, triggerCount: 0 });

function addRow(s: Sums, r: GrainRow) {
  s.bucketCount += Number(r.n);
  s.monitoredMs += Number(r.m);
  s.levelMs += Number(r.l);
  if (r.p !== null && (s.peakLevel === null || r.p > s.peakLevel)) s.peakLevel = r.p;
  s.warningMs += Number(r.w);
  s.loudMs += Number(r.ld);
  s.triggerCount += Number(r.tc);
}

function addSums(s: Sums, t: Sums) {
  s.bucketCount += t.bucketCount;
  s.monitoredMs += t.monitoredMs;
  s.levelMs += t.levelMs;
  if (t.peakLevel !== null && (s.peakLevel === null || t.peakLevel > s.peakLevel)) s.peakLevel = t.peakLevel;
  s.warningMs += t.warningMs;
  s.loudMs += t.loudMs;
  s.triggerCount += t.triggerCount;
}

/**
 * The sums of the slots of `coarse` from those of `fine` (sorted bounds; every bound of
 * `coarse` is one of `fine`'s): one read serves both partitions, exactly.
 */
function regroup(fine: readonly number[], sums: readonly Sums[], coarse: readonly number[]): Sums[] {
  const out: Sums[] = [];
  let j = 0;
  for (let i = 0; i + 1 < coarse.length; i++) {
    const s = empty();
    while (j < sums.length && fine[j]! < coarse[i + 1]!) addSums(s, sums[j++]!);
    out.push(s);
  }
  return out;
}

/** The figures of a sum; coverage is monitored time over `spanMs` (range x screens), 0..1. */
export function figures(s: Sums, spanMs: number) {
  return {
    monitoredMs: s.monitoredMs,
    averageLevel: s.monitoredMs > 0 ? s.levelMs / s.monitoredMs : null,
    peakLevel: s.bucketCount > 0 ? s.peakLevel : null,
    warningMs: s.warningMs,
    loudMs: s.loudMs,
    triggerCount: s.triggerCount,
    coverage: spanMs > 0 ? Math.min(1, s.monitoredMs / spanMs) : 0,
  };
}

const GRAINS: [number, SourceTable][] = [
  [HOUR, 'noise_hours'],
  [30 * MINUTE, 'noise_minutes'],
  [15 * MINUTE, 'noise_minutes'],
  [5 * MINUTE, 'noise_minutes'],
  [MINUTE, 'noise_minutes'],
  [10 * SECOND, 'noise_buckets'],
];

/** The source and grain for slot bounds: the coarsest that divides every bound. */
export function sourceFor(bounds: readonly number[]): { table: SourceTable; grain: number } {
  for (const [grain, table] of GRAINS) if (bounds.every((b) => b % grain === 0)) return { table, grain };
  return { table: 'noise_buckets', grain: 1 };
}

/**
 * Sums per slot ([bounds[i], bounds[i+1])) and, with perScreen, per screen (key '' otherwise).
 */
export async function slotSums(db: Db, screenIds: readonly string[], bounds: readonly number[], perScreen = false): Promise<Map<string, Sums[]>> {
  const out = new Map<string, Sums[]>();
  const slots = bounds.length - 1;
  const get = (id: string) => {
    let a = out.get(id);
    if (!a) out.set(id, (a = Array.from({ length: slots }, empty)));
    return a;
  };
  if (!perScreen) get('');
  if (slots <= 0) return out;
  const { table, grain } = sourceFor(bounds);
  const rows = await grainSums(db, table, screenIds, bounds[0]!, bounds[slots]!, slots === 1 ? null : grain, perScreen);
  for (const r of rows) {
    let i = 0;
    if (slots > 1) {
      // The last bound at or before k (binary search).
      let lo = 0;
      let hi = slots - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (bounds[mid]! <= r.k) lo = mid;
        else hi = mid - 1;
      }
      i = lo;
    }
    addRow(get(perScreen ? r.screen_id : '')[i]!, r);
  }
  return out;
}

/** An instant as ISO 8601 with the zone's offset at that instant (2026-03-29T03:00:00+02:00). */
export function isoInZone(ms: number, zone: string): string {
  const off = offsetAt(zone, ms);
  const wall = new Date(ms + off).toISOString().slice(0, 19);
  const a = Math.abs(off) / MINUTE;
  return `${wall}${off < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

/** Slot starts of a resolution covering [from, to): fixed widths start at the local floor of `from`; days are local days. */
export function slotBounds(resolution: Resolution, from: number, to: number, zone: string, limit = Number.POSITIVE_INFINITY): number[] | null {
  const bounds: number[] = [];
  if (resolution === '1d') {
    let d = localDay(from, zone);
    bounds.push(d.startMs);
    while (bounds[bounds.length - 1]! < to) {
      if (bounds.length > limit) return null;
      bounds.push(d.endMs);
      d = localDay(d.endMs, zone);
    }
    return bounds;
  }
  const w = WIDTH[resolution];
  const wall = wallClock(from, zone);
  const start = from - (((wall % w) + w) % w);
  const n = Math.ceil((to - start) / w);
  if (n > limit) return null;
  for (let i = 0; i <= n; i++) bounds.push(start + i * w);
  return bounds;
}

export interface ReportRange {
  instanceId: string;
  instanceName: string;
  from: number;
  to: number;
  zone: string;
  screenIds: string[];
}

/** Resolves the instance (404), its screens now, the range (400) and the zone (default: the first screen's, else UTC). */
export async function reportRange(db: Db, instanceId: string, q: { from: string; to: string; timeZone?: string | undefined }): Promise<ReportRange> {
  const instance = await noiseInstance(db, instanceId);
  const screenIds = instance ? await instanceScreenIds(db, instanceId, 'noise-meter') : null;
  if (!instance || !screenIds) throw notFound('Noise meter instance');
  const from = Date.parse(q.from);
  const to = Date.parse(q.to);
  if (!(to > from)) throw new ApiError('validation_failed', '`to` must be after `from`');
  if (to - from > MAX_RANGE_DAYS * DAY) throw new ApiError('validation_failed', `The range may span at most ${MAX_RANGE_DAYS} days`);
  let zone = q.timeZone;
  if (!zone) {
    const first = (await screenRows(db, screenIds.slice(0, 1)))[0];
    zone = first ? (first.time_zone ?? (await cachedSettings(db)).timeZone) : 'UTC';
  }
  return { instanceId, instanceName: instance.name, from, to, zone, screenIds };
}

/** Clips slot bounds to [from, to] (report figures cover the range only). */
function clip(bounds: number[], from: number, to: number): number[] {
  return [from, ...bounds.filter((b) => b > from && b < to), to];
}

export async function summary(db: Db, r: ReportRange) {
  const span = (r.to - r.from) * r.screenIds.length;
  const hours = clip(slotBounds('1h', r.from, r.to, r.zone)!, r.from, r.to);
  const perHour = (await slotSums(db, r.screenIds, hours)).get('')!;
  const total = regroup(hours, perHour, [r.from, r.to])[0]!;
  const loudestPeriods = perHour
    .map((s, i) => ({ s, i }))
    .filter(({ s }) => s.monitoredMs > 0)
    .sort((a, b) => b.s.levelMs / b.s.monitoredMs - a.s.levelMs / a.s.monitoredMs || a.i - b.i)
    .slice(0, 5)
    .map(({ s, i }) => ({
      startsAt: isoInZone(hours[i]!, r.zone),
      endsAt: isoInZone(hours[i + 1]!, r.zone),
      averageLevel: s.levelMs / s.monitoredMs,
      peakLevel: s.peakLevel,
    }));
  return {
    from: isoInZone(r.from, r.zone),
    to: isoInZone(r.to, r.zone),
    timeZone: r.zone,
    screenCount: r.screenIds.length,
    ...figures(total, span),
    loudestPeriods,
  };
}

/** The finest resolution giving at most AUTO_POINTS points. */
export function autoResolution(from: number, to: number): Resolution {
  for (const res of RESOLUTIONS) if (Math.ceil((to - from) / WIDTH[res]) <= AUTO_POINTS) return res;
  return '1d';
}

export async function series(db: Db, r: ReportRange, resolution: Resolution | 'auto') {
  const res = resolution === 'auto' ? autoResolution(r.from, r.to) : resolution;
  const bounds = slotBounds(res, r.from, r.to, r.zone, MAX_POINTS);
  if (!bounds) throw new ApiError('too_many_points', `The series at ${res} would have more than ${MAX_POINTS} points`);
  const sums = (await slotSums(db, r.screenIds, bounds)).get('')!;
  return {
    resolution: res,
    timeZone: r.zone,
    points: sums.map((s, i) => {
      const f = figures(s, 0);
      return {
        startsAt: isoInZone(bounds[i]!, r.zone),
        averageLevel: f.averageLevel,
        peakLevel: f.peakLevel,
        monitoredMs: f.monitoredMs,
        warningMs: f.warningMs,
        loudMs: f.loudMs,
        triggerCount: f.triggerCount,
      };
    }),
  };
}

export async function daily(db: Db, r: ReportRange) {
  const days = slotBounds('1d', r.from, r.to, r.zone)!;
  const clipped = clip(days, r.from, r.to);
  const hours = clip(slotBounds('1h', r.from, r.to, r.zone)!, r.from, r.to);
  // One read over the hours and the days' bounds together (local days start on a local hour,
  // so these are the hours; the union keeps it exact in any zone), summed both ways.
  const fine = [...new Set([...hours, ...clipped])].sort((a, b) => a - b);
  const sums = await slotSums(db, r.screenIds, fine).then((m) => m.get('')!);
  const perDay = regroup(fine, sums, clipped);
  const perHour = regroup(fine, sums, hours);
  return perDay.map((s, i) => {
    const start = days[i]!;
    const end = days[i + 1]!;
    let busiest: number | null = null;
    let best = -1;
    for (let h = 0; h < perHour.length; h++) {
      const hs = perHour[h]!;
      if (hours[h]! < start || hours[h]! >= end || hs.monitoredMs <= 0) continue;
      const avg = hs.levelMs / hs.monitoredMs;
      if (avg > best) {
        best = avg;
        busiest = hours[h]!;
      }
    }
    return {
      date: localDay(start, r.zone).day,
      startsAt: isoInZone(start, r.zone),
      endsAt: isoInZone(end, r.zone),
      hours: Math.round((end - start) / HOUR),
      ...figures(s, (clipped[i + 1]! - clipped[i]!) * r.screenIds.length),
      busiestHour: busiest === null ? null : isoInZone(busiest, r.zone),
    };
  });
}

export const SCREEN_SORTS = ['name', 'averageLevel', 'peakLevel', 'loudMs', 'triggerCount', 'coverage'] as const;

export async function screens(db: Db, r: ReportRange, sort: (typeof SCREEN_SORTS)[number], order: 'asc' | 'desc') {
  const rows = await screenRows(db, r.screenIds);
  const sums = await slotSums(db, r.screenIds, [r.from, r.to], true);
  const out = rows.map((s) => ({ screenId: s.id, name: s.name, ...figures(sums.get(s.id)?.[0] ?? empty(), r.to - r.from) }));
  const dir = order === 'asc' ? 1 : -1;
  out.sort((a, b) => {
    if (sort === 'name') return dir * a.name.localeCompare(b.name) || a.screenId.localeCompare(b.screenId);
    const x = a[sort];
    const y = b[sort];
    // A screen without data (null level) sorts last either way.
    if (x === null || y === null) return (x === null ? 1 : 0) - (y === null ? 1 : 0) || a.screenId.localeCompare(b.screenId);
    return dir * (x - y) || a.screenId.localeCompare(b.screenId);
  });
  return out;
}
