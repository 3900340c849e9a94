import type { PlacardModule } from '../../platform/module.js';
import { assetRoutes } from './assets.routes.js';
import { capabilityRoutes } from './capabilities.routes.js';
import { organizeRoutes } from './organize.routes.js';
import { playerMediaRoutes } from './player-media.routes.js';
import { installMedia } from './service.js';
import { registerMediaSystemHooks } from './system.hooks.js';
import { uploadRoutes } from './uploads.routes.js';
import { websiteRoutes } from './websites.routes.js';

/** The media library: uploads (tus), processing, the store, assets, folders and tags. */
export const mediaModule: PlacardModule = {
  name: 'media',
  routes: [...uploadRoutes, ...capabilityRoutes, ...organizeRoutes, ...assetRoutes, ...websiteRoutes, ...playerMediaRoutes],
  install({ app, deps }) {
    // Status sections (media, jobs), the restore participant and the maintenance actions.
    registerMediaSystemHooks(deps);
    installMedia(app, deps);
  },
};

export { addAssetChangeHook, addAssetUsageFinder, addPlayerAssetGuard, fireAssetChange, type Usage } from './hooks.js';
export { mediaServiceOf, type MediaService } from './service.js';
export { fetchPolicy } from './limits.js';
export { deleteOwnAssets, folderNamed } from './assets.service.js';
export { ASSET_KINDS } from './media.schemas.js';
