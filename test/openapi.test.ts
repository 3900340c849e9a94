import { validate } from '@readme/openapi-parser';
import t from 'tap';
import { ROUTES } from '../server/src/routes.js';
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
