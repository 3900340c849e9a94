import t from 'tap';
import { startApp } from './helpers/harness.js';
import { sampleRoutes } from './helpers/sample-routes.js';

const ID = '0190f5a2-7b3c-7def-8abc-0123456789ab';

t.test('HTTP conventions', async (t) => {
  const app = await startApp(t, { extraRoutes: sampleRoutes, config: { jsonLimitBytes: 4096 } });

  t.test('unknown route: 404 not_found in the envelope', async (t) => {
    const res = await app.json('/api/v1/nope');
    t.equal(res.status, 404);
    t.same(Object.keys(res.body), ['error']);
    t.equal(res.body.error.code, 'not_found');
    t.type(res.body.error.message, 'string');
  });

  t.test('paths are case-sensitive: /API/... is not /api/... (path checks such as the restore gate rely on it)', async (t) => {
    const res = await app.json('/API/v1/test-things', { method: 'POST', json: { name: 'a', count: 1 } });
    t.equal(res.status, 404);
    t.equal(res.body.error.code, 'not_found');
  });

  t.test('wrong method: 405 with Allow', async (t) => {
    const res = await app.json(`/api/v1/test-things/${ID}`, { method: 'PUT' });
    t.equal(res.status, 405);
    t.equal(res.body.error.code, 'method_not_allowed');
    const allow = (res.headers.get('allow') ?? '').split(/,\s*/).sort();
    t.same(allow, ['DELETE', 'GET', 'HEAD']);
  });

  t.test('OPTIONS answers 204 with Allow', async (t) => {
    const res = await app.fetch('/api/v1/test-things', { method: 'OPTIONS' });
    t.equal(res.status, 204);
    t.equal(res.headers.get('allow'), 'POST');
  });

  t.test('malformed JSON: 400 malformed_json', async (t) => {
    const res = await app.json('/api/v1/test-things', { method: 'POST', body: '{"name": "a",', headers: { 'content-type': 'application/json' } });
    t.equal(res.status, 400);
    t.equal(res.body.error.code, 'malformed_json');
  });

  t.test('a JSON scalar is not an acceptable body', async (t) => {
    const res = await app.json('/api/v1/test-things', { method: 'POST', body: '"just a string"', headers: { 'content-type': 'application/json' } });
    t.equal(res.status, 400);
    t.equal(res.body.error.code, 'malformed_json');
  });

  t.test('invalid body: 400 validation_failed naming each field', async (t) => {
    const res = await app.json('/api/v1/test-things', { method: 'POST', json: { name: '', count: -1 } });
    t.equal(res.status, 400);
    t.equal(res.body.error.code, 'validation_failed');
    const paths = res.body.error.details.issues.map((i: { path: string[]; location: string }) => `${i.location}:${i.path.join('.')}`).sort();
    t.same(paths, ['body:count', 'body:name']);
  });

  t.test('missing body validates as {} and names the required fields', async (t) => {
    const res = await app.json('/api/v1/test-things', { method: 'POST' });
    t.equal(res.status, 400);
    t.equal(res.body.error.code, 'validation_failed');
    t.equal(res.body.error.details.issues.length, 2);
  });

  t.test('valid body: 201 with the resource', async (t) => {
    const res = await app.json('/api/v1/test-things', { method: 'POST', json: { name: 'a', count: 3 } });
    t.equal(res.status, 201);
    t.same(res.body, { data: { id: 'x', name: 'a', count: 3 } });
    t.equal(res.headers.get('cache-control'), 'no-store');
  });

  t.test('body over the limit: 413 payload_too_large', async (t) => {
    const res = await app.json('/api/v1/test-things', { method: 'POST', json: { name: 'a'.repeat(4000), count: 1 } });
    t.equal(res.status, 413);
    t.equal(res.body.error.code, 'payload_too_large');
  });

  t.test('the server-wide JSON limit (PLACARD_JSON_LIMIT_BYTES) applies to every route without its own', async (t) => {
    let res = await app.json('/api/v1/test-default-limit', { method: 'POST', json: { text: 'a'.repeat(3000) } });
    t.equal(res.status, 200);
    res = await app.json('/api/v1/test-default-limit', { method: 'POST', json: { text: 'a'.repeat(5000) } });
    t.equal(res.status, 413);
    t.equal(res.body.error.code, 'payload_too_large');
  });

  t.test('a chunked body without Content-Length is cut at the limit too', async (t) => {
    const chunks = [`{"text":"`, 'a'.repeat(3000), 'a'.repeat(3000), '"}'];
    const body = new ReadableStream({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    const res = await app.fetch('/api/v1/test-default-limit', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
      duplex: 'half',
    } as RequestInit);
    t.equal(res.status, 413);
    t.equal(((await res.json()) as { error: { code: string } }).error.code, 'payload_too_large');
  });

  t.test('a client error outside the vocabulary is a 400 in the envelope, not a 500', async (t) => {
    const res = await app.json('/api/v1/test-koa-throw');
    t.equal(res.status, 400);
    t.equal(res.body.error.code, 'validation_failed');
    t.equal(res.body.error.message, 'the Koa way');
  });

  t.test('body of another type: 415 unsupported_media_type', async (t) => {
    const res = await app.json('/api/v1/test-things', { method: 'POST', body: 'name=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    t.equal(res.status, 415);
    t.equal(res.body.error.code, 'unsupported_media_type');
  });

  t.test('a path id that is not a UUID: 404', async (t) => {
    for (const bad of ['123', 'not-a-uuid', `${ID}x`, '..%2F..%2Fetc']) {
      const res = await app.json(`/api/v1/test-things/${bad}`);
      t.equal(res.status, 404, bad);
      t.equal(res.body.error.code, 'not_found', bad);
    }
    const upper = await app.json(`/api/v1/test-things/${ID.toUpperCase()}`);
    t.equal(upper.status, 200);
    t.equal(upper.body.data.id, ID, 'ids come out lower-cased');
  });

  t.test('invalid query: 400 validation_failed', async (t) => {
    const res = await app.json(`/api/v1/test-things/${ID}?verbose=maybe`);
    t.equal(res.status, 400);
    t.equal(res.body.error.details.issues[0].location, 'query');
  });

  t.test('delete: 204 without a body', async (t) => {
    const res = await app.fetch(`/api/v1/test-things/${ID}`, { method: 'DELETE' });
    t.equal(res.status, 204);
    t.equal(await res.text(), '');
  });

  t.test('HEAD mirrors GET headers without a body', async (t) => {
    const get = await app.fetch('/healthz');
    const head = await app.fetch('/healthz', { method: 'HEAD' });
    t.equal(head.status, 200);
    t.equal(await head.text(), '');
    t.equal(head.headers.get('content-type'), get.headers.get('content-type'));
  });

  t.test('an uncaught error: 500 internal with the request id, no stack', async (t) => {
    const res = await app.json('/api/v1/test-boom', { headers: { 'x-request-id': 'trace-abc.123' } });
    t.equal(res.status, 500);
    t.equal(res.body.error.code, 'internal');
    t.equal(res.headers.get('x-request-id'), 'trace-abc.123');
    t.match(res.body.error.message, /trace-abc\.123/);
    t.equal(res.body.error.details.requestId, 'trace-abc.123');
    t.notMatch(JSON.stringify(res.body), /secret internals|x\.ts|at /);
  });

  t.test('an unusable incoming request id is replaced', async (t) => {
    const res = await app.fetch('/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
    t.match(res.headers.get('x-request-id'), /^[0-9a-f-]{36}$/);
  });

  t.test('ApiError answers with its status, code and details', async (t) => {
    const res = await app.json('/api/v1/test-conflict');
    t.equal(res.status, 409);
    t.same(res.body, { error: { code: 'conflict', message: 'already there', details: { where: ['a'] } } });
  });

  t.test('a response that breaks its declared schema fails loudly in tests', async (t) => {
    const res = await app.json('/api/v1/test-drift');
    t.equal(res.status, 500);
    t.equal(res.body.error.code, 'internal');
  });

  t.test('security headers on every response', async (t) => {
    const res = await app.fetch('/api/v1/nope');
    t.equal(res.headers.get('x-content-type-options'), 'nosniff');
  });
});
