import t from 'tap';
import { ROUTES } from '../server/src/routes.js';
import { authKinds, type Route } from '../server/src/platform/http/route.js';
import { roleAtLeast } from '../server/src/platform/http/auth.js';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';

/**
 * The routes that may answer without a credential. A new public route must be added here
 * on purpose (with the reason), so nothing becomes public by accident.
 */
const PUBLIC_ROUTES = new Set([
  'GET /healthz', // monitoring
  'GET /readyz',
  'GET /api/v1/openapi.json', // the API description
  'GET /api/v1/system/identity', // players and installers check they reached the right server
  'GET /api/v1/auth/status', // what the console shows before sign-in
  'POST /api/v1/auth/setup', // the first owner (refused once a user exists)
  'POST /api/v1/auth/login',
  'POST /api/v1/auth/logout', // also ends a half-signed-in session; needs a session itself
  'POST /api/v1/auth/mfa/verify', // needs the half-signed-in session itself
  'POST /api/v1/auth/mfa/passkey/options',
  'POST /api/v1/auth/passkey/login/options',
  'POST /api/v1/auth/passkey/login',
  'POST /api/v1/auth/password-link/check', // the set-password page, before its user has a password
  'POST /api/v1/auth/password-link/use',
  'GET /install.sh', // installers run before a device has a credential
  'GET /install/player.service',
  'GET /api/v1/install/linux',
  'GET /api/v1/install/linux/artifact',
  'HEAD /api/v1/install/linux/artifact',
  'GET /install-mirroring.sh',
  'GET /api/v1/install/mirroring/receiver',
  'HEAD /api/v1/install/mirroring/receiver',
  'GET /api/v1/install/mirroring/receiver.sha256',
  'OPTIONS /api/v1/uploads', // tus capability discovery
  'POST /api/v1/player/pairing-sessions', // a player without a credential starts pairing
  'GET /api/v1/player/pairing-sessions/{id}',
  'POST /api/v1/player/enroll',
  'GET /api/v1/demo', // whether the instance is a demo (console banner)
]);

const ID = '0190f5a2-7b3c-7def-8abc-0123456789ab';
const concrete = (path: string) => path.replace(/\{id\}|\{\w*Id\}/g, ID).replace(/\{\w+\}/g, 'x');
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const label = (route: Route) => `${route.method} ${route.path}`;
// HEAD answers carry no body: their status is checked, the error code is not visible.

t.test('public routes are exactly the allow-listed ones', async (t) => {
  const publicNow = ROUTES.filter((r) => authKinds(r).includes('public')).map(label);
  for (const route of publicNow) t.ok(PUBLIC_ROUTES.has(route), `${route} is public and on the allow-list`);
  for (const listed of PUBLIC_ROUTES) t.ok(publicNow.includes(listed), `${listed} on the allow-list still exists and is public`);
});

t.test('every registered route enforces its auth kind', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const viewer = await signIn(app, { role: 'viewer' });
  // A real integration token with every capability, made by the owner.
  const made = await app.json('/api/v1/integration-tokens', {
    method: 'POST',
    json: { name: 'walk', capabilities: ['manual_table_rows:write', 'fleet_health:read'] },
    headers: owner.headers,
  });
  t.equal(made.status, 201);
  const integration = { authorization: `Bearer ${made.body.data.token}` };
  const unknownIntegration = { authorization: `Bearer ${made.body.data.token.replace(/\.[^.]+$/, `.${'A'.repeat(43)}`)}` };
  const deviceLike = { authorization: 'Bearer svc_device_abcdefgh.abcdefghijklmnopqrstuvwxyz' };
  const malformed = { authorization: 'Bearer not-a-placard-credential' };

  let checked = 0;
  let roleChecked = 0;
  for (const route of ROUTES) {
    const kinds = authKinds(route);
    if (kinds.includes('public')) continue;
    const path = concrete(route.path);
    const init = (headers: Record<string, string>, p = path) =>
      [
        p,
        {
          method: route.method,
          headers: { ...headers, ...(route.body ? { 'content-type': 'application/json' } : {}) },
          ...(route.body ? { body: '{}' } : {}),
        },
      ] as const;
    const expect401 = async (headers: Record<string, string>, code: string, what: string) => {
      const res = await app.json(...init(headers));
      t.equal(res.status, 401, `${label(route)} ${what}: 401`);
      if (route.method !== 'HEAD') t.equal(res.body?.error?.code, code, `${label(route)} ${what}: ${code}`);
    };
    const takesIntegration = kinds.some((k) => k.startsWith('integration:'));

    await expect401({}, 'unauthenticated', 'without a credential');
    await expect401(malformed, 'invalid_credential', 'with a bearer of no known kind');
    if (kinds.includes('device')) await expect401(deviceLike, 'invalid_credential', 'with an unknown device credential');
    else await expect401(deviceLike, 'unauthenticated', 'with a device credential');
    if (takesIntegration) {
      await expect401(unknownIntegration, 'invalid_credential', 'with an unknown integration token');
      const res = await app.json(...init(integration));
      t.not(res.status, 401, `${label(route)} accepts the integration token`);
    } else {
      await expect401(integration, 'unauthenticated', 'with an integration token');
    }
    if (!kinds.includes('session')) await expect401(owner.headers, 'unauthenticated', 'with a console session');

    // Roles: a viewer is refused every route that needs more, before anything else is
    // looked at (a made-up id, even one that is not a UUID, still answers 403).
    if (kinds.includes('session') && route.minRole && !roleAtLeast('viewer', route.minRole)) {
      for (const p of route.params ? [path, route.path.replace(/\{[^}]+\}/g, 'not-a-uuid')] : [path]) {
        const res = await app.json(...init(viewer.headers, p));
        t.equal(res.status, 403, `${label(route)} as a viewer (${p}): 403`);
        if (route.method !== 'HEAD') t.equal(res.body?.error?.code, 'forbidden', `${label(route)} as a viewer: forbidden`);
      }
      if (UNSAFE.has(route.method)) roleChecked++;
    }
    checked++;
  }
  t.ok(checked >= 100, `walked ${checked} authenticated routes`);
  t.ok(roleChecked >= 30, `${roleChecked} unsafe routes refuse a viewer`);
  t.equal((await app.json('/api/v1/me/security', { headers: viewer.headers })).status, 200, 'the viewer’s session survived the walk');
  t.equal((await app.json('/api/v1/me/security', { headers: owner.headers })).status, 200, 'so did the owner’s');
});
