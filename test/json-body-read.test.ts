import http from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import t from 'tap';
import { startApp, type TestApp } from './helpers/harness.js';
import { sampleRoutes } from './helpers/sample-routes.js';

/**
 * JSON request bodies are read by platform/http/json-body.ts (readBodyText), which took over
 * from koa-body's text parser (issue 24): the same content codings, limits and refusals.
 * `/api/v1/test-things` takes at most 2,048 bytes.
 */

/** A raw HTTP request: the status and the error code of the answer (or the data). */
function rawPost(app: TestApp, path: string, headers: Record<string, string>, body: Buffer | string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${app.url}${path}`, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const json = { 'content-type': 'application/json' };
const thing = JSON.stringify({ name: 'a', count: 3 });

t.test('JSON request bodies: content codings, limits and refusals', async (t) => {
  const app = await startApp(t, { extraRoutes: sampleRoutes });

  t.test('gzip, deflate and br bodies are decoded', async (t) => {
    for (const [coding, bytes] of [
      ['gzip', gzipSync(thing)],
      ['deflate', deflateSync(thing)],
      ['br', brotliCompressSync(thing)],
    ] as const) {
      const res = await rawPost(app, '/api/v1/test-things', { ...json, 'content-encoding': coding }, bytes);
      t.equal(res.status, 201, coding);
      t.same(res.body, { data: { id: 'x', name: 'a', count: 3 } }, coding);
    }
  });

  t.test('an unknown content coding: 415 unsupported_media_type', async (t) => {
    for (const coding of ['compress', 'GZIP', 'x-gzip']) {
      const res = await rawPost(app, '/api/v1/test-things', { ...json, 'content-encoding': coding }, thing);
      t.equal(res.status, 415, coding);
      t.equal(res.body.error.code, 'unsupported_media_type', coding);
    }
  });

  t.test('the limit counts decoded bytes: a small gzip body that inflates past it is 413', async (t) => {
    const big = JSON.stringify({ name: 'a'.repeat(40), count: 1, pad: ' '.repeat(100_000) });
    const bytes = gzipSync(big);
    t.ok(bytes.length < 2048, 'sent compressed under the limit');
    const res = await rawPost(app, '/api/v1/test-things', { ...json, 'content-encoding': 'gzip' }, bytes);
    t.equal(res.status, 413);
    t.equal(res.body.error.code, 'payload_too_large');
  });

  t.test('a body that is not gzip under Content-Encoding: gzip is 400 malformed_json', async (t) => {
    const res = await rawPost(app, '/api/v1/test-things', { ...json, 'content-encoding': 'gzip' }, thing);
    t.equal(res.status, 400);
    t.equal(res.body.error.code, 'malformed_json');
  });

  t.test('a Content-Length over the limit is refused before the body is read', async (t) => {
    const res = await rawPost(app, '/api/v1/test-things', { ...json, 'content-length': '100000', connection: 'close' }, thing.padEnd(100_000, ' '));
    t.equal(res.status, 413);
    t.equal(res.body.error.code, 'payload_too_large');
  });

  t.test('a leading byte order mark is dropped; the bytes are UTF-8 whatever the charset says', async (t) => {
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ name: 'é ü', count: 1 }))]);
    const res = await rawPost(app, '/api/v1/test-things', { 'content-type': 'application/json; charset=latin1' }, bom);
    t.equal(res.status, 201);
    t.equal(res.body.data.name, 'é ü');
  });

  t.test('Content-Encoding: identity is the plain body', async (t) => {
    const res = await rawPost(app, '/api/v1/test-things', { ...json, 'content-encoding': 'identity' }, thing);
    t.equal(res.status, 201);
  });
});
