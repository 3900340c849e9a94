import { RRule, type Options } from 'rrule';

/** Recurrence rules and time zones as the schedules page reads and words them. */
export const DAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;
export const DAY_LABEL: Record<(typeof DAYS)[number], string> = { MO: 'Mon', TU: 'Tue', WE: 'Wed', TH: 'Thu', FR: 'Fri', SA: 'Sat', SU: 'Sun' };

/** `iso` as the wall-clock `YYYY-MM-DDTHH:MM` of `zone` (what a datetime-local input holds). */
export function wallClock(iso: string, zone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(iso));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '00';
  return `${get('year')}-${get('month')}-${get('day')}T${get('hour')}:${get('minute')}`;
}

const ordinal = (n: number) => `${n}${n % 10 === 1 && n !== 11 ? 'st' : n % 10 === 2 && n !== 12 ? 'nd' : n % 10 === 3 && n !== 13 ? 'rd' : 'th'}`;

/** A stored RRULE read by the rrule library (the server's own parser); null when it is not one. */
export function parseRule(rrule: string): Partial<Options> | null {
  try {
    return RRule.parseString(rrule);
  } catch {
    return null;
  }
}

/** The rule's weekdays as MO..SU; null when one carries a position (1MO, -1FR: a custom repeat). */
export function weekdaysOf(o: Partial<Options>): (typeof DAYS)[number][] | null {
  const list = o.byweekday == null ? [] : Array.isArray(o.byweekday) ? o.byweekday : [o.byweekday];
  const out: (typeof DAYS)[number][] = [];
  for (const d of list) {
    if (typeof d === 'string') out.push(d);
    else if (typeof d === 'number') out.push(DAYS[d]!);
    else if (d.n) return null;
    else out.push(DAYS[d.weekday]!);
  }
  return out;
}

/** The parts a rule sets, beside FREQ (rrule leaves the others out). */
export const partsOf = (o: Partial<Options>) => Object.keys(o).filter((k) => k !== 'freq' && o[k as keyof Options] != null);

/** The recurrence in words; `startDay` (day of the month of the first occurrence) names a plain monthly one. */
export function describeRrule(rrule: string | null, startDay?: number): string {
  if (!rrule) return 'once';
  const o = parseRule(rrule);
  const weekdays = o && weekdaysOf(o);
  if (!o || !weekdays || partsOf(o).some((k) => !['byweekday', 'until', 'bymonthday'].includes(k))) return 'on a custom repeat';
  const days = weekdays.map((d) => DAY_LABEL[d]).join(', ');
  const until = o.until ? ` until ${o.until.toISOString().slice(0, 10)}` : '';
  const monthDays = o.bymonthday == null ? [] : Array.isArray(o.bymonthday) ? o.bymonthday : [o.bymonthday];
  if (o.freq === RRule.DAILY && !weekdays.length && !monthDays.length) return `every day${until}`;
  if (o.freq === RRule.WEEKLY && !monthDays.length) return `every week${days ? ` on ${days}` : ''}${until}`;
  if (o.freq === RRule.MONTHLY && !weekdays.length && monthDays.length <= 1) {
    const day = monthDays[0] ?? startDay;
    return `every month${day && Number.isInteger(day) && day > 0 ? ` on the ${ordinal(day)}` : ''}${until}`;
  }
  return 'on a custom repeat';
}

/** "Paris time (Europe/Paris)": a zone in words people read, with its IANA name. */
export function zoneWords(zone: string): string {
  if (zone === 'UTC') return 'UTC';
  const city = zone.split('/').pop()!.replace(/_/g, ' ');
  return `${city} time (${zone})`;
}

/** The wall-clock difference between two zones now, e.g. "6 hours ahead of". */
export function offsetMinutes(zone: string, at = new Date()): number {
  const wall = wallClock(at.toISOString(), zone);
  return Math.round((Date.parse(`${wall}:00Z`) - Math.floor(at.getTime() / 60_000) * 60_000) / 60_000);
}

export type Repeat = 'none' | 'daily' | 'weekdays' | 'weekly' | 'monthly' | 'custom';

/** The form's repeat choice for a stored RRULE (anything it cannot say stays custom text). */
export function repeatOf(rrule: string | null): { repeat: Repeat; days: string[]; custom: string } {
  if (!rrule) return { repeat: 'none', days: [], custom: '' };
  const o = parseRule(rrule);
  const weekdays = o && weekdaysOf(o);
  const parts = o ? partsOf(o) : [];
  if (o && weekdays && parts.every((k) => k === 'byweekday')) {
    if (o.freq === RRule.DAILY && !weekdays.length) return { repeat: 'daily', days: [], custom: '' };
    if (o.freq === RRule.MONTHLY && !weekdays.length) return { repeat: 'monthly', days: [], custom: '' };
    if (o.freq === RRule.WEEKLY && weekdays.join(',') === 'MO,TU,WE,TH,FR') return { repeat: 'weekdays', days: [], custom: '' };
    if (o.freq === RRule.WEEKLY) return { repeat: 'weekly', days: weekdays, custom: '' };
  }
  return { repeat: 'custom', days: [], custom: rrule };
}
