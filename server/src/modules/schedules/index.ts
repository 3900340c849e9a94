import type { PlacardModule } from '../../platform/module.js';

/**
 * The recurrence engine (timelines of schedules: RRULE occurrences, precedence, time zones).
 * Its routes are the content module's (schedules.routes.ts); folding the two into one area
 * is left to a later change.
 */
export const schedulesModule: PlacardModule = { name: 'schedules', routes: [] };

export {
  checkSeries,
  expand,
  inZone,
  isValidTimeZone,
  occurrences,
  parseRrule,
  type Expansion,
  type Occurrence,
  type ScheduleInput,
} from './recurrence.js';
export { RruleError } from './rrule-check.js';
export { instantOf, offsetAt, wallClock } from './zone-clock.js';
export { clipOccurrences, compareSchedules, overlapsAny, resolveTimeline, type FallbackSource, type Interval, type Segment } from './timeline.js';
