/**
 * The server side of the console's journey (issue 16): the default time zone, deleting
 * screens and content with where-used answers, what an action would touch, the command
 * table per player family, website addresses and thumbnails, the upload types.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';
import { detectBoxTimeZone, type ZoneSources } from '../server/src/modules/system/time-zone.js';
import { readSettings, settleDefaultTimeZone } from '../server/src/modules/system/settings.js';
import { normaliseWebsiteUrl, readPageFacts } from '../server/src/modules/media/website-thumbnail.js';
import { samplePng } from './helpers/sample-media.js';
import { tempDataDir } from './helpers/harness.js';
import { readFileSync } from 'node:fs';

const sources = (over: Partial<ZoneSources> & { TZ?: string }): ZoneSources => ({
  env: over.TZ === undefined ? {} : { TZ: over.TZ },
  localtimeLink: over.localtimeLink ?? (() => null),
  timezoneFile: over.timezoneFile ?? (() => null),
  intlZone: over.intlZone ?? (() => undefined),
});

t.test('the box’s time zone: TZ, /etc/localtime, /etc/timezone, Intl, in that order; UTC aliases read as UTC', async (t) => {
  t.same(detectBoxTimeZone(sources({ TZ: 'Europe/Paris', localtimeLink: () => '/usr/share/zoneinfo/Asia/Tokyo' })), { zone: 'Europe/Paris', from: 'TZ' });
  t.same(detectBoxTimeZone(sources({ TZ: ':America/New_York' })), { zone: 'America/New_York', from: 'TZ' }, 'glibc’s leading colon');
  t.same(
    detectBoxTimeZone(sources({ TZ: 'Not/AZone', localtimeLink: () => '../usr/share/zoneinfo/Europe/Berlin' })),
    { zone: 'Europe/Berlin', from: '/etc/localtime' },
    'a bad TZ is skipped',
  );
  t.same(detectBoxTimeZone(sources({ localtimeLink: () => '/usr/share/zoneinfo/Etc/UTC' })), { zone: 'UTC', from: '/etc/localtime' });
  t.same(detectBoxTimeZone(sources({ localtimeLink: () => '/etc/weird', timezoneFile: () => 'Australia/Sydney\n' })), {
    zone: 'Australia/Sydney',
    from: '/etc/timezone',
  });
  t.same(detectBoxTimeZone(sources({ intlZone: () => 'Africa/Nairobi' })), { zone: 'Africa/Nairobi', from: 'Intl' });
  t.same(detectBoxTimeZone(sources({ timezoneFile: () => '../../etc/passwd', intlZone: () => 'nonsense' })), { zone: 'UTC', from: 'fallback' });
});

t.test('first start stores the box’s zone on a fresh install, UTC on an install that has users, and keeps a stored one', async (t) => {
  const fresh = await startApp(t);
  t.same(await settleDefaultTimeZone(fresh.deps.db, 'Europe/Paris'), { zone: 'Europe/Paris', stored: 'detected' });
  t.equal((await readSettings(fresh.deps.db)).settings.timeZone, 'Europe/Paris');
  t.same(await settleDefaultTimeZone(fresh.deps.db, 'Asia/Tokyo'), { zone: 'Europe/Paris', stored: 'kept' }, 'a second start changes nothing');

  const legacy = await startApp(t);
  await signIn(legacy); // an install in use before the setting followed the box
  await legacy.deps.db
    .insertInto('settings')
    .values({ id: 1, data: JSON.stringify({ serverName: 'Old café' }), revision: 3, updated_at: new Date().toISOString(), updated_by: null })
    .execute();
  t.same(await settleDefaultTimeZone(legacy.deps.db, 'Europe/Paris'), { zone: 'UTC', stored: 'legacy' }, 'its screens keep running in UTC');
  const s = await readSettings(legacy.deps.db);
  t.same([s.settings.timeZone, s.settings.serverName, s.revision], ['UTC', 'Old café', 4], 'the rest of the stored settings stay');
});

t.test('a screen without a location runs in the server’s default zone; changing it moves that screen’s manifest', async (t) => {
  const app = await startApp(t);
  await settleDefaultTimeZone(app.deps.db, 'Europe/Paris'); // first start on a box in Paris
  const owner = await signIn(app);
  const loc = (await app.json('/api/v1/locations', { method: 'POST', headers: owner.headers, json: { name: 'Tokyo shop', timeZone: 'Asia/Tokyo' } })).body.data;
  const plain = await pairScreen(app, owner, { name: 'No location' });
  const placed = await pairScreen(app, owner, { name: 'Tokyo', locationId: loc.id });
  const screen = async (id: string) => (await app.json(`/api/v1/screens/${id}`, { headers: owner.headers })).body.data;
  t.match(await screen(plain.screenId), { timeZone: null, effectiveTimeZone: 'Europe/Paris', timeZoneSource: 'server-default' });
  t.match(await screen(placed.screenId), { timeZone: 'Asia/Tokyo', effectiveTimeZone: 'Asia/Tokyo', timeZoneSource: 'location' });
  const manifest = await app.json('/api/v1/player/manifest', { headers: plain.headers });
  t.equal(manifest.body.data.timeZone, 'Europe/Paris', 'the manifest names the default zone');

  const before = { plain: (await screen(plain.screenId)).manifestRevision, placed: (await screen(placed.screenId)).manifestRevision };
  const patched = await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { timeZone: 'America/New_York' } });
  t.equal(patched.status, 200);
  t.ok((await screen(plain.screenId)).manifestRevision > before.plain, 'the screen without a location gets a new manifest');
  t.equal((await screen(placed.screenId)).manifestRevision, before.placed, 'a screen with a location does not');
  t.equal((await app.json('/api/v1/player/manifest', { headers: plain.headers })).body.data.timeZone, 'America/New_York');
  t.equal(
    (await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { timeZone: 'Mars/Olympus' } })).status,
    400,
    'an unknown zone is refused',
  );
});

t.test('delete a screen: refused while schedules name it (409 lists them), then gone with its credential', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const s = await pairScreen(app, owner, { name: 'Counter' });
  const pl = (await app.json('/api/v1/playlists', { method: 'POST', headers: owner.headers, json: { name: 'Menu' } })).body.data;
  await app.json(`/api/v1/screens/${s.screenId}/playlist-assignment`, { method: 'PUT', headers: owner.headers, json: { playlistId: pl.id } });
  const sched = (
    await app.json('/api/v1/schedules', {
      method: 'POST',
      headers: owner.headers,
      json: {
        name: 'Lunch',
        content: { playlistId: pl.id },
        targets: { screenIds: [s.screenId] },
        startsAt: '2026-06-01T12:00:00Z',
        endsAt: '2026-06-01T13:00:00Z',
      },
    })
  ).body.data;

  t.equal((await app.json(`/api/v1/screens/${s.screenId}`, { method: 'DELETE', headers: editor.headers })).status, 403, 'editors cannot');
  t.equal((await app.json('/api/v1/screens/not-a-uuid', { method: 'DELETE', headers: owner.headers })).status, 404);
  t.equal((await app.json('/api/v1/screens/0190f5a2-7b3c-7def-8abc-0123456789ab', { method: 'DELETE', headers: owner.headers })).status, 404);
  const refused = await app.json(`/api/v1/screens/${s.screenId}`, { method: 'DELETE', headers: owner.headers });
  t.equal(refused.status, 409);
  t.same(refused.body.data, undefined);
  t.same(refused.body.error.details.usedBy, [{ type: 'schedule', id: sched.id, name: 'Lunch' }]);
  t.match(refused.body.error.message, /schedule "Lunch"/);

  t.equal((await app.json(`/api/v1/schedules/${sched.id}`, { method: 'DELETE', headers: owner.headers })).status, 204);
  t.equal((await app.json(`/api/v1/screens/${s.screenId}`, { method: 'DELETE', headers: owner.headers })).status, 204);
  t.equal((await app.json(`/api/v1/screens/${s.screenId}`, { headers: owner.headers })).status, 404);
  const hb = await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json: {} });
  t.equal(hb.status, 401, 'the player’s credential stops working');
  t.equal(
    (await app.json(`/api/v1/playlists/${pl.id}`, { method: 'DELETE', headers: owner.headers })).status,
    204,
    'its assignment went with it: the playlist is free',
  );
});

t.test('deleting an asset in use: 409 with usedBy (type, id, name); what an action touches (impact)', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const viewer = await signIn(app, { role: 'viewer' });
  const site = (
    await app.json('/api/v1/assets/websites', { method: 'POST', headers: owner.headers, json: { url: 'https://example.test/menu', name: 'Menu board' } })
  ).body.data;
  const pl = (await app.json('/api/v1/playlists', { method: 'POST', headers: owner.headers, json: { name: 'Front window' } })).body.data;
  await app.json(`/api/v1/playlists/${pl.id}/items`, { method: 'POST', headers: owner.headers, json: { assetId: site.id } });
  const screen = await pairScreen(app, owner, { name: 'Window' });
  await app.json(`/api/v1/screens/${screen.screenId}/playlist-assignment`, { method: 'PUT', headers: owner.headers, json: { playlistId: pl.id } });
  t.equal((await app.json('/api/v1/player/manifest', { headers: screen.headers })).status, 200, 'the screen fetched its manifest (it shows the site)');

  const del = await app.json(`/api/v1/assets/${site.id}`, { method: 'DELETE', headers: owner.headers });
  t.equal(del.status, 409);
  t.same(del.body.error.details.usedBy, [{ type: 'playlist', id: pl.id, name: 'Front window' }]);
  t.match(del.body.error.message, /playlist "Front window"/);

  const impact = await app.json('/api/v1/content/impact', { method: 'POST', headers: viewer.headers, json: { assetIds: [site.id] } });
  t.equal(impact.status, 200);
  t.same(impact.body.data, { screens: [{ id: screen.screenId, name: 'Window' }], usedBy: [{ type: 'playlist', id: pl.id, name: 'Front window' }] });
  const ofPlaylist = await app.json('/api/v1/content/impact', { method: 'POST', headers: viewer.headers, json: { playlistIds: [pl.id] } });
  t.same(ofPlaylist.body.data, {
    screens: [{ id: screen.screenId, name: 'Window' }],
    usedBy: [{ type: 'screen-assignment', id: screen.screenId, name: 'Window' }],
  });
  for (const bad of [{}, { assetIds: [] }, { assetIds: ['nope'] }, { bogus: [site.id] }]) {
    const r = await app.json('/api/v1/content/impact', { method: 'POST', headers: viewer.headers, json: bad });
    t.equal(r.status, 400, `refused: ${JSON.stringify(bad)}`);
    t.equal(r.body.error.code, 'validation_failed');
  }
  t.equal((await app.json('/api/v1/content/impact', { method: 'POST', json: { assetIds: [site.id] } })).status, 401);
});

t.test('commands per player family: what each can run, from the server’s table or the player’s own list', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const web = await pairScreen(app, owner, { name: 'Browser', playerFamily: '' as any });
  const kiosk = await pairScreen(app, owner, { name: 'Kiosk', playerFamily: 'desktop-linux' });
  const android = await pairScreen(app, owner, { name: 'Tablet', playerFamily: 'android' });
  await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: web.headers, json: {} });
  await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: kiosk.headers, json: { playerFamily: 'desktop-linux' } });
  await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: android.headers, json: { playerFamily: 'android' } });
  const support = async (id: string) => (await app.json(`/api/v1/screens/${id}`, { headers: owner.headers })).body.data.commandSupport;
  const w = await support(web.screenId);
  t.same([w.reboot.supported, w.display_off.supported, w.screenshot.supported, w.reload.supported], [false, false, true, true]);
  t.match(w.reboot.reason, /web browser player cannot restart the machine/);
  t.match((await support(kiosk.screenId)).display_on.reason, /Linux kiosk player.*display/);
  const a = await support(android.screenId);
  t.ok(
    Object.values(a).every((c: any) => c.supported && c.reason === null),
    'a native player runs everything',
  );
  // A player that says what it runs is taken at its word.
  await app.json('/api/v1/player/heartbeat', {
    method: 'POST',
    headers: android.headers,
    json: { playerFamily: 'android', supportedCommands: ['reload', 'screenshot'] },
  });
  const told = await support(android.screenId);
  t.same([told.reload.supported, told.screenshot.supported, told.reboot.supported], [true, true, false]);
  t.match(told.reboot.reason, /reports that it cannot/);
});

async function fakeSite(t: Test, routes: Record<string, (res: http.ServerResponse) => void>) {
  const server = http.createServer((req, res) => {
    const h = routes[req.url ?? '/'];
    if (h) h(res);
    else res.writeHead(404).end('nope');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

t.test('website addresses without a scheme get https://; thumbnails from the page’s picture, its icon, or a card', async (t) => {
  t.equal(normaliseWebsiteUrl(' example.com/menu '), 'https://example.com/menu');
  t.equal(normaliseWebsiteUrl('http://lan-board:8080/'), 'http://lan-board:8080/');
  t.equal(normaliseWebsiteUrl('//cdn.example/x'), 'https://cdn.example/x');
  t.equal(normaliseWebsiteUrl('localhost:8080/board'), 'https://localhost:8080/board');
  t.equal(normaliseWebsiteUrl('mailto:a@b'), 'mailto:a@b', 'another scheme is left to be refused');
  const facts = readPageFacts(
    '<head><title> Café &amp; Bar </title><meta property="og:image" content="/og.png"><link rel="icon" href="a.png" sizes="32x32"><link rel="apple-touch-icon" href="/touch.png"></head>',
    'https://x.test/menu/today',
  );
  t.same(facts, {
    title: 'Café & Bar',
    pictures: ['https://x.test/og.png'],
    icons: ['https://x.test/touch.png', 'https://x.test/menu/a.png', 'https://x.test/favicon.ico'],
  });

  const dir = tempDataDir(t);
  const red = readFileSync(await samplePng(dir, 'og.png', { r: 230, g: 10, b: 10 }, 800, 420));
  const green = readFileSync(await samplePng(dir, 'icon.png', { r: 10, g: 200, b: 10 }, 180, 180));
  const host = await fakeSite(t, {
    '/menu': (res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Lunch menu</title><meta property="og:image" content="/og.png">'),
    '/og.png': (res) => res.writeHead(200, { 'content-type': 'image/png' }).end(red),
    '/board': (res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Sales board</title><link rel="apple-touch-icon" href="/icon.png">'),
    '/icon.png': (res) => res.writeHead(200, { 'content-type': 'image/png' }).end(green),
  });
  const app = await startApp(t, { config: { fetchAllowLoopback: true } });
  const owner = await signIn(app);
  const add = (url: string) => app.json('/api/v1/assets/websites', { method: 'POST', headers: owner.headers, json: { url } });
  const made = await add(`${host}/menu`);
  t.equal(made.status, 201);
  t.equal(made.body.data.website.url, `https://${host}/menu`, 'https:// added');
  for (const bad of ['ftp://files.example/x', 'javascript:alert(1)', '', 'https://', 'x'.repeat(2100)]) {
    const r = await add(bad);
    t.equal(r.status, 400, `refused: ${bad.slice(0, 30)}`);
    t.equal(r.body.error.code, 'validation_failed');
  }
  const withThumb = async (id: string) => {
    for (let i = 0; i < 120; i++) {
      const a = (await app.json(`/api/v1/assets/${id}`, { headers: owner.headers })).body.data;
      if (a.variants.some((v: any) => v.purpose === 'thumbnail')) return a;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('no thumbnail');
  };
  const pixel = async (id: string, fx: number, fy: number) => {
    const res = await app.fetch(`/api/v1/assets/${id}/thumbnail`, { headers: owner.headers });
    t.equal(res.status, 200);
    const buf = Buffer.from(await res.arrayBuffer());
    const meta = await sharp(buf).metadata();
    const { data } = await sharp(buf)
      .extract({ left: Math.floor(meta.width! * fx), top: Math.floor(meta.height! * fy), width: 4, height: 4 })
      .resize(1, 1)
      .raw()
      .toBuffer({ resolveWithObject: true });
    return { r: data[0]!, g: data[1]!, b: data[2]! };
  };
  // The https:// address of the fake cannot be fetched (it speaks http): a card that says so.
  const https = await withThumb(made.body.data.id);
  t.equal(https.metadata?.thumbnailSource ?? 'card', 'card');
  const viaHttp = (await add(`http://${host}/menu`)).body.data;
  await withThumb(viaHttp.id);
  const p = await pixel(viaHttp.id, 0.5, 0.2);
  t.ok(p.r > 180 && p.g < 60, `the page’s preview picture is the thumbnail (${JSON.stringify(p)})`);
  const board = (await add(`http://${host}/board`)).body.data;
  await withThumb(board.id);
  const icon = await pixel(board.id, 0.5, 0.28);
  t.ok(icon.g > 150 && icon.r < 80, `the page’s icon is on its card (${JSON.stringify(icon)})`);
  // A new address makes a new thumbnail.
  const patched = await app.json(`/api/v1/assets/${board.id}/website`, { method: 'PATCH', headers: owner.headers, json: { url: `${host}/menu` } });
  t.equal(patched.body.data.website.url, `https://${host}/menu`);
  t.equal((await app.json(`/api/v1/assets/${board.id}/website`, { method: 'PATCH', headers: owner.headers, json: { url: 'mailto:a@b' } })).status, 400);
});

t.test('media capabilities list the upload types (with their file endings) the server accepts', async (t) => {
  const app = await startApp(t);
  const viewer = await signIn(app, { role: 'viewer' });
  const caps = (await app.json('/api/v1/media/capabilities', { headers: viewer.headers })).body.data;
  const png = caps.accepted.find((a: any) => a.contentType === 'image/png');
  t.match(png, { kind: 'image', extensions: ['png', 'apng'], available: true });
  t.ok(caps.accepted.some((a: any) => a.contentType === 'video/mp4' && a.extensions.includes('mp4')));
  t.notOk(
    caps.accepted.some((a: any) => a.contentType === 'application/octet-stream' || a.contentType === 'text/html'),
    'nothing the library refuses',
  );
});
