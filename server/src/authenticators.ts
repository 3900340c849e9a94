import type { AppDeps } from './app.js';
import type { Authenticators } from './platform/http/auth.js';

/**
 * The credential resolvers of the feature modules, composed once per app. Each module
 * adds its own: `session` (accounts), `device` (screens), `integration` (accounts).
 */
export function defaultAuthenticators(_deps: AppDeps): Authenticators {
  return {};
}
