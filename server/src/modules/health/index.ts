import type { PlacardModule } from '../../platform/module.js';
import { healthRoutes } from './health.routes.js';

/** Liveness and readiness (/healthz, /readyz). */
export const healthModule: PlacardModule = { name: 'health', routes: healthRoutes };
