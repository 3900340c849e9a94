import type { PlacardModule } from '../../platform/module.js';
import { addPluginPurgeHook } from '../plugins/index.js';
import { deleteRollups } from './noise-reports.repo.js';
import { noiseReportRoutes } from './noise-reports.routes.js';

/** The noise meter's history reports (issue 22, docs/noise-reports.md): read from the roll-ups the heartbeat keeps. */
export const noiseReportsModule: PlacardModule = {
  name: 'noise-reports',
  routes: noiseReportRoutes,
  install({ deps }) {
    // Uninstalling the noise meter with purge: the plugins module deletes the raw buckets, this the roll-ups.
    addPluginPurgeHook(deps, async (trx, pluginId) => {
      if (pluginId === 'noise-meter') await deleteRollups(trx);
    });
  },
};

export { purgeNoiseHistory } from '../screens/index.js';
