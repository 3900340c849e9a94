import type { PlacardModule } from '../../platform/module.js';

/**
 * The recurrence engine (timelines of schedules: RRULE occurrences, precedence, time zones).
 * Its routes are the content module's (schedules.routes.ts); folding the two into one area
 * is left to a later change.
 */
export const schedulesModule: PlacardModule = { name: 'schedules', routes: [] };

export {
  clipOccurrences,
  compareSchedules,
  inZone,
  isValidTimeZone,
  occurrences,
  parseRrule,
  resolveTimeline,
  type FallbackSource,
  type Interval,
  type Occurrence,
  type ScheduleInput,
  type Segment,
} from './timeline.js';
