import type { Route } from '../../platform/http/route.js';
import { playlistRoutes } from './playlists.routes.js';

/** Every route of the content module (playlists, layouts, schedules, assignments, manifest). */
export const contentRoutes: readonly Route[] = [...playlistRoutes];
