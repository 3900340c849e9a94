import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { Upload } from 'tus-js-client';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { TEST_DATABASE_URL } from './helpers/postgres.js';
import { mediaServiceOf } from '../server/src/modules/media/service.js';
import { realPartIo } from '../server/src/platform/http/tus.js';
import { realStoreIo } from '../server/src/platform/media/store.js';
import { enospc, fillDatabase, settledAsset, sha256, TUS, tusUpload } from './helpers/media.js';

async function noisyJpeg(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3 as const, background: '#808080', noise: { type: 'gaussian' as const, mean: 128, sigma: 40 } } })
    .jpeg({ quality: 95 })
    .toBuffer();
}

t.test('tus-js-client: an upload interrupted mid-way resumes and yields the identical sha256', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const bytes = await noisyJpeg(2400, 1600);
  t.ok(bytes.length > 1_000_000, `a ${bytes.length}-byte file`);
  const endpoint = `${app.url}/api/v1/uploads`;
  const headers = { ...owner.headers };

  // First attempt: one PATCH carrying the whole file, through a loopback proxy that cuts
  // the connection once 40% of the file has passed: a real interruption mid-transfer.
  const proxy = net.createServer((client) => {
    const upstream = net.connect(Number(new URL(app.url).port), '127.0.0.1');
    let forwarded = 0;
    client.on('data', (d: Buffer) => {
      if (forwarded + d.length > bytes.length * 0.4) {
        // Cut a second after the last bytes went: on a loaded machine the server may not have
        // begun reading the body yet, and bytes it never read are not kept (CI saw offset 0).
        upstream.write(d.subarray(0, Math.max(0, Math.floor(bytes.length * 0.4) - forwarded)), () => {
          setTimeout(() => {
            upstream.destroy();
            client.destroy();
          }, 1000);
        });
        forwarded = Infinity;
        return;
      }
      forwarded += d.length;
      upstream.write(d);
    });
    upstream.on('data', (d) => client.write(d));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  t.teardown(() => proxy.close());
  const proxied = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api/v1/uploads`;
  let uploadUrl: string | null = null;
  const failure = await new Promise<Error>((resolve, reject) => {
    const upload = new Upload(bytes, {
      endpoint: proxied,
      headers,
      metadata: { filename: 'noise.jpg', filetype: 'image/jpeg' },
      retryDelays: [],
      onError: (err) => {
        uploadUrl = upload.url;
        resolve(err);
      },
      onSuccess: () => reject(new Error('the upload should have been interrupted')),
    });
    upload.start();
  });
  t.ok(failure, `the transfer broke: ${failure.message.slice(0, 80)}`);
  uploadUrl = uploadUrl!.replace(/^http:\/\/127\.0\.0\.1:\d+/, app.url);
  t.ok(uploadUrl, 'the upload was created');
  const id = uploadUrl!.split('/').pop()!;

  // The server kept what arrived before the interruption (it records the offset once it has
  // read and fsynced what came: on a loaded machine that can take seconds, so wait up to 15 s).
  let head: Response | null = null;
  for (let i = 0; i < 300; i++) {
    head = await app.fetch(`/api/v1/uploads/${id}`, { method: 'HEAD', headers: { ...headers, ...TUS } });
    if (Number(head.headers.get('upload-offset')) > 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const kept = Number(head!.headers.get('upload-offset'));
  t.equal(head!.status, 200);
  t.equal(head!.headers.get('cache-control'), 'no-store');
  t.equal(head!.headers.get('tus-resumable'), '1.0.0');
  t.ok(kept > 0 && kept < bytes.length, `resuming from ${kept} of ${bytes.length}`);

  // Second attempt: resumes at the server's offset and finishes.
  let patches = 0;
  await new Promise<void>((resolve, reject) => {
    const upload = new Upload(bytes, {
      endpoint,
      uploadUrl,
      headers,
      retryDelays: [],
      onError: reject,
      onSuccess: () => resolve(),
      onBeforeRequest: (req) => {
        if (req.getMethod() === 'PATCH') patches++;
        if (req.getMethod() === 'POST') reject(new Error('the resume created a new upload'));
      },
    });
    upload.start();
  });
  t.equal(patches, 1, 'one PATCH sent the rest');
  const done = await app.fetch(`/api/v1/uploads/${id}`, { method: 'HEAD', headers: { ...headers, ...TUS } });
  t.equal(Number(done.headers.get('upload-offset')), bytes.length, 'all bytes received');

  const complete = await app.json(`/api/v1/uploads/${id}/complete`, { method: 'POST', headers, json: { tags: ['Lobby', 'noise'] } });
  t.equal(complete.status, 201);
  const asset = complete.body.data;
  t.equal(asset.sha256, sha256(bytes), 'the stored file hashes like the source');
  t.equal(asset.sizeBytes, bytes.length);
  t.equal(asset.kind, 'image');
  t.equal(asset.contentType, 'image/jpeg');
  t.equal(asset.name, 'noise.jpg');
  t.same(asset.tags, ['Lobby', 'noise']);
  t.equal(asset.state, 'processing');
  const stored = path.join(app.dataDir, 'media', asset.sha256.slice(0, 2), asset.sha256.slice(2, 4), asset.sha256);
  t.equal(createHash('sha256').update(fs.readFileSync(stored)).digest('hex'), sha256(bytes), 'the file on disk is content-addressed');
  t.notOk(fs.existsSync(path.join(app.dataDir, 'uploads', `${id}.part`)), 'the partial file is gone');

  const ready = await settledAsset(app, owner, asset.id);
  t.equal(ready.state, 'ready', ready.failureReason ?? '');
  t.equal(ready.width, 2400);
  t.equal(ready.height, 1600);
  const players = ready.variants.filter((v: any) => v.purpose === 'player');
  t.same(players.map((v: any) => `${v.contentType}@${v.width}`).sort(), ['image/jpeg@1920', 'image/jpeg@2400', 'image/webp@1920', 'image/webp@2400']);
  t.ok(ready.variants.some((v: any) => v.purpose === 'thumbnail' && v.width <= 400 && v.height <= 400));

  const again = await app.json(`/api/v1/uploads/${id}/complete`, { method: 'POST', headers, json: {} });
  t.equal(again.status, 404, 'a completed upload is gone');
});

t.test('tus protocol details', async (t) => {
  const app = await startApp(t, { config: { uploadMaxBytes: 1_000_000 } });
  const owner = await signIn(app);
  const h = owner.headers;

  const options = await app.fetch('/api/v1/uploads', { method: 'OPTIONS' });
  t.equal(options.status, 204);
  t.equal(options.headers.get('tus-version'), '1.0.0');
  t.match(options.headers.get('tus-extension'), /creation/);
  t.match(options.headers.get('tus-extension'), /termination/);
  t.match(options.headers.get('tus-extension'), /checksum/);
  t.equal(options.headers.get('tus-max-size'), '1000000');
  t.match(options.headers.get('tus-checksum-algorithm'), /sha1/);

  const noVersion = await app.json('/api/v1/uploads', { method: 'POST', headers: { ...h, 'upload-length': '10' } });
  t.equal(noVersion.status, 412);
  t.equal(noVersion.body.error.code, 'unsupported_protocol_version');
  t.equal(noVersion.headers.get('tus-resumable'), '1.0.0');

  const tooBig = await app.json('/api/v1/uploads', { method: 'POST', headers: { ...h, ...TUS, 'upload-length': '1000001' } });
  t.equal(tooBig.status, 413);
  t.equal(tooBig.body.error.code, 'payload_too_large');

  const huge = await startApp(t, { config: { uploadMaxBytes: 2 ** 52 } });
  const hugeOwner = await signIn(huge);
  // The setting decides below the environment's cap: raise it to its maximum (16 TiB), then
  // ask for a little more than this disk has free, whatever its size.
  const raised = await huge.json('/api/v1/settings', { method: 'PATCH', headers: hugeOwner.headers, json: { uploads: { maxSizeBytes: 2 ** 44 } } });
  t.equal(raised.status, 200, JSON.stringify(raised.body));
  const disk = await fs.promises.statfs(huge.deps.config.dataDir);
  const moreThanFree = disk.bavail * disk.bsize + 2 ** 30;
  t.ok(moreThanFree <= 2 ** 44, 'the disk has less than 16 TiB free (else this check cannot be made here)');
  const noSpace = await huge.json('/api/v1/uploads', { method: 'POST', headers: { ...hugeOwner.headers, ...TUS, 'upload-length': String(moreThanFree) } });
  t.equal(noSpace.status, 507, 'more than the free space: refused before any byte is sent');
  t.equal(noSpace.body.error.code, 'insufficient_storage');
  t.same(await huge.deps.db.selectFrom('uploads').select('id').execute(), [], 'nothing was recorded');

  const badLength = await app.json('/api/v1/uploads', { method: 'POST', headers: { ...h, ...TUS, 'upload-length': '-5' } });
  t.equal(badLength.status, 400);
  const badMeta = await app.json('/api/v1/uploads', {
    method: 'POST',
    headers: { ...h, ...TUS, 'upload-length': '5', 'upload-metadata': 'filename not*base64!' },
  });
  t.equal(badMeta.status, 400);

  const viewer = await signIn(app, { role: 'viewer' });
  const forbidden = await app.json('/api/v1/uploads', { method: 'POST', headers: { ...viewer.headers, ...TUS, 'upload-length': '5' } });
  t.equal(forbidden.status, 403, 'viewers cannot upload');
  const anonymous = await app.json('/api/v1/uploads', { method: 'POST', headers: { ...TUS, 'upload-length': '5' } });
  t.equal(anonymous.status, 401);
  t.equal(anonymous.headers.get('tus-resumable'), '1.0.0', 'Tus-Resumable on auth failures too');

  const created = await app.fetch('/api/v1/uploads', { method: 'POST', headers: { ...h, ...TUS, 'upload-length': '10' } });
  t.equal(created.status, 201);
  t.match(created.headers.get('location'), /^\/api\/v1\/uploads\/[0-9a-f-]{36}$/);
  t.ok(created.headers.get('upload-expires'));
  const url = created.headers.get('location')!;
  const patch = (offset: number, body: Buffer, extra: Record<string, string> = {}) =>
    app.fetch(url, {
      method: 'PATCH',
      headers: { ...h, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset), ...extra },
      body,
    });

  const wrongType = await app.fetch(url, { method: 'PATCH', headers: { ...h, ...TUS, 'content-type': 'application/json', 'upload-offset': '0' }, body: '{}' });
  t.equal(wrongType.status, 415);

  const mismatch = await patch(3, Buffer.from('abc'));
  t.equal(mismatch.status, 409, 'offset mismatch');
  t.equal(mismatch.headers.get('upload-offset'), '0');

  const sha1 = (b: Buffer) => createHash('sha1').update(b).digest('base64');
  const bad = await patch(0, Buffer.from('hello'), { 'upload-checksum': `sha1 ${sha1(Buffer.from('HELLO'))}` });
  t.equal(bad.status, 460, 'checksum mismatch');
  t.equal(((await bad.json()) as any).error.code, 'checksum_mismatch');
  let head = await app.fetch(url, { method: 'HEAD', headers: { ...h, ...TUS } });
  t.equal(head.headers.get('upload-offset'), '0', 'the bad chunk was discarded');

  const unknownAlgo = await patch(0, Buffer.from('hello'), { 'upload-checksum': 'crc99 AAAA' });
  t.equal(unknownAlgo.status, 400);

  const good = await patch(0, Buffer.from('hello'), { 'upload-checksum': `sha1 ${sha1(Buffer.from('hello'))}` });
  t.equal(good.status, 204);
  t.equal(good.headers.get('upload-offset'), '5');
  t.equal(good.headers.get('tus-resumable'), '1.0.0');

  const early = await app.json(`${url}/complete`, { method: 'POST', headers: h, json: {} });
  t.equal(early.status, 409, 'complete before all bytes arrived');

  const overflow = await patch(5, Buffer.from('123456'));
  t.equal(overflow.status, 413, 'more bytes than announced');
  head = await app.fetch(url, { method: 'HEAD', headers: { ...h, ...TUS } });
  t.equal(head.headers.get('upload-offset'), '5');
  t.equal(head.headers.get('upload-length'), '10');

  const rest = await patch(5, Buffer.from('world'));
  t.equal(rest.status, 204);
  const text = await app.json(`${url}/complete`, { method: 'POST', headers: h, json: {} });
  t.equal(text.status, 415, 'plain text is not media');
  t.equal(text.body.error.code, 'unsupported_media_type');
  const gone = await app.fetch(url, { method: 'HEAD', headers: { ...h, ...TUS } });
  t.equal(gone.status, 404, 'a refused upload is discarded');

  // Termination.
  const id = await tusUpload(app, owner, Buffer.from('partial'));
  const del = await app.fetch(`/api/v1/uploads/${id}`, { method: 'DELETE', headers: { ...h, ...TUS } });
  t.equal(del.status, 204);
  t.notOk(fs.existsSync(path.join(app.dataDir, 'uploads', `${id}.part`)));
  t.equal((await app.fetch(`/api/v1/uploads/${id}`, { method: 'HEAD', headers: { ...h, ...TUS } })).status, 404);
});

t.test('a file named .jpg that is not an image is refused by its bytes', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const id = await tusUpload(app, owner, Buffer.from('#!/bin/sh\necho pwned\n'), { filename: 'photo.jpg', filetype: 'image/jpeg' });
  const res = await app.json(`/api/v1/uploads/${id}/complete`, { method: 'POST', headers: owner.headers, json: {} });
  t.equal(res.status, 415);
  t.match(res.body.error.message, /not recognised|not supported/);
});

t.test('expired partial uploads are cleaned up', async (t) => {
  const app = await startApp(t, { config: { uploadExpiryMs: 50 } });
  const owner = await signIn(app);
  const created = await app.fetch('/api/v1/uploads', { method: 'POST', headers: { ...owner.headers, ...TUS, 'upload-length': '100' } });
  const id = created.headers.get('location')!.split('/').pop()!;
  t.ok(fs.existsSync(path.join(app.dataDir, 'uploads', `${id}.part`)));
  await new Promise((r) => setTimeout(r, 80));
  t.equal((await app.fetch(`/api/v1/uploads/${id}`, { method: 'HEAD', headers: { ...owner.headers, ...TUS } })).status, 404, 'an expired upload answers 404');
  await app.deps.periodic.runNow('uploads.expire');
  t.notOk(fs.existsSync(path.join(app.dataDir, 'uploads', `${id}.part`)), 'its file is deleted');
  t.equal((await app.deps.db.selectFrom('uploads').select('id').execute()).length, 0);
});

t.test('capabilities tell the console what this server can take', async (t) => {
  const app = await startApp(t, { config: { uploadMaxBytes: 123_456_789 } });
  const viewer = await signIn(app);
  const res = await app.json('/api/v1/media/capabilities', { headers: viewer.headers });
  t.equal(res.status, 200);
  t.equal(res.body.data.maxUploadBytes, 123_456_789);
  t.same(res.body.data.tus.extensions, ['creation', 'termination', 'checksum', 'expiration']);
  t.equal(res.body.data.kinds.image.available, true);
  t.equal(res.body.data.kinds.video.available, true, res.body.data.kinds.video.detail);
  t.equal(typeof res.body.data.kinds.pdf.available, 'boolean');
  t.equal((await app.json('/api/v1/media/capabilities')).status, 401);
});

const OCTETS = 'application/offset+octet-stream';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Creates an upload of `length` bytes; answers its URL path and id. */
async function createUpload(app: Awaited<ReturnType<typeof startApp>>, headers: Record<string, string>, length: number, metadata: Record<string, string> = {}) {
  const meta = Object.entries(metadata)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');
  const res = await app.fetch('/api/v1/uploads', {
    method: 'POST',
    headers: { ...headers, ...TUS, 'upload-length': String(length), ...(meta ? { 'upload-metadata': meta } : {}) },
  });
  if (res.status !== 201) throw new Error(`creation answered ${res.status}: ${await res.text()}`);
  const location = res.headers.get('location')!;
  return { location, id: location.split('/').pop()! };
}

/**
 * A PATCH that sends `sent` of the upload's bytes with a Content-Length of all of them, then
 * stalls (the connection stays open, nothing more comes). Answers once the server has
 * written those bytes to the part file, with how the request ended (status or error).
 */
async function stalledPatch(app: Awaited<ReturnType<typeof startApp>>, headers: Record<string, string>, location: string, bytes: Buffer, sent: number) {
  const req = http.request(`${app.url}${location}`, {
    method: 'PATCH',
    headers: { ...headers, ...TUS, 'content-type': OCTETS, 'upload-offset': '0', 'content-length': String(bytes.length) },
  });
  const ended = new Promise<number | Error>((resolve) => {
    req.on('error', resolve);
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
      res.on('error', resolve);
    });
  });
  req.write(bytes.subarray(0, sent));
  const part = path.join(app.dataDir, 'uploads', `${location.split('/').pop()}.part`);
  for (let i = 0; i < 2000 && fs.statSync(part).size < sent; i++) await sleep(10);
  return { ended, written: fs.statSync(part).size };
}

const storePath = (dataDir: string, sha: string) => path.join(dataDir, 'media', sha.slice(0, 2), sha.slice(2, 4), sha);

t.test('lock takeover: a stalled PATCH gives way to the resume, and complete stores the right bytes', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const h = owner.headers;
  const bytes = await noisyJpeg(900, 700);
  const half = Math.floor(bytes.length / 2);
  const { location, id } = await createUpload(app, h, bytes.length, { filename: 'stall.jpg' });

  const stalled = await stalledPatch(app, h, location, bytes, half);
  t.equal(stalled.written, half, 'half of the body is on disk; the request now stalls');
  // An admin looking at the upload does not stop its creator's PATCH.
  const admin = await signIn(app, { role: 'admin' });
  const look = await app.fetch(location, { method: 'HEAD', headers: { ...admin.headers, ...TUS } });
  t.equal(look.status, 200);
  t.equal(await Promise.race([stalled.ended.then(() => 'ended'), sleep(150).then(() => 'open')]), 'open', "an admin's HEAD leaves the PATCH running");
  // The client gave up on that connection and resumes: HEAD, then PATCH from the offset.
  const head = await app.fetch(location, { method: 'HEAD', headers: { ...h, ...TUS } });
  t.equal(head.status, 200);
  t.equal(head.headers.get('upload-offset'), String(half), 'HEAD stopped the stalled PATCH and answers what it had stored');
  const outcome = await stalled.ended;
  t.ok(outcome instanceof Error, `the stalled request was cut off (${outcome instanceof Error ? outcome.message : outcome})`);
  const rest = await app.fetch(location, {
    method: 'PATCH',
    headers: { ...h, ...TUS, 'content-type': OCTETS, 'upload-offset': String(half) },
    body: bytes.subarray(half),
  });
  t.equal(rest.status, 204);
  t.equal(rest.headers.get('upload-offset'), String(bytes.length));
  const done = await app.json(`${location}/complete`, { method: 'POST', headers: h, json: {} });
  t.equal(done.status, 201, JSON.stringify(done.body));
  t.equal(done.body.data.sha256, sha256(bytes), 'the asset hashes like the source');
  await sleep(100);
  t.equal(
    sha256(fs.readFileSync(storePath(app.dataDir, done.body.data.sha256))),
    sha256(bytes),
    'and so does the stored file, after the stalled request is gone',
  );
  t.notOk(fs.existsSync(path.join(app.dataDir, 'uploads', `${id}.part`)));

  // A stalled PATCH does not hold up termination either.
  const second = await createUpload(app, h, bytes.length);
  const stalled2 = await stalledPatch(app, h, second.location, bytes, half);
  t.equal(stalled2.written, half);
  const del = await app.fetch(second.location, { method: 'DELETE', headers: { ...h, ...TUS } });
  t.equal(del.status, 204, 'DELETE stopped the stalled PATCH');
  t.ok((await stalled2.ended) instanceof Error);
  t.notOk(fs.existsSync(path.join(app.dataDir, 'uploads', `${second.id}.part`)), 'the part file is gone, not re-created by the stopped PATCH');
  t.equal((await app.fetch(second.location, { method: 'HEAD', headers: { ...h, ...TUS } })).status, 404);

  // A stalled PATCH of a complete-sized body cannot be completed around: complete waits for the lock.
  const third = await createUpload(app, h, bytes.length);
  const stalled3 = await stalledPatch(app, h, third.location, bytes, half);
  const early = await app.json(`${third.location}/complete`, { method: 'POST', headers: h, json: {} });
  t.equal(early.status, 409, 'complete stopped the PATCH, then found half the bytes');
  t.match(early.body.error.message, new RegExp(`${half} of ${bytes.length}`));
  t.ok((await stalled3.ended) instanceof Error);
});

t.test('disk full: ENOSPC while writing a chunk answers 507 and keeps nothing half-written; the upload then completes', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const h = owner.headers;
  const media = mediaServiceOf(app.deps)!;
  const bytes = await noisyJpeg(700, 500);
  const half = Math.floor(bytes.length / 2);
  const { location, id } = await createUpload(app, h, bytes.length, { filename: 'full.jpg' });
  const patch = (offset: number, body: Buffer) =>
    app.fetch(location, { method: 'PATCH', headers: { ...h, ...TUS, 'content-type': OCTETS, 'upload-offset': String(offset) }, body });

  t.equal((await patch(0, bytes.subarray(0, half))).status, 204, 'the first half fits');
  // The disk fills up 1000 bytes into the second half: the write that crosses it fails after writing what fitted.
  const limit = half + 1000;
  media.partIo = {
    ...realPartIo(),
    async write(handle, buffer, offset, length, position) {
      if (position + length <= limit) return handle.write(buffer, offset, length, position);
      const fits = Math.max(0, limit - position);
      if (fits > 0) await handle.write(buffer, offset, fits, position);
      throw enospc();
    },
  };
  const full = await app.fetch(location, {
    method: 'PATCH',
    headers: { ...h, ...TUS, 'content-type': OCTETS, 'upload-offset': String(half) },
    body: bytes.subarray(half),
  });
  t.equal(full.status, 507);
  const body = (await full.json()) as any;
  t.equal(body.error.code, 'insufficient_storage');
  t.match(body.error.message, /disk is full/);
  t.equal(full.headers.get('upload-offset'), String(half));
  t.equal(full.headers.get('tus-resumable'), '1.0.0');
  const head = await app.fetch(location, { method: 'HEAD', headers: { ...h, ...TUS } });
  t.equal(head.headers.get('upload-offset'), String(half), 'the offset did not move');
  t.equal(fs.statSync(path.join(app.dataDir, 'uploads', `${id}.part`)).size, half, 'the partial chunk was truncated away');

  // A failing fsync is a full disk too.
  media.partIo = { ...realPartIo(), sync: async () => void (await Promise.reject(enospc('fsync'))) };
  t.equal((await patch(half, bytes.subarray(half))).status, 507);
  t.equal(fs.statSync(path.join(app.dataDir, 'uploads', `${id}.part`)).size, half);

  media.partIo = realPartIo();
  t.equal((await patch(half, bytes.subarray(half))).status, 204, 'space again: the rest goes through');
  const done = await app.json(`${location}/complete`, { method: 'POST', headers: h, json: {} });
  t.equal(done.status, 201);
  t.equal(done.body.data.sha256, sha256(bytes));
});

t.test(
  'disk full at complete: ENOSPC storing the file, SQLITE_FULL committing the asset; the upload is kept both times',
  { skip: TEST_DATABASE_URL ? 'fills the SQLite file (max_page_count)' : false },
  async (t) => {
    const app = await startApp(t);
    const owner = await signIn(app);
    const h = owner.headers;
    const media = mediaServiceOf(app.deps)!;
    const bytes = await noisyJpeg(640, 480);
    const id = await tusUpload(app, owner, bytes, { filename: 'kept.jpg' });
    const part = path.join(app.dataDir, 'uploads', `${id}.part`);
    const stored = storePath(app.dataDir, sha256(bytes));

    media.store.io = {
      ...realStoreIo(),
      link: async () => Promise.reject(enospc('link')),
      copyFile: async () => Promise.reject(enospc('copyfile')),
    };
    const full = await app.json(`/api/v1/uploads/${id}/complete`, { method: 'POST', headers: h, json: {} });
    t.equal(full.status, 507);
    t.equal(full.body.error.code, 'insufficient_storage');
    t.match(full.body.error.message, /upload is kept/);
    t.ok(fs.existsSync(part), 'the part file is still there');
    t.notOk(fs.existsSync(stored), 'nothing in the store');
    const head = await app.fetch(`/api/v1/uploads/${id}`, { method: 'HEAD', headers: { ...h, ...TUS } });
    t.equal(head.status, 200, 'the upload still exists');
    t.equal(head.headers.get('upload-offset'), String(bytes.length));
    media.store.io = realStoreIo();

    // The database cannot grow: the transaction recording the asset fails after the file was stored.
    const lift = await fillDatabase(app);
    const manyTags = Array.from({ length: 50 }, (_, i) => `tag ${i} ${'x'.repeat(52)}`);
    const dbFull = await app.json(`/api/v1/uploads/${id}/complete`, { method: 'POST', headers: h, json: { tags: manyTags } });
    lift();
    t.equal(dbFull.status, 507, JSON.stringify(dbFull.body));
    t.equal(dbFull.body.error.code, 'insufficient_storage');
    t.match(dbFull.body.error.message, /upload is kept/);
    t.ok(fs.existsSync(part), 'the part file is still there');
    t.notOk(fs.existsSync(stored), 'the file this attempt stored was taken back (nothing references it)');
    t.same(await app.deps.db.selectFrom('assets').select('id').execute(), [], 'no asset');
    t.equal((await app.fetch(`/api/v1/uploads/${id}`, { method: 'HEAD', headers: { ...h, ...TUS } })).status, 200, 'the upload still exists');

    const done = await app.json(`/api/v1/uploads/${id}/complete`, { method: 'POST', headers: h, json: { tags: ['kept'] } });
    t.equal(done.status, 201, 'space again: complete works');
    t.equal(done.body.data.sha256, sha256(bytes));
    t.same(done.body.data.tags, ['kept']);
    t.equal(sha256(fs.readFileSync(stored)), sha256(bytes));
    t.notOk(fs.existsSync(part), 'the part file goes after the commit');
    t.equal((await settledAsset(app, owner, done.body.data.id)).state, 'ready');
  },
);

t.test(
  'SQLITE_FULL anywhere is 507 insufficient_storage, not 500',
  { skip: TEST_DATABASE_URL ? 'fills the SQLite file (max_page_count)' : false },
  async (t) => {
    const app = await startApp(t);
    const owner = await signIn(app);
    const asset = await settledAsset(
      app,
      owner,
      (
        await tusUploadComplete(
          app,
          owner,
          await sharp({ create: { width: 30, height: 20, channels: 3, background: '#123' } })
            .png()
            .toBuffer(),
        )
      ).id,
    );
    const lift = await fillDatabase(app);
    t.teardown(lift);
    const manyTags = Array.from({ length: 50 }, (_, i) => `tag ${i} ${'y'.repeat(52)}`);
    const res = await app.json(`/api/v1/assets/${asset.id}`, { method: 'PATCH', headers: owner.headers, json: { tags: manyTags } });
    t.equal(res.status, 507);
    t.equal(res.body.error.code, 'insufficient_storage');
    t.match(res.body.error.message, /disk is full/);
  },
);

async function tusUploadComplete(
  app: Awaited<ReturnType<typeof startApp>>,
  who: Awaited<ReturnType<typeof signIn>>,
  bytes: Buffer,
  metadata: Record<string, string> = {},
  body: unknown = {},
) {
  const id = await tusUpload(app, who, bytes, metadata);
  const res = await app.json(`/api/v1/uploads/${id}/complete`, { method: 'POST', headers: who.headers, json: body });
  if (res.status !== 201) throw new Error(`complete answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

t.test('the type comes from the bytes: a PNG named photo.jpg and announced as image/jpeg is a PNG', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const png = await sharp({ create: { width: 64, height: 32, channels: 3, background: '#0a0' } })
    .png()
    .toBuffer();
  const asset = await tusUploadComplete(app, owner, png, { filename: 'photo.jpg', filetype: 'image/jpeg' });
  t.equal(asset.kind, 'image');
  t.equal(asset.contentType, 'image/png');
  t.equal(asset.name, 'photo.jpg', 'the name is kept as given');
  const ready = await settledAsset(app, owner, asset.id);
  t.equal(ready.state, 'ready');
  const preview = await app.fetch(`/api/v1/assets/${asset.id}/preview`, { headers: owner.headers });
  t.equal(preview.headers.get('content-type'), 'image/png');
  t.match(preview.headers.get('content-disposition'), /filename="photo\.png"/);
});

t.test('Upload-Metadata folderId and tags place the asset; a folderId naming no folder is a clear 400', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const h = owner.headers;
  const png = (c: string) =>
    sharp({ create: { width: 20, height: 20, channels: 3, background: c } })
      .png()
      .toBuffer();
  const folder = (await app.json('/api/v1/content-folders', { method: 'POST', headers: h, json: { name: 'Lobby' } })).body.data;
  const other = (await app.json('/api/v1/content-folders', { method: 'POST', headers: h, json: { name: 'Bar' } })).body.data;

  const placed = await tusUploadComplete(app, owner, await png('#100'), { filename: 'a.png', folderId: folder.id.toUpperCase(), tags: 'Lobby, sale ,,' });
  t.equal(placed.folderId, folder.id, 'the metadata folder (any case)');
  t.same(placed.tags, ['Lobby', 'sale'], 'the metadata tags, trimmed, empty ones dropped');
  const bodyWins = await tusUploadComplete(app, owner, await png('#200'), { folderId: folder.id, tags: 'meta' }, { folderId: other.id, tags: ['body'] });
  t.equal(bodyWins.folderId, other.id, 'the body wins over the metadata');
  t.same(bodyWins.tags, ['body']);

  const b64 = (v: string) => Buffer.from(v).toString('base64');
  const create = (folderId: string) =>
    app.json('/api/v1/uploads', { method: 'POST', headers: { ...h, ...TUS, 'upload-length': '10', 'upload-metadata': `folderId ${b64(folderId)}` } });
  const nowhere = await create('0190f5a2-7b3c-7def-8abc-0123456789ab');
  t.equal(nowhere.status, 400, 'a folder that does not exist is refused at creation');
  t.equal(nowhere.body.error.code, 'validation_failed');
  t.match(nowhere.body.error.message, /Upload-Metadata folderId names no folder/);
  t.equal(nowhere.headers.get('tus-resumable'), '1.0.0');
  const junk = await create('lobby');
  t.equal(junk.status, 400);
  t.match(junk.body.error.message, /not a folder id/);
  t.same(await app.deps.db.selectFrom('uploads').select('id').execute(), [], 'nothing was created');

  // The folder goes between creation and complete: 400, the upload is kept, a body folderId completes it.
  const doomed = (await app.json('/api/v1/content-folders', { method: 'POST', headers: h, json: { name: 'Doomed' } })).body.data;
  const id = await tusUpload(app, owner, await png('#300'), { filename: 'c.png', folderId: doomed.id });
  t.equal((await app.fetch(`/api/v1/content-folders/${doomed.id}`, { method: 'DELETE', headers: h })).status, 204);
  const gone = await app.json(`/api/v1/uploads/${id}/complete`, { method: 'POST', headers: h, json: {} });
  t.equal(gone.status, 400);
  t.match(gone.body.error.message, /names no folder/);
  t.equal((await app.fetch(`/api/v1/uploads/${id}`, { method: 'HEAD', headers: { ...h, ...TUS } })).status, 200, 'the upload is kept');
  const moved = await app.json(`/api/v1/uploads/${id}/complete`, { method: 'POST', headers: h, json: { folderId: folder.id } });
  t.equal(moved.status, 201);
  t.equal(moved.body.data.folderId, folder.id);
});

t.test("an upload is its creator's: others cannot read, send, complete or end it; admins may end it", async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const alice = await signIn(app, { role: 'editor' });
  const bob = await signIn(app, { role: 'editor' });
  const admin = await signIn(app, { role: 'admin' });
  const png = await sharp({ create: { width: 20, height: 20, channels: 3, background: '#456' } })
    .png()
    .toBuffer();
  const { location: url } = await createUpload(app, alice.headers, png.length, { filename: 'alice.png' });
  const as = (who: typeof alice, init: RequestInit) =>
    app.fetch(url, { ...init, headers: { ...who.headers, ...TUS, ...(init.headers as Record<string, string>) } });
  const patchAs = (who: typeof alice, offset: number, body: Buffer) =>
    as(who, { method: 'PATCH', headers: { 'content-type': OCTETS, 'upload-offset': String(offset) }, body });

  t.equal((await patchAs(alice, 0, png.subarray(0, 10))).status, 204, 'the creator sends a first chunk');
  t.equal((await as(bob, { method: 'HEAD' })).status, 404, 'another editor does not see it');
  t.equal((await patchAs(bob, 10, png.subarray(10))).status, 404, 'nor send bytes');
  t.equal((await as(bob, { method: 'DELETE' })).status, 404, 'nor end it');
  const headAdmin = await as(admin, { method: 'HEAD' });
  t.equal(headAdmin.status, 200, 'an admin may look');
  t.equal((await patchAs(admin, 10, png.subarray(10))).status, 403, 'but not send bytes');
  t.equal((await patchAs(alice, 10, png.subarray(10))).status, 204, 'the creator sends the rest');
  const bobComplete = await app.json(`${url}/complete`, { method: 'POST', headers: bob.headers, json: {} });
  t.equal(bobComplete.status, 404, 'another editor cannot complete it');
  t.equal(
    (await app.json(`${url}/complete`, { method: 'POST', headers: owner.headers, json: {} })).status,
    403,
    'nor can the owner (it is not theirs to name and file)',
  );
  const mine = await app.json(`${url}/complete`, { method: 'POST', headers: alice.headers, json: {} });
  t.equal(mine.status, 201, 'the creator completes it');
  t.equal(mine.body.data.sha256, sha256(png));

  const another = await tusUpload(app, alice, png.subarray(0, 5));
  t.equal((await app.fetch(`/api/v1/uploads/${another}`, { method: 'DELETE', headers: { ...bob.headers, ...TUS } })).status, 404);
  t.equal(
    (await app.fetch(`/api/v1/uploads/${another}`, { method: 'DELETE', headers: { ...admin.headers, ...TUS } })).status,
    204,
    "an admin may end anyone's upload",
  );
  t.notOk(fs.existsSync(path.join(app.dataDir, 'uploads', `${another}.part`)));
});
