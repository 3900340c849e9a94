import { DateTime } from 'luxon';
import { instantOf, offsetAt } from '../../schedules/index.js';

/**
 * Dates as feeds write them (issue 17): RFC 822/2822 with or without a weekday (right or
 * wrong), with numeric offsets or zone names (GMT, UT, UTC, EST, and the European and
 * Asia-Pacific abbreviations RFC 822 never listed but feeds use: CET, CEST, BST...), two-digit
 * years, RFC 3339 / ISO 8601, SQL-style "2024-03-05 09:30:00", and what V8's Date.parse
 * reads ("March 5, 2024 10:00"). A date without a zone is wall-clock time in `zone`.
 */

/** Zone abbreviations feeds use that RFC 2822 does not define (it has UT, GMT, EST..PDT, military). */
const ABBREVIATIONS: Record<string, string> = {
  UTC: '+0000',
  WET: '+0000',
  WEST: '+0100',
  BST: '+0100',
  CET: '+0100',
  MET: '+0100',
  CEST: '+0200',
  MEST: '+0200',
  EET: '+0200',
  EEST: '+0300',
  MSK: '+0300',
  IST: '+0530',
  SGT: '+0800',
  HKT: '+0800',
  AWST: '+0800',
  JST: '+0900',
  KST: '+0900',
  ACST: '+0930',
  ACDT: '+1030',
  AEST: '+1000',
  AEDT: '+1100',
  NZST: '+1200',
  NZDT: '+1300',
};
const ABBREVIATION = new RegExp(`\\b(${Object.keys(ABBREVIATIONS).join('|')})\\s*$`, 'i');
/** Ends with an offset or a zone name: Date.parse reads the instant, not local time. */
const HAS_ZONE = /(?:[+-]\d{2}:?\d{2}|\b(?:Z|GMT|UTC?|[ECMP][SD]T))\s*$/i;

function plausible(dt: DateTime): DateTime | null {
  return dt.isValid && dt.year >= 1900 && dt.year <= 2200 ? dt : null;
}

/** The instant `raw` names, or null when it is no date any of the forms above can read. */
export function parseFeedDate(raw: string | null | undefined, zone = 'UTC'): DateTime | null {
  const s = raw?.trim();
  if (!s || s.length > 100) return null;
  const iso = plausible(DateTime.fromISO(s, { zone, setZone: true }));
  if (iso) return iso;
  const sql = plausible(DateTime.fromSQL(s, { zone, setZone: true }));
  if (sql) return sql;
  // A weekday, right or wrong (luxon refuses a wrong one), says nothing the date does not.
  const n = s
    .replace(/^(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+/i, '')
    .replace(ABBREVIATION, (m) => ABBREVIATIONS[m.trim().toUpperCase()] ?? m)
    .replace(/\s+/g, ' ');
  const rfc = plausible(DateTime.fromRFC2822(n, { zone: 'utc' }));
  if (rfc) return rfc;
  // Date.parse reads almost anything, "1" included: demand a year and a plausible shape.
  if (!/\b\d{4}\b/.test(n)) return null;
  const t = Date.parse(n);
  if (Number.isNaN(t)) return null;
  if (HAS_ZONE.test(n)) return plausible(DateTime.fromMillis(t, { zone: 'utc' }));
  // No zone: Date.parse read it as the process's local time; take the wall clock it read.
  const d = new Date(t);
  return plausible(
    DateTime.fromObject(
      {
        year: d.getFullYear(),
        month: d.getMonth() + 1,
        day: d.getDate(),
        hour: d.getHours(),
        minute: d.getMinutes(),
        second: d.getSeconds(),
        millisecond: d.getMilliseconds(),
      },
      { zone },
    ),
  );
}

/** `raw` as an ISO 8601 UTC instant with milliseconds, or null. */
export function feedDateToIso(raw: string | null | undefined, zone = 'UTC'): string | null {
  const dt = parseFeedDate(raw, zone);
  return dt ? dt.toUTC().toISO() : null;
}

/*
 * The conversions below run once per distinct value of a CSV datetime column (10,000 in the
 * benchmark, docs/data-sources.md "Output build"): they allocate no Date and no ISO string of
 * V8's, the calendar fields come from arithmetic on the day number (the proleptic Gregorian
 * calendar Date uses; Howard Hinnant's civil_from_days), the same fields Date gives.
 */

const DAY_MS = 86_400_000;
/** The Date range whose ISO form has a 4-digit year (0000-01-01 to 9999-12-31). */
const FOUR_DIGIT_YEARS = [-62_167_219_200_000, 253_402_300_800_000] as const;
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));

/** Day number (days since 1970-01-01) -> its year, month (1-12) and day, as Date's UTC getters give them. */
function civilOf(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day: doy - Math.floor((153 * mp + 2) / 5) + 1 };
}

/**
 * Wall-clock fields -> the instant they name in `zone` (schedules' zone clock: offsets found
 * once a month, not an Intl call per value). A time in a spring-forward gap moves forward by
 * the gap; one that occurs twice is the first. Null when the fields are no real date-time.
 */
export function wallToInstant(f: { year: number; month: number; day: number; hour?: number; minute?: number; second?: number }, zone: string): number | null {
  const [hour, minute, second] = [f.hour ?? 0, f.minute ?? 0, f.second ?? 0];
  if (hour > 23 || minute > 59 || second > 59) return null;
  const floating = Date.UTC(f.year, f.month - 1, f.day, hour, minute, second);
  // The fields name the day they land on (not 30 February, not a two-digit year Date.UTC reads as 19xx).
  if (!Number.isFinite(floating)) return null;
  const c = civilOf(Math.floor(floating / DAY_MS));
  if (c.year !== f.year || c.month !== f.month || c.day !== f.day) return null;
  return instantOf(floating, zone);
}

/** An instant as ISO 8601 with `zone`'s offset at that instant, to the second ("2024-04-11T18:00:00+02:00"). */
export function isoWithOffset(instant: number, zone: string): string {
  const offset = offsetAt(zone, instant);
  const wall = isoSeconds(instant + offset);
  if (offset === 0 && /^(Etc\/)?(UTC|UCT|GMT|Zulu|Universal)$/i.test(zone)) return `${wall}Z`;
  const minutes = Math.round(Math.abs(offset) / 60_000);
  const hh = String(Math.floor(minutes / 60)).padStart(2, '0');
  const mm = String(minutes % 60).padStart(2, '0');
  return `${wall}${offset < 0 ? '-' : '+'}${hh}:${mm}`;
}

/** `new Date(ms).toISOString().slice(0, 19)` ("2024-04-11T16:00:00"), without the Date. */
export function isoSeconds(ms: number): string {
  const t = Math.trunc(ms);
  if (!(t >= FOUR_DIGIT_YEARS[0] && t < FOUR_DIGIT_YEARS[1])) return new Date(ms).toISOString().slice(0, 19);
  const days = Math.floor(t / DAY_MS);
  const s = Math.floor((t - days * DAY_MS) / 1000);
  const c = civilOf(days);
  return `${String(c.year).padStart(4, '0')}-${TWO_DIGITS[c.month]}-${TWO_DIGITS[c.day]}T${TWO_DIGITS[Math.floor(s / 3600)]}:${TWO_DIGITS[Math.floor(s / 60) % 60]}:${TWO_DIGITS[s % 60]}`;
}

/** A real calendar date as YYYY-MM-DD, or null (30 February). */
export function isoDateOf(year: number, month: number, day: number): string | null {
  const d = new Date(Date.UTC(year, month - 1, day));
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day || year < 1) return null;
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}
