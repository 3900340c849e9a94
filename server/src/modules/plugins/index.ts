import type { PlacardModule } from '../../platform/module.js';
import { provideOverlays } from '../content/index.js';
import { addAssetUsageFinder } from '../media/index.js';
import { registerTargetReferences } from '../screens/index.js';
import { pluginRoutes } from './plugins.routes.js';
import { forgetTarget, screensNamedByInstances } from './plugins.repo.js';
import { assetUsages, screenOverlays } from './plugins.service.js';

/**
 * Plugins (issue 22, docs/plugins.md): the built-in plugins, their installation and
 * dependencies, their instances (overlays placed on targets) and the manifest's `overlays`.
 */
export const pluginsModule: PlacardModule = {
  name: 'plugins',
  routes: pluginRoutes,
  install({ deps }) {
    provideOverlays(deps, screenOverlays, screensNamedByInstances);
    addAssetUsageFinder(deps, assetUsages);
    // A deleted screen, group or location leaves the instances that targeted it (an instance
    // left with no target reaches nothing until edited).
    registerTargetReferences(deps, 'plugins', {
      async usages() {
        return [];
      },
      forget: forgetTarget,
    });
  },
};

export { addPluginPurgeHook, instanceScreenIds, pluginInstalled, type PurgeHook } from './plugins.service.js';
export { CATALOG, INSTANCE_PLUGINS, type InstancePluginId } from './catalog.js';
