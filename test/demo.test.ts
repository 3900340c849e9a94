import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { DEMO } from '../server/src/modules/demo/seed.js';
import { MediaStore } from '../server/src/platform/media/store.js';
import { signIn, type SignedIn } from './helpers/auth.js';
import { demoSeeded } from './helpers/demo.js';
import { startApp, tempDataDir, type TestApp } from './helpers/harness.js';
import { settledAsset, uploadAsset } from './helpers/media.js';
import { samplePng } from './helpers/sample-media.js';

const EXPECTED = {
  screens: ['Counter', 'Menu board', 'Window'],
  locations: ['Demo Café'],
  groups: ['Demo Café screens'],
  assets: ['Opening hours', 'Test pattern clip', "Today's specials", 'Welcome to Placard'],
  playlists: ['Café loop', 'Menu board'],
  layouts: ['Café lunch split'],
  schedules: ['Weekday lunch'],
};
const named = (names: string[]) => ({ count: names.length, names: [...names].sort() });
const expectedContents = Object.fromEntries(Object.entries(EXPECTED).map(([k, v]) => [k, named(v)]));

async function allAssets(app: TestApp, who: SignedIn) {
  const res = await app.json('/api/v1/assets?limit=500', { headers: who.headers });
  if (res.status !== 200) throw new Error(`assets answered ${res.status}`);
  return res.body.data.items as any[];
}

async function allReady(app: TestApp, who: SignedIn) {
  const out = [];
  for (const a of await allAssets(app, who)) out.push(await settledAsset(app, who, a.id, 180_000));
  return out;
}

async function screensByName(app: TestApp, who: SignedIn): Promise<Map<string, any>> {
  const res = await app.json('/api/v1/screens?limit=500', { headers: who.headers });
  return new Map((res.body.data.items as any[]).map((s) => [s.name, s]));
}

async function playlistByName(app: TestApp, who: SignedIn, name: string) {
  const list = await app.json('/api/v1/playlists?limit=500', { headers: who.headers });
  const summary = (list.body.data.items as any[]).find((p) => p.name === name);
  return (await app.json(`/api/v1/playlists/${summary.id}`, { headers: who.headers })).body.data;
}

/** A Monday, 10:00-16:00 in London (UTC in winter): lunch 11:30-14:00 is scheduled. */
const MONDAY = { from: '2026-11-30T10:00:00.000Z', to: '2026-11-30T16:00:00.000Z' };

async function checkPreview(t: any, app: TestApp, who: SignedIn) {
  const screens = await screensByName(app, who);
  const counter = screens.get('Counter');
  const res = await app.json('/api/v1/schedules/preview', { method: 'POST', headers: who.headers, json: { screenId: counter.id, ...MONDAY } });
  t.equal(res.status, 200, 'preview answers');
  const timeline = res.body.data.timeline as any[];
  const lunch = timeline.find((s) => s.source.type === 'schedule');
  t.ok(lunch, 'a schedule segment on Monday');
  t.equal(lunch.source.name, DEMO.schedule.name);
  t.same(lunch.content, { type: 'layout', id: lunch.content.id, name: DEMO.layout });
  t.equal(lunch.startsAt, '2026-11-30T11:30:00.000Z', 'lunch starts 11:30 London');
  t.equal(lunch.endsAt, '2026-11-30T14:00:00.000Z');
  const rest = timeline.filter((s) => s.source.type !== 'schedule');
  t.ok(rest.length >= 2, 'before and after lunch');
  for (const s of rest) {
    t.equal(s.source.type, 'group-assignment', 'the group playlist plays outside lunch');
    t.equal(s.content.name, DEMO.playlists.loop);
  }
  const menu = screens.get('Menu board');
  t.equal(menu.orientation, 'portrait');
  const m = await app.json('/api/v1/schedules/preview', { method: 'POST', headers: who.headers, json: { screenId: menu.id, ...MONDAY } });
  t.ok(
    (m.body.data.timeline as any[]).some((s) => s.source.type === 'assignment' && s.content.name === DEMO.playlists.menu),
    'the portrait board plays its own playlist outside lunch',
  );
}

async function checkMedia(t: any, app: TestApp, assets: any[]) {
  const store = new MediaStore(app.dataDir);
  t.equal(assets.length, 4);
  for (const a of assets) {
    t.equal(a.state, 'ready', `${a.name} is ready`);
    t.ok(a.tags.includes('demo'), `${a.name} is tagged demo`);
    const thumb = a.variants.find((v: any) => v.purpose === 'thumbnail');
    t.ok(thumb, `${a.name} has a thumbnail`);
    const meta = await sharp(readFileSync(store.pathOf(thumb.sha256))).metadata();
    t.ok(meta.width! > 0 && meta.width! <= 400 && meta.height! <= 400, `${a.name}: a real thumbnail ${meta.width}x${meta.height}`);
    t.ok(
      a.variants.some((v: any) => v.purpose === 'player'),
      `${a.name} has a player variant`,
    );
  }
  const byName = new Map(assets.map((a) => [a.name, a]));
  t.match(byName.get('Welcome to Placard'), { kind: 'image', width: 1920, height: 1080 });
  t.match(byName.get('Opening hours'), { kind: 'image', width: 1080, height: 1920 });
  const clip = byName.get('Test pattern clip');
  t.match(clip, { kind: 'video', width: 1280, height: 720, metadata: { videoCodec: 'h264', audioCodec: 'aac' } });
  t.ok(clip.durationMs >= 7500 && clip.durationMs <= 10_500, `clip lasts ${clip.durationMs} ms`);
  t.ok(
    clip.variants.some((v: any) => v.purpose === 'poster'),
    'clip has a poster frame',
  );
}

t.test('demo mode: seeded at start, real media, preview, and a reset restores the set exactly', async (t) => {
  const app = await startApp(t, { config: { demo: true } });
  const first = await app.json('/api/v1/demo');
  t.equal(first.status, 200, 'GET /demo is public');
  t.equal(first.body.data.enabled, true);
  t.same(first.body.data.resetsAllowedFor, ['owner', 'admin']);
  t.ok(first.body.data.seeding || first.body.data.seededAt, 'seeding (or done) right after start');
  if (first.body.data.seeding) t.equal(first.body.data.seededAt, null, 'not seeded yet while seeding');
  t.equal((await app.fetch('/healthz')).status, 200, '/healthz answers while the demo seeds');

  const status = await demoSeeded(app);
  t.ok(status.seededAt, 'seededAt recorded');
  t.equal(status.lastResetAt, null);
  t.same(status.contents, expectedContents, 'the data set, counts and names');
  t.ok(existsSync(path.join(app.dataDir, 'demo-source', 'clip.mp4')), 'sources kept for resets');

  const owner = await signIn(app);
  const admin = await signIn(app, { role: 'admin' });
  const editor = await signIn(app, { role: 'editor' });
  await checkMedia(t, app, await allReady(app, owner));
  await checkPreview(t, app, owner);
  const layouts = await app.json('/api/v1/layouts', { headers: owner.headers });
  t.ok(layouts.body.data.items[0].publishedRevisionId, 'the layout is published');

  // Change things.
  const loop = await playlistByName(app, owner, DEMO.playlists.loop);
  t.equal(loop.items.length, 3);
  t.ok(
    loop.items.some((i: any) => i.dayparts.length > 0),
    'the loop is day-parted',
  );
  t.equal((await app.fetch(`/api/v1/playlists/${loop.id}/items/${loop.items[0].id}`, { method: 'DELETE', headers: owner.headers })).status, 204);
  const counter = (await screensByName(app, owner)).get('Counter');
  t.equal((await app.json(`/api/v1/screens/${counter.id}`, { method: 'PATCH', headers: owner.headers, json: { name: 'Till' } })).status, 200);
  const extra = await uploadAsset(app, owner, readFileSync(await samplePng(tempDataDir(t), 'extra.png', { r: 10, g: 200, b: 90 })), 'extra.png');
  const extraReady = await settledAsset(app, owner, extra.id);
  t.equal(extraReady.state, 'ready');
  const store = new MediaStore(app.dataDir);
  const extraFiles = [extraReady.sha256, ...extraReady.variants.map((v: any) => v.sha256)].map((s: string) => store.pathOf(s));
  for (const f of extraFiles) t.ok(existsSync(f), 'the extra asset’s files exist');
  const changed = (await app.json('/api/v1/demo')).body.data.contents;
  t.equal(changed.assets.count, 5);
  t.ok(changed.screens.names.includes('Till'));

  // Two resets at once: one runs, any other is refused with 409 (never a double seed).
  const resets = await Promise.all([0, 1].map(() => app.json('/api/v1/demo/reset', { method: 'POST', headers: admin.headers })));
  t.ok(
    resets.some((r) => r.status === 200),
    'a reset ran',
  );
  for (const r of resets) if (r.status !== 200) t.match(r, { status: 409, body: { error: { code: 'conflict' } } }, 'the concurrent one is refused');
  const done = resets.find((r) => r.status === 200)!.body.data;
  t.same(done.contents, expectedContents, 'the set is back exactly (names, counts)');
  t.ok(done.lastResetAt, 'lastResetAt recorded');
  t.equal(done.seededAt, status.seededAt, 'seededAt is the first seed');

  t.equal((await app.json(`/api/v1/assets/${extra.id}`, { headers: owner.headers })).status, 404, 'the extra asset is gone');
  for (const f of extraFiles) t.notOk(existsSync(f), 'its files on disk are gone');
  t.equal((await playlistByName(app, owner, DEMO.playlists.loop)).items.length, 3, 'the deleted item is back');
  t.same([...(await screensByName(app, owner)).keys()].sort(), EXPECTED.screens, 'the renamed screen has its name back');

  for (const who of [owner, admin, editor]) {
    const me = await app.json('/api/v1/auth/status', { headers: who.headers });
    t.equal(me.body.data.authenticated, true, `${who.user.role} is still signed in`);
    t.equal((await app.json('/api/v1/playlists', { headers: who.headers })).status, 200, `${who.user.role}'s session still works`);
  }
  await checkMedia(t, app, await allReady(app, owner));
  await checkPreview(t, app, owner);
  t.same((await demoSeeded(app)).contents, expectedContents);
});

t.test('demo mode off: nothing disclosed, reset refused; reset is admin+ with CSRF', async (t) => {
  const app = await startApp(t);
  const res = await app.json('/api/v1/demo');
  t.equal(res.status, 200);
  t.same(res.body.data, {
    enabled: false,
    seeding: false,
    seededAt: null,
    lastResetAt: null,
    lastError: null,
    contents: null,
    resetsAllowedFor: ['owner', 'admin'],
  });

  const owner = await signIn(app);
  const off = await app.json('/api/v1/demo/reset', { method: 'POST', headers: owner.headers });
  t.equal(off.status, 409);
  t.equal(off.body.error.code, 'conflict');
  t.match(off.body.error.message, /Demo mode is off.*PLACARD_DEMO=1/);

  for (const role of ['editor', 'viewer', 'publisher'] as const) {
    const who = await signIn(app, { role });
    const r = await app.json('/api/v1/demo/reset', { method: 'POST', headers: who.headers });
    t.equal(r.status, 403, `${role} may not reset`);
    t.equal(r.body.error.code, 'forbidden');
  }
  const anonymous = await app.json('/api/v1/demo/reset', { method: 'POST' });
  t.equal(anonymous.status, 401);
  t.equal(anonymous.body.error.code, 'unauthenticated');
  const noCsrf = await app.json('/api/v1/demo/reset', { method: 'POST', headers: { cookie: owner.headers.cookie } });
  t.equal(noCsrf.status, 403);
  t.equal(noCsrf.body.error.code, 'csrf_failed');
  const wrongMethod = await app.json('/api/v1/demo', { method: 'DELETE' });
  t.equal(wrongMethod.status, 405);
});

t.test('demo mode: the seed runs once (meta), not again at the next start', async (t) => {
  const app = await startApp(t, { config: { demo: true } });
  const first = await demoSeeded(app);
  const row = await app.deps.db.selectFrom('meta').select('value').where('key', '=', 'demo.seeded_at').executeTakeFirst();
  t.equal(row?.value, first.seededAt, 'recorded in meta');
  // A second app over the same database (what a restart does) does not seed again.
  const { buildApp } = await import('../server/src/app.js');
  const { newAppDeps } = await import('../server/src/platform/app-deps.js');
  const { listen } = await import('../server/src/server.js');
  const deps = newAppDeps({ config: app.deps.config, db: app.deps.db, logger: app.deps.logger });
  const again = await listen(buildApp(deps), '127.0.0.1', 0, 1_000);
  t.teardown(async () => {
    await again.close();
    await deps.periodic.stop();
  });
  const res = (await (await fetch(`${again.url}/api/v1/demo`)).json()) as any;
  t.equal(res.data.seeding, false, 'no seed at the second start');
  t.same(res.data.contents, expectedContents, 'nothing doubled');
});

t.test('demo mode: a player approved onto a demo screen plays the demo content; a reset unpairs it', async (t) => {
  const app = await startApp(t, { config: { demo: true } });
  await demoSeeded(app);
  const owner = await signIn(app);
  const assets = new Map((await allReady(app, owner)).map((a) => [a.name, a.id]));
  const counter = (await screensByName(app, owner)).get('Counter');
  t.equal(counter.status, 'pending', 'a demo screen has never been seen');

  // The /play pairing flow, approved onto the existing demo screen (re-pair with screenId).
  const started = await app.json('/api/v1/player/pairing-sessions', {
    method: 'POST',
    json: { playerFamily: 'edge', playerVersion: '1.0.0', deviceName: 'visitor browser' },
  });
  t.equal(started.status, 201);
  const { id, code, pollSecret } = started.body.data;
  t.equal((await app.json('/api/v1/screens/pairing/resolve', { method: 'POST', headers: owner.headers, json: { code } })).status, 200);
  const approved = await app.json(`/api/v1/screens/pairing/${id}/approve`, {
    method: 'POST',
    headers: owner.headers,
    json: { name: 'Counter', screenId: counter.id },
  });
  t.equal(approved.status, 200);
  t.equal(approved.body.data.screen.id, counter.id, 'the pairing adopted the demo screen');
  const polled = await app.json(`/api/v1/player/pairing-sessions/${id}`, { headers: { 'x-pairing-secret': pollSecret } });
  const enrolled = await app.json('/api/v1/player/enroll', { method: 'POST', json: { enrollmentToken: polled.body.data.enrollmentToken } });
  t.equal(enrolled.status, 201);
  const device = { authorization: `Bearer ${enrolled.body.data.credential}` };

  const manifest = await app.json('/api/v1/player/manifest', { headers: device });
  t.equal(manifest.status, 200);
  const used = new Set((manifest.body.data.media as any[]).map((m) => m.assetId));
  for (const name of ['Welcome to Placard', 'Test pattern clip']) t.ok(used.has(assets.get(name)), `the manifest carries ${name}`);
  t.ok(
    (manifest.body.data.timeline as any[]).some((s) => s.content),
    'something plays',
  );
  t.equal(manifest.body.data.timeZone, 'Europe/London', 'the demo location’s zone');

  const reset = await app.json('/api/v1/demo/reset', { method: 'POST', headers: owner.headers });
  t.equal(reset.status, 200);
  const after = await app.json('/api/v1/player/manifest', { headers: device });
  t.equal(after.status, 401, 'the reset removed the paired screen: the player pairs again');
  t.equal((await app.json(`/api/v1/screens/${counter.id}`, { headers: owner.headers })).status, 404);
});
