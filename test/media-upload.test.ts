import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { Upload } from 'tus-js-client';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { settledAsset, sha256, TUS, tusUpload } from './helpers/media.js';

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
        upstream.write(d.subarray(0, Math.max(0, Math.floor(bytes.length * 0.4) - forwarded)), () => {
          upstream.destroy();
          client.destroy();
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

  // The server kept what arrived before the interruption.
  let head: Response | null = null;
  for (let i = 0; i < 50; i++) {
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
  const badMeta = await app.json('/api/v1/uploads', { method: 'POST', headers: { ...h, ...TUS, 'upload-length': '5', 'upload-metadata': 'filename not*base64!' } });
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
    app.fetch(url, { method: 'PATCH', headers: { ...h, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset), ...extra }, body });

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
