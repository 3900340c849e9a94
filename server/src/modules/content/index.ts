import type { PlacardModule } from '../../platform/module.js';
import { relayContentChanges } from './changes.js';
import { installContentHooks } from './content.hooks.js';
import { assignmentRoutes } from './assignments.routes.js';
import { impactRoutes } from './impact.routes.js';
import { layoutRoutes } from './layouts.routes.js';
import { readsDeviceContextOnly } from '../screens/index.js';
import { MANIFEST_PATH, manifestRoutes } from './manifest.routes.js';
import { playlistRoutes } from './playlists.routes.js';
import { previewRoutes } from './preview.routes.js';

/**
 * Playlists, layouts and assignments, and what they make with the schedules (modules/schedules/):
 * manifests, plans, now-showing, the schedule preview.
 */
export const contentModule: PlacardModule = {
  name: 'content',
  routes: [...playlistRoutes, ...layoutRoutes, ...previewRoutes, ...assignmentRoutes, ...manifestRoutes, ...impactRoutes],
  install({ deps }) {
    installContentHooks(deps);
    relayContentChanges(deps);
    // Its handler reads the screen's context only: authenticated with it, in one statement.
    readsDeviceContextOnly(deps, MANIFEST_PATH);
  },
};

export { contentChanged, type DepRef } from './changes.js';
export { type ProvidedWindow, provideWindows, type ScreensTargetedFn, type WindowProvider, type WindowTarget } from './windows.js';
export { type ManifestOverlay, type OverlayContext, type OverlayProvider, provideOverlays } from './overlays.js';
export { assertRefs, contentRefs, type LayoutContent, LayoutContentSchema, normalizeContent } from './layouts.repo.js';
export { newItemRow } from './playlists.repo.js';
export type { NewItem } from './playlists.schemas.js';
export { layoutPublishable } from './layouts.publishable.js';
export { playlistDraft, playlistPublishable, playlistSnapshot, type PlaylistSnapshot } from './playlists.publishable.js';
export { type ManifestNetwork, registerManifestNetwork } from './manifest-network.js';
