/**
 * Wall clock <-> instant in an IANA zone, fast enough for thousands of occurrences an
 * expansion. luxon answers each conversion through Intl (tens of microseconds, measured:
 * 62 days of a rule with 96 starts a day took half a second); a zone's offset changes a
 * few times a year, so the offsets of each month are found once (luxon's, sampled every
 * 6 hours, each change found to the millisecond by bisection), kept, and read by lookup.
 * Assumes a zone never changes its offset twice within 6 hours (none has since 1970).
 * Each zone also remembers the two months it last read, checked by a range test before the
 * (zone, month) memo, whose key string cost more than the lookup itself: a 10,000-row CSV
 * datetime column asks about 40,000 times (docs/data-sources.md "Output build").
 */
import { Info, type Zone } from 'luxon';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const SAMPLE_MS = 6 * HOUR_MS;

interface Step {
  /** From this instant on (within the month)... */
  at: number;
  /** ...the zone is this far ahead of UTC (ms). */
  offset: number;
}

/** One month of a zone: its steps, from `start` (inclusive) to `end` (exclusive). */
interface Month {
  start: number;
  end: number;
  steps: Step[];
}

interface ZoneState {
  name: string;
  zone: Zone;
  /** The month last read and the one before it (lookups cluster: a day either side, then the time). */
  last: Month | null;
  previous: Month | null;
}

const zones = new Map<string, ZoneState>();
const months = new Map<string, Month>();

function zoneOf(name: string): ZoneState {
  let state = zones.get(name);
  if (!state) {
    let z = Info.normalizeZone(name);
    // Zones are checked where they are entered; one that is not a zone (NaN offsets) reads as UTC.
    if (!z.isValid) z = Info.normalizeZone('UTC');
    if (zones.size >= 1000) zones.clear();
    state = { name, zone: z, last: null, previous: null };
    zones.set(name, state);
  }
  return state;
}

function monthOf(name: string, zone: Zone, instant: number): Month {
  const d = new Date(instant);
  const key = `${name}|${d.getUTCFullYear()}|${d.getUTCMonth()}`;
  const known = months.get(key);
  if (known) return known;
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  const off = (t: number) => zone.offset(t) * 60_000;
  const steps: Step[] = [{ at: start, offset: off(start) }];
  let a = start;
  let oa = steps[0]!.offset;
  for (let b = Math.min(start + SAMPLE_MS, end - 1); a < end - 1; b = Math.min(b + SAMPLE_MS, end - 1)) {
    const ob = off(b);
    if (ob !== oa) {
      // The first millisecond with the new offset.
      let lo = a;
      let hi = b;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (off(mid) === oa) lo = mid;
        else hi = mid;
      }
      steps.push({ at: hi, offset: ob });
    }
    a = b;
    oa = ob;
  }
  const month = { start, end, steps };
  if (months.size >= 20_000) months.clear();
  months.set(key, month);
  return month;
}

function offsetIn(state: ZoneState, instant: number): number {
  if (state.zone.isUniversal) return state.zone.offset(instant) * 60_000;
  let month = state.last;
  if (!month || !(instant >= month.start && instant < month.end)) {
    month = state.previous;
    if (!month || !(instant >= month.start && instant < month.end)) month = monthOf(state.name, state.zone, instant);
    state.previous = state.last;
    state.last = month;
  }
  const steps = month.steps;
  let i = steps.length - 1;
  while (i > 0 && steps[i]!.at > instant) i--;
  return steps[i]!.offset;
}

/** How far ahead of UTC `zone` is at `instant` (ms). */
export function offsetAt(zone: string, instant: number): number {
  return offsetIn(zoneOf(zone), instant);
}

/** The wall clock of `instant` in `zone`, as a "floating" UTC timestamp (what rrule works in). */
export function wallClock(instant: number, zone: string): number {
  return instant + offsetAt(zone, instant);
}

/**
 * The instant a wall-clock time (a floating timestamp) names in `zone`. A time that occurs
 * twice (clocks going back) is the first; a time that does not occur (clocks going
 * forward) moves forward by the gap, as RFC 5545 reads it: with the offset before the gap.
 */
export function instantOf(floating: number, zone: string): number {
  const state = zoneOf(zone);
  const before = offsetIn(state, floating - DAY_MS);
  const after = offsetIn(state, floating + DAY_MS);
  // The same offset on both sides (all but the days around a change): that offset, if it holds at the time.
  if (before === after) return floating - before;
  let best = Number.NaN;
  for (const o of [before, after]) {
    const u = floating - o;
    if (offsetIn(state, u) === o && !(u >= best)) best = u;
  }
  return Number.isNaN(best) ? floating - before : best;
}
