import type { PlacardModule } from '../../platform/module.js';
import { installContentHooks } from './content.hooks.js';
import { contentRoutes } from './content.routes.js';

/**
 * Playlists, layouts and assignments, and what they make with the schedules (modules/schedules/):
 * manifests, plans, now-showing, the schedule preview.
 */
export const contentModule: PlacardModule = {
  name: 'content',
  routes: contentRoutes,
  install({ deps }) {
    installContentHooks(deps);
  },
};

export { contentChanged, type DepRef } from './changes.js';
export { assertRefs, LayoutContentSchema, normalizeContent } from './layouts.repo.js';
export { newItemRow } from './playlists.repo.js';
export type { NewItem } from './playlists.schemas.js';
