import type { PlacardModule } from '../../platform/module.js';
import { installContentHooks } from './content.hooks.js';
import { contentRoutes } from './content.routes.js';

/** Playlists, layouts, schedules and assignments, and what they make: manifests, plans, now-showing. */
export const contentModule: PlacardModule = {
  name: 'content',
  routes: contentRoutes,
  install({ deps }) {
    installContentHooks(deps);
  },
};

export { contentChanged, type DepRef } from './changes.js';
export { assertRefs, LayoutContentSchema, normalizeContent } from './layouts.repo.js';
export { newItemRow, type NewItem } from './playlists.repo.js';
export { prepare, writeTargets } from './schedules.routes.js';
