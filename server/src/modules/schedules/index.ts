import type { PlacardModule } from '../../platform/module.js';
import { scheduleRoutes } from './schedules.routes.js';
import { registerScheduleTargetReferences } from './schedules.service.js';

/**
 * Schedules: their routes, rows and targets, and the recurrence engine (timelines of
 * schedules: RRULE occurrences, precedence, time zones). Content's resolver (the manifest,
 * now-showing and the schedule preview) reads schedules through this file.
 */
export const schedulesModule: PlacardModule = {
  name: 'schedules',
  routes: scheduleRoutes,
  install({ deps }) {
    registerScheduleTargetReferences(deps);
  },
};

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
export {
  clipOccurrences,
  compareSchedules,
  overlapsAny,
  resolveTimeline,
  type FallbackSource,
  type Interval,
  type PlayableRef,
  type Segment,
  type WindowSource,
} from './timeline.js';
export { defaultTimeZone, screensOf, type Targets } from './fleet-context.js';
export { enabledSchedulesTargeting, schedulesNamingScreens, schedulesShowing, writeTargets, type ScheduleRow } from './schedules.repo.js';
export { addScheduleChangeHook, prepare, scheduleInput, type ScheduleChangeHook, type ScheduleDraft } from './schedules.service.js';
export { campaignScheduleScreens, deleteCampaignSchedules, replaceCampaignSchedules, type CampaignPlacement } from './campaign-schedules.js';
export { schedulePublishable } from './schedules.publishable.js';
export { snapshotOf as scheduleSnapshotOf, type ScheduleSnapshot } from './schedules.repo.js';
