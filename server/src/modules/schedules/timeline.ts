/**
 * What plays when: schedule occurrences in their time zone (RRULE, DST-safe) and the
 * precedence that picks one source for every instant. Pure functions, no database:
 * the manifest, the schedule preview and the console calendar all call these.
 *
 * Model (iCalendar's): a schedule's `startsAt`/`endsAt` is its first occurrence; `rrule`
 * (RFC 5545 RRULE text, without DTSTART) repeats that window at the same local wall-clock
 * time in `timeZone`, so "09:00-17:00 every weekday" stays 09:00-17:00 across DST
 * changes. Without `rrule`, the schedule is the single window `startsAt`..`endsAt` (or
 * open-ended). The series ends with the RRULE's UNTIL or COUNT.
 */
import { DateTime } from 'luxon';
import rrulePkg from 'rrule';

const { rrulestr, RRule } = rrulePkg;

const DAY_MS = 86_400_000;

export interface ContentRef {
  type: 'playlist' | 'layout' | 'campaign';
  id: string;
}

export type SourceType = 'takeover' | 'override' | 'alert' | 'schedule' | 'assignment' | 'group-assignment' | 'idle';

export interface ScheduleInput {
  id: string;
  content: ContentRef;
  startsAt: string;
  endsAt: string | null;
  rrule: string | null;
  timeZone: string;
  priority: number;
  enabled: boolean;
  /** Recency breaks priority ties: the most recently changed schedule wins. */
  updatedAt: string;
}

export interface Occurrence {
  scheduleId: string;
  start: number;
  end: number;
}

/** A stronger-than-schedule source active over a window (takeover, override, alert). */
export interface WindowSource {
  source: { type: 'takeover' | 'override' | 'alert'; id: string };
  content: ContentRef;
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
  content: ContentRef | null;
}

const MAX_OCCURRENCES = 10_000;

/** Wall-clock components of `instant` in `zone`, as a "floating" UTC Date (what rrule works in). */
function toFloating(instant: number, zone: string): Date {
  const d = DateTime.fromMillis(instant, { zone });
  return new Date(Date.UTC(d.year, d.month - 1, d.day, d.hour, d.minute, d.second, d.millisecond));
}

/** A floating date read as wall-clock time in `zone`: the real instant (gaps move forward). */
function fromFloating(floating: Date, zone: string): number {
  return DateTime.fromObject(
    {
      year: floating.getUTCFullYear(),
      month: floating.getUTCMonth() + 1,
      day: floating.getUTCDate(),
      hour: floating.getUTCHours(),
      minute: floating.getUTCMinutes(),
      second: floating.getUTCSeconds(),
      millisecond: floating.getUTCMilliseconds(),
    },
    { zone },
  ).toMillis();
}

export function isValidTimeZone(zone: string): boolean {
  return DateTime.local().setZone(zone).isValid;
}

/** Parses RRULE text; throws with a readable message. Answers the normalised rule text. */
export function parseRrule(text: string): string {
  const body = text.trim().replace(/^RRULE:/i, '');
  if (/DTSTART/i.test(body)) throw new Error('give the start as startsAt, not DTSTART');
  const rule = rrulestr(`RRULE:${body}`, { dtstart: new Date(0) });
  return rule
    .toString()
    .replace(/^DTSTART[^\n]*\n/, '')
    .replace(/^RRULE:/, '');
}

/**
 * A later DTSTART that yields the same occurrences from `notBefore` on, so expanding a
 * schedule that began years ago does not walk every period since (rrule iterates from
 * DTSTART). Only for DAILY and WEEKLY series without COUNT (COUNT counts from the first
 * occurrence): their periods are whole days or weeks of the floating wall clock, and
 * moving DTSTART by whole periods keeps every BYxxx filter and the week alignment. The
 * new start stays a full period before `notBefore`, so a period cut short by the new
 * start ends before anything that matters.
 */
function fastForward(ruleText: string, dtstart: Date, notBefore: number): Date {
  const opts = RRule.parseString(ruleText);
  if (opts.count != null || (opts.freq !== RRule.DAILY && opts.freq !== RRule.WEEKLY)) return dtstart;
  const period = (opts.interval ?? 1) * (opts.freq === RRule.WEEKLY ? 7 : 1) * DAY_MS;
  const k = Math.floor((notBefore - period - dtstart.getTime()) / period);
  return k > 0 ? new Date(dtstart.getTime() + k * period) : dtstart;
}

/**
 * Occurrences of a schedule that overlap [from, to), in real instants (ms).
 * `exhaustive` expands from the first occurrence (tests compare it with the fast path).
 */
export function occurrences(s: ScheduleInput, from: number, to: number, options: { exhaustive?: boolean } = {}): Occurrence[] {
  if (!s.enabled) return [];
  const start = Date.parse(s.startsAt);
  const end = s.endsAt ? Date.parse(s.endsAt) : Number.POSITIVE_INFINITY;
  if (!s.rrule) return start < to && end > from ? [{ scheduleId: s.id, start, end }] : [];
  if (!Number.isFinite(end)) return [];
  // Expand on the floating wall clock, then map each occurrence back into the zone.
  const dtstart = toFloating(start, s.timeZone);
  const wallDuration = toFloating(end, s.timeZone).getTime() - dtstart.getTime();
  const ruleText = s.rrule.replace(/^RRULE:/i, '');
  // Occurrences that started before `from` may still be running: look back one duration
  // (plus a day of slack for offsets).
  const lookBack = toFloating(from, s.timeZone).getTime() - wallDuration - DAY_MS;
  const lookAhead = toFloating(to, s.timeZone).getTime() + DAY_MS;
  const rule = rrulestr(`RRULE:${ruleText}`, { dtstart: options.exhaustive ? dtstart : fastForward(ruleText, dtstart, lookBack) });
  const out: Occurrence[] = [];
  const starts = rule.between(new Date(lookBack), new Date(lookAhead), true, (_d, i) => i < MAX_OCCURRENCES);
  for (const floatingStart of starts) {
    const occStart = fromFloating(floatingStart, s.timeZone);
    // A start in a spring-forward gap moves forward; keep the occurrence's length then.
    const occEnd = Math.max(fromFloating(new Date(floatingStart.getTime() + wallDuration), s.timeZone), occStart + Math.min(wallDuration, end - start));
    if (occStart < to && occEnd > from && occEnd > occStart) out.push({ scheduleId: s.id, start: occStart, end: occEnd });
  }
  return out;
}

/**
 * The parts of occurrences during which the schedule has something to play (`availability`
 * sorted and merged; undefined: always). A schedule whose playlist has nothing playable
 * for a while does not win that while: the next source plays.
 */
export function clipOccurrences(occ: readonly Occurrence[], availability: readonly Interval[] | undefined): Occurrence[] {
  if (!availability) return [...occ];
  const out: Occurrence[] = [];
  for (const o of occ) {
    for (const i of availability) {
      const start = Math.max(o.start, i.start);
      const end = Math.min(o.end, i.end);
      if (end > start) out.push({ scheduleId: o.scheduleId, start, end });
    }
  }
  return out;
}

const covers = (availability: readonly Interval[] | undefined, a: number, b: number) => !availability || availability.some((i) => i.start <= a && i.end >= b);

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
 * `availability`) with nothing to play over a span is passed over there.
 */
export function resolveTimeline(
  input: {
    schedules: readonly ScheduleInput[];
    windows?: readonly WindowSource[];
    fallbacks?: readonly FallbackSource[];
    availability?: ReadonlyMap<string, readonly Interval[]>;
  },
  from: number,
  to: number,
): Segment[] {
  const byId = new Map(input.schedules.map((s) => [s.id, s]));
  const occ = input.schedules.flatMap((s) => clipOccurrences(occurrences(s, from, to), input.availability?.get(s.id)));
  const windows = (input.windows ?? []).filter((w) => w.start < to && w.end > from);
  const cuts = new Set<number>([from, to]);
  for (const o of occ) for (const x of [o.start, o.end]) if (x > from && x < to) cuts.add(x);
  for (const w of windows) for (const x of [w.start, w.end]) if (x > from && x < to) cuts.add(x);
  for (const f of input.fallbacks ?? []) for (const i of f.availability ?? []) for (const x of [i.start, i.end]) if (x > from && x < to) cuts.add(x);
  const points = [...cuts].sort((a, b) => a - b);

  const segments: Segment[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i]!;
    const b = points[i + 1]!;
    let pick: Omit<Segment, 'startsAt' | 'endsAt'>;
    const window = windows.filter((w) => w.start <= a && w.end >= b).sort((x, y) => WINDOW_RANK[x.source.type] - WINDOW_RANK[y.source.type])[0];
    const schedule = occ
      .filter((o) => o.start <= a && o.end >= b)
      .map((o) => byId.get(o.scheduleId)!)
      .sort(compareSchedules)[0];
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

/**
 * The same schedule on the wall clock of another zone: "09:00-17:00 in Europe/London"
 * becomes "09:00-17:00 in America/New_York". Used for schedules that follow each
 * screen's own time zone (created without an explicit `timeZone`).
 */
export function inZone(s: ScheduleInput, zone: string): ScheduleInput {
  if (zone === s.timeZone) return s;
  const move = (instant: string) => new Date(fromFloating(toFloating(Date.parse(instant), s.timeZone), zone)).toISOString();
  return { ...s, timeZone: zone, startsAt: move(s.startsAt), endsAt: s.endsAt ? move(s.endsAt) : null };
}
