/**
 * sendFile (platform/http/send-file.ts) over real HTTP: a body or range of at most one stream
 * chunk (256 KiB) is read whole into a Buffer, a larger one streamed. Both must answer the
 * same bytes, lengths and statuses: whole files, ranges on either side of the boundary, an
 * empty file, HEAD, 304, 416, and a file gone from the store (404 in the envelope, never a 500).
 */
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Koa from 'koa';
import t from 'tap';
import { conventions } from '../server/src/platform/http/middleware.js';
import { createLogger } from '../server/src/platform/log.js';
import { sendFile } from '../server/src/platform/http/send-file.js';
import { listen } from '../server/src/server.js';
import { tempDataDir } from './helpers/harness.js';

const CHUNK = 256 * 1024;

t.test('whole files and ranges, read whole or streamed, answer the same bytes', async (t) => {
  const dir = tempDataDir(t);
  const files = new Map<string, Buffer>();
  for (const [name, size] of [
    ['empty', 0],
    ['small', 2048],
    ['chunk', CHUNK],
    ['over', CHUNK + 1],
    ['large', 3 * CHUNK + 17],
  ] as const) {
    const bytes = randomBytes(size);
    writeFileSync(path.join(dir, name), bytes);
    files.set(name, bytes);
  }
  const app = new Koa();
  app.use(conventions(createLogger('silent')));
  app.use(async (ctx) => {
    const name = ctx.path.slice(1);
    await sendFile(ctx, { path: path.join(dir, name), contentType: 'application/octet-stream', etag: `tag-${name}` });
  });
  const server = await listen(app, '127.0.0.1', 0, 1_000);
  t.teardown(() => server.close());
  const get = async (name: string, headers: Record<string, string> = {}, method = 'GET') => {
    const res = await fetch(`${server.url}/${name}`, { method, headers });
    return { res, body: Buffer.from(await res.arrayBuffer()) };
  };

  for (const [name, bytes] of files) {
    const whole = await get(name);
    t.equal(whole.res.status, 200, `${name}: 200`);
    t.equal(whole.res.headers.get('content-length'), String(bytes.length), `${name}: its length`);
    t.equal(whole.res.headers.get('content-type'), 'application/octet-stream', `${name}: its type`);
    t.ok(whole.body.equals(bytes), `${name}: the same bytes`);
    const head = await get(name, {}, 'HEAD');
    t.same([head.res.status, head.res.headers.get('content-length'), head.body.length], [200, String(bytes.length), 0], `${name}: HEAD`);
    t.equal((await get(name, { 'if-none-match': `"tag-${name}"` })).res.status, 304, `${name}: 304`);
    if (bytes.length === 0) {
      t.equal((await get(name, { range: 'bytes=0-0' })).res.status, 416, 'empty: any range is unsatisfiable');
      continue;
    }
    // Ranges: the first bytes, a suffix, and one across the chunk boundary when the file has one.
    const ranges: [string, number, number][] = [
      ['bytes=0-9', 0, Math.min(9, bytes.length - 1)],
      ['bytes=-5', bytes.length - 5, bytes.length - 1],
      ['bytes=1-', 1, bytes.length - 1],
    ];
    if (bytes.length > CHUNK + 10) ranges.push([`bytes=${CHUNK - 10}-${CHUNK + 10}`, CHUNK - 10, CHUNK + 10]);
    for (const [range, start, end] of ranges) {
      const part = await get(name, { range });
      t.equal(part.res.status, 206, `${name} ${range}: 206`);
      t.equal(part.res.headers.get('content-range'), `bytes ${start}-${end}/${bytes.length}`, `${name} ${range}: Content-Range`);
      t.ok(part.body.equals(bytes.subarray(start, end + 1)), `${name} ${range}: those bytes`);
    }
    const outside = await get(name, { range: `bytes=${bytes.length}-` });
    t.equal(outside.res.status, 416, `${name}: a range past the end is 416`);
  }

  rmSync(path.join(dir, 'small'));
  const gone = await get('small');
  t.equal(gone.res.status, 404, 'a file gone from the store: 404');
  t.equal(JSON.parse(gone.body.toString()).error.code, 'not_found');
});
