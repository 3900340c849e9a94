import type { AppDeps } from '../../app.js';
import type { RealtimeHub } from '../../platform/realtime/hub.js';
import { resolveDeviceCredential } from './device-auth.js';

/** Wires the screens module into the app: the socket's credential check and periodic jobs. */
export function installScreens(deps: AppDeps, realtime: RealtimeHub): void {
  realtime.setAuthenticator(async (token) => {
    const { screen, credentialId } = await resolveDeviceCredential(deps.db, token);
    return { screenId: screen.id, credentialId, manifestRevision: screen.manifest_revision };
  });
}
