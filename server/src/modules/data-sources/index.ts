import type { PlacardModule } from '../../platform/module.js';
import { accessRoutes } from './access.routes.js';
import { catalogRoutes } from './catalog.routes.js';
import { dataSourceRoutes } from './data-sources.routes.js';
import { formRoutes } from './forms.routes.js';
import { probeRoutes } from './probe.routes.js';
import { recordFileRoutes } from './records-attachments.routes.js';
import { recordRoutes } from './records.routes.js';
import { RECORDS_SCHEDULE_TICK_MS, scheduleTick } from './records-inbox.js';
import { viewRoutes } from './views.routes.js';
import { setTokenTableResolver } from '../accounts/index.js';
import { addAssetChangeHook, addAssetUsageFinder } from '../media/index.js';
import { providersOf } from './data-sources.repo.js';
import { addDataChangeHook } from './hooks.js';
import { fetchDeletedImagesAgain, imageAssetUsages } from './images.service.js';
import { outputRoutes } from './outputs.routes.js';
import { onDataChange, outputsTick } from './outputs.service.js';
import { REFRESH_TICK_MS, refreshDue } from './refresh.js';

/**
 * Data sources (issue 17, spec 4.5, docs/data-sources.md): providers, snapshots, refresh,
 * diagnostics, preview and inspect, access. The provider contract is providers/types.ts.
 */
export const dataSourcesModule: PlacardModule = {
  name: 'data-sources',
  routes: [
    ...catalogRoutes,
    ...dataSourceRoutes,
    ...probeRoutes,
    ...viewRoutes,
    ...outputRoutes,
    ...accessRoutes,
    ...formRoutes,
    ...recordRoutes,
    ...recordFileRoutes,
  ],
  install({ deps, secrets }) {
    deps.periodic.every('data-sources.refresh', REFRESH_TICK_MS, () => refreshDue(deps, secrets).then(() => undefined));
    // Outputs follow the data before anything else hears of a change.
    addDataChangeHook(deps, onDataChange);
    addAssetUsageFinder(deps, imageAssetUsages);
    addAssetChangeHook(deps, (deps, event) => (event.change === 'deleted' ? fetchDeletedImagesAgain(deps, event.assetIds) : undefined));
    deps.periodic.every('data-sources.outputs', 60_000, () => outputsTick(deps));
    // Integration tokens may be granted manual tables (issue 18): accounts asks which ids are ones.
    setTokenTableResolver(deps, async (db, ids) => {
      const providers = await providersOf(db, ids);
      return new Map([...providers].map(([id, provider]) => [id, { manualTable: provider === 'manual-table' }]));
    });
    // Records' publishing windows (publishAt / unpublishAt): the first tick comes right after start.
    deps.periodic.every('data-sources.records-schedule', RECORDS_SCHEDULE_TICK_MS, () => scheduleTick(deps));
  },
};

// What other modules may use (content, widgets), and nothing else:
export { currentData, existingSourceIds, viewProblems } from './data-sources.service.js';
export {
  addContentDefinitions,
  type ContentDefinition,
  addDataChangeHook,
  addDataSourceScreenFinder,
  addDataSourceUsageFinder,
  addOutputChangeHook,
  addPlayerDataGuard,
  type DataChange,
  type DataSourceUsage,
  type OutputChange,
} from './hooks.js';
export { outputDocument, outputFor, type OutputAnswer, type OutputRef } from './outputs.service.js';
export { viewKeyOf } from './outputs.js';
export { viewSchema, type View } from './views.js';
export type { Snapshot } from './data-sources.repo.js';
