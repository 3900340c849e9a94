import type { Route } from '../../platform/http/route.js';
import { assignmentRoutes } from './assignments.routes.js';
import { impactRoutes } from './impact.routes.js';
import { layoutRoutes } from './layouts.routes.js';
import { manifestRoutes } from './manifest.routes.js';
import { playlistRoutes } from './playlists.routes.js';
import { scheduleRoutes } from './schedules.routes.js';

/** Every route of the content module (playlists, layouts, schedules, assignments, manifest). */
export const contentRoutes: readonly Route[] = [...playlistRoutes, ...layoutRoutes, ...scheduleRoutes, ...assignmentRoutes, ...manifestRoutes, ...impactRoutes];
