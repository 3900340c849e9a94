import sharp from 'sharp';
import t from 'tap';
import { WebSocket } from 'ws';
import { screenContext } from '../server/src/modules/content/screen-context.js';
import { buildManifest } from '../server/src/modules/content/manifest.js';
import { ManifestDto } from '../server/src/modules/content/manifest.routes.js';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { settledAsset, sha256, uploadAsset } from './helpers/media.js';
import { sampleMp4 } from './helpers/sample-media.js';
import { readFileSync } from 'node:fs';
import { tempDataDir } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';

const png = (color: string, width = 800, height = 600) =>
  sharp({ create: { width, height, channels: 3, background: color } })
    .png()
    .toBuffer();

t.test('media in the manifest: variants to cache, downloads guarded, archive and tags push changes', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const screen = await pairScreen(app, owner);
  const call = (method: string, path: string, json?: unknown) => app.json(path, { method, headers: owner.headers, ...(json !== undefined ? { json } : {}) });
  const manifest = () => app.json('/api/v1/player/manifest', { headers: screen.headers });

  const red = await settledAsset(app, owner, (await uploadAsset(app, owner, await png('#ff0000'), 'red.png')).id);
  const blue = await settledAsset(app, owner, (await uploadAsset(app, owner, await png('#0000ff'), 'blue.png')).id);
  const unused = await settledAsset(app, owner, (await uploadAsset(app, owner, await png('#00ff00'), 'green.png')).id);
  t.equal(red.state, 'ready');

  const inner = (await call('POST', '/api/v1/playlists', { name: 'Inner', items: [{ assetId: blue.id, durationMs: 4000 }] })).body.data;
  const main = (await call('POST', '/api/v1/playlists', { name: 'Main', items: [{ assetId: red.id, transition: { type: 'fade', durationMs: 600 } }] })).body
    .data;
  t.equal(main.items[0].effectiveDurationMs, 10000, 'images default to 10 s');
  t.equal(main.items[0].assetKind, 'image');
  t.equal((await call('POST', `/api/v1/playlists/${main.id}/items`, { playlistId: inner.id })).status, 201);
  await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: main.id });

  let res = await manifest();
  t.equal(res.status, 200);
  t.ok(ManifestDto.safeParse(res.body.data).success);
  const items = res.body.data.timeline[0].playlist.items;
  t.same(
    items.map((i: any) => [i.kind, i.assetId, i.durationMs, i.playlistId]),
    [
      ['image', red.id, 10000, main.id],
      ['image', blue.id, 4000, inner.id],
    ],
  );
  t.same(items[0].transition, { type: 'fade', durationMs: 600 });
  const media = res.body.data.media;
  t.same([...new Set(media.map((m: any) => m.assetId))].sort(), [red.id, blue.id].sort(), 'only what plays');
  for (const item of items)
    t.ok(
      media.some((m: any) => m.variantId === item.variantId),
      'each item names a media entry',
    );
  for (const m of media) {
    t.match(m.url, /^\/api\/v1\/player\/assets\/[0-9a-f-]+\/variants\/[0-9a-f-]+$/);
    const dl = await app.fetch(m.url, { headers: screen.headers });
    t.equal(dl.status, 200, 'downloads with the device credential');
    const bytes = Buffer.from(await dl.arrayBuffer());
    t.equal(sha256(bytes), m.sha256, 'hashes to its sha256');
    t.equal(bytes.length, m.sizeBytes);
    t.equal(dl.headers.get('content-type'), m.contentType);
  }
  const other = unused.variants.find((v: any) => v.purpose === 'player') ?? unused.variants[0];
  const refused = await app.fetch(`/api/v1/player/assets/${unused.id}/variants/${other.id}`, { headers: screen.headers });
  t.ok(refused.status === 403 || refused.status === 404, `a variant the manifest does not use is refused (${refused.status})`);

  // In use: the asset cannot be deleted.
  const del = await call('DELETE', `/api/v1/assets/${blue.id}`);
  t.equal(del.status, 409);
  t.match(JSON.stringify(del.body.error.details), /Inner/);

  // Archiving pushes manifest.changed and the asset drops out, named in warnings.
  const ws = new WebSocket(`${app.url.replace(/^http/, 'ws')}/api/v1/player/socket`, ['placard.v1'], {
    headers: { authorization: `Bearer ${screen.credential}` },
  });
  const messages: any[] = [];
  const arrived = new Map<any, number>();
  ws.on('message', (d) => {
    const m = JSON.parse(String(d));
    messages.push(m);
    arrived.set(m, Date.now());
  });
  await new Promise((r) => ws.once('open', r));
  t.teardown(() => ws.close());
  /** The first matching message; it must arrive within a second of `since` (taken before the request that causes it). */
  const waitFor = async (pred: (m: any) => boolean, since: number) => {
    const until = since + 1000;
    for (;;) {
      const m = messages.find(pred);
      if (m) {
        if (arrived.get(m)! > until) throw new Error(`the message came ${arrived.get(m)! - since} ms after the request`);
        return m;
      }
      if (Date.now() > until) throw new Error(`no message within 1 s of the request: ${JSON.stringify(messages)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const rev = res.body.data.revision;
  let sent = Date.now();
  t.equal((await call('POST', '/api/v1/assets/archive', { ids: [blue.id] })).status, 200);
  const pushed = await waitFor((m) => m.type === 'manifest.changed' && m.revision > rev, sent);
  res = await manifest();
  t.equal(res.body.data.revision, pushed.revision);
  t.same(
    res.body.data.timeline[0].playlist.items.map((i: any) => i.assetId),
    [red.id],
  );
  t.match(res.body.data.warnings, [{ code: 'asset_archived', assetId: blue.id }]);
  t.notOk(res.body.data.media.some((m: any) => m.assetId === blue.id));

  // A tag-rule playlist follows the library.
  await call('PUT', `/api/v1/playlists/${main.id}/tag-rule`, { tags: ['Menu'], order: 'name', durationMs: 3000 });
  const rev2 = (await manifest()).body.data.revision;
  const uploaded = await uploadAsset(app, owner, await png('#ffff00'), 'yellow.png', { tags: ['menu'] });
  sent = Date.now(); // the push follows the asset becoming ready: time it from the last poll that saw it processing
  let tagged = uploaded;
  for (;;) {
    const now = Date.now();
    tagged = (await app.json(`/api/v1/assets/${uploaded.id}`, { headers: owner.headers })).body.data;
    if (tagged.state !== 'processing') break;
    sent = now;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(tagged.state, 'ready');
  await waitFor((m) => m.type === 'manifest.changed' && m.revision > rev2, sent);
  res = await manifest();
  const smart = res.body.data.timeline[0].playlist.items.find((i: any) => i.assetId === tagged.id);
  t.match(smart, { id: `${main.id}:tag:${tagged.id}`, durationMs: 3000 });

  // Not ready: left out and named (built directly over the real database).
  await app.deps.db.updateTable('assets').set({ state: 'processing' }).where('id', '=', red.id).execute();
  // announced as the media module's writes are (builds keep playlist parts until a change to what they used is announced)
  const { contentChanged } = await import('../server/src/modules/content/changes.js');
  await contentChanged(app.deps, [{ kind: 'asset', id: red.id }]);
  const built = await buildManifest(app.deps.db, (await screenContext(app.deps.db, screen.screenId))!);
  t.ok(
    built.manifest.warnings.some((w) => w.code === 'asset_not_ready' && w.assetId === red.id && w.state === 'processing'),
    'named in warnings',
  );
  t.notOk(built.manifest.timeline[0]!.playlist!.items.some((i) => i.assetId === red.id));
});

t.test('a layout preview shows the zones’ thumbnails', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const green = await settledAsset(app, owner, (await uploadAsset(app, owner, await png('#00ff00', 400, 400), 'green.png')).id);
  const layout = await app.json('/api/v1/layouts', {
    method: 'POST',
    headers: owner.headers,
    json: {
      name: 'L',
      width: 1000,
      height: 500,
      background: { color: '#000000' },
      zones: [{ x: 0, y: 0, width: 500, height: 500, fit: 'cover', content: { type: 'asset', assetId: green.id } }],
    },
  });
  t.equal(layout.status, 201);
  const res = await app.fetch(`/api/v1/layouts/${layout.body.data.id}/preview-image`, { headers: owner.headers });
  const { data, info } = await sharp(Buffer.from(await res.arrayBuffer()))
    .raw()
    .toBuffer({ resolveWithObject: true });
  const at = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
  const [r, g, b] = at(100, 100);
  t.ok(r! < 20 && g! > 235 && b! < 20, `the thumbnail fills its zone (${[r, g, b]})`);
  t.same(at(800, 100), [0, 0, 0], 'background elsewhere');
  const del = await app.json(`/api/v1/assets/${green.id}`, { method: 'DELETE', headers: owner.headers });
  t.equal(del.status, 409, 'an asset a layout shows cannot be deleted');
});

t.test('full-screen media is picked for the display size the player reports', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const screen = await pairScreen(app, owner);
  const call = (method: string, path: string, json?: unknown) => app.json(path, { method, headers: owner.headers, ...(json !== undefined ? { json } : {}) });
  const big = await settledAsset(app, owner, (await uploadAsset(app, owner, await png('#336699', 4800, 2700), 'big.png')).id);
  t.equal(big.state, 'ready');
  const playlist = (await call('POST', '/api/v1/playlists', { name: 'Big', items: [{ assetId: big.id }] })).body.data;
  t.equal((await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: playlist.id })).status, 200);
  const chosenWidth = async () => {
    const m = (await app.json('/api/v1/player/manifest', { headers: screen.headers })).body.data;
    const item = m.timeline[0].playlist.items[0];
    return m.media.find((x: any) => x.variantId === item.variantId).width as number;
  };
  const heartbeat = (display: unknown) =>
    app.json('/api/v1/player/heartbeat', { method: 'POST', headers: screen.headers, json: { playerVersion: 't', display } });

  t.equal(await chosenWidth(), 1920, 'no display reported: the 1920-wide variant');
  const none = (await heartbeat(undefined)).body.data.manifestRevision;
  t.equal(
    (await heartbeat({ width: 1920, height: 1080 })).body.data.manifestRevision,
    none,
    'first reporting the assumed size (1920x1080) changes no manifest: no new revision, no second fetch',
  );
  const r0 = (await heartbeat({ width: 3840, height: 2160 })).body.data.manifestRevision;
  t.equal(await chosenWidth(), 3840, 'a 4K display gets the 3840-wide variant');
  t.equal((await heartbeat({ width: 3840, height: 2160 })).body.data.manifestRevision, r0, 'the same size again: same revision');
  t.equal((await heartbeat({ width: 3840.2, height: 2160 })).body.data.manifestRevision, r0, 'sizes are compared rounded');
  const r1 = (await heartbeat({ width: 1280, height: 720 })).body.data.manifestRevision;
  t.equal(r1, r0 + 1, 'a new size is a new revision, so the player fetches the manifest made for it');
  t.equal(await chosenWidth(), 1920, 'a smaller display: the smallest variant that covers it');
  const r2 = (await heartbeat({ width: 'huge', height: -1 })).body.data.manifestRevision;
  t.equal(await chosenWidth(), 1920, 'an implausible size is ignored');
  t.equal((await heartbeat({ width: 1e21, height: 1e21 })).body.data.manifestRevision, r2, 'and does not bump the revision again and again');
});

t.test('durations and transitions: the item API, the playlist length and the manifest agree', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const screen = await pairScreen(app, owner);
  const call = (method: string, path: string, json?: unknown) => app.json(path, { method, headers: owner.headers, ...(json !== undefined ? { json } : {}) });
  const video = await settledAsset(app, owner, (await uploadAsset(app, owner, readFileSync(sampleMp4(app, tempDataDir(t), 'clip.mp4', 2)), 'clip.mp4')).id);
  t.equal(video.state, 'ready');
  t.ok(video.durationMs > 1500 && video.durationMs < 2500, `the video knows its length (${video.durationMs})`);
  const image = await settledAsset(app, owner, (await uploadAsset(app, owner, await png('#ff8800'), 'orange.png')).id);
  const site = await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/menu', name: 'Menu site' });
  t.equal(site.status, 201);

  const inner = (
    await call('POST', '/api/v1/playlists', {
      name: 'Inner',
      items: [{ assetId: image.id, durationMs: 4000, transition: { type: 'slide', durationMs: 300 } }, { assetId: site.body.data.id }],
    })
  ).body.data;
  t.same(
    inner.items.map((i: any) => i.effectiveDurationMs),
    [4000, 30_000],
    'a website defaults to 30 s in the API',
  );
  const main = (await call('POST', '/api/v1/playlists', { name: 'Main', items: [{ assetId: video.id }] })).body.data;
  t.equal(main.items[0].effectiveDurationMs, video.durationMs, 'a video defaults to its own length');
  const nest = await call('POST', `/api/v1/playlists/${main.id}/items`, { playlistId: inner.id, transition: { type: 'fade', durationMs: 700 } });
  t.match(nest.body.data, { type: 'playlist', durationMs: null, effectiveDurationMs: 34_000 }, 'a nesting item lasts its playlist’s pass');
  const dto = (await call('GET', `/api/v1/playlists/${main.id}`)).body.data;
  t.equal(dto.durationMs, video.durationMs + 34_000);

  await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: main.id });
  const m = (await app.json('/api/v1/player/manifest', { headers: screen.headers })).body.data;
  const items = m.timeline[0].playlist.items;
  t.same(
    items.map((i: any) => [i.kind, i.durationMs, i.transition.type]),
    [
      ['video', video.durationMs, 'none'],
      ['image', 4000, 'fade'],
      ['website', 30_000, 'none'],
    ],
    'the manifest plays the video’s length, the website’s 30 s, and the nesting item’s fade into its first item',
  );
  t.equal(
    items.reduce((n: number, i: any) => n + i.durationMs, 0),
    dto.durationMs,
    'one pass of the manifest lasts the playlist’s durationMs',
  );
});

t.test('tag rules: match all or any, order, limit, a video’s own length; untagged or archived assets drop out', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const screen = await pairScreen(app, owner);
  const call = (method: string, path: string, json?: unknown) => app.json(path, { method, headers: owner.headers, ...(json !== undefined ? { json } : {}) });
  const manifest = async () => (await app.json('/api/v1/player/manifest', { headers: screen.headers })).body.data;
  // Made in this order: a-first is the oldest, c-clip the newest.
  const first = await settledAsset(
    app,
    owner,
    (await uploadAsset(app, owner, await png('#111111'), 'a.png', { name: 'a-first', tags: ['Promo', 'summer'] })).id,
  );
  const second = await settledAsset(app, owner, (await uploadAsset(app, owner, await png('#222222'), 'b.png', { name: 'b-second', tags: ['promo'] })).id);
  const clip = await settledAsset(
    app,
    owner,
    (await uploadAsset(app, owner, readFileSync(sampleMp4(app, tempDataDir(t), 'c.mp4', 2)), 'c.mp4', { name: 'c-clip', tags: ['PROMO', 'Summer'] })).id,
  );
  const pending = await settledAsset(
    app,
    owner,
    (await uploadAsset(app, owner, await png('#333333'), 'd.png', { name: 'd-pending', tags: ['promo', 'summer'] })).id,
  );
  await app.deps.db.updateTable('assets').set({ state: 'processing' }).where('id', '=', pending.id).execute(); // not ready: never matched
  for (const a of [first, second, clip]) t.equal(a.state, 'ready');
  const smart = (await call('POST', '/api/v1/playlists', { name: 'Smart' })).body.data;
  await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: smart.id });
  const played = async () => (await manifest()).timeline[0].playlist.items.map((i: any) => [i.assetId, i.durationMs]);
  const rule = async (body: unknown) => {
    const res = await call('PUT', `/api/v1/playlists/${smart.id}/tag-rule`, body);
    t.equal(res.status, 200);
    return res.body.data;
  };

  let dto = await rule({ tags: ['promo', 'SUMMER'], match: 'all', order: 'newest' });
  t.same(
    await played(),
    [
      [clip.id, clip.durationMs],
      [first.id, 10_000],
    ],
    'all tags, newest first; the video plays its own length',
  );
  t.equal(dto.durationMs, clip.durationMs + 10_000, 'the playlist’s length counts the rule’s matches');
  t.equal((await manifest()).timeline[0].playlist.items[0].id, `${smart.id}:tag:${clip.id}`);
  await rule({ tags: ['promo', 'summer'], match: 'all', order: 'oldest' });
  t.same(
    (await played()).map((x: any) => x[0]),
    [first.id, clip.id],
    'oldest first',
  );
  await rule({ tags: ['promo', 'summer'], match: 'all', order: 'oldest', limit: 1 });
  t.same(
    (await played()).map((x: any) => x[0]),
    [first.id],
    'limit',
  );
  dto = await rule({ tags: ['promo'], match: 'any', order: 'name', durationMs: 3000 });
  t.same(
    await played(),
    [
      [first.id, 3000],
      [second.id, 3000],
      [clip.id, 3000],
    ],
    'any tag, by name, the rule’s duration',
  );
  t.equal(dto.durationMs, 9000);

  const rev = (await manifest()).revision;
  t.equal((await call('PATCH', `/api/v1/assets/${first.id}`, { tags: ['winter'] })).status, 200);
  const afterUntag = await manifest();
  t.ok(afterUntag.revision > rev, 'retagging bumps the manifest');
  t.same(
    afterUntag.timeline[0].playlist.items.map((i: any) => i.assetId),
    [second.id, clip.id],
    'an untagged asset drops out',
  );
  t.equal((await call('POST', '/api/v1/assets/archive', { ids: [second.id] })).status, 200);
  t.same(
    (await played()).map((x: any) => x[0]),
    [clip.id],
    'an archived asset drops out',
  );
  t.equal((await call('GET', `/api/v1/playlists/${smart.id}`)).body.data.durationMs, 3000);
});
