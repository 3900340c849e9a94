/**
 * Wall clock <-> instant in an IANA zone, fast enough for thousands of occurrences an
 * expansion. luxon answers each conversion through Intl (tens of microseconds, measured:
 * 62 days of a rule with 96 starts a day took half a second); a zone's offset changes a
 * few times a year, so the offsets of each month are found once (luxon's, sampled every
 * 6 hours, each change found to the millisecond by bisection), kept, and read by lookup.
 * Assumes a zone never changes its offset twice within 6 hours (none has since 1970).
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

const zones = new Map<string, Zone>();
const months = new Map<string, Step[]>();

function zoneOf(name: string): Zone {
  let z = zones.get(name);
  if (!z) {
    z = Info.normalizeZone(name);
    // Zones are checked where they are entered; one that is not a zone (NaN offsets) reads as UTC.
    if (!z.isValid) z = Info.normalizeZone('UTC');
    if (zones.size >= 1000) zones.clear();
    zones.set(name, z);
  }
  return z;
}

function monthSteps(name: string, zone: Zone, instant: number): Step[] {
  const d = new Date(instant);
  const key = `${name}|${d.getUTCFullYear()}|${d.getUTCMonth()}`;
  let steps = months.get(key);
  if (steps) return steps;
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  const off = (t: number) => zone.offset(t) * 60_000;
  steps = [{ at: start, offset: off(start) }];
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
  if (months.size >= 20_000) months.clear();
  months.set(key, steps);
  return steps;
}

/** How far ahead of UTC `zone` is at `instant` (ms). */
export function offsetAt(zone: string, instant: number): number {
  const z = zoneOf(zone);
  if (z.isUniversal) return z.offset(instant) * 60_000;
  const steps = monthSteps(zone, z, instant);
  let i = steps.length - 1;
  while (i > 0 && steps[i]!.at > instant) i--;
  return steps[i]!.offset;
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
  const before = offsetAt(zone, floating - DAY_MS);
  const after = offsetAt(zone, floating + DAY_MS);
  let best = Number.NaN;
  for (const o of before === after ? [before] : [before, after]) {
    const u = floating - o;
    if (offsetAt(zone, u) === o && !(u >= best)) best = u;
  }
  return Number.isNaN(best) ? floating - before : best;
}
