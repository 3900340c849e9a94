import { z } from 'zod';
import { remoteConfigBase } from './remote.js';
import type { Column } from './types.js';

/** The `ical` provider's config, limits and columns; the parser (ical.ts, ical.js) loads at the first fetch. */
export const ICAL_LIMITS = {
  maxDays: 366,
  defaultOccurrences: 1000,
  maxOccurrences: 5000,
  /**
   * Steps of ical.js's recurrence iterator (one candidate each; ~8 µs) one event may take,
   * and the whole calendar. A rule whose filters never match (FREQ=DAILY;BYMONTH=2;
   * BYMONTHDAY=30) would otherwise loop forever inside the library.
   */
  stepsPerEvent: 10_000,
  stepsPerCalendar: 50_000,
  /** ...and wall time for the calendar's expansion (the library's first runs, before the JIT warms up, are ~20x slower). */
  calendarMs: 1_000,
} as const;

export const icalConfigSchema = remoteConfigBase.extend({
  daysAhead: z.number().int().min(0).max(ICAL_LIMITS.maxDays).default(30).describe('Days after today whose events are listed'),
  daysBehind: z.number().int().min(0).max(ICAL_LIMITS.maxDays).default(0).describe('Days before today whose events are listed (0: from the start of today)'),
  maxOccurrences: z
    .number()
    .int()
    .min(1)
    .max(ICAL_LIMITS.maxOccurrences)
    .default(ICAL_LIMITS.defaultOccurrences)
    .describe('Events kept at most (the earliest first)'),
});
export type IcalConfig = z.infer<typeof icalConfigSchema>;

export const ICAL_COLUMNS: Column[] = [
  { name: 'title', type: 'text' },
  { name: 'description', type: 'text' },
  { name: 'location', type: 'text' },
  { name: 'start', type: 'datetime' },
  { name: 'end', type: 'datetime' },
  { name: 'allDay', type: 'boolean' },
  { name: 'url', type: 'url' },
  { name: 'uid', type: 'text' },
  { name: 'categories', type: 'text' },
];
