/**
 * What a schedule's RRULE may say (issue 15, "A publisher can freeze the event loop"): every
 * part checked on its own, with a message naming it, and limits that keep every expansion
 * small. The product repeats windows of content at most daily: several times a day is
 * FREQ=DAILY with BYHOUR/BYMINUTE, so HOURLY, MINUTELY and SECONDLY are refused (they only
 * add ways to ask for millions of occurrences). docs/content.md ("Recurrence limits") lists
 * the limits and why.
 */

/** Frequencies a schedule may repeat at (coarsest first). */
export const FREQUENCIES = ['YEARLY', 'MONTHLY', 'WEEKLY', 'DAILY'] as const;
export type Frequency = (typeof FREQUENCIES)[number];
const FINER = ['HOURLY', 'MINUTELY', 'SECONDLY'];

/** INTERVAL: 1 to this (every 366 days, weeks, months or years at most). */
export const MAX_INTERVAL = 366;
/** COUNT: 1 to this; a longer series is an UNTIL. */
export const MAX_COUNT = 1000;
/** Start times a day (BYHOUR x BYMINUTE x BYSECOND): one every half hour on average. */
export const MAX_TIMES_PER_DAY = 48;
/**
 * Occurrences one period may hold (at most: days the parts allow x times a day). rrule
 * builds a period's whole set whatever part of it is asked for, so a YEARLY rule of every
 * day at 48 times would cost 17 500 occurrences for any window; a month of 48 a day fits.
 */
export const MAX_PER_PERIOD = 1500;

const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];
const PARTS = [
  'FREQ',
  'INTERVAL',
  'COUNT',
  'UNTIL',
  'BYSECOND',
  'BYMINUTE',
  'BYHOUR',
  'BYDAY',
  'BYMONTHDAY',
  'BYYEARDAY',
  'BYWEEKNO',
  'BYMONTH',
  'BYSETPOS',
  'WKST',
];

/** A rule refused, with the part to blame (`rrule` for the text as a whole). */
export class RruleError extends Error {
  constructor(
    readonly part: string,
    message: string,
  ) {
    super(message);
    this.name = 'RruleError';
  }
}

export interface CheckedRule {
  freq: Frequency;
  /** The parts as given (names upper-cased, values as written), FREQ first. */
  parts: Map<string, string>;
  timesPerDay: number;
}

function integers(part: string, value: string, min: number, max: number, options: { zero?: boolean } = {}): number[] {
  const out: number[] = [];
  for (const item of value.split(',')) {
    if (!/^[+-]?\d{1,4}$/.test(item)) throw new RruleError(part, `${part} must be a comma-separated list of integers (got "${clip(value)}")`);
    const n = Number(item);
    if (n < min || n > max || (n === 0 && !options.zero)) {
      const range = min < 0 ? `${min} to ${max}, not 0` : `${min} to ${max}`;
      throw new RruleError(part, `${part} values must be ${range} (got ${item})`);
    }
    out.push(n);
  }
  return out;
}

const clip = (s: string) => (s.length > 40 ? `${s.slice(0, 40)}...` : s);

/** A well-formed UNTIL: a date (YYYYMMDD) or a date-time (YYYYMMDDTHHMMSS, optionally Z) that exists. */
function checkUntil(value: string): void {
  const m = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})Z?)?$/.exec(value);
  if (!m) throw new RruleError('UNTIL', `UNTIL must be a date (YYYYMMDD) or a UTC date-time (YYYYMMDDTHHMMSSZ) (got "${clip(value)}")`);
  const [y, mo, d, h = 0, mi = 0, s = 0] = m.slice(1).map((x) => (x === undefined ? undefined : Number(x))) as number[];
  const date = new Date(Date.UTC(y!, mo! - 1, d!, h, mi, s));
  if (y! < 1970 || date.getUTCFullYear() !== y || date.getUTCMonth() !== mo! - 1 || date.getUTCDate() !== d || h > 23 || mi > 59 || s > 59)
    throw new RruleError('UNTIL', `UNTIL is not a real date-time from 1970 on (got "${value}")`);
}

/**
 * Checks every part of RRULE text (RFC 5545 section 3.3.10, within the limits above). Throws
 * an RruleError naming the part at fault; answers the parts otherwise.
 */
export function checkRruleText(text: string): CheckedRule {
  const body = text.trim().replace(/^RRULE:/i, '');
  if (/DTSTART/i.test(body)) throw new RruleError('DTSTART', 'give the start as startsAt, not DTSTART');
  if (/[\r\n]/.test(body)) throw new RruleError('rrule', 'an RRULE is one line of NAME=VALUE parts separated by ";"');
  const parts = new Map<string, string>();
  for (const raw of body.split(';')) {
    if (raw.trim() === '') continue;
    const eq = raw.indexOf('=');
    const name = (eq < 0 ? raw : raw.slice(0, eq)).trim().toUpperCase();
    const value = eq < 0 ? '' : raw.slice(eq + 1).trim();
    if (!PARTS.includes(name))
      throw new RruleError(name || 'rrule', `${clip(name) || 'An empty name'} is not an RRULE part schedules support (${PARTS.join(', ')})`);
    if (parts.has(name)) throw new RruleError(name, `${name} is given twice`);
    if (value === '') throw new RruleError(name, `${name} needs a value`);
    parts.set(name, value);
  }
  const freqText = parts.get('FREQ')?.toUpperCase();
  if (!freqText) throw new RruleError('FREQ', 'FREQ is required (YEARLY, MONTHLY, WEEKLY or DAILY)');
  if (FINER.includes(freqText))
    throw new RruleError(
      'FREQ',
      `FREQ=${freqText} is finer than schedules repeat: the finest is DAILY; for several times a day use FREQ=DAILY with BYHOUR and BYMINUTE`,
    );
  if (!(FREQUENCIES as readonly string[]).includes(freqText))
    throw new RruleError('FREQ', `FREQ must be YEARLY, MONTHLY, WEEKLY or DAILY (got "${clip(freqText)}")`);
  const freq = freqText as Frequency;

  const interval = parts.get('INTERVAL');
  if (interval !== undefined && integers('INTERVAL', interval, 1, MAX_INTERVAL).length !== 1) fail('INTERVAL', 'INTERVAL is one number');
  const count = parts.get('COUNT');
  if (count !== undefined && integers('COUNT', count, 1, MAX_COUNT).length !== 1) fail('COUNT', 'COUNT is one number');
  const until = parts.get('UNTIL');
  if (until !== undefined) checkUntil(until);
  if (count !== undefined && until !== undefined) throw new RruleError('COUNT', 'give COUNT or UNTIL, not both');

  const distinct = (xs: number[]) => new Set(xs).size;
  const seconds = parts.has('BYSECOND') ? distinct(integers('BYSECOND', parts.get('BYSECOND')!, 0, 59, { zero: true })) : 1;
  const minutes = parts.has('BYMINUTE') ? distinct(integers('BYMINUTE', parts.get('BYMINUTE')!, 0, 59, { zero: true })) : 1;
  const hours = parts.has('BYHOUR') ? distinct(integers('BYHOUR', parts.get('BYHOUR')!, 0, 23, { zero: true })) : 1;
  if (parts.has('BYMONTH')) integers('BYMONTH', parts.get('BYMONTH')!, 1, 12);
  if (parts.has('BYMONTHDAY')) {
    if (freq === 'WEEKLY') throw new RruleError('BYMONTHDAY', 'BYMONTHDAY does not go with FREQ=WEEKLY');
    integers('BYMONTHDAY', parts.get('BYMONTHDAY')!, -31, 31);
  }
  if (parts.has('BYYEARDAY')) {
    if (freq !== 'YEARLY') throw new RruleError('BYYEARDAY', 'BYYEARDAY goes with FREQ=YEARLY only');
    integers('BYYEARDAY', parts.get('BYYEARDAY')!, -366, 366);
  }
  if (parts.has('BYWEEKNO')) {
    if (freq !== 'YEARLY') throw new RruleError('BYWEEKNO', 'BYWEEKNO goes with FREQ=YEARLY only');
    integers('BYWEEKNO', parts.get('BYWEEKNO')!, -53, 53);
  }
  if (parts.has('BYDAY')) {
    for (const item of parts.get('BYDAY')!.toUpperCase().split(',')) {
      const m = /^([+-]?\d{1,2})?([A-Z]{2})$/.exec(item);
      if (!m || !WEEKDAYS.includes(m[2]!))
        throw new RruleError(
          'BYDAY',
          `BYDAY values are weekdays (MO, TU, WE, TH, FR, SA, SU), optionally with an ordinal such as 1MO or -1FR (got "${clip(item)}")`,
        );
      if (m[1] === undefined) continue;
      const n = Number(m[1]);
      if (freq !== 'MONTHLY' && freq !== 'YEARLY') throw new RruleError('BYDAY', `BYDAY=${item}: an ordinal weekday goes with FREQ=MONTHLY or YEARLY only`);
      if (freq === 'YEARLY' && parts.has('BYWEEKNO')) throw new RruleError('BYDAY', `BYDAY=${item}: an ordinal weekday does not go with BYWEEKNO`);
      const max = freq === 'MONTHLY' || parts.has('BYMONTH') ? 5 : 53;
      if (n === 0 || Math.abs(n) > max) throw new RruleError('BYDAY', `BYDAY=${item}: the ordinal must be 1 to ${max} or -${max} to -1`);
    }
  }
  if (parts.has('BYSETPOS')) {
    integers('BYSETPOS', parts.get('BYSETPOS')!, -366, 366);
    if (![...parts.keys()].some((p) => p.startsWith('BY') && p !== 'BYSETPOS'))
      throw new RruleError('BYSETPOS', 'BYSETPOS needs another BYxxx part to pick from');
  }
  if (parts.has('WKST') && !WEEKDAYS.includes(parts.get('WKST')!.toUpperCase()))
    throw new RruleError('WKST', `WKST must be a weekday (MO, TU, WE, TH, FR, SA, SU) (got "${clip(parts.get('WKST')!)}")`);
  const timesPerDay = hours * minutes * seconds;
  if (timesPerDay > MAX_TIMES_PER_DAY)
    throw new RruleError(
      hours > 1 ? 'BYHOUR' : minutes > 1 ? 'BYMINUTE' : 'BYSECOND',
      `BYHOUR x BYMINUTE x BYSECOND give ${timesPerDay} start times a day; at most ${MAX_TIMES_PER_DAY} (one every half hour on average)`,
    );
  const perPeriod = daysPerPeriod(freq, parts) * timesPerDay;
  if (perPeriod > MAX_PER_PERIOD)
    throw new RruleError(
      'FREQ',
      `FREQ=${freq} with these parts allows up to ${perPeriod} occurrences a period; at most ${MAX_PER_PERIOD}: repeat more often with fewer each time (FREQ=MONTHLY, WEEKLY or DAILY)`,
    );
  return { freq, parts, timesPerDay };
}

/** How many days of one period the parts can let through, at most. */
function daysPerPeriod(freq: Frequency, parts: Map<string, string>): number {
  const count = (name: string) => new Set(parts.get(name)!.split(',')).size;
  const has = (name: string) => parts.has(name);
  if (freq === 'DAILY') return 1;
  if (freq === 'WEEKLY') return has('BYDAY') ? Math.min(7, count('BYDAY')) : 1;
  const months = freq === 'YEARLY' ? (has('BYMONTH') ? count('BYMONTH') : 12) : 1;
  if (!has('BYYEARDAY') && !has('BYWEEKNO') && !has('BYMONTHDAY') && !has('BYDAY')) return freq === 'YEARLY' && !has('BYMONTH') ? 1 : months;
  let days = 31 * months;
  if (has('BYYEARDAY')) days = Math.min(days, count('BYYEARDAY'));
  if (has('BYWEEKNO')) days = Math.min(days, 7 * count('BYWEEKNO'));
  if (has('BYMONTHDAY')) days = Math.min(days, count('BYMONTHDAY') * months);
  if (has('BYDAY')) {
    const items = parts.get('BYDAY')!.toUpperCase().split(',');
    const plain = new Set(items.filter((d) => /^[A-Z]{2}$/.test(d))).size;
    const ordinal = new Set(items.filter((d) => !/^[A-Z]{2}$/.test(d))).size;
    const perMonth = freq === 'MONTHLY' || has('BYMONTH');
    days = Math.min(days, plain * 5 * months + ordinal * (perMonth ? months : 1));
  }
  return days;
}

function fail(part: string, message: string): never {
  throw new RruleError(part, message);
}
