/**
 * Widgets as content (issue 19): playlist items and layout zones show widgets; the manifest
 * lists their bundles (and the media their images play from); a device downloads only the
 * bundles its manifest lists; a widget's new bundle (an edit, a data change) bumps exactly the
 * screens using it; a widget in use cannot be deleted; unknown ids are refused where they are.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { ManifestDto } from '../server/src/modules/content/manifest.routes.js';
import { kickImageFetch } from '../server/src/modules/data-sources/images.service.js';
import { signedInApp } from './helpers/auth.js';
import { waitUntil } from './helpers/browser.js';
import { createSource, fakeFeed } from './helpers/data-sources.js';
import { samplePng } from './helpers/sample-media.js';
import { openSocket, pairScreen, type PairedScreen } from './helpers/screens.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const GHOST = '0190f5a2-7b3c-7def-8abc-000000000999';

/**
 * A menu table (with a photo column) bound to a table widget; a text widget; playlist
 * "Welcome loop" (both widgets) assigned to screen Lobby; layout "Menu board" (a zone showing
 * the table widget) scheduled on screen Counter; playlist "Elsewhere" (another text widget)
 * assigned to screen Office.
 */
async function setup(t: Test) {
  const { app, owner, call } = await signedInApp(t, { config: { fetchAllowLoopback: true } });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-widgets-content-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const png = readFileSync(await samplePng(dir, 'tea.png', { r: 20, g: 160, b: 60 }, 1600, 900));
  const feed = await fakeFeed(t, { '/tea.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(png) });
  const made = await createSource(app, owner, {
    name: 'Menu',
    provider: 'manual-table',
    config: {
      columns: [
        { name: 'name', type: 'text' },
        { name: 'price', type: 'number' },
        { name: 'photo', type: 'image' },
      ],
    },
    rows: [
      { name: 'Tea', price: 2, photo: `${feed.url}/tea.png` },
      { name: 'Cake', price: 4, photo: null },
    ],
  });
  t.equal(made.status, 201, JSON.stringify(made.body));
  const source = made.body.data as { id: string; revision: number };

  const widget = async (body: Record<string, unknown>) => {
    const res = await call('POST', '/api/v1/widgets', body);
    t.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data as { id: string; name: string; revision: number };
  };
  const menu = await widget({ name: 'Menu table', type: 'table', settings: { title: 'Today' }, binding: { sourceId: source.id } });
  const hello = await widget({ name: 'Hello text', type: 'text', settings: { text: 'Welcome!', durationMs: 15_000 } });
  const other = await widget({ name: 'Other text', type: 'text', settings: { text: 'Elsewhere' } });

  const playlist = (await call('POST', '/api/v1/playlists', { name: 'Welcome loop' })).body.data;
  for (const item of [{ widgetId: hello.id }, { widgetId: menu.id, durationMs: 20_000 }]) {
    const added = await call('POST', `/api/v1/playlists/${playlist.id}/items`, item);
    t.equal(added.status, 201, JSON.stringify(added.body));
  }
  const elsewhere = (await call('POST', '/api/v1/playlists', { name: 'Elsewhere' })).body.data;
  t.equal((await call('POST', `/api/v1/playlists/${elsewhere.id}/items`, { widgetId: other.id })).status, 201);

  const layout = (await call('POST', '/api/v1/layouts', { name: 'Menu board' })).body.data;
  const draft = await call(
    'PUT',
    `/api/v1/layouts/${layout.id}/draft`,
    { width: 1920, height: 1080, zones: [{ name: 'Board', x: 0, y: 0, width: 1280, height: 720, content: { type: 'widget', widgetId: menu.id } }] },
    { 'if-match': String(layout.revision) },
  );
  t.equal(draft.status, 200, JSON.stringify(draft.body));
  t.equal((await call('POST', `/api/v1/layouts/${layout.id}/publish`, {})).status, 200);

  const lobby = await pairScreen(app, owner, { name: 'Lobby' });
  const counter = await pairScreen(app, owner, { name: 'Counter' });
  const office = await pairScreen(app, owner, { name: 'Office' });
  t.equal((await call('PUT', `/api/v1/screens/${lobby.screenId}/playlist-assignment`, { playlistId: playlist.id })).status, 200);
  t.equal((await call('PUT', `/api/v1/screens/${office.screenId}/playlist-assignment`, { playlistId: elsewhere.id })).status, 200);
  const sched = await call('POST', '/api/v1/schedules', {
    name: 'Menu all day',
    content: { layoutId: layout.id },
    targets: { screenIds: [counter.screenId] },
    startsAt: new Date(Date.now() - 60_000).toISOString(),
  });
  t.equal(sched.status, 201, JSON.stringify(sched.body));
  const manifest = async (s: PairedScreen) => {
    const res = await app.json('/api/v1/player/manifest', { headers: s.headers });
    t.equal(res.status, 200);
    return res.body.data;
  };
  return { app, owner, call, feed, source, menu, hello, other, playlist, elsewhere, layout, lobby, counter, office, manifest };
}

const download = async (url: string, s: PairedScreen, base: string) => {
  const res = await fetch(`${base}${url}`, { headers: s.headers });
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
};

t.test('widgets in a playlist and a layout zone reach the screens’ manifests; each device downloads only its bundles, and they hash to sha256', async (t) => {
  const { app, call, menu, hello, other, playlist, layout, lobby, counter, office, manifest } = await setup(t);

  // The playlist's items name their widgets and use the widget duration rule.
  const pl = (await call('GET', `/api/v1/playlists/${playlist.id}`)).body.data;
  t.same(
    pl.items.map((i: any) => [i.type, i.widgetId, i.label, i.durationMs, i.effectiveDurationMs]),
    [
      ['widget', hello.id, 'Hello text', null, 15_000],
      ['widget', menu.id, 'Menu table', 20_000, 20_000],
    ],
    'items: the widget’s name; its own duration, else the widget’s default',
  );
  t.equal(pl.durationMs, 35_000, 'one pass adds them up');

  const m = await manifest(lobby);
  t.ok(ManifestDto.safeParse(m).success, 'the manifest matches its documented schema');
  t.same(
    m.widgets.map((w: any) => w.widgetId),
    [hello.id, menu.id].sort(),
    'both widgets listed, sorted by id',
  );
  const items = m.timeline[0].playlist.items;
  const byWidget = new Map(m.widgets.map((w: any) => [w.widgetId, w]));
  t.same(
    items.map((i: any) => [i.kind, i.widgetId, i.bundleId, i.assetId, i.variantId, i.name, i.durationMs]),
    [
      ['widget', hello.id, (byWidget.get(hello.id) as any).bundleId, null, null, 'Hello text', 15_000],
      ['widget', menu.id, (byWidget.get(menu.id) as any).bundleId, null, null, 'Menu table', 20_000],
    ],
    'widget items name the widget and the bundle; duration: own, else the widget’s, else 10 s',
  );
  t.equal(m.warnings.length, 0, JSON.stringify(m.warnings));

  for (const w of m.widgets) {
    t.match(w.url, /^\/api\/v1\/player\/widget-bundles\/[0-9a-f-]{36}$/);
    const got = await download(w.url, lobby, app.url);
    t.equal(got.status, 200);
    t.match(got.type, /^text\/html/);
    t.equal(got.bytes.length, w.sizeBytes);
    t.equal(sha(got.bytes), w.sha256, 'the bytes hash to the manifest’s sha256');
  }
  t.match((await download((byWidget.get(hello.id) as any).url, lobby, app.url)).bytes.toString(), /Welcome!/);

  // The layout's zone names its bundle; the screen showing it downloads that one only.
  const c = await manifest(counter);
  t.ok(ManifestDto.safeParse(c).success);
  const zone = c.timeline.find((s: any) => s.layout?.id === layout.id).layout.zones[0];
  t.same(zone.widget, { widgetId: menu.id, bundleId: c.widgets[0].bundleId }, 'the zone names the widget and its bundle');
  t.equal(zone.playlist, null);
  t.same(
    c.widgets.map((w: any) => w.widgetId),
    [menu.id],
  );
  t.equal((await download(c.widgets[0].url, counter, app.url)).status, 200);
  t.equal((await download((byWidget.get(hello.id) as any).url, counter, app.url)).status, 404, 'a bundle of a widget its manifest does not list: 404');

  // The screen not using them: 404 for both; no credential: 401.
  const o = await manifest(office);
  t.same(
    o.widgets.map((w: any) => w.widgetId),
    [other.id],
  );
  for (const w of m.widgets) t.equal((await download(w.url, office, app.url)).status, 404, 'another screen’s bundle is not found');
  t.equal((await fetch(`${app.url}${m.widgets[0].url}`)).status, 401);
});

t.test('a bound widget’s images play from media: their variant for the zone is listed and downloads', async (t) => {
  const { app, menu, counter, manifest } = await setup(t);
  await manifest(counter);
  await kickImageFetch(app.deps);
  const c = await waitUntil('the photo is in the widget’s images', async () => {
    const c = await manifest(counter);
    return c.widgets[0]?.images.length ? c : undefined;
  });
  const [entry] = c.widgets;
  t.equal(entry.widgetId, menu.id);
  t.equal(entry.images.length, 1, 'Tea’s photo (Cake has none)');
  const media = c.media.find((x: any) => x.variantId === entry.images[0].variantId);
  t.ok(media, 'its variant is listed in media');
  t.equal(media.assetId, entry.images[0].assetId);
  t.ok(media.width >= 1280 || media.height >= 720 || media.width === null, 'a variant that covers the zone (or the largest)');
  const got = await download(media.url, counter, app.url);
  t.equal(got.status, 200);
  t.equal(sha(got.bytes), media.sha256, 'the variant downloads with the screen’s credential');
  const html = (await download(entry.url, counter, app.url)).bytes.toString();
  t.match(html, `placard-media:${entry.images[0].assetId}`, 'the bundle names the image as placard-media');
});

t.test('editing a widget, or its bound data, bumps only the screens using it (manifest.changed within a second)', async (t) => {
  const { app, call, source, hello, lobby, counter, office, manifest } = await setup(t);
  const sockets = {
    lobby: await openSocket(t, app, lobby.credential),
    counter: await openSocket(t, app, counter.credential),
    office: await openSocket(t, app, office.credential),
  };
  // The setup's own work tells the screens after its answers: the row's photo is fetched and
  // processed in the background, and the table widget is rebuilt with it (a new bundle, both
  // its screens bumped). Take each screen's revision once the photo is in and the revisions
  // have stayed put for 700 ms, so a later message above them is this test's doing.
  const read = async () => ({ lobby: await manifest(lobby), counter: await manifest(counter), office: await manifest(office) });
  const revs = (m: Awaited<ReturnType<typeof read>>) => [m.lobby.revision, m.counter.revision, m.office.revision].join();
  await waitUntil('the table widget shows the photo', async () => (await manifest(counter)).widgets[0]?.images.length === 1);
  let before = await read();
  for (let i = 0; i < 10; i++) {
    await new Promise((r) => setTimeout(r, 700));
    const again = await read();
    if (revs(again) === revs(before)) break;
    before = again;
  }
  const changed = (name: keyof typeof sockets, after: number) => sockets[name].messages.filter((m) => m.type === 'manifest.changed' && m.revision > after);

  // The text widget is only in Lobby's playlist.
  const w = (await call('GET', `/api/v1/widgets/${hello.id}`)).body.data;
  let sent = Date.now();
  const edited = await call(
    'PATCH',
    `/api/v1/widgets/${hello.id}`,
    { settings: { text: 'Good morning', durationMs: 15_000 } },
    { 'if-match': String(w.revision) },
  );
  t.equal(edited.status, 200, JSON.stringify(edited.body));
  const pushed = await sockets.lobby.next((m) => m.type === 'manifest.changed' && m.revision > before.lobby.revision, sent);
  const lobby1 = await manifest(lobby);
  t.equal(lobby1.revision, pushed.revision);
  const old = before.lobby.widgets.find((x: any) => x.widgetId === hello.id);
  const now = lobby1.widgets.find((x: any) => x.widgetId === hello.id);
  t.not(now.bundleId, old.bundleId, 'a new bundle');
  t.match((await download(now.url, lobby, app.url)).bytes.toString(), /Good morning/);
  await new Promise((r) => setTimeout(r, 200));
  t.same(changed('counter', before.counter.revision), [], 'the screen showing another widget is not told');
  t.same(changed('office', before.office.revision), [], 'nor the screen showing neither');

  // The source's diagnostics name the screens showing it through the table widget.
  const diag = (await call('GET', `/api/v1/data-sources/${source.id}/diagnostics`)).body.data;
  t.same(
    diag.screens.map((x: any) => x.name),
    ['Counter', 'Lobby'],
    'diagnostics name the screens showing the source through a widget (not Office)',
  );

  // The table's rows change: both screens showing the table widget are told, Office is not.
  const src = (await call('GET', `/api/v1/data-sources/${source.id}`)).body.data;
  sent = Date.now();
  const patched = await call(
    'PATCH',
    `/api/v1/data-sources/${source.id}`,
    {
      rows: [
        { name: 'Tea', price: 3, photo: null },
        { name: 'Cake', price: 4, photo: null },
      ],
    },
    { 'if-match': String(src.revision) },
  );
  t.equal(patched.status, 200, JSON.stringify(patched.body));
  await sockets.lobby.next((m) => m.type === 'manifest.changed' && m.revision > lobby1.revision, sent);
  await sockets.counter.next((m) => m.type === 'manifest.changed' && m.revision > before.counter.revision, sent);
  const counter1 = await manifest(counter);
  t.not(counter1.widgets[0].bundleId, before.counter.widgets[0].bundleId, 'the table widget has a new bundle');
  t.match((await download(counter1.widgets[0].url, counter, app.url)).bytes.toString(), /3/);
  await new Promise((r) => setTimeout(r, 200));
  t.same(changed('office', before.office.revision), [], 'the screen not showing the table is not told');
});

t.test('a widget in use cannot be deleted (409 naming the playlist and the layout); unknown widget ids are refused where they are', async (t) => {
  const { call, menu, playlist, layout, counter, manifest } = await setup(t);
  const w = (await call('GET', `/api/v1/widgets/${menu.id}`)).body.data;
  const refused = await call('DELETE', `/api/v1/widgets/${menu.id}`, undefined, { 'if-match': String(w.revision) });
  t.equal(refused.status, 409);
  t.equal(refused.body.error.code, 'conflict');
  t.match(refused.body.error.message, /Welcome loop/);
  t.match(refused.body.error.message, /Menu board/);
  t.same(
    refused.body.error.details.usedBy.map((u: any) => [u.type, u.id]).sort(),
    [
      ['layout', layout.id],
      ['playlist', playlist.id],
    ].sort(),
  );
  t.equal((await call('GET', `/api/v1/widgets/${menu.id}`)).status, 200, 'still there');

  // Unknown ids: 400 invalid_reference at the field.
  const item = await call('POST', `/api/v1/playlists/${playlist.id}/items`, { widgetId: GHOST });
  t.equal(item.status, 400);
  t.same(
    item.body.error.details.issues.map((i: any) => [i.code, i.path]),
    [['invalid_reference', ['widgetId']]],
  );
  const created = await call('POST', '/api/v1/playlists', { name: 'Ghostly', items: [{ widgetId: GHOST }] });
  t.equal(created.status, 400, 'also in a new playlist’s items');
  const l = (await call('GET', `/api/v1/layouts/${layout.id}`)).body.data;
  const zone = await call(
    'PUT',
    `/api/v1/layouts/${layout.id}/draft`,
    {
      width: 1920,
      height: 1080,
      zones: [
        { name: 'Board', x: 0, y: 0, width: 1280, height: 720, content: { type: 'widget', widgetId: menu.id } },
        { name: 'Ghost', x: 0, y: 720, width: 100, height: 100, content: { type: 'widget', widgetId: GHOST } },
      ],
    },
    { 'if-match': String(l.revision) },
  );
  t.equal(zone.status, 400);
  t.same(
    zone.body.error.details.issues.map((i: any) => [i.code, i.path]),
    [['invalid_reference', ['zones', 1, 'content', 'widgetId']]],
  );
  const notUuid = await call('POST', `/api/v1/playlists/${playlist.id}/items`, { widgetId: 'menu' });
  t.equal(notUuid.status, 400, 'not an id at all');
  t.equal((await call('GET', `/api/v1/playlists/${playlist.id}`)).body.data.items.length, 2, 'nothing was added');
  t.equal((await manifest(counter)).widgets.length, 1);
});

t.test('the preview and the planned now-showing treat a playlist of widgets as playable; a widget without data is left out with a warning', async (t) => {
  const { app, owner, call, feed, other, elsewhere, office, manifest } = await setup(t);
  const preview = await call('POST', '/api/v1/schedules/preview', {
    screenId: office.screenId,
    from: new Date().toISOString(),
    to: new Date(Date.now() + 3600_000).toISOString(),
  });
  t.equal(preview.status, 200, JSON.stringify(preview.body));
  t.same(preview.body.data.timeline[0].content, { type: 'playlist', id: elsewhere.id, name: 'Elsewhere' }, 'the widget playlist plays');
  t.match(preview.body.data.timeline[0].reason, /"Elsewhere" plays/);
  t.notOk(
    preview.body.data.warnings.some((w: any) => w.code === 'playlist_empty'),
    'not passed over as empty',
  );
  const screen = (await call('GET', `/api/v1/screens/${office.screenId}`)).body.data;
  t.match(screen.nowShowing, { planned: true, playlistId: elsewhere.id, playlistName: 'Elsewhere' });
  // A player showing the widget item and reporting the widget's id as its current asset: named.
  const beat = await app.json('/api/v1/player/heartbeat', {
    method: 'POST',
    headers: office.headers,
    json: { currentPlaylistId: elsewhere.id, currentAssetId: other.id },
  });
  t.equal(beat.status, 200, JSON.stringify(beat.body));
  const reported = (await call('GET', `/api/v1/screens/${office.screenId}`)).body.data;
  t.match(reported.nowShowing, { planned: false, assetId: other.id, assetName: 'Other text', playlistName: 'Elsewhere' });

  // A widget bound to a feed never fetched has no data: its item is left out, named in warnings.
  const made = await createSource(app, owner, { name: 'Later', provider: 'json', config: { url: `${feed.url}/later.json` } });
  t.equal(made.status, 201);
  const waiting = await call('POST', '/api/v1/widgets', { name: 'Waiting table', type: 'table', settings: {}, binding: { sourceId: made.body.data.id } });
  t.equal(waiting.status, 201, JSON.stringify(waiting.body));
  t.equal((await call('POST', `/api/v1/playlists/${elsewhere.id}/items`, { widgetId: waiting.body.data.id })).status, 201);
  const o = await manifest(office);
  t.same(
    o.timeline[0].playlist.items.map((i: any) => i.name),
    ['Other text'],
    'only the widget with a bundle plays',
  );
  t.match(
    o.warnings.find((w: any) => w.code === 'widget_unavailable'),
    { widgetId: waiting.body.data.id, message: /\w/ },
  );
  t.notOk(
    o.widgets.some((w: any) => w.widgetId === waiting.body.data.id),
    'and it is not in widgets',
  );
});
