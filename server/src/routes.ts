import { healthRoutes } from './modules/health/health.routes.js';
import { openApiRoutes } from './modules/system/openapi.routes.js';
import type { Route } from './platform/http/route.js';

/** Every route of the server, module by module. */
export const ROUTES: readonly Route[] = [...healthRoutes, ...openApiRoutes];
