import type { PlacardModule } from '../../platform/module.js';
import { provisioningRoutes } from './provisioning.routes.js';

/** The installer scripts players fetch, and provisioning of new players. */
export const provisioningModule: PlacardModule = { name: 'provisioning', routes: provisioningRoutes };
