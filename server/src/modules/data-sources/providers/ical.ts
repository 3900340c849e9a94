import ICAL from 'ical.js';
import { DateTime, IANAZone } from 'luxon';
import { isoWithOffset, wallToInstant } from './dates.js';
import { charsetOf, decodeText, guessedEncodingWarning } from './decode.js';
import { htmlToText, looksLikeHtml, resolveUrl } from './html.js';
import { ICAL_COLUMNS, ICAL_LIMITS, type IcalConfig } from './ical.config.js';
import type { Dataset, FetchContext, Row } from './types.js';

export { ICAL_COLUMNS, ICAL_LIMITS, type IcalConfig, icalConfigSchema } from './ical.config.js';

/**
 * The `ical` provider (issue 17, spec 4.5): the events of an iCalendar feed (RFC 5545) that
 * touch a window of days around now, recurrences expanded. ical.js parses the document and
 * steps through each RRULE in the event's wall-clock time (within step limits); RDATE, EXDATE and RECURRENCE-ID
 * overrides (a moved or cancelled instance) are applied here by instant. Wall-clock times
 * become instants in the event's TZID (an IANA name, else the calendar's own VTIMEZONE),
 * floating times in the source's zone (ctx.timeZone); a weekly 18:00 stays 18:00 across a
 * daylight-saving change. Rows: title, description, location, start, end (ISO with the
 * source zone's offset; all-day events as dates, end inclusive, allDay true), url, uid,
 * categories. docs/data-sources-providers.md ("Calendars") has the rules.
 */

type ITime = InstanceType<typeof ICAL.Time>;
type IComponent = InstanceType<typeof ICAL.Component>;
type IRecur = InstanceType<typeof ICAL.Recur>;
type IPeriod = InstanceType<typeof ICAL.Period>;
type IDuration = InstanceType<typeof ICAL.Duration>;

const DAY_MS = 86_400_000;

class StepLimit extends Error {
  constructor(readonly scope: 'event' | 'calendar') {
    super(`recurrence step limit (${scope})`);
  }
}

/** Wall-clock fields of a Time as if they were UTC: cheap, monotonic, for window bounds. */
const naive = (t: ITime) => Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);
const isoDate = (t: ITime) => `${String(t.year).padStart(4, '0')}-${String(t.month).padStart(2, '0')}-${String(t.day).padStart(2, '0')}`;

/** The zone a parsed Time names. Times ical.js derives (recurrence steps, clones) drop an unresolved TZID, so they use their DTSTART's. */
type ZoneRef = { kind: 'utc' } | { kind: 'iana'; name: string } | { kind: 'vtimezone' } | { kind: 'floating'; unknown?: string };

/** Wall-clock Time -> instant, by the zone it names (see the file comment). */
class Zones {
  private readonly iana = new Map<string, string | null>();
  readonly unknown = new Set<string>();

  constructor(
    readonly fallback: string,
    private readonly licLocations: Map<string, string>,
  ) {}

  private ianaFor(tzid: string): string | null {
    let name = this.iana.get(tzid);
    if (name !== undefined) return name;
    // "Europe/Berlin"; "/mozilla.org/20050126_1/Europe/Berlin" (Lightning); a VTIMEZONE's X-LIC-LOCATION.
    const candidates = [tzid, tzid.replace(/^\/[^/]+\/[^/]+\//, ''), this.licLocations.get(tzid)];
    name = candidates.find((c): c is string => !!c && IANAZone.isValidZone(c)) ?? null;
    this.iana.set(tzid, name);
    return name;
  }

  refOf(t: ITime): ZoneRef {
    const zone = t.zone as { tzid?: string; component?: unknown } | undefined;
    const tzid = ((t as unknown as { timezone?: string }).timezone ?? zone?.tzid) || null;
    if (zone === ICAL.Timezone.utcTimezone || tzid === 'UTC' || tzid === 'Z') return { kind: 'utc' };
    if (!tzid || tzid === 'floating') return { kind: 'floating' };
    const iana = this.ianaFor(tzid);
    if (iana) return { kind: 'iana', name: iana };
    if (zone?.tzid === tzid && zone.component) return { kind: 'vtimezone' };
    return { kind: 'floating', unknown: tzid };
  }

  instant(t: ITime, ref: ZoneRef = this.refOf(t)): number {
    if (t.isDate) return wallToInstant(t, this.fallback) ?? Number.NaN;
    // ical.js knows the offsets of UTC and of the calendar's own VTIMEZONEs.
    if (ref.kind === 'utc' || ref.kind === 'vtimezone') return t.toUnixTime() * 1000;
    if (ref.kind === 'floating' && ref.unknown) this.unknown.add(ref.unknown);
    const zone = ref.kind === 'iana' ? ref.name : this.fallback;
    return wallToInstant(t, zone) ?? Number.NaN;
  }
}

interface Span {
  key: string;
  startMs: number;
  endMs: number;
  start: string;
  end: string;
  allDay: boolean;
}

interface Budget {
  calendar: number;
  deadline: number;
}

/** A component's text property, unescaped by ical.js; HTML (Google writes some) as plain text. */
function textOf(c: IComponent, name: string): string | null {
  const v = c.getFirstPropertyValue(name);
  if (typeof v !== 'string') return null;
  const text = looksLikeHtml(v) ? htmlToText(v) : v.trim();
  return text === '' ? null : text;
}

export function parseIcal(
  body: Buffer,
  contentType: string | null,
  config: Pick<IcalConfig, 'daysAhead' | 'daysBehind' | 'maxOccurrences'>,
  ctx: Pick<FetchContext, 'timeZone' | 'now'>,
  url?: string,
): Dataset {
  const warnings: string[] = [];
  if (body.length === 0) throw new Error('the document is empty');
  const decoded = decodeText(body, [charsetOf(contentType)]);
  const guess = guessedEncodingWarning(decoded);
  if (guess) warnings.push(guess);
  const text = decoded.text;
  if (!text.trim()) throw new Error('the document is empty');
  if (/^\s*<(!doctype\s+html|html[\s>])/i.test(text)) throw new Error('the address answered an HTML page, not a calendar (look for the iCal or ICS link)');
  if (
    !/^\s*BEGIN:VCALENDAR\s*$/im.test(
      text
        .slice(0, 2000)
        .split(/\r?\n/)
        .find((l) => l.trim() !== '') ?? '',
    )
  )
    throw new Error('it is not an iCalendar document (it should begin with BEGIN:VCALENDAR)');
  let calendars: IComponent[];
  let unreadable = 0;
  let firstProblem: string | null = null;
  try {
    calendars = parseCalendars(text);
  } catch (err) {
    // ical.js reads every value as it parses: one event with a broken RRULE or date would
    // lose the whole calendar. Keep the events that parse on their own.
    const salvaged = salvage(text);
    if (!salvaged) throw new Error(`the calendar could not be parsed (${(err as Error).message})`);
    calendars = salvaged.calendars;
    unreadable = salvaged.dropped;
    firstProblem = salvaged.reason;
  }
  calendars = calendars.filter((c) => c.name === 'vcalendar');
  if (calendars.length === 0) throw new Error('it is not an iCalendar document (no VCALENDAR)');

  const outZone = IANAZone.isValidZone(ctx.timeZone) ? ctx.timeZone : 'UTC';
  if (outZone !== ctx.timeZone) warnings.push(`The source's time zone "${ctx.timeZone}" is not a known zone; UTC was used`);
  const licLocations = new Map<string, string>();
  for (const cal of calendars)
    for (const tz of cal.getAllSubcomponents('vtimezone')) {
      const id = tz.getFirstPropertyValue('tzid');
      const lic = tz.getFirstPropertyValue('x-lic-location');
      if (typeof id === 'string' && typeof lic === 'string') licLocations.set(id, lic);
    }
  const zones = new Zones(outZone, licLocations);

  const today = DateTime.fromJSDate(ctx.now, { zone: outZone }).startOf('day');
  const from = today.minus({ days: config.daysBehind });
  const to = today.plus({ days: Math.min(config.daysAhead, ICAL_LIMITS.maxDays) + 1 });
  const fromMs = from.toMillis();
  const toMs = to.toMillis();
  const toDate = to.toISODate()!;
  // Wall-clock bounds, widened by two days (any zone's offset) for the cheap test before the exact one.
  const fromNaive = Date.UTC(from.year, from.month - 1, from.day) - 2 * DAY_MS;
  const toNaive = Date.UTC(to.year, to.month - 1, to.day) + 2 * DAY_MS;
  const fmt = (ms: number) => isoWithOffset(ms, outZone);
  const dayStartMs = (t: ITime) => wallToInstant({ year: t.year, month: t.month, day: t.day }, outZone) ?? Number.NaN;

  /**
   * The span of an instance starting at `start`: as long as `c` says (DTEND: the exact length
   * of its first instance; DURATION: nominal, a day is a calendar day; neither: a day, or an
   * instant), or up to `period`'s own end or duration (an RDATE period).
   */
  const spanOf = (c: IComponent, start: ITime, ref = zones.refOf(start), period?: { end?: ITime; duration?: IDuration }): Span => {
    const anchor = period ? start : (c.getFirstPropertyValue('dtstart') as ITime);
    const dtend = period ? period.end : (c.getFirstPropertyValue('dtend') as ITime | null);
    const duration = period ? period.duration : (c.getFirstPropertyValue('duration') as IDuration | null);
    if (start.isDate) {
      let days = 1;
      if (dtend) days = Math.round((Date.UTC(dtend.year, dtend.month - 1, dtend.day) - Date.UTC(anchor.year, anchor.month - 1, anchor.day)) / DAY_MS);
      else if (duration) days = (duration.isNegative ? -1 : 1) * (duration.weeks * 7 + duration.days);
      days = Math.max(1, days);
      const after = start.clone();
      after.adjust(days, 0, 0, 0);
      const last = start.clone();
      last.adjust(days - 1, 0, 0, 0);
      return { key: `d${isoDate(start)}`, startMs: dayStartMs(start), endMs: dayStartMs(after), start: isoDate(start), end: isoDate(last), allDay: true };
    }
    const startMs = zones.instant(start, ref);
    let endMs = startMs;
    if (dtend) endMs = startMs + (zones.instant(dtend) - zones.instant(anchor, period ? ref : undefined));
    else if (duration) {
      const end = start.clone();
      end.addDuration(duration);
      endMs = zones.instant(end, ref);
    }
    endMs = Math.max(endMs, startMs);
    return { key: `t${startMs}`, startMs, endMs, start: fmt(startMs), end: fmt(endMs), allDay: false };
  };
  const inWindow = (s: Span) =>
    s.allDay ? s.start < toDate && s.endMs > fromMs : s.startMs < toMs && (s.endMs > fromMs || (s.endMs === s.startMs && s.startMs >= fromMs));
  const keyOf = (t: ITime) => (t.isDate ? `d${isoDate(t)}` : `t${zones.instant(t)}`);

  const rowOf = (c: IComponent, master: IComponent, span: Span): Row => {
    const pick = (name: string) => textOf(c, name) ?? (c === master ? null : textOf(master, name));
    const categories = [c, master]
      .find((x) => x.hasProperty('categories'))
      ?.getAllProperties('categories')
      .flatMap((p) => p.getValues())
      .map((v) => String(v).trim())
      .filter(Boolean);
    const link = c.getFirstPropertyValue('url') ?? master.getFirstPropertyValue('url');
    return {
      title: pick('summary'),
      description: pick('description'),
      location: pick('location'),
      start: span.start,
      end: span.end,
      allDay: span.allDay,
      url: typeof link === 'string' ? resolveUrl(link, url ?? null) : null,
      uid: textOf(master, 'uid'),
      categories: categories?.length ? categories.join(', ') : null,
    };
  };
  const cancelled = (c: IComponent) => String(c.getFirstPropertyValue('status') ?? '').toUpperCase() === 'CANCELLED';

  const budget: Budget = { calendar: ICAL_LIMITS.stepsPerCalendar, deadline: performance.now() + ICAL_LIMITS.calendarMs };
  /** The starts an RRULE gives whose wall clock is near the window, within the step limits. */
  const ruleStarts = (recur: IRecur, dtstart: ITime, lowerNaive: number): ITime[] => {
    let start = dtstart;
    let shifted = false;
    // A rule without COUNT or BYSETPOS repeats itself every `period` days (a whole number of
    // its intervals and of weeks, so BYDAY and the time of day line up): start it a whole
    // number of periods later, a week before the window, rather than step from years ago.
    const interval = Math.max(1, recur.interval || 1);
    const perDay = UNITS_PER_DAY[recur.freq];
    const period = recur.freq === 'WEEKLY' ? 7 * interval : perDay ? lcm(interval / gcd(interval, perDay), 7) : 0;
    if (period && !recur.count && !recur.parts.BYSETPOS) {
      const gap = Math.floor((lowerNaive - 8 * DAY_MS - naive(dtstart)) / (period * DAY_MS));
      if (gap > 0) {
        start = dtstart.clone();
        start.adjust(gap * period, 0, 0, 0);
        shifted = true;
      }
    }
    const it = recur.iterator(start);
    let steps = 0;
    const check = it.check_contracting_rules.bind(it);
    it.check_contracting_rules = () => {
      if (++steps > ICAL_LIMITS.stepsPerEvent) throw new StepLimit('event');
      if (--budget.calendar < 0 || ((budget.calendar & 127) === 0 && performance.now() > budget.deadline)) throw new StepLimit('calendar');
      return check();
    };
    const out: ITime[] = [];
    for (let first = true; ; first = false) {
      const next = it.next();
      if (!next) break;
      if (first && shifted) continue; // the moved start is a start only by construction
      const n = naive(next);
      if (n > toNaive) break;
      if (n >= lowerNaive) out.push(next.clone());
      if (out.length > ICAL_LIMITS.maxOccurrences * 2) break;
    }
    return out;
  };

  const events = calendars.flatMap((cal) => cal.getAllSubcomponents('vevent'));
  const masters: IComponent[] = [];
  const overrides = new Map<string, IComponent[]>();
  for (const ev of events) {
    const uid = ev.getFirstPropertyValue('uid');
    if (ev.hasProperty('recurrence-id') && typeof uid === 'string') {
      const list = overrides.get(uid) ?? [];
      list.push(ev);
      overrides.set(uid, list);
    } else masters.push(ev);
  }
  const masterUids = new Set(masters.map((m) => m.getFirstPropertyValue('uid')));
  // An override whose series is not in the document is an event of its own.
  for (const [uid, list] of overrides) if (!masterUids.has(uid)) masters.push(...list);

  const rows: { startMs: number; row: Row }[] = [];
  const tooLong: string[] = [];
  let calendarLimit = false;
  for (const master of masters) {
    try {
      const dtstart = master.getFirstPropertyValue('dtstart') as ITime | null;
      if (!dtstart || !(dtstart instanceof ICAL.Time)) throw new Error('an event has no DTSTART');
      if (cancelled(master)) continue;
      const ref = zones.refOf(dtstart);
      const base = spanOf(master, dtstart, ref);
      const lengthMs = Math.min(Math.max(0, base.endMs - base.startMs), ICAL_LIMITS.maxDays * DAY_MS);
      const lowerNaive = fromNaive - lengthMs;
      const uid = master.getFirstPropertyValue('uid');
      const isSeries = !master.hasProperty('recurrence-id');
      const own = isSeries && typeof uid === 'string' ? (overrides.get(uid) ?? []) : [];
      const moved = new Map<string, IComponent>();
      for (const o of own) moved.set(keyOf(o.getFirstPropertyValue('recurrence-id') as ITime), o);

      const instances = new Map<string, { span: Span; c: IComponent }>();
      const add = (span: Span, c: IComponent) => {
        if (!instances.has(span.key)) instances.set(span.key, { span, c });
      };
      const rrules = isSeries ? master.getAllProperties('rrule').map((p) => p.getFirstValue() as IRecur) : [];
      if (rrules.length === 0) add(base, master);
      for (const recur of rrules) {
        try {
          for (const start of ruleStarts(recur, dtstart, lowerNaive)) add(spanOf(master, start, ref), master);
        } catch (err) {
          if (!(err instanceof StepLimit)) throw err;
          if (err.scope === 'calendar') calendarLimit = true;
          else tooLong.push(textOf(master, 'summary') ?? String(uid ?? '?'));
        }
      }
      if (isSeries)
        for (const p of master.getAllProperties('rdate'))
          for (const v of p.getValues() as (ITime | IPeriod)[]) {
            if (v instanceof ICAL.Period)
              add(spanOf(master, v.start, zones.refOf(v.start), v.end ? { end: v.end, duration: undefined } : { duration: v.duration }), master);
            else if (v instanceof ICAL.Time && naive(v) <= toNaive && naive(v) >= lowerNaive) add(spanOf(master, v), master);
          }
      // EXDATE: the instance it names; one of the other value type than the series removes that day.
      const exKeys = new Set<string>();
      const exDays = new Set<string>();
      if (isSeries)
        for (const p of master.getAllProperties('exdate'))
          for (const v of p.getValues() as ITime[]) {
            exKeys.add(keyOf(v));
            if (v.isDate !== dtstart.isDate) exDays.add(v.isDate ? isoDate(v) : DateTime.fromMillis(zones.instant(v), { zone: outZone }).toISODate()!);
          }
      for (const [key, { span, c }] of instances) {
        if (exKeys.has(key) || exDays.has(span.start.slice(0, 10))) continue;
        const override = moved.get(key);
        if (override) {
          moved.delete(key);
          if (cancelled(override)) continue;
          const ostart = override.getFirstPropertyValue('dtstart') as ITime | null;
          const hasEnd = override.hasProperty('dtend') || override.hasProperty('duration');
          const ospan = ostart ? (hasEnd ? spanOf(override, ostart) : { ...spanOf(master, ostart), key }) : span;
          if (inWindow(ospan)) rows.push({ startMs: ospan.startMs, row: rowOf(override, master, ospan) });
          continue;
        }
        if (inWindow(span)) rows.push({ startMs: span.startMs, row: rowOf(c, master, span) });
      }
      // Overrides of instances the series does not give (moved in from outside the window, or edited rules).
      for (const override of moved.values()) {
        if (cancelled(override)) continue;
        const ostart = override.getFirstPropertyValue('dtstart') as ITime | null;
        if (!ostart) continue;
        const hasEnd = override.hasProperty('dtend') || override.hasProperty('duration');
        const ospan = hasEnd ? spanOf(override, ostart) : spanOf(master, ostart);
        if (inWindow(ospan)) rows.push({ startMs: ospan.startMs, row: rowOf(override, master, ospan) });
      }
    } catch (err) {
      unreadable++;
      firstProblem ??= (err as Error).message;
    }
  }

  if (unreadable) warnings.push(`${unreadable} event(s) could not be read and were left out (${firstProblem})`);
  if (tooLong.length)
    warnings.push(
      `The repetition of ${tooLong
        .slice(0, 3)
        .map((t) => `"${t}"`)
        .join(', ')}${tooLong.length > 3 ? ` and ${tooLong.length - 3} more` : ''} could not be worked out within the limits; later instances are missing`,
    );
  if (calendarLimit) warnings.push('The calendar has more repetitions than can be worked out at once; some repeating events are missing');
  if (zones.unknown.size) warnings.push(`Unknown time zone(s) ${[...zones.unknown].slice(0, 5).join(', ')}; their times were read in ${outZone}`);
  rows.sort((a, b) => a.startMs - b.startMs || String(a.row.title ?? '').localeCompare(String(b.row.title ?? '')));
  if (rows.length > config.maxOccurrences)
    warnings.push(`${rows.length} events fall in the window; the first ${config.maxOccurrences} are kept (maxOccurrences)`);
  return { columns: ICAL_COLUMNS.map((c) => ({ ...c })), rows: rows.slice(0, config.maxOccurrences).map((r) => r.row), warnings };
}

function parseCalendars(text: string): IComponent[] {
  const jcal = ICAL.parse(text) as unknown[];
  return (Array.isArray(jcal[0]) ? (jcal as unknown[][]) : [jcal]).map((j) => new ICAL.Component(j as never));
}

/**
 * The calendar without the components ical.js cannot parse: the document's lines cut at the
 * BEGIN/END lines of the calendar's direct children (content lines stay whole, folding
 * included), each event tried alone beside the time zones. Null when nothing is left or the
 * rest does not parse either.
 */
function salvage(text: string): { calendars: IComponent[]; dropped: number; reason: string } | null {
  const head: string[] = [];
  const blocks: { name: string; lines: string[] }[] = [];
  let depth = 0;
  let block: { name: string; lines: string[] } | null = null;
  for (const line of text.split(/\r?\n/)) {
    const begin = /^BEGIN:([A-Za-z-]+)\s*$/i.exec(line);
    const end = /^END:([A-Za-z-]+)\s*$/i.test(line);
    if (begin) depth++;
    if (depth === 2 && begin) blocks.push((block = { name: begin[1]!.toUpperCase(), lines: [] }));
    if (block) block.lines.push(line);
    else if (depth === 1 && !begin) head.push(line);
    if (end) {
      depth--;
      if (depth === 1) block = null;
      if (depth <= 0) break;
    }
  }
  const wrap = (parts: string[][]) => ['BEGIN:VCALENDAR', ...head.filter((l) => !/^END:VCALENDAR/i.test(l)), ...parts.flat(), 'END:VCALENDAR', ''].join('\r\n');
  const context = blocks.filter((b) => b.name !== 'VEVENT').map((b) => b.lines);
  const kept: string[][] = [];
  let dropped = 0;
  let reason = '';
  for (const b of blocks.filter((x) => x.name === 'VEVENT')) {
    try {
      parseCalendars(wrap([...context, b.lines]));
      kept.push(b.lines);
    } catch (err) {
      dropped++;
      reason ||= (err as Error).message;
    }
  }
  if (dropped === 0 || kept.length === 0) return null;
  try {
    return { calendars: parseCalendars(wrap([...context, ...kept])), dropped, reason };
  } catch {
    return null;
  }
}

const UNITS_PER_DAY: Record<string, number> = { DAILY: 1, HOURLY: 24, MINUTELY: 1440, SECONDLY: 86_400 };
const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
const lcm = (a: number, b: number) => (a / gcd(a, b)) * b;
