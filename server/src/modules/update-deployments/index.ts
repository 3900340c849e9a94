import type { PlacardModule } from '../../platform/module.js';
import { provideUpdateInfo } from '../screens/index.js';
import { deploymentRoutes } from './deployments.routes.js';
import { updateInfo } from './player.service.js';
import { TICK_MS, TICK_NAME, tick } from './rollout.js';

/**
 * Staged update deployments (issue 23, docs/update-deployments.md): a player release rolled
 * out to screens in waves; the offer reaches players in the manifest and config (the screens
 * module's update-info seam), and they fetch and report through the player routes.
 */
export const updateDeploymentsModule: PlacardModule = {
  name: 'update-deployments',
  routes: deploymentRoutes,
  install({ deps }) {
    provideUpdateInfo(deps, updateInfo);
    deps.periodic.every(TICK_NAME, TICK_MS, () => tick(deps));
  },
};
