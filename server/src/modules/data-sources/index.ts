import type { PlacardModule } from '../../platform/module.js';

/**
 * Data sources (issue 17, spec 4.5): providers, snapshots, views and the outputs players
 * download. Routes arrive with the module's service; the provider contract is
 * providers/types.ts.
 */
export const dataSourcesModule: PlacardModule = { name: 'data-sources', routes: [] };
