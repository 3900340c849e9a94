import { z } from 'zod';
import { MAX_BUCKET_MS, MIN_BUCKET_MS } from './heartbeat.repo.js';

/** The noise buckets' start times (spec section 8): RFC 3339 date-times on a fixed ten-second grid. */

export const BUCKET_MS = 10_000;

/** RFC 3339 with an offset, strictly (zod: upper-case `T` and `Z`, days that exist in their month, hour < 24, no leap second, offsets within ±23:59 with a colon). */
const Rfc3339 = z.iso.datetime({ offset: true });
/**
 * Parses an RFC 3339 date-time on the ten-second grid and answers its instant in epoch ms,
 * or a reason it is refused. A fraction, when present, must be all zeros (Date.parse alone
 * would roll 2026-02-30 over to March 2 and truncate a fraction: the format is checked first).
 */
export function parseGridTime(s: string): { ms: number } | { error: string } {
  const fast = gridMs(s);
  return fast !== null ? { ms: fast } : parseGridTimeFully(s);
}

/** parseGridTime without the hand-written fast path (gridMs): the reference the tests compare it with. */
export function parseGridTimeFully(s: string): { ms: number } | { error: string } {
  if (!Rfc3339.safeParse(s).success)
    return { error: 'an RFC 3339 date-time with a time zone (a day that exists, a time of day, an offset like +01:00), e.g. 2026-01-01T10:00:00Z' };
  const fraction = /\.(\d+)/.exec(s)?.[1];
  if (fraction !== undefined && !/^0+$/.test(fraction)) return { error: 'on the ten-second grid (…:00, :10, … :50): the fraction must be zero' };
  const ms = Date.parse(s);
  if (!(ms >= MIN_BUCKET_MS && ms <= MAX_BUCKET_MS)) return { error: 'a year from 0000 to 9999 once in UTC' };
  if (((ms % BUCKET_MS) + BUCKET_MS) % BUCKET_MS !== 0) return { error: 'on the ten-second grid (…:00, :10, … :50, no fraction)' };
  return { ms };
}

/**
 * The date-times players send (`2026-01-01T10:00:10.000Z`, `…:10Z`, `…:10+01:00`), read by
 * hand: one regular expression and the day-of-month check, no zod. Accepts only what
 * parseGridTimeFully accepts (the RFC 3339 schema, a zero fraction, years 0100-9999,
 * on the grid) and answers the same instant; anything else is null and goes the full path,
 * which accepts it or says why not (test/heartbeat-buckets.test.ts compares the two).
 */
const GRID_TIME = /^(\d{4})-(\d\d)-(\d\d)T([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.0+)?(?:Z|([+-])([01]\d|2[0-3]):([0-5]\d))$/;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
export function gridMs(s: string): number | null {
  if (s.length === 24) {
    const ms = utcMs(s);
    if (ms !== undefined) return ms;
  }
  if (s.length > 64) return null;
  const m = GRID_TIME.exec(s);
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  // Date.UTC reads years 0-99 as 1900-1999: those take the full path.
  if (year < 100 || month < 1 || month > 12 || day < 1) return null;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > MONTH_DAYS[month - 1]! + (leap ? 1 : 0)) return null;
  let ms = Date.UTC(year, month - 1, day, Number(m[4]), Number(m[5]), Number(m[6]));
  if (m[7]) ms -= (m[7] === '-' ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9])) * 60_000;
  if (!(ms >= MIN_BUCKET_MS && ms <= MAX_BUCKET_MS) || ms % BUCKET_MS !== 0) return null;
  return ms;
}

/** The digit at `i`, or -1. */
const digitAt = (s: string, i: number) => {
  const d = s.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : -1;
};
const two = (s: string, i: number) => {
  const a = digitAt(s, i);
  const b = digitAt(s, i + 1);
  return a < 0 || b < 0 ? -1 : a * 10 + b;
};

/**
 * gridMs for the form players send (`2026-01-01T10:00:10.000Z`, what toISOString writes):
 * read by character instead of the expression and six Number() calls.
 * Undefined for any other text (gridMs then reads it with its expression); for this form it
 * answers what the expression would (test/heartbeat-buckets.test.ts compares with the full parse).
 */
function utcMs(s: string): number | null | undefined {
  if (
    s.charCodeAt(4) !== 45 || // -
    s.charCodeAt(7) !== 45 ||
    s.charCodeAt(10) !== 84 || // T
    s.charCodeAt(13) !== 58 || // :
    s.charCodeAt(16) !== 58 ||
    s.charCodeAt(19) !== 46 || // .
    s.charCodeAt(20) !== 48 || // 0
    s.charCodeAt(21) !== 48 ||
    s.charCodeAt(22) !== 48 ||
    s.charCodeAt(23) !== 90 // Z
  )
    return undefined;
  const hi = two(s, 0);
  const lo = two(s, 2);
  const month = two(s, 5);
  const day = two(s, 8);
  if (hi < 0 || lo < 0 || month < 0 || day < 0) return undefined;
  const year = hi * 100 + lo;
  // Date.UTC reads years 0-99 as 1900-1999: those take the full path.
  if (year < 100 || month < 1 || month > 12 || day < 1) return undefined;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > MONTH_DAYS[month - 1]! + (leap ? 1 : 0)) return null;
  const hour = two(s, 11);
  const minute = two(s, 14);
  const second = two(s, 17);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  if (!(ms >= MIN_BUCKET_MS && ms <= MAX_BUCKET_MS) || ms % BUCKET_MS !== 0) return null;
  return ms;
}
