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
  t.same(players.map((v: any) => `${v.contentType}@${v.width}x${v.height}`).sort(), ['image/jpeg@1000x4000', 'image/webp@1000x4000'], 'a portrait source narrower than 1920: one size, rotated');
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
  const ifRangeOk = await app.fetch(`/api/v1/assets/${ready.id}/preview`, { headers: { ...owner.headers, range: 'bytes=0-0', 'if-range': `"${ready.sha256}"` } });
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
  const widths = ready.variants.filter((v: any) => v.purpose === 'player').map((v: any) => `${v.contentType}@${v.width}x${v.height}`).sort();
  t.same(widths, ['image/jpeg@1920x960', 'image/jpeg@3840x1920', 'image/webp@1920x960', 'image/webp@3840x1920']);
});

t.test('images: animated GIF stays animated; SVG is rasterised and served under a CSP', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  // A three-frame animated GIF made by sharp (frames joined as an animation).
  const framesPng = await Promise.all(['#ff0000', '#00ff00', '#0000ff'].map((c) => solid(40, 30, c).png().toBuffer()));
  const realGif = await sharp(framesPng, { join: { animated: true } }).gif({ loop: 0, delay: [100, 100, 100] }).toBuffer();
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
  const store = app.deps.config.dataDir + `/media/${player.sha256.slice(0, 2)}/${player.sha256.slice(2, 4)}/${player.sha256}`;
  t.equal((await sharp(store, { animated: true }).metadata()).pages, 3, 'the WebP variant is animated');

  const svg = Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><script>alert(1)</script><rect width="200" height="100" fill="#c00"/></svg>');
  const vec = await settledAsset(app, owner, (await uploadAsset(app, owner, svg, 'logo.svg')).id);
  t.equal(vec.state, 'ready', vec.failureReason ?? '');
  t.equal(vec.contentType, 'image/svg+xml');
  t.same([vec.width, vec.height], [200, 100]);
  t.ok(vec.variants.some((v: any) => v.purpose === 'thumbnail' && v.contentType === 'image/webp'), 'rasterised thumbnail');
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
