import type { PlacardModule } from '../../platform/module.js';
import { registerManifestNetwork } from '../content/index.js';
import { addScheduleChangeHook } from '../schedules/index.js';
import { registerTargetReferences } from '../screens/index.js';
import { contentChanged } from '../content/index.js';
import { deleteMembership, followersOfLeaders } from './networks.repo.js';
import { networkRoutes } from './networks.routes.js';
import { manifestNetwork } from './networks.service.js';

/**
 * Presentation networks (issue 21, docs/presentation-networks.md): screens that play in
 * step, the leader's timeline on every member, item boundaries from a shared epoch.
 */
export const presentationNetworksModule: PlacardModule = {
  name: 'presentation-networks',
  routes: networkRoutes,
  install({ deps }) {
    registerManifestNetwork(deps, manifestNetwork);
    // A deleted screen leaves its network (the foreign key cascades too).
    registerTargetReferences(deps, 'presentation-networks', {
      async usages() {
        return [];
      },
      async forget(db, kind, id) {
        if (kind === 'screen') await deleteMembership(db, id);
      },
    });
    // A schedule that reaches a leader changes what its members play.
    addScheduleChangeHook(deps, async (deps, _scheduleId, screenIds) => {
      const followers = await followersOfLeaders(deps.db, screenIds);
      if (followers.length) await contentChanged(deps, [], followers);
    });
  },
};
