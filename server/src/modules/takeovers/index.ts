import type { PlacardModule } from '../../platform/module.js';
import { provideWindows } from '../content/index.js';
import { takeoverRoutes } from './takeovers.routes.js';
import { screensNamedByTakeovers } from './takeovers.repo.js';
import { activeWindows, endsTick } from './takeovers.service.js';

/** How often natural ends (endsAt passed) are pushed to screens and audited. */
const ENDS_TICK_MS = 1000;

/**
 * Takeovers and presentation overrides (issue 21, docs/takeovers.md): windows stronger than
 * schedules, given to content's resolver through its window provider.
 */
export const takeoversModule: PlacardModule = {
  name: 'takeovers',
  routes: takeoverRoutes,
  install({ deps }) {
    provideWindows(deps, activeWindows, screensNamedByTakeovers);
    deps.periodic.every('takeovers.ends', ENDS_TICK_MS, () => endsTick(deps));
  },
};

export { endTakeover, startTakeover, type Actor, type Origin } from './takeovers.service.js';
export type { OverrideDto, TakeoverDto, TakeoverInput } from './takeovers.schemas.js';
