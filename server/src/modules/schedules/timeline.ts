/**
 * What plays when: the precedence that picks one source for every instant, over the
 * occurrences of schedules (recurrence.ts). Pure functions, no database: the manifest, the
 * schedule preview and the console calendar all call these.
 */
import { type ContentRef, type Occurrence, occurrences, type ScheduleInput } from './recurrence.js';

export { type ContentRef, inZone, isValidTimeZone, type Occurrence, occurrences, parseRrule, type ScheduleInput } from './recurrence.js';

export type SourceType = 'takeover' | 'override' | 'alert' | 'schedule' | 'assignment' | 'group-assignment' | 'idle';

/**
 * What a segment plays: a schedule's content, or what a takeover or override shows (an
 * asset, a widget, or a message whose id is the takeover's).
 */
export type PlayableRef = ContentRef | { type: 'asset' | 'widget' | 'message'; id: string };

/** A stronger-than-schedule source active over a window (takeover, override, alert). */
export interface WindowSource {
  source: { type: 'takeover' | 'override' | 'alert'; id: string };
  content: PlayableRef;
  start: number;
  end: number;
}

/** A span of real time, [start, end) in ms. */
export interface Interval {
  start: number;
  end: number;
}

/** What plays when nothing is scheduled: the screen's, then its group's assignment. */
export interface FallbackSource {
  source: { type: 'assignment' | 'group-assignment'; id: string };
  content: ContentRef;
  /** When it has something to play (sorted, merged); absent: always. Outside it the next source plays. */
  availability?: readonly Interval[];
}

export interface Segment {
  startsAt: string;
  endsAt: string;
  source: { type: SourceType; id: string | null };
  content: PlayableRef | null;
}

/**
 * The parts of occurrences during which the schedule has something to play (`availability`
 * sorted and merged; undefined: always). A schedule whose playlist has nothing playable
 * for a while does not win that while: the next source plays. Both lists sorted: one pass.
 */
export function clipOccurrences(occ: readonly Occurrence[], availability: readonly Interval[] | undefined): Occurrence[] {
  if (!availability) return [...occ];
  const out: Occurrence[] = [];
  let first = 0;
  for (const o of occ) {
    while (first < availability.length && availability[first]!.end <= o.start) first++;
    for (let j = first; j < availability.length && availability[j]!.start < o.end; j++) {
      const start = Math.max(o.start, availability[j]!.start);
      const end = Math.min(o.end, availability[j]!.end);
      if (end > start) out.push({ scheduleId: o.scheduleId, start, end });
    }
  }
  return out.sort((x, y) => x.start - y.start || x.end - y.end);
}

/** The index of the first interval of a sorted list (starts and ends non-decreasing) that ends after `at`. */
function firstEndingAfter(list: readonly Interval[], at: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]!.end > at) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Whether a sorted list (as `occurrences` and `clipOccurrences` answer) has an interval overlapping [a, b). */
export function overlapsAny(list: readonly Interval[], a: number, b: number): boolean {
  const i = firstEndingAfter(list, a);
  return i < list.length && list[i]!.start < b;
}

/** Whether one interval of a sorted, merged list covers [a, b]. */
function covers(availability: readonly Interval[] | undefined, a: number, b: number): boolean {
  if (!availability) return true;
  const i = firstEndingAfter(availability, a);
  return i < availability.length && availability[i]!.start <= a && availability[i]!.end >= b;
}

/** Schedules ordered strongest first: priority, then recency, then id (stable). */
export function compareSchedules(a: ScheduleInput, b: ScheduleInput): number {
  return b.priority - a.priority || b.updatedAt.localeCompare(a.updatedAt) || a.id.localeCompare(b.id);
}

const WINDOW_RANK: Record<WindowSource['source']['type'], number> = { takeover: 0, override: 1, alert: 2 };

/**
 * The timeline for [from, to): consecutive segments, each saying what plays and why.
 * Strongest first: takeover, presentation override, weather-alert rule, schedule by
 * priority then recency, the screen's assignment, its group's assignment, idle. A
 * schedule (by `availability`, keyed by schedule id) or a fallback (its own
 * `availability`) with nothing to play over a span is passed over there. `expanded` gives
 * schedules' occurrences already computed (keyed by schedule id); the others are expanded here.
 * One sweep over the cut points: the work grows with the number of occurrences, not its square.
 */
export function resolveTimeline(
  input: {
    schedules: readonly ScheduleInput[];
    windows?: readonly WindowSource[];
    fallbacks?: readonly FallbackSource[];
    availability?: ReadonlyMap<string, readonly Interval[]>;
    expanded?: ReadonlyMap<string, readonly Occurrence[]>;
  },
  from: number,
  to: number,
): Segment[] {
  const ranked = [...input.schedules].sort(compareSchedules);
  const rank = new Map(ranked.map((s, i) => [s.id, i]));
  const occ = input.schedules.flatMap((s) =>
    clipOccurrences(input.expanded?.get(s.id) ?? occurrences(s, from, to), input.availability?.get(s.id)).filter((o) => o.start < to && o.end > from),
  );
  const windows = (input.windows ?? []).filter((w) => w.start < to && w.end > from);
  const cuts = new Set<number>([from, to]);
  for (const o of occ) for (const x of [o.start, o.end]) if (x > from && x < to) cuts.add(x);
  for (const w of windows) for (const x of [w.start, w.end]) if (x > from && x < to) cuts.add(x);
  for (const f of input.fallbacks ?? []) for (const i of f.availability ?? []) for (const x of [i.start, i.end]) if (x > from && x < to) cuts.add(x);
  const points = [...cuts].sort((a, b) => a - b);

  // Sweep: an occurrence covers [a, b) (both cut points) when it started at or before a and ends after a.
  const byStart = [...occ].sort((x, y) => x.start - y.start);
  const byEnd = [...occ].sort((x, y) => x.end - y.end);
  const active = new Array<number>(ranked.length).fill(0);
  let started = 0;
  let ended = 0;
  const segments: Segment[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i]!;
    const b = points[i + 1]!;
    while (started < byStart.length && byStart[started]!.start <= a) active[rank.get(byStart[started++]!.scheduleId)!]!++;
    while (ended < byEnd.length && byEnd[ended]!.end <= a) active[rank.get(byEnd[ended++]!.scheduleId)!]!--;
    let pick: Omit<Segment, 'startsAt' | 'endsAt'>;
    const window = windows.filter((w) => w.start <= a && w.end >= b).sort((x, y) => WINDOW_RANK[x.source.type] - WINDOW_RANK[y.source.type])[0];
    const strongest = active.findIndex((n) => n > 0);
    const schedule = strongest >= 0 ? ranked[strongest] : undefined;
    const fallback = input.fallbacks?.find((f) => covers(f.availability, a, b));
    if (window) pick = { source: window.source, content: window.content };
    else if (schedule) pick = { source: { type: 'schedule', id: schedule.id }, content: schedule.content };
    else if (fallback) pick = { source: fallback.source, content: fallback.content };
    else pick = { source: { type: 'idle', id: null }, content: null };
    const prev = segments.at(-1);
    if (prev && prev.source.type === pick.source.type && prev.source.id === pick.source.id && prev.content?.id === pick.content?.id) {
      prev.endsAt = new Date(b).toISOString();
    } else {
      segments.push({ startsAt: new Date(a).toISOString(), endsAt: new Date(b).toISOString(), ...pick });
    }
  }
  return segments;
}
