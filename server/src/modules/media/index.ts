import { assetRoutes } from './assets.routes.js';
import { capabilityRoutes } from './capabilities.routes.js';
import { organizeRoutes } from './organize.routes.js';
import { playerMediaRoutes } from './player.routes.js';
import { uploadRoutes } from './uploads.routes.js';
// Status sections (media, jobs) and maintenance actions (prune-media, reprocess-thumbnails).
import './system.hooks.js';

export { installMedia } from './service.js';
export const mediaRoutes = [...uploadRoutes, ...capabilityRoutes, ...organizeRoutes, ...assetRoutes, ...playerMediaRoutes];
