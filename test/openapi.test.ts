import { validate } from '@readme/openapi-parser';
import t from 'tap';
import { ROUTES } from '../server/src/routes.js';
import { ApiError } from '../server/src/platform/http/errors.js';
import { defineRoute } from '../server/src/platform/http/route.js';
import { startApp } from './helpers/harness.js';
import { sampleRoutes } from './helpers/sample-routes.js';

/** The registered routes the document does not describe, as "METHOD /path". */
function undocumented(doc: any, routes: readonly { method: string; path: string }[]): string[] {
  return routes.filter((r) => !doc.paths?.[r.path]?.[r.method.toLowerCase()]).map((r) => `${r.method} ${r.path}`);
}

t.test('GET /api/v1/openapi.json is a valid OpenAPI 3.1 document covering every route', async (t) => {
  // The sample routes add path params, queries and bodies to what the document must describe.
  const app = await startApp(t, { extraRoutes: sampleRoutes });
  const res = await app.fetch('/api/v1/openapi.json');
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /application\/json/);
  const doc = (await res.json()) as any;

  t.equal(doc.openapi, '3.1.0');
  t.equal(doc.info.version, '0.10.0');
  t.equal(doc.info.license.identifier, 'AGPL-3.0-only');
  t.same(doc.components.securitySchemes.deviceBearer, {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'device credential',
    description: 'svc_device_<public-id>.<secret>',
  });

  const result = await validate(structuredClone(doc));
  t.ok(result.valid, `valid OpenAPI 3.1: ${JSON.stringify('errors' in result ? result.errors : []).slice(0, 2000)}`);

  const registered = [...ROUTES, ...sampleRoutes];
  t.same(undocumented(doc, registered), [], 'every registered route is in the document');
  for (const route of registered) {
    const op = doc.paths?.[route.path]?.[route.method.toLowerCase()];
    t.same(op?.['x-placard-auth'], typeof route.auth === 'string' ? [route.auth] : route.auth, `${route.method} ${route.path} names its auth`);
  }
  // The check is real: a document that lost a route is caught, naming it.
  const lost = structuredClone(doc);
  delete lost.paths['/api/v1/player/heartbeat'].post;
  t.same(undocumented(lost, registered), ['POST /api/v1/player/heartbeat']);
  const ids = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId));
  t.equal(new Set(ids).size, ids.length, 'operation ids are unique');
  t.equal(doc.paths['/api/v1/openapi.json'].get['x-placard-extension'], true, 'extensions are marked');
});

t.test('the validator is real: a broken document fails', async (t) => {
  const app = await startApp(t);
  const doc = (await (await app.fetch('/api/v1/openapi.json')).json()) as any;
  doc.paths['/healthz'].get.parameters = [{ name: 'x', in: 'nowhere' }];
  const result = await validate(doc);
  t.notOk(result.valid);
});

t.test('every status an operation answers is in the document, errors with their envelope', async (t) => {
  const app = await startApp(t);
  const doc = (await (await app.fetch('/api/v1/openapi.json')).json()) as any;
  const missingSchema: string[] = [];
  let operations = 0;
  for (const [p, item] of Object.entries<any>(doc.paths)) {
    for (const [m, op] of Object.entries<any>(item)) {
      operations++;
      t.ok(op.responses['500'], `${m} ${p} lists 500`);
      for (const [status, res] of Object.entries<any>(op.responses)) {
        if (Number(status) < 400) continue;
        const schema = res.content?.['application/json']?.schema?.$ref;
        if (schema !== `#/components/schemas/Error${status}`) missingSchema.push(`${m} ${p} ${status}`);
        if (!Array.isArray(res['x-placard-error-codes']) || res['x-placard-error-codes'].length === 0) missingSchema.push(`${m} ${p} ${status} (codes)`);
      }
    }
  }
  t.ok(operations >= 170, `${operations} operations`);
  t.same(missingSchema, [], 'every error status carries the envelope of its status and its codes');
  t.same(
    doc.components.schemas.Error409.properties.error.properties.code.enum,
    [
      'conflict',
      'plugin_required',
      'plugin_not_installed',
      'artifact_exists',
      'release_source_not_configured',
      'release_source_not_connected',
      'no_device_grant',
      'release_not_cached',
      'deployment_finished',
      'not_failed',
      'version_conflict',
    ],
    'the 409 envelope names its codes',
  );

  // The platform's statuses, from the route's properties (docs/api-conventions.md).
  const statuses = (m: string, p: string) => Object.keys(doc.paths[p][m].responses).map(Number);
  t.same(
    statuses('patch', '/api/v1/playlists/{id}'),
    [200, 400, 401, 403, 404, 412, 413, 415, 500, 503, 507],
    'a session route with a body, a path id and If-Match',
  );
  t.same(doc.paths['/api/v1/playlists/{id}'].patch.responses['403']['x-placard-error-codes'], ['csrf_failed', 'forbidden']);
  t.ok(
    doc.paths['/api/v1/playlists/{id}'].delete.parameters.some((x: any) => x.in === 'header' && x.name === 'if-match'),
    'If-Match is listed where it is taken',
  );
  t.same(statuses('get', '/healthz'), [200, 500], 'a public route outside /api');
  t.same(doc.paths['/api/v1/player/heartbeat'].post.responses['403']['x-placard-error-codes'], ['screen_disabled'], 'device routes: screen_disabled');
  t.same(doc.paths['/api/v1/users'].post.responses['409']['x-placard-error-codes'], ['conflict'], 'a declared error names its code');
  t.ok(doc.paths['/api/v1/auth/login'].post.responses['429'].headers['Retry-After'], 'rate-limited routes: 429 with Retry-After');
  // The pairs issue 15 found answered but undocumented.
  for (const [m, p, s] of [
    ['patch', '/api/v1/uploads/{id}', 409],
    ['patch', '/api/v1/uploads/{id}', 412],
    ['patch', '/api/v1/uploads/{id}', 460],
    ['post', '/api/v1/uploads', 400],
    ['post', '/api/v1/uploads', 413],
    ['post', '/api/v1/uploads', 415],
    ['delete', '/api/v1/content-folders/{id}', 409],
    ['delete', '/api/v1/assets/{id}', 409],
    ['post', '/api/v1/content-tags', 409],
    ['get', '/api/v1/assets/{id}/preview', 416],
    ['get', '/api/v1/player/pairing-sessions/{id}', 401],
    ['post', '/api/v1/auth/mfa/passkey/options', 401],
    ['post', '/api/v1/me/security/totp/confirm', 429],
    ['get', '/install.sh', 400],
    ['delete', '/api/v1/schedules/{id}', 400],
  ] as const) {
    t.ok(doc.paths[p][m].responses[String(s)], `${m.toUpperCase()} ${p} documents ${s}`);
  }
  // Files by their real types; explicit HEAD routes listed.
  t.same(Object.keys(doc.paths['/api/v1/assets/{id}/preview'].get.responses['200'].content), ['image/*', 'video/*', 'audio/*', 'application/pdf']);
  t.same(Object.keys(doc.paths['/api/v1/assets/{id}/thumbnail'].get.responses['206'].content), ['image/webp']);
  for (const p of ['/api/v1/uploads/{id}', '/api/v1/install/linux/artifact', '/api/v1/install/mirroring/receiver'])
    t.ok(doc.paths[p].head, `HEAD ${p} is listed`);
  // The heartbeat's fields a player sends: typed by their zod schemas and described, although any value is accepted.
  const hb = doc.components.schemas.HeartbeatBody.properties;
  t.same(hb.playerFamily.enum, ['android', 'desktop-linux', 'edge', null]);
  t.match(hb.playerFamily.description, /recorded as absent/);
  t.same(hb.playerArchitecture.enum, ['x86_64', 'aarch64', null]);
  t.match(hb.playerArchitecture.description, /edge family only/);
  t.same(hb.playerVersion.anyOf, [{ type: 'string', maxLength: 100 }, { type: 'null' }]);
  for (const f of ['currentPlaylistId', 'currentLayoutId', 'currentItemId', 'currentAssetId', 'currentScheduleId', 'currentCampaignId']) {
    t.match(hb[f]?.anyOf, [{ type: 'string', format: 'uuid' }, { type: 'null' }], `${f} is typed`);
    t.match(hb[f]?.description, /ignoredFields/, `${f} is described`);
  }
  for (const p of ['/api/v1/player/pairing-sessions', '/api/v1/player/enroll']) {
    const body = doc.paths[p].post.requestBody.content['application/json'].schema;
    t.same(body.properties.playerFamily.enum, ['android', 'desktop-linux', 'edge', null], `${p}: playerFamily typed`);
  }
  // Every collection answers the list envelope; the player history's kinds are a closed list.
  const commands = doc.paths['/api/v1/player/commands'].get;
  t.same(commands.responses['200'].content['application/json'].schema.properties.data.required, ['items', 'nextCursor']);
  t.same(
    commands.parameters.map((p: { name: string }) => p.name),
    ['limit', 'cursor'],
  );
  const kind = doc.paths['/api/v1/screens/{id}/player-history'].get.parameters.find((p: { name: string }) => p.name === 'kind');
  t.match(kind.schema.pattern, /heartbeat\|liveness/);
});

t.test('the response check refuses what a route does not declare (PLACARD_VALIDATE_RESPONSES)', async (t) => {
  const routes = [
    defineRoute({
      method: 'GET',
      path: '/api/v1/test-undeclared',
      auth: 'public',
      tags: ['Test'],
      summary: 'throws a status it does not declare',
      responses: { 200: { description: 'never' } },
      handler: () => {
        throw new ApiError('conflict', 'undeclared');
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/test-declared',
      auth: 'public',
      tags: ['Test'],
      summary: 'throws a status it declares',
      responses: { 200: { description: 'never' }, 409: { description: 'conflict: always' } },
      handler: () => {
        throw new ApiError('conflict', 'declared');
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/test-wrong-type',
      auth: 'public',
      tags: ['Test'],
      summary: 'writes a content type it does not declare',
      responses: { 200: { description: 'a PNG', content: { 'image/png': {} } } },
      handler: (ctx) => {
        ctx.type = 'image/jpeg';
        ctx.body = Buffer.from([0xff, 0xd8]);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/test-written-status',
      auth: 'public',
      tags: ['Test'],
      summary: 'writes a status it does not declare',
      responses: { 200: { description: 'text', content: { 'text/plain': {} } } },
      handler: (ctx) => {
        ctx.status = 202;
        ctx.type = 'text/plain';
        ctx.body = 'accepted';
      },
    }),
  ];
  const app = await startApp(t, { extraRoutes: routes });
  const undeclared = await app.json('/api/v1/test-undeclared');
  t.equal(undeclared.status, 500, 'an undeclared status is refused');
  t.equal(undeclared.body.error.code, 'internal');
  const declared = await app.json('/api/v1/test-declared');
  t.equal(declared.status, 409, 'a declared one passes');
  t.equal(declared.body.error.code, 'conflict');
  t.equal((await app.fetch('/api/v1/test-wrong-type')).status, 500, 'an undeclared content type is refused');
  t.equal((await app.fetch('/api/v1/test-written-status')).status, 500, 'a status written by the handler is checked too');
  t.equal((await app.fetch('/api/v1/test-undeclared', { method: 'HEAD' })).status, 500, 'HEAD is checked like GET');
  // Off (production): the answers go out as the handler made them.
  const lax = await startApp(t, { extraRoutes: routes, config: { validateResponses: false } });
  t.equal((await lax.json('/api/v1/test-undeclared')).status, 409);
  t.equal((await lax.fetch('/api/v1/test-wrong-type')).status, 200);
});
