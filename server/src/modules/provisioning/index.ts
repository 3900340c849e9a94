import type { AppDeps } from '../../platform/app-deps.js';
import type { PlacardModule } from '../../platform/module.js';
import { registerStatusContributor } from '../system/index.js';
import { provisioningRoutes } from './provisioning.routes.js';

/** The HTTPS identity screens pin, in `GET /system/status` (section `tls`). */
function tlsStatus(deps: AppDeps): Record<string, unknown> {
  const https = deps.https;
  if (!https) return { enabled: false, httpsPort: deps.config.httpsPort };
  const id = https.identity;
  return {
    enabled: true,
    httpsPort: https.port,
    source: id.source,
    fingerprintSha256: id.fingerprintSha256,
    spkiSha256: id.spkiSha256,
    pin: id.pin,
    subjectAltNames: id.subjectAltNames,
    notAfter: id.notAfter,
    certFile: id.certFile,
  };
}

/** The installer scripts players fetch, and provisioning of new players. */
export const provisioningModule: PlacardModule = {
  name: 'provisioning',
  routes: provisioningRoutes,
  install({ deps }) {
    registerStatusContributor(deps, { key: 'tls', title: 'HTTPS (the key screens pin)', collect: tlsStatus });
  },
};
