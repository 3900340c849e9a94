/**
 * Worst-case recurrences (issue 15, "A publisher can freeze the event loop"), shared by the
 * fuzzer, test/schedule-recurrence-limits.test.ts and scripts/bench/recurrence.ts.
 */
import type { Rng } from './rng.js';

const list = (from: number, to: number, step = 1) => Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step).join(',');

/** Every hour at :00 and :30: the most start times a day a rule may have (48). */
export const DENSE_TIMES = `BYHOUR=${list(0, 23)};BYMINUTE=0,30`;

export interface WorstRule {
  name: string;
  rrule: string;
  /** The first occurrence's start, as an instant (years ago: the long past to walk). */
  startsAt: string;
  /** Length of each occurrence. */
  durationMs: number;
}

const DAY = 86_400_000;

/**
 * The worst rules the checks allow: the most occurrences a day, occurrences as long as
 * allowed (each overlapping the next thousands of times), a whole year of matches in each
 * period, rules that match once in decades (every period walked finds nothing), the longest
 * COUNT series; all starting years ago.
 */
export const WORST_ALLOWED: readonly WorstRule[] = [
  { name: 'dense daily, short', rrule: `FREQ=DAILY;${DENSE_TIMES}`, startsAt: '2010-01-01T00:00:00Z', durationMs: 600_000 },
  { name: 'dense daily, a year long each', rrule: `FREQ=DAILY;${DENSE_TIMES}`, startsAt: '2010-01-01T00:00:00Z', durationMs: 366 * DAY },
  { name: 'dense monthly (every day)', rrule: `FREQ=MONTHLY;BYMONTHDAY=${list(1, 31)};${DENSE_TIMES}`, startsAt: '1990-01-01T00:00:00Z', durationMs: 600_000 },
  {
    name: 'dense yearly (all December), a year long each',
    rrule: `FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=${list(1, 31)};${DENSE_TIMES}`,
    startsAt: '1990-12-01T00:00:00Z',
    durationMs: 366 * DAY,
  },
  {
    name: 'dense yearly by week number, BYSETPOS',
    rrule: `FREQ=YEARLY;BYWEEKNO=1,2,3,4,-1;BYDAY=MO,TU,WE,TH,FR,SA,SU;BYHOUR=${list(0, 23)};BYMINUTE=0;BYSETPOS=${list(1, 366, 7)}`,
    startsAt: '1990-01-01T00:00:00Z',
    durationMs: 600_000,
  },
  // 29 February on a Monday: once in 28 years (the first in 2016).
  { name: 'leap Monday, daily', rrule: 'FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYSETPOS=1', startsAt: '2016-02-29T10:00:00Z', durationMs: 3_600_000 },
  { name: 'leap Monday, weekly', rrule: 'FREQ=WEEKLY;BYMONTH=2;BYDAY=MO;BYHOUR=10', startsAt: '1972-01-03T10:00:00Z', durationMs: 3_600_000 },
  { name: 'longest COUNT', rrule: 'FREQ=DAILY;COUNT=1000;BYDAY=MO', startsAt: '2000-01-03T08:00:00Z', durationMs: 3_600_000 },
  // Seven leap days: 28 years, as far as a COUNT series may take.
  { name: 'COUNT of leap days', rrule: 'FREQ=YEARLY;COUNT=7;BYMONTH=2;BYMONTHDAY=29', startsAt: '1972-01-01T08:00:00Z', durationMs: 3_600_000 },
  { name: 'sparse interval', rrule: `FREQ=DAILY;INTERVAL=365;BYMONTH=2;BYMONTHDAY=29;${DENSE_TIMES}`, startsAt: '1972-02-29T00:00:00Z', durationMs: 600_000 },
];

/**
 * Rules that look valid but ask for too much: finer than daily, too many times a day, COUNT
 * or INTERVAL too big, a series that never occurs or takes millennia to count, and parts
 * out of range. Each must be refused (400), never expanded.
 */
export const REFUSED: readonly string[] = [
  'FREQ=SECONDLY',
  'FREQ=MINUTELY',
  'FREQ=MINUTELY;INTERVAL=1;BYHOUR=9',
  'FREQ=HOURLY',
  'FREQ=HOURLY;INTERVAL=2;BYHOUR=1',
  'FREQ=SECONDLY;BYMINUTE=0',
  `FREQ=DAILY;${DENSE_TIMES};BYSECOND=0,30`,
  `FREQ=DAILY;BYHOUR=${list(0, 23)};BYMINUTE=0,15,30,45`,
  `FREQ=DAILY;BYHOUR=${list(0, 23)};BYMINUTE=${list(0, 59)}`,
  `FREQ=YEARLY;BYMONTH=${list(1, 12)};BYMONTHDAY=${list(1, 31)};${DENSE_TIMES}`,
  'FREQ=DAILY;COUNT=1001',
  'FREQ=DAILY;COUNT=100000000',
  'FREQ=DAILY;INTERVAL=367',
  'FREQ=DAILY;INTERVAL=0',
  'FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30',
  'FREQ=DAILY;BYSETPOS=2',
  'FREQ=DAILY;COUNT=1000;BYMONTH=2;BYMONTHDAY=29',
  'FREQ=MONTHLY;COUNT=1000;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO',
  'FREQ=YEARLY;COUNT=1000;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO',
  'FREQ=YEARLY;COUNT=8;BYMONTH=2;BYMONTHDAY=29',
  'FREQ=DAILY;BYHOUR=99',
  'FREQ=DAILY;UNTIL=20991399T000000Z',
  'FREQ=DAILY;BYEASTER=0',
];

/** A worst-case recurrence for a schedule body: allowed ones most of the time, refused ones otherwise. */
export function worstRecurrence(rng: Rng, now = Date.now()): { rrule: string; startsAt: string; endsAt: string } {
  if (rng.chance(0.4)) {
    const start = now - rng.int(1, 40) * 365 * DAY;
    return { rrule: rng.pick(REFUSED), startsAt: new Date(start).toISOString(), endsAt: new Date(start + rng.int(1, 3600) * 1000).toISOString() };
  }
  const w = rng.pick(WORST_ALLOWED);
  return { rrule: w.rrule, startsAt: w.startsAt, endsAt: new Date(Date.parse(w.startsAt) + w.durationMs).toISOString() };
}
