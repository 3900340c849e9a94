import sharp from 'sharp';
import t from 'tap';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { settledAsset, sha256, uploadAsset } from './helpers/media.js';

const solid = (width: number, height: number, background = '#3366cc') => sharp({ create: { width, height, channels: 3, background } });

t.test('images: EXIF orientation, variants, thumbnail, preview serving', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);

  // 4000x1000 stored sideways with EXIF orientation 6 (rotate 90° clockwise to display).
  const sideways = await solid(4000, 1000).jpeg().withMetadata({ orientation: 6 }).toBuffer();
  const asset = await uploadAsset(app, owner, sideways, 'sideways.jpg');
  const ready = await settledAsset(app, owner, asset.id);
  t.equal(ready.state, 'ready', ready.failureReason ?? '');
  t.equal(ready.width, 1000, 'width as displayed');
  t.equal(ready.height, 4000, 'height as displayed');
  const players = ready.variants.filter((v: any) => v.purpose === 'player');
  t.same(
    players.map((v: any) => `${v.contentType}@${v.width}x${v.height}`).sort(),
    ['image/jpeg@1000x4000', 'image/webp@1000x4000'],
    'a portrait source narrower than 1920: one size, rotated',
  );
  const thumb = ready.variants.find((v: any) => v.purpose === 'thumbnail');
  t.same([thumb.width, thumb.height], [100, 400]);

  // Thumbnail: served with ETag = sha256, 304 on If-None-Match, Range.
  const res = await app.fetch(`/api/v1/assets/${ready.id}/thumbnail`, { headers: owner.headers });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'image/webp');
  t.equal(res.headers.get('etag'), `"${thumb.sha256}"`);
  const body = Buffer.from(await res.arrayBuffer());
  t.equal(sha256(body), thumb.sha256, 'the thumbnail bytes hash to its sha256');
  const meta = await sharp(body).metadata();
  t.same([meta.width, meta.height], [100, 400], 'and it is the rotated image');
  const cached = await app.fetch(`/api/v1/assets/${ready.id}/thumbnail`, { headers: { ...owner.headers, 'if-none-match': `"${thumb.sha256}"` } });
  t.equal(cached.status, 304);

  // Preview: the original JPEG, Range and If-Range.
  const full = await app.fetch(`/api/v1/assets/${ready.id}/preview`, { headers: owner.headers });
  t.equal(full.status, 200);
  t.equal(full.headers.get('content-type'), 'image/jpeg');
  t.equal(full.headers.get('accept-ranges'), 'bytes');
  t.match(full.headers.get('content-disposition'), /^inline; filename="sideways\.jpeg"/);
  t.equal(sha256(Buffer.from(await full.arrayBuffer())), sha256(sideways));
  const size = sideways.length;
  const part = await app.fetch(`/api/v1/assets/${ready.id}/preview`, { headers: { ...owner.headers, range: 'bytes=10-19' } });
  t.equal(part.status, 206);
  t.equal(part.headers.get('content-range'), `bytes 10-19/${size}`);
  t.same(Buffer.from(await part.arrayBuffer()), sideways.subarray(10, 20));
  const suffix = await app.fetch(`/api/v1/assets/${ready.id}/preview`, { headers: { ...owner.headers, range: 'bytes=-5' } });
  t.same(Buffer.from(await suffix.arrayBuffer()), sideways.subarray(size - 5));
  const open = await app.fetch(`/api/v1/assets/${ready.id}/preview`, { headers: { ...owner.headers, range: `bytes=${size - 3}-` } });
  t.equal(open.headers.get('content-range'), `bytes ${size - 3}-${size - 1}/${size}`);
  const clamped = await app.fetch(`/api/v1/assets/${ready.id}/preview`, { headers: { ...owner.headers, range: `bytes=${size - 2}-${size + 100}` } });
  t.equal(clamped.status, 206);
  t.equal(clamped.headers.get('content-range'), `bytes ${size - 2}-${size - 1}/${size}`);
  const beyond = await app.json(`/api/v1/assets/${ready.id}/preview`, { headers: { ...owner.headers, range: `bytes=${size}-` } });
  t.equal(beyond.status, 416);
  t.equal(beyond.body.error.code, 'range_not_satisfiable');
  t.equal(beyond.headers.get('content-range'), `bytes */${size}`);
  const ifRangeOk = await app.fetch(`/api/v1/assets/${ready.id}/preview`, {
    headers: { ...owner.headers, range: 'bytes=0-0', 'if-range': `"${ready.sha256}"` },
  });
  t.equal(ifRangeOk.status, 206, 'If-Range with the current ETag: the range');
  const ifRangeStale = await app.fetch(`/api/v1/assets/${ready.id}/preview`, { headers: { ...owner.headers, range: 'bytes=0-0', 'if-range': '"stale"' } });
  t.equal(ifRangeStale.status, 200, 'If-Range with another ETag: the whole file');
  await ifRangeStale.arrayBuffer();
  const head = await app.fetch(`/api/v1/assets/${ready.id}/preview`, { method: 'HEAD', headers: owner.headers });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-length'), String(size));
  t.equal(head.headers.get('etag'), `"${ready.sha256}"`);

  const viewer = await signIn(app, { role: 'viewer' });
  t.equal((await app.fetch(`/api/v1/assets/${ready.id}/thumbnail`, { headers: viewer.headers })).status, 200, 'viewers see thumbnails');
  t.equal((await app.fetch(`/api/v1/assets/${ready.id}/thumbnail`)).status, 401);
});

t.test('images: large sources get 1920 and 3840 variants, never upscaled', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const asset = await uploadAsset(app, owner, await solid(5000, 2500).png().toBuffer(), 'wide.png');
  const ready = await settledAsset(app, owner, asset.id);
  t.equal(ready.state, 'ready');
  t.equal(ready.contentType, 'image/png');
  const widths = ready.variants
    .filter((v: any) => v.purpose === 'player')
    .map((v: any) => `${v.contentType}@${v.width}x${v.height}`)
    .sort();
  t.same(widths, ['image/jpeg@1920x960', 'image/jpeg@3840x1920', 'image/webp@1920x960', 'image/webp@3840x1920']);
});

t.test('images: animated GIF stays animated; SVG is rasterised and served under a CSP', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  // A three-frame animated GIF made by sharp (frames joined as an animation).
  const framesPng = await Promise.all(['#ff0000', '#00ff00', '#0000ff'].map((c) => solid(40, 30, c).png().toBuffer()));
  const realGif = await sharp(framesPng, { join: { animated: true } })
    .gif({ loop: 0, delay: [100, 100, 100] })
    .toBuffer();
  t.equal((await sharp(realGif, { animated: true }).metadata()).pages, 3, 'the test GIF has three frames');

  const anim = await settledAsset(app, owner, (await uploadAsset(app, owner, realGif, 'spin.gif')).id);
  t.equal(anim.state, 'ready', anim.failureReason ?? '');
  t.equal(anim.metadata.animated, true);
  t.same([anim.width, anim.height], [40, 30]);
  const player = anim.variants.find((v: any) => v.purpose === 'player');
  t.equal(player.contentType, 'image/webp');
  t.same([player.width, player.height], [40, 30]);
  const bytes = Buffer.from(await (await app.fetch(`/api/v1/assets/${anim.id}/preview`, { headers: owner.headers })).arrayBuffer());
  t.equal(sha256(bytes), anim.sha256, 'preview of a GIF is the original');
  // The player variant keeps all frames (read straight from the store).
  const store = `${app.deps.config.dataDir}/media/${player.sha256.slice(0, 2)}/${player.sha256.slice(2, 4)}/${player.sha256}`;
  t.equal((await sharp(store, { animated: true }).metadata()).pages, 3, 'the WebP variant is animated');

  const svg = Buffer.from(
    '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><script>alert(1)</script><rect width="200" height="100" fill="#c00"/></svg>',
  );
  const vec = await settledAsset(app, owner, (await uploadAsset(app, owner, svg, 'logo.svg')).id);
  t.equal(vec.state, 'ready', vec.failureReason ?? '');
  t.equal(vec.contentType, 'image/svg+xml');
  t.same([vec.width, vec.height], [200, 100]);
  t.ok(
    vec.variants.some((v: any) => v.purpose === 'thumbnail' && v.contentType === 'image/webp'),
    'rasterised thumbnail',
  );
  const pv = vec.variants.filter((v: any) => v.purpose === 'player');
  t.ok(pv.length > 0 && pv.every((v: any) => v.contentType !== 'image/svg+xml' && v.width === 1920), 'rasterised player variants, sharp at 1920');
  const served = await app.fetch(`/api/v1/assets/${vec.id}/preview`, { headers: owner.headers });
  t.equal(served.headers.get('content-type'), 'image/svg+xml');
  t.match(served.headers.get('content-security-policy'), /default-src 'none'.*sandbox/);
  t.match(served.headers.get('content-disposition'), /^attachment/, 'never rendered inline in the console origin');
  t.equal(served.headers.get('x-content-type-options'), 'nosniff');
});

t.test('images: pixel floods and corrupt files fail with a reason; retry re-runs', async (t) => {
  const app = await startApp(t, { config: { imageMaxPixels: 1_000_000 } });
  const owner = await signIn(app);
  const big = await settledAsset(app, owner, (await uploadAsset(app, owner, await solid(2000, 1000).png().toBuffer(), 'flood.png')).id);
  t.equal(big.state, 'failed');
  t.match(big.failureReason, /pixel/);
  t.comment(big.failureReason);

  const png = await solid(50, 50).png().toBuffer();
  const truncated = png.subarray(0, 60);
  const broken = await settledAsset(app, owner, (await uploadAsset(app, owner, truncated, 'broken.png')).id);
  t.equal(broken.state, 'failed');
  t.ok(broken.failureReason, `reason: ${broken.failureReason}`);

  const retried = await app.json(`/api/v1/assets/${broken.id}/retry`, { method: 'POST', headers: owner.headers });
  t.equal(retried.status, 200);
  t.equal(retried.body.data.state, 'processing');
  t.equal(retried.body.data.failureReason, null);
  const again = await settledAsset(app, owner, broken.id);
  t.equal(again.state, 'failed', 'still broken after the retry');
  const jobs = await app.deps.db.selectFrom('jobs').selectAll().where('payload', 'like', `%${broken.id}%`).execute();
  t.equal(jobs.length, 2, 'each run is a job');

  const notFailed = await settledAsset(app, owner, (await uploadAsset(app, owner, png, 'fine.png')).id);
  t.equal(notFailed.state, 'ready');
  const refused = await app.json(`/api/v1/assets/${notFailed.id}/retry`, { method: 'POST', headers: owner.headers });
  t.equal(refused.status, 409);
});

t.test('animations: the pixel limit is per frame; the whole animation has its own budget (GIF and WebP)', async (t) => {
  // 10 000 pixels per frame; an animation may have 4x that in all (ANIMATION_BUDGET_FRAMES).
  const app = await startApp(t, { config: { imageMaxPixels: 10_000 } });
  const owner = await signIn(app);
  const colours = ['#f00', '#0f0', '#00f', '#ff0', '#0ff', '#f0f', '#fff', '#000', '#888'];
  const frames = (n: number) => Promise.all(colours.slice(0, n).map((c) => solid(100, 50, c).png().toBuffer()));
  const gif = async (n: number) =>
    sharp(await frames(n), { join: { animated: true } })
      .gif({ loop: 0, delay: Array(n).fill(80) })
      .toBuffer();
  const webp = async (n: number) =>
    sharp(await frames(n), { join: { animated: true } })
      .webp({ loop: 0, delay: Array(n).fill(80), lossless: true })
      .toBuffer();

  // 5 frames of 100x50: 5 000 pixels each (under the limit), 25 000 in all (over it, under the budget).
  for (const [name, bytes, type] of [
    ['five.gif', await gif(5), 'image/gif'],
    ['five.webp', await webp(5), 'image/webp'],
  ] as const) {
    t.equal((await sharp(bytes, { animated: true }).metadata()).pages, 5, `${name} has 5 frames`);
    const asset = await settledAsset(app, owner, (await uploadAsset(app, owner, bytes, name)).id);
    t.equal(asset.contentType, type);
    t.equal(asset.state, 'ready', `${name}: ${asset.failureReason ?? 'ready'}`);
    t.same([asset.width, asset.height, asset.metadata.frames, asset.metadata.animated], [100, 50, 5, true]);
    const player = asset.variants.find((v: any) => v.purpose === 'player');
    const file = `${app.dataDir}/media/${player.sha256.slice(0, 2)}/${player.sha256.slice(2, 4)}/${player.sha256}`;
    t.equal((await sharp(file, { animated: true }).metadata()).pages, 5, `${name}: the player variant keeps every frame`);
  }

  // 9 frames: 45 000 pixels in all, over the budget: refused with a reason, without retries.
  for (const [name, bytes] of [
    ['nine.gif', await gif(9)],
    ['nine.webp', await webp(9)],
  ] as const) {
    const asset = await settledAsset(app, owner, (await uploadAsset(app, owner, bytes, name)).id);
    t.equal(asset.state, 'failed', name);
    t.match(asset.failureReason, /the animation has 9 frames of 100x50, 45000 pixels in all, more than the 40000 allowed/);
    const job = await app.deps.db.selectFrom('jobs').selectAll().where('payload', 'like', `%${asset.id}%`).executeTakeFirstOrThrow();
    t.same([job.state, job.attempts], ['failed', 1], `${name}: a refusal, not retried`);
  }

  // A single frame over the limit is still refused as a pixel flood.
  const big = await settledAsset(app, owner, (await uploadAsset(app, owner, await solid(200, 100).png().toBuffer(), 'big.png')).id);
  t.equal(big.state, 'failed');
  t.match(big.failureReason, /20000 pixels, more than the 10000 allowed/);
});

t.test('serving: If-Range with dates and weak tags, 304 on preview, HEAD on thumbnail', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const bytes = await solid(300, 200, '#884422').jpeg().toBuffer();
  const asset = await settledAsset(app, owner, (await uploadAsset(app, owner, bytes, 'serve.jpg')).id);
  const url = `/api/v1/assets/${asset.id}/preview`;
  const first = await app.fetch(url, { headers: owner.headers });
  await first.arrayBuffer();
  const lastModified = first.headers.get('last-modified')!;
  t.ok(lastModified);
  const withIfRange = (ifRange: string) => app.fetch(url, { headers: { ...owner.headers, range: 'bytes=0-9', 'if-range': ifRange } });

  const exact = await withIfRange(lastModified);
  t.equal(exact.status, 206, 'If-Range with the Last-Modified sent: the range');
  t.same(Buffer.from(await exact.arrayBuffer()), bytes.subarray(0, 10));
  const later = await withIfRange(new Date(Date.parse(lastModified) + 60_000).toUTCString());
  t.equal(later.status, 200, 'a later date is not the validator: the whole file');
  t.equal(Buffer.from(await later.arrayBuffer()).length, bytes.length);
  const earlier = await withIfRange(new Date(Date.parse(lastModified) - 60_000).toUTCString());
  t.equal(earlier.status, 200, 'an earlier one neither');
  await earlier.arrayBuffer();
  const weak = await withIfRange(`W/"${asset.sha256}"`);
  t.equal(weak.status, 200, 'a weak ETag never matches If-Range');
  await weak.arrayBuffer();
  const strong = await withIfRange(`"${asset.sha256}"`);
  t.equal(strong.status, 206);
  await strong.arrayBuffer();

  const notModified = await app.fetch(url, { headers: { ...owner.headers, 'if-none-match': `"${asset.sha256}"` } });
  t.equal(notModified.status, 304, 'preview: If-None-Match with the ETag');
  t.equal(notModified.headers.get('etag'), `"${asset.sha256}"`);
  t.equal((await notModified.arrayBuffer()).byteLength, 0);
  const weakInm = await app.fetch(url, { headers: { ...owner.headers, 'if-none-match': `"other", W/"${asset.sha256}"` } });
  t.equal(weakInm.status, 304, 'If-None-Match compares weakly, in a list');
  const changed = await app.fetch(url, { headers: { ...owner.headers, 'if-none-match': '"other"' } });
  t.equal(changed.status, 200);
  await changed.arrayBuffer();

  const thumb = asset.variants.find((v: any) => v.purpose === 'thumbnail');
  const head = await app.fetch(`/api/v1/assets/${asset.id}/thumbnail`, { method: 'HEAD', headers: owner.headers });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-type'), 'image/webp');
  t.equal(head.headers.get('content-length'), String(thumb.sizeBytes));
  t.equal(head.headers.get('etag'), `"${thumb.sha256}"`);
  t.equal(head.headers.get('accept-ranges'), 'bytes');
  t.equal((await head.arrayBuffer()).byteLength, 0, 'no body');
  const headRange = await app.fetch(`/api/v1/assets/${asset.id}/thumbnail`, { method: 'HEAD', headers: { ...owner.headers, range: 'bytes=0-4' } });
  t.equal(headRange.status, 206);
  t.equal(headRange.headers.get('content-length'), '5');
  t.equal(headRange.headers.get('content-range'), `bytes 0-4/${thumb.sizeBytes}`);
});
