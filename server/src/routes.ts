import { authRoutes } from './modules/accounts/auth.routes.js';
import { meRoutes } from './modules/accounts/me.routes.js';
import { passwordRoutes } from './modules/accounts/passwords.routes.js';
import { tokenRoutes } from './modules/accounts/tokens.js';
import { userRoutes } from './modules/accounts/users.routes.js';
import { contentRoutes } from './modules/content/content.routes.js';
import { demoRoutes } from './modules/demo/demo.routes.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { mediaRoutes } from './modules/media/index.js';
import { identityRoutes } from './modules/system/identity.routes.js';
import { openApiRoutes } from './modules/system/openapi.routes.js';
import { systemRoutes } from './modules/system/system.routes.js';
import { provisioningRoutes } from './modules/provisioning/provisioning.routes.js';
import { pairingRoutes } from './modules/screens/pairing.routes.js';
import { playerRoutes } from './modules/screens/player.routes.js';
import { commandRoutes } from './modules/screens/commands.js';
import { fleetRoutes } from './modules/screens/fleet.routes.js';
import { groupRoutes } from './modules/screens/groups.routes.js';
import { locationRoutes } from './modules/screens/locations.routes.js';
import { screenRoutes } from './modules/screens/screens.routes.js';
import type { Route } from './platform/http/route.js';

/** Every route of the server, module by module. */
export const ROUTES: readonly Route[] = [
  ...healthRoutes,
  ...openApiRoutes,
  ...identityRoutes,
  ...authRoutes,
  ...meRoutes,
  ...userRoutes,
  ...passwordRoutes,
  ...tokenRoutes,
  ...systemRoutes,
  ...provisioningRoutes,
  ...mediaRoutes,
  ...pairingRoutes,
  ...playerRoutes,
  ...screenRoutes,
  ...locationRoutes,
  ...groupRoutes,
  ...commandRoutes,
  ...fleetRoutes,
  ...contentRoutes,
  ...demoRoutes,
];
