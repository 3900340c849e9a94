import type { PlacardModule } from '../../platform/module.js';
import { accessRoutes } from './access.routes.js';
import { catalogRoutes } from './catalog.routes.js';
import { dataSourceRoutes } from './data-sources.routes.js';
import { probeRoutes } from './probe.routes.js';
import { viewRoutes } from './views.routes.js';
import { REFRESH_TICK_MS, refreshDue } from './refresh.js';

/**
 * Data sources (issue 17, spec 4.5, docs/data-sources.md): providers, snapshots, refresh,
 * diagnostics, preview and inspect, access. The provider contract is providers/types.ts.
 */
export const dataSourcesModule: PlacardModule = {
  name: 'data-sources',
  routes: [...catalogRoutes, ...dataSourceRoutes, ...probeRoutes, ...viewRoutes, ...accessRoutes],
  install({ deps, secrets }) {
    deps.periodic.every('data-sources.refresh', REFRESH_TICK_MS, () => refreshDue(deps, secrets).then(() => undefined));
  },
};

// What other modules may use (widgets, outputs), and nothing else:
export { currentData } from './data-sources.service.js';
export { addDataChangeHook, addDataSourceUsageFinder, type DataChange, type DataSourceUsage } from './hooks.js';
export type { Snapshot } from './data-sources.repo.js';
