import type { AppDeps } from './platform/app-deps.js';
import { sessionAuthenticator } from './modules/accounts/sessions.js';
import { integrationAuthenticator } from './modules/accounts/tokens.service.js';
import { deviceAuthenticator } from './modules/screens/device-auth.js';
import type { Authenticators } from './platform/http/auth.js';

/**
 * The credential resolvers of the feature modules, composed once per app. Each module
 * adds its own: `session` (accounts), `device` (screens), `integration` (accounts).
 */
export function defaultAuthenticators(deps: AppDeps): Authenticators {
  return {
    session: sessionAuthenticator(deps.db),
    integration: integrationAuthenticator(deps.db),
    device: deviceAuthenticator(deps.db),
  };
}
