import type { PlacardModule } from '../../platform/module.js';
import { authRoutes } from './auth.routes.js';
import { meRoutes } from './me.routes.js';
import { passwordRoutes } from './passwords.routes.js';
import { installSessions } from './sessions.js';
import { tokenRoutes } from './tokens.routes.js';
import { userRoutes } from './users.routes.js';

/** Users, sign-in (passwords, passkeys, TOTP), sessions and integration tokens. */
export const accountsModule: PlacardModule = {
  name: 'accounts',
  routes: [...authRoutes, ...meRoutes, ...userRoutes, ...passwordRoutes, ...tokenRoutes],
  install({ app, deps, secrets }) {
    installSessions(app, deps, secrets.derive('session-cookie').toString('base64url'));
  },
};

export { throttled } from './accounts.context.js';
export { directoryEntry, userDirectory, type DirectoryEntry } from './directory.js';
export { setTokenTableResolver, tokenMayWriteTable, type TableResolver } from './tokens.grants.js';
