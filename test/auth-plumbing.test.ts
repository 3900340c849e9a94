import t from 'tap';
import { z } from 'zod';
import type { Authenticators } from '../server/src/platform/http/auth.js';
import { ApiError } from '../server/src/platform/http/errors.js';
import { defineRoute, ok } from '../server/src/platform/http/route.js';
import { checkRoutes } from '../server/src/platform/http/router.js';
import { startApp } from './helpers/harness.js';

const Who = z.object({ kind: z.string() });
const route = (path: string, auth: any, extra: object = {}) =>
  defineRoute({
    method: 'POST',
    path,
    auth,
    tags: ['Test'],
    summary: path,
    body: z.object({ n: z.number() }),
    responses: { 200: { description: 'who', data: Who } },
    handler: (_ctx, { auth }) => ok({ kind: auth.kind }),
    ...extra,
  });

const routes = [
  route('/api/v1/t/session', 'session'),
  route('/api/v1/t/admin', 'session', { minRole: 'admin' }),
  route('/api/v1/t/device', 'device'),
  route('/api/v1/t/fleet', ['session', 'integration:fleet_health:read']),
  route('/api/v1/t/public', 'public'),
];

// Test resolvers standing in for the account and screen modules (issues 3 and 4):
// they exercise the central enforcement, which is what this test is about.
const authenticators: Authenticators = {
  session: async (ctx) => {
    const role = ctx.get('x-test-role');
    return role ? { kind: 'session', userId: 'u', role: role as 'viewer', sessionId: 's' } : null;
  },
  device: async (_ctx, token) => {
    if (token === 'svc_device_revoked.x') throw new ApiError('credential_revoked', 'revoked');
    if (token !== 'svc_device_good.secret') throw new ApiError('invalid_credential', 'unknown');
    return { kind: 'device', screenId: 's1', credentialId: 'c1' };
  },
  integration: async (_ctx, token) => ({
    kind: 'integration',
    tokenId: 't',
    capabilities: token === 'svci_fleet.x' ? ['fleet_health:read'] : ['manual_table_rows:write'],
    dataSourceIds: [],
  }),
};

t.test('auth kinds are enforced centrally, before validation', async (t) => {
  const app = await startApp(t, { extraRoutes: routes, authenticators });
  const post = (path: string, headers: Record<string, string> = {}, json: unknown = { n: 1 }) => app.json(path, { method: 'POST', headers, json });

  t.equal((await post('/api/v1/t/public')).body.data.kind, 'anonymous');

  let res = await post('/api/v1/t/session', {}, { n: 'not a number' });
  t.equal(res.status, 401, 'no session: 401 even with a bad body');
  t.equal(res.body.error.code, 'unauthenticated');

  res = await post('/api/v1/t/session', { 'x-test-role': 'viewer' });
  t.equal(res.body.data.kind, 'session');

  res = await post('/api/v1/t/session', { authorization: 'Bearer svc_device_good.secret' });
  t.equal(res.status, 401, 'a device credential on a console route is 401');
  t.equal(res.body.error.code, 'unauthenticated');

  res = await post('/api/v1/t/admin', { 'x-test-role': 'editor' });
  t.equal(res.status, 403, 'role below minRole');
  t.equal(res.body.error.code, 'forbidden');
  res = await post('/api/v1/t/admin', { 'x-test-role': 'owner' });
  t.equal(res.status, 200, 'a stronger role passes');

  res = await post('/api/v1/t/device', { authorization: 'Bearer svc_device_good.secret' });
  t.equal(res.body.data.kind, 'device');
  res = await post('/api/v1/t/device', { authorization: 'Bearer svc_device_revoked.x' });
  t.equal(res.body.error.code, 'credential_revoked');
  res = await post('/api/v1/t/device', { authorization: 'Bearer svc_device_nope.x' });
  t.equal(res.body.error.code, 'invalid_credential');
  res = await post('/api/v1/t/device', { authorization: 'Bearer something-else' });
  t.equal(res.status, 401);
  t.equal(res.body.error.code, 'invalid_credential');
  res = await post('/api/v1/t/device', { 'x-test-role': 'owner' });
  t.equal(res.status, 401, 'a session on a device route is 401');

  res = await post('/api/v1/t/fleet', { authorization: 'Bearer svci_fleet.x' });
  t.equal(res.body.data.kind, 'integration');
  res = await post('/api/v1/t/fleet', { authorization: 'Bearer svci_rows.x' });
  t.equal(res.status, 403, 'a token without the capability');
  res = await post('/api/v1/t/device', { authorization: 'Bearer svci_fleet.x' });
  t.equal(res.status, 401, 'an integration token on a device route');
});

t.test('without installed resolvers only public routes answer', async (t) => {
  // An empty set of resolvers: no credential of any kind can be checked, so none is accepted.
  const app = await startApp(t, { extraRoutes: routes, authenticators: {} });
  const post = (path: string, headers: Record<string, string>) => app.json(path, { method: 'POST', json: { n: 1 }, headers });
  t.equal((await post('/api/v1/t/public', {})).status, 200, 'public routes need no resolver');
  for (const [path, headers] of [
    ['/api/v1/t/session', { 'x-test-role': 'owner' }],
    ['/api/v1/t/device', { authorization: 'Bearer svc_device_good.secret' }],
    ['/api/v1/t/fleet', { authorization: 'Bearer svci_fleet.x' }],
  ] as const) {
    const res = await post(path, headers);
    t.equal(res.status, 401, `${path} without its resolver`);
    t.equal(res.body.error.code, 'unauthenticated');
  }
});

t.test('no route can be registered without an auth kind or a param schema', async (t) => {
  const base = { method: 'GET' as const, tags: [], summary: 's', responses: {}, handler: () => undefined };
  t.throws(() => checkRoutes([defineRoute({ ...base, path: '/x', auth: [] })]), /without an auth kind/);
  // Routes the type checker did not see (plain JS): a missing or unknown kind is refused at start.
  t.throws(() => checkRoutes([{ ...base, path: '/x' } as any]), /without an auth kind/);
  t.throws(() => checkRoutes([defineRoute({ ...base, path: '/x', auth: 'sesion' as any })]), /unknown auth kind "sesion"/);
  t.throws(() => checkRoutes([defineRoute({ ...base, path: '/x', auth: 'integration:everything' as any })]), /unknown auth kind/);
  t.throws(() => checkRoutes([defineRoute({ ...base, path: '/x', auth: ['public', 'session'] })]), /public route/);
  t.throws(() => checkRoutes([defineRoute({ ...base, path: '/x/{id}', auth: 'public' })]), /\{id\} has no schema/);
  t.throws(() => checkRoutes([defineRoute({ ...base, path: '/x', auth: 'public' }), defineRoute({ ...base, path: '/x', auth: 'public' })]), /defined twice/);
});
