/**
 * Schedule occurrences in their time zone (RRULE, DST-safe), within bounds (issue 15, "A
 * publisher can freeze the event loop"). Pure functions, no database.
 *
 * Model (iCalendar's): a schedule's `startsAt`/`endsAt` is its first occurrence; `rrule`
 * (RFC 5545 RRULE text, without DTSTART) repeats that window at the same local wall-clock
 * time in `timeZone`, so "09:00-17:00 every weekday" stays 09:00-17:00 across DST
 * changes. Without `rrule`, the schedule is the single window `startsAt`..`endsAt` (or
 * open-ended). The series ends with the RRULE's UNTIL or COUNT.
 *
 * The work of one expansion is bounded: rules are checked when saved (rrule-check.ts and
 * checkSeries), the walk starts at the window asked for whatever the frequency (COUNT
 * series too: their last occurrence is found once and they become UNTIL series), rrule
 * walks a budget of periods (never to the year 9999 for a rule that matches rarely or
 * never), and the occurrences looked at and answered are capped.
 */
import { DateTime } from 'luxon';
import rrulePkg, { type Options, type RRule as RRuleType } from 'rrule';
import { checkRruleText, RruleError } from './rrule-check.js';
import { instantOf, wallClock } from './zone-clock.js';

const { rrulestr, RRule } = rrulePkg;

const DAY_MS = 86_400_000;

export interface ContentRef {
  type: 'playlist' | 'layout' | 'campaign';
  id: string;
}

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

/**
 * Bounds of one expansion: occurrences answered, occurrences looked at, and periods (days,
 * weeks, months or years of the rule) walked. Rules that pass the checks never reach them
 * (at most 96 starts a day, windows of at most 62 days); a rule stored before the checks
 * existed can, and its expansion then stops there and says so (`truncated`).
 */
const MAX_OCCURRENCES = 10_000;
const MAX_MATCHES = 20_000;
/**
 * Days of periods a walk may go through: one expansion, the search for the first occurrence
 * and for a COUNT series' last. rrule looks at every day of a period it walks (a YEARLY
 * period costs 366 days' work, INTERVAL skips whole periods for free), so the budget is in
 * days: 10 000 days of DAILY periods, 1 429 weeks, 323 months or 28 years.
 */
export const MAX_WALK_DAYS = 10_000;
/** The longest occurrence of a repeating schedule. */
export const MAX_OCCURRENCE_MS = 366 * DAY_MS;

export function isValidTimeZone(zone: string): boolean {
  return DateTime.local().setZone(zone).isValid;
}

/**
 * Parses RRULE text and checks every part (rrule-check.ts); throws an RruleError naming the
 * part at fault. Answers the normalised rule text.
 */
export function parseRrule(text: string): string {
  checkRruleText(text);
  // Names and values are case-insensitive (RFC 5545); the rrule library reads upper case.
  const body = text
    .trim()
    .replace(/^RRULE:/i, '')
    .toUpperCase();
  const rule = rrulestr(`RRULE:${body}`, { dtstart: new Date(0) });
  return rule
    .toString()
    .replace(/^DTSTART[^\n]*\n/, '')
    .replace(/^RRULE:/, '');
}

/** A rule as the engine keeps it: its options without DTSTART, or why it is refused. */
interface Compiled {
  text: string;
  options: Partial<Options>;
  refused: string | null;
}

const compiledRules = new Map<string, Compiled>();

function compile(text: string): Compiled {
  const ruleText = text.trim().replace(/^RRULE:/i, '');
  let c = compiledRules.get(ruleText);
  if (!c) {
    try {
      checkRruleText(ruleText);
      c = { text: ruleText, options: RRule.parseString(ruleText.toUpperCase()), refused: null };
    } catch (err) {
      c = { text: ruleText, options: {}, refused: (err as Error).message };
    }
    if (compiledRules.size >= 1000) compiledRules.clear();
    compiledRules.set(ruleText, c);
  }
  return c;
}

class OutOfPeriods extends Error {}

interface Walk {
  rule: RRuleType;
  /** Periods walked so far. */
  walked(): number;
}

/**
 * An RRule that walks at most `periods` periods: rrule iterates period by period until a
 * match lies past the end asked for, so a rule that matches rarely or never (FREQ=DAILY;
 * BYMONTH=2;BYMONTHDAY=30) would walk every day to the year 9999 (seconds). rrule 2.8 reads
 * `options.interval` twice a period (test/schedule-timeline.test.ts holds it to that); past
 * the budget the read throws, and the caller catches OutOfPeriods.
 */
function budgeted(options: Partial<Options>, periods: number): Walk {
  const rule = new RRule(options, true);
  const { interval, ...rest } = rule.options;
  let reads = 0;
  const limit = 2 * periods + 1;
  // A getter on the prototype: an accessor on the options object itself makes every other
  // read of it in rrule's loop slow (measured ten times slower).
  const guard = {
    get interval() {
      if (++reads > limit) throw new OutOfPeriods();
      return interval;
    },
  };
  rule.options = Object.assign(Object.create(guard) as typeof rule.options, rest);
  return { rule, walked: () => Math.min(periods, Math.max(0, Math.floor((reads - 1) / 2))) };
}

/** Runs a walk; answers whether it ended by itself (false: the budget ran out). */
function walkAll(walk: () => void): boolean {
  try {
    walk();
    return true;
  } catch (err) {
    if (err instanceof OutOfPeriods) return false;
    throw err;
  }
}

const DAYS_A_PERIOD: Record<number, number> = { [RRule.YEARLY]: 366, [RRule.MONTHLY]: 31, [RRule.WEEKLY]: 7, [RRule.DAILY]: 1 };

/** The most periods of the rule a walk may go through (MAX_WALK_DAYS). */
const maxPeriods = (options: Partial<Options>) => Math.ceil(MAX_WALK_DAYS / (DAYS_A_PERIOD[options.freq!] ?? 1));

/** The shortest length of one period of the rule (to count the periods between two instants). */
function periodMs(options: Partial<Options>): number {
  const n = options.interval ?? 1;
  const days = options.freq === RRule.YEARLY ? 365 : options.freq === RRule.MONTHLY ? 28 : options.freq === RRule.WEEKLY ? 7 : 1;
  return n * days * DAY_MS;
}

/** Periods to walk from `start` to `end` (floating ms), with a little slack. */
const periodsBetween = (options: Partial<Options>, start: number, end: number) => Math.max(0, Math.ceil((end - start) / periodMs(options))) + 2;

const dayIndex = (t: number) => Math.floor(t / DAY_MS);

/**
 * Options with a later DTSTART that yield the same occurrences from `notBefore` on, so
 * expanding a schedule that began years ago does not walk every period since. What rrule
 * takes from DTSTART when a part is missing (the times of day, the weekday, the day of the
 * month, the month) is written out first. The new start is `notBefore` itself when its
 * period is one of the rule's (every INTERVAL days, weeks from WKST, months or years from
 * the first): rrule builds each period's set whole and drops what lies before DTSTART, so
 * BYSETPOS still counts within whole periods, except for WEEKLY, whose first period rrule
 * starts at DTSTART's day, so there the new start is the week's first day. Otherwise it is
 * the start of the rule's next period. COUNT counts from the first occurrence: such rules
 * come here with COUNT turned into the UNTIL of their last occurrence (seriesLast).
 */
function fastForward(options: Partial<Options>, dtstart: Date, notBefore: number): Partial<Options> {
  const base = { ...options, dtstart };
  const t0 = dtstart.getTime();
  if (notBefore <= t0 || t0 < 0 || options.count != null) return base;
  const parsed = new RRule(base, true).options;
  const n = parsed.interval;
  // Periods numbered from the first one's (0): notBefore's, and where period i starts.
  let q: number;
  let periodStart: (i: number) => number;
  if (parsed.freq === RRule.DAILY) {
    const d0 = dayIndex(t0);
    q = dayIndex(notBefore) - d0;
    periodStart = (i) => (d0 + i) * DAY_MS;
  } else if (parsed.freq === RRule.WEEKLY) {
    const weekday = (dtstart.getUTCDay() + 6) % 7; // rrule's numbering: 0 is Monday
    const w0 = dayIndex(t0) - ((weekday - parsed.wkst + 7) % 7);
    q = Math.floor((dayIndex(notBefore) - w0) / 7);
    periodStart = (i) => (w0 + 7 * i) * DAY_MS;
  } else if (parsed.freq === RRule.MONTHLY) {
    const nb = new Date(notBefore);
    const m0 = dtstart.getUTCFullYear() * 12 + dtstart.getUTCMonth();
    q = nb.getUTCFullYear() * 12 + nb.getUTCMonth() - m0;
    periodStart = (i) => Date.UTC(Math.floor((m0 + i) / 12), (m0 + i) % 12, 1);
  } else if (parsed.freq === RRule.YEARLY) {
    const y0 = dtstart.getUTCFullYear();
    q = new Date(notBefore).getUTCFullYear() - y0;
    periodStart = (i) => Date.UTC(y0 + i, 0, 1);
  } else {
    return base;
  }
  const k = Math.floor(q / n) * n;
  let start = k !== q ? periodStart(k + n) : parsed.freq === RRule.WEEKLY ? periodStart(k) : notBefore;
  // rrule's times of day carry DTSTART's milliseconds: the new start keeps them.
  start = Math.floor(start / 1000) * 1000 + (t0 % 1000);
  if (start <= t0) return base;
  const explicit: Partial<Options> = { ...options, dtstart: new Date(start), byhour: parsed.byhour, byminute: parsed.byminute, bysecond: parsed.bysecond };
  if (options.byweekno == null && options.byyearday == null && options.bymonthday == null && options.byweekday == null) {
    if (parsed.freq === RRule.YEARLY) Object.assign(explicit, { bymonth: parsed.bymonth, bymonthday: parsed.bymonthday });
    if (parsed.freq === RRule.MONTHLY) explicit.bymonthday = parsed.bymonthday;
    if (parsed.freq === RRule.WEEKLY) explicit.byweekday = parsed.byweekday;
  }
  return explicit;
}

/**
 * The floating start of the last occurrence of a COUNT series (null: none at all), or
 * undefined when reaching it walks more than MAX_WALK_DAYS. Kept per rule and start:
 * found once, after which the series is an UNTIL series that can start late.
 */
const seriesEnds = new Map<string, number | null | undefined>();

function seriesLast(c: Compiled, dtstart: Date): number | null | undefined {
  const key = `${c.text}|${dtstart.getTime()}`;
  if (seriesEnds.has(key)) return seriesEnds.get(key);
  let last: number | null = null;
  let looked = 0;
  const { rule } = budgeted({ ...c.options, dtstart }, maxPeriods(c.options));
  const ended = walkAll(() =>
    rule.all((d) => {
      last = d.getTime();
      return ++looked < MAX_MATCHES;
    }),
  );
  const result = ended && looked < MAX_MATCHES ? last : undefined;
  if (seriesEnds.size >= 1000) seriesEnds.clear();
  seriesEnds.set(key, result);
  return result;
}

/** The floating start of the first occurrence from `dtstart` on (null: none within MAX_WALK_DAYS). */
function firstOccurrence(c: Compiled, dtstart: Date): number | null {
  let first: number | null = null;
  const { rule } = budgeted({ ...c.options, dtstart }, maxPeriods(c.options));
  walkAll(() =>
    rule.all((d) => {
      first = d.getTime();
      return false;
    }),
  );
  return first;
}

/**
 * The floating start of the latest occurrence in [lo, hi) (null: none), looking back from
 * `hi` over spans growing fourfold from a day, so only the last stretch before `hi` is walked.
 */
function lastStart(options: Partial<Options>, dtstart: Date, lo: number, hi: number, stats: { periods: number }): number | null {
  for (let span = DAY_MS; ; span *= 4) {
    const a = Math.max(lo, hi - span);
    const opts = fastForward(options, dtstart, a);
    const walk = budgeted(opts, Math.min(maxPeriods(options), periodsBetween(options, opts.dtstart!.getTime(), hi)));
    let last: number | null = null;
    let looked = 0;
    walkAll(() =>
      walk.rule.between(new Date(a), new Date(hi), true, (d) => {
        if (d.getTime() < hi) last = d.getTime();
        return ++looked < MAX_MATCHES;
      }),
    );
    stats.periods += walk.walked();
    if (last !== null || a <= lo) return last;
  }
}

const PERIOD_UNITS: Record<number, string> = { [RRule.YEARLY]: 'years', [RRule.MONTHLY]: 'months', [RRule.WEEKLY]: 'weeks', [RRule.DAILY]: 'days' };

/**
 * What is checked when a repeating schedule is saved, beyond its rule's text: it starts in
 * 1970 or later, each occurrence lasts at most MAX_OCCURRENCE_MS, a COUNT series reaches
 * its last occurrence within MAX_WALK_DAYS, and the rule occurs at all (within MAX_WALK_DAYS
 * of startsAt). Throws an RruleError naming the rule part or the field.
 */
export function checkSeries(s: { startsAt: string; endsAt: string; rrule: string; timeZone: string }): void {
  checkRruleText(s.rrule);
  const c = compile(s.rrule);
  const start = Date.parse(s.startsAt);
  const end = Date.parse(s.endsAt);
  const dtstart = new Date(wallClock(start, s.timeZone));
  if (dtstart.getTime() < 0) throw new RruleError('startsAt', 'A repeating schedule starts in 1970 or later');
  if (end - start > MAX_OCCURRENCE_MS) throw new RruleError('endsAt', 'Each occurrence of a repeating schedule (startsAt to endsAt) lasts at most 366 days');
  const ahead = `${maxPeriods(c.options) * (c.options.interval ?? 1)} ${PERIOD_UNITS[c.options.freq!]}`;
  const until = c.options.until?.getTime();
  if (until !== undefined && until < dtstart.getTime()) throw new RruleError('UNTIL', 'UNTIL is before startsAt: the rule has no occurrence');
  if (c.options.count != null) {
    const last = seriesLast(c, dtstart);
    if (last === undefined)
      throw new RruleError('COUNT', `COUNT=${c.options.count}: this rule does not reach its last occurrence within ${ahead}; give UNTIL instead`);
    if (last === null) throw new RruleError('rrule', 'This rule has no occurrence from startsAt on');
  } else if (firstOccurrence(c, dtstart) === null) {
    throw new RruleError('rrule', `This rule has no occurrence from startsAt on (looked ${ahead} ahead)`);
  }
}

export interface Expansion {
  occurrences: Occurrence[];
  /** The expansion stopped at a bound before the end of the window (a rule stored before the checks). */
  truncated: boolean;
  /** Why the rule is not expanded at all (stored before the checks refused it), else null. */
  refused: string | null;
  /** Periods of the rule walked (the work done: tests hold it to the window's size). */
  periods: number;
}

/**
 * Occurrences of a schedule that overlap [from, to), in real instants (ms), sorted.
 * Occurrences of one schedule that overlap each other are joined into one, and of those
 * that began before the window only the latest is kept (the others end before it does).
 * `exhaustive` walks from the first occurrence (tests compare it with the fast path);
 * `limit` stops after that many.
 */
export function expand(s: ScheduleInput, from: number, to: number, options: { exhaustive?: boolean; limit?: number } = {}): Expansion {
  const none = (extra: Partial<Expansion> = {}): Expansion => ({ occurrences: [], truncated: false, refused: null, periods: 0, ...extra });
  if (!s.enabled) return none();
  const start = Date.parse(s.startsAt);
  const end = s.endsAt ? Date.parse(s.endsAt) : Number.POSITIVE_INFINITY;
  if (!s.rrule) return none({ occurrences: start < to && end > from ? [{ scheduleId: s.id, start, end }] : [] });
  if (!Number.isFinite(end)) return none();
  const c = compile(s.rrule);
  if (c.refused) return none({ refused: c.refused });
  // Expand on the floating wall clock, then map each occurrence back into the zone.
  const dtstart = new Date(wallClock(start, s.timeZone));
  const wallDuration = wallClock(end, s.timeZone) - dtstart.getTime();
  const fromFloat = wallClock(from, s.timeZone);
  const toFloat = wallClock(to, s.timeZone);
  // An occurrence that began up to one duration before the window may still run (a day of
  // slack for offsets); from `walkFrom` on occurrences are looked at one by one.
  const lookBack = fromFloat - wallDuration - DAY_MS;
  const walkFrom = fromFloat - DAY_MS;
  const lookAhead = toFloat + DAY_MS;
  let ruleOptions = c.options;
  if (c.options.count != null && !options.exhaustive) {
    const last = seriesLast(c, dtstart);
    if (last === null) return none();
    if (last !== undefined) ruleOptions = { ...c.options, count: null, until: new Date(last) };
  }
  const until = ruleOptions.until?.getTime();
  if (until !== undefined && until < lookBack) return none();

  const out: Occurrence[] = [];
  const stats = { periods: 0 };
  let truncated = false;
  let looked = 0;
  let spanStart = Number.NaN;
  let spanEnd = Number.NaN;
  const flush = () => {
    if (Number.isNaN(spanStart)) return;
    const occStart = instantOf(spanStart, s.timeZone);
    // A start in a spring-forward gap moves forward; keep the occurrence's length then.
    const occEnd = Math.max(instantOf(spanEnd, s.timeZone), occStart + Math.min(wallDuration, end - start));
    if (occStart < to && occEnd > from && occEnd > occStart) out.push({ scheduleId: s.id, start: occStart, end: occEnd });
  };
  const full = () => options.limit !== undefined && out.length >= options.limit;
  /** Takes the next occurrence start (in order); false: stop. */
  const take = (fs: number): boolean => {
    const fe = fs + wallDuration;
    if (fs < walkFrom) {
      // Before the window: only the latest such occurrence can reach furthest into it.
      if (fe >= walkFrom) {
        spanStart = fs;
        spanEnd = fe;
      }
      return true;
    }
    if (++looked > MAX_MATCHES || out.length >= MAX_OCCURRENCES) {
      truncated = true;
      return false;
    }
    if (fs < spanEnd) {
      spanEnd = Math.max(spanEnd, fe); // overlaps the one before: one span
      return true;
    }
    flush();
    spanStart = fs;
    spanEnd = fe;
    return !full();
  };

  let walkOptions: Partial<Options>;
  if (options.exhaustive) {
    walkOptions = { ...ruleOptions, dtstart };
  } else {
    if (wallDuration > 0 && lookBack < walkFrom) {
      const prior = lastStart(ruleOptions, dtstart, lookBack, walkFrom, stats);
      if (prior !== null) take(prior);
    }
    walkOptions = fastForward(ruleOptions, dtstart, walkFrom);
  }
  const needed = periodsBetween(ruleOptions, walkOptions.dtstart!.getTime(), lookAhead);
  const budget = options.exhaustive ? needed : Math.min(needed, maxPeriods(ruleOptions));
  const walk = budgeted(walkOptions, budget);
  const ended = walkAll(() => walk.rule.between(new Date(options.exhaustive ? lookBack : walkFrom), new Date(lookAhead), true, (d) => take(d.getTime())));
  stats.periods += walk.walked();
  // The budget covers the window: running out past it ends the work; short of it, the answer is partial.
  if (!ended && needed > budget) truncated = true;
  if (!full()) flush();
  return { occurrences: out, truncated, refused: null, periods: stats.periods };
}

/** The occurrences of `expand`. */
export function occurrences(s: ScheduleInput, from: number, to: number, options: { exhaustive?: boolean; limit?: number } = {}): Occurrence[] {
  return expand(s, from, to, options).occurrences;
}

/**
 * The same schedule on the wall clock of another zone: "09:00-17:00 in Europe/London"
 * becomes "09:00-17:00 in America/New_York". Used for schedules that follow each
 * screen's own time zone (created without an explicit `timeZone`).
 */
export function inZone(s: ScheduleInput, zone: string): ScheduleInput {
  if (zone === s.timeZone) return s;
  const move = (instant: string) => new Date(instantOf(wallClock(Date.parse(instant), s.timeZone), zone)).toISOString();
  return { ...s, timeZone: zone, startsAt: move(s.startsAt), endsAt: s.endsAt ? move(s.endsAt) : null };
}
