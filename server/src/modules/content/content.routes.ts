import type { Route } from '../../platform/http/route.js';
import { assignmentRoutes } from './assignments.routes.js';
import { impactRoutes } from './impact.routes.js';
import { layoutRoutes } from './layouts.routes.js';
import { manifestRoutes } from './manifest.routes.js';
import { playlistRoutes } from './playlists.routes.js';
import { previewRoutes } from './preview.routes.js';

/** Every route of the content module (playlists, layouts, assignments, manifest, the schedule preview). */
export const contentRoutes: readonly Route[] = [...playlistRoutes, ...layoutRoutes, ...previewRoutes, ...assignmentRoutes, ...manifestRoutes, ...impactRoutes];
