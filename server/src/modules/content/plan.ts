/**
 * Pure planning of playlists: day-parting and validity windows in a time zone, nested
 * playlist flattening with cycle detection. No database: the manifest builder loads the
 * playlists it needs into a map and calls these.
 */
import { DateTime } from 'luxon';

/** ISO weekdays (1 = Monday .. 7 = Sunday) and a local time range `from`..`to` (HH:MM). */
export interface Daypart {
  days: number[];
  from: string;
  /** `24:00` is the end of the day; a `to` at or before `from` runs over midnight. */
  to: string;
}

export interface PlayRule {
  validFrom: string | null;
  validUntil: string | null;
  dayparts: readonly Daypart[];
}

export interface Interval {
  start: number;
  end: number;
}

const DAY_MS = 86_400_000;

function minutesOf(hhmm: string): number {
  const m = /^(\d{2}):(\d{2})$/.exec(hhmm);
  if (!m) throw new Error(`bad time ${hhmm}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

/** Sorted, merged intervals. */
export function mergeIntervals(list: readonly Interval[]): Interval[] {
  const sorted = list.filter((i) => i.end > i.start).sort((a, b) => a.start - b.start);
  const out: Interval[] = [];
  for (const i of sorted) {
    const last = out.at(-1);
    if (last && i.start <= last.end) last.end = Math.max(last.end, i.end);
    else out.push({ ...i });
  }
  return out;
}

/** The parts of `a` that are also in `b` (both sorted and merged). */
export function intersectIntervals(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const start = Math.max(a[i]!.start, b[j]!.start);
    const end = Math.min(a[i]!.end, b[j]!.end);
    if (end > start) out.push({ start, end });
    if (a[i]!.end < b[j]!.end) i++;
    else j++;
  }
  return out;
}

/** A local wall-clock minute of a day as a real instant in `zone` (gaps move forward). */
function localInstant(day: DateTime, minutes: number): number {
  if (minutes >= 24 * 60) return day.plus({ days: 1 }).startOf('day').toMillis();
  return day.set({ hour: Math.floor(minutes / 60), minute: minutes % 60, second: 0, millisecond: 0 }).toMillis();
}

/**
 * When, within [from, to), a rule lets an item play: the validity window intersected
 * with the day-parts, evaluated on the wall clock of `zone` (DST-safe: 08:00-12:00 stays
 * 08:00-12:00 local on the day the clocks change). Sorted, merged intervals.
 */
export function activeWindows(rule: PlayRule, zone: string, from: number, to: number): Interval[] {
  if (rule.dayparts.length === 0) return windowsOf(rule, zone, from, to);
  // Day-parts cost a walk over the days on the zone's clock (luxon): answered once per rule,
  // zone and window. Many items share a rule ("08:00-20:00 every day"), and a screen's
  // manifest is rebuilt with the same window all hour long. Frozen: callers share it.
  const key = `${zone}|${from}|${to}|${rule.validFrom}|${rule.validUntil}|${JSON.stringify(rule.dayparts)}`;
  let windows = dayparted.get(key);
  if (!windows) {
    windows = Object.freeze(windowsOf(rule, zone, from, to).map((w) => Object.freeze(w))) as Interval[];
    if (dayparted.size >= 5000) dayparted.clear();
    dayparted.set(key, windows);
  }
  return windows;
}

const dayparted = new Map<string, Interval[]>();

function windowsOf(rule: PlayRule, zone: string, from: number, to: number): Interval[] {
  const start = Math.max(from, rule.validFrom ? Date.parse(rule.validFrom) : -Infinity);
  const end = Math.min(to, rule.validUntil ? Date.parse(rule.validUntil) : Infinity);
  if (!(end > start)) return [];
  if (rule.dayparts.length === 0) return [{ start, end }];
  const windows: Interval[] = [];
  // Start one day early: a part that runs over midnight may begin the day before.
  let day = DateTime.fromMillis(start - DAY_MS, { zone }).startOf('day');
  const last = DateTime.fromMillis(end, { zone }).startOf('day');
  for (let guard = 0; day <= last && guard < 400; guard++, day = day.plus({ days: 1 })) {
    for (const part of rule.dayparts) {
      if (!part.days.includes(day.weekday)) continue;
      const a = minutesOf(part.from);
      const b = minutesOf(part.to);
      const s = localInstant(day, a);
      const e = b > a ? localInstant(day, b) : localInstant(day.plus({ days: 1 }), b);
      windows.push({ start: Math.max(s, start), end: Math.min(e, end) });
    }
  }
  return mergeIntervals(windows);
}

export interface PlanItem {
  id: string;
  kind: 'asset' | 'widget' | 'playlist';
  /** Asset, widget or nested playlist id. */
  refId: string;
  durationMs: number | null;
  transition: { type: string; durationMs: number };
  rule: PlayRule;
  enabled: boolean;
}

export interface PlanPlaylist {
  id: string;
  name: string;
  items: readonly PlanItem[];
}

export interface FlatItem {
  /** The item's own id (the deepest one, for nested playlists). */
  id: string;
  /** Playlist ids from the root down to the playlist holding this item. */
  path: string[];
  kind: 'asset' | 'widget';
  refId: string;
  durationMs: number | null;
  transition: { type: string; durationMs: number };
  /** When it may play within the horizon; null when always. */
  windows: Interval[] | null;
}

export const MAX_NESTING = 8;

export interface FlattenResult {
  items: FlatItem[];
  /** Problems met on the way (a cycle, too deep, a missing nested playlist). */
  problems: string[];
}

/**
 * A playlist with its nested playlists expanded in place, depth-first, in order. An item
 * of a nested playlist plays only where both its own rule and the rule of the item that
 * nests it allow. Items that cannot play within [from, to) are left out. A cycle (which
 * the API refuses, so only a damaged database has one) is cut and reported.
 *
 * A nesting item carries no duration (its playlist's items keep theirs; a duration stored
 * on one is ignored). Its transition, when not `none`, leads into its run: it replaces the
 * transition of the first item the run contributes (the outermost nesting item wins when
 * runs start together).
 */
export function flattenPlaylist(rootId: string, playlists: ReadonlyMap<string, PlanPlaylist>, zone: string, from: number, to: number): FlattenResult {
  const items: FlatItem[] = [];
  const problems: string[] = [];
  const always: Interval[] = [{ start: from, end: to }];
  // The transition leading into a nested run, until the run's first item takes it.
  let entry: PlanItem['transition'] | null = null;
  const walk = (id: string, path: string[], allowed: Interval[]) => {
    const playlist = playlists.get(id);
    if (!playlist) {
      problems.push(`playlist ${id} is missing`);
      return;
    }
    const here = [...path, id];
    for (const item of playlist.items) {
      if (!item.enabled) continue;
      const own = activeWindows(item.rule, zone, from, to);
      const windows = intersectIntervals(allowed, own);
      if (windows.length === 0) continue;
      if (item.kind === 'playlist') {
        if (here.includes(item.refId)) {
          problems.push(`playlist ${item.refId} contains itself (cycle cut)`);
          continue;
        }
        if (here.length >= MAX_NESTING) {
          problems.push(`playlists nest deeper than ${MAX_NESTING} levels at ${item.refId}`);
          continue;
        }
        const outer = entry;
        if (!entry && item.transition.type !== 'none') entry = item.transition;
        const before = items.length;
        walk(item.refId, here, windows);
        if (items.length === before) entry = outer; // nothing played from it: the transition does not leak to the next item
        continue;
      }
      const full = windows.length === 1 && windows[0]!.start <= from && windows[0]!.end >= to;
      items.push({
        id: item.id,
        path: here,
        kind: item.kind,
        refId: item.refId,
        durationMs: item.durationMs,
        transition: entry ?? item.transition,
        windows: full ? null : windows,
      });
      entry = null;
    }
  };
  walk(rootId, [], always);
  return { items, problems };
}

/**
 * Would making `parentId` contain `childId` close a cycle? True when the child is the
 * parent or already reaches it through its own nested playlists.
 */
export function wouldCycle(parentId: string, childId: string, childrenOf: (id: string) => readonly string[]): boolean {
  const seen = new Set<string>();
  const stack = [childId];
  while (stack.length) {
    const id = stack.pop()!;
    if (id === parentId) return true;
    if (seen.has(id)) continue;
    seen.add(id);
    stack.push(...childrenOf(id));
  }
  return false;
}

/** How deep a playlist's nesting goes (1 = no nested playlists). */
export function nestingDepth(id: string, childrenOf: (id: string) => readonly string[], seen: Set<string> = new Set()): number {
  if (seen.has(id)) return Infinity;
  const next = new Set(seen).add(id);
  let max = 0;
  for (const c of childrenOf(id)) max = Math.max(max, nestingDepth(c, childrenOf, next));
  return 1 + max;
}
