import type { PlacardModule } from '../../platform/module.js';

/** The noise meter's history reports (issue 22, docs/noise-reports.md): read from the roll-ups the heartbeat keeps. */
export const noiseReportsModule: PlacardModule = {
  name: 'noise-reports',
  routes: [],
};

export { purgeNoiseHistory } from '../screens/index.js';
