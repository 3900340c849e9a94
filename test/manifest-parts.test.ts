/**
 * Playlist parts kept between manifest builds (docs/performance.md "Manifest parts kept between
 * builds"): after a change, a build re-uses the parts the change did not touch and gives byte
 * for byte the manifest a build from nothing gives. What could fail: a part kept past a change
 * to something it used (a nested playlist, an asset's name or state, its tags for a tag rule, a
 * day-part), so the manifest shows what was; or a replayed part missing the warnings, media or
 * dependencies its build made.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { signedInApp } from './helpers/auth.js';
import { settledAsset, uploadAsset } from './helpers/media.js';
import { samplePng } from './helpers/sample-media.js';
import { pairScreen } from './helpers/screens.js';

t.test('a build after each kind of change equals a build from nothing, and re-uses what the change did not touch', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-parts-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const screen = await pairScreen(app, owner, { name: 'Lobby' });
  const image = async (name: string, rgb: { r: number; g: number; b: number }) => {
    const created = await uploadAsset(app, owner, readFileSync(await samplePng(dir, `${name}.png`, rgb)), `${name}.png`);
    const settled = await settledAsset(app, owner, created.id);
    t.equal(settled.state, 'ready', `${name} is ready`);
    return settled.id as string;
  };
  const red = await image('red', { r: 220, g: 30, b: 40 });
  const green = await image('green', { r: 20, g: 200, b: 40 });
  const site = (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id as string;

  // Inner is nested in Outer; Other stands apart; Smart plays what is tagged "menu".
  const created = async (body: unknown) => {
    const res = await call('POST', '/api/v1/playlists', body);
    t.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data;
  };
  const inner = await created({ name: 'Inner', items: [{ assetId: green, durationMs: 4000 }] });
  const outer = await created({
    name: 'Outer',
    items: [{ assetId: red, durationMs: 5000, dayparts: [{ days: [1, 2, 3, 4, 5, 6, 7], from: '08:00', to: '20:00' }] }, { assetId: site }],
  });
  t.equal((await call('POST', `/api/v1/playlists/${outer.id}/items`, { playlistId: inner.id })).status, 201, 'Inner nested in Outer');
  const other = await created({ name: 'Other', items: [{ assetId: red, durationMs: 6000 }, { assetId: site }] });
  const smart = await created({ name: 'Smart', items: [{ assetId: site, durationMs: 3000 }] });
  t.equal((await call('PUT', `/api/v1/playlists/${smart.id}/tag-rule`, { tags: ['menu'] })).status, 200);
  const schedule = async (name: string, playlistId: string, startsAt: string, endsAt: string, priority: number) => {
    const res = await call('POST', '/api/v1/schedules', {
      name,
      content: { playlistId },
      targets: { screenIds: [screen.screenId] },
      startsAt,
      endsAt,
      rrule: 'FREQ=DAILY',
      priority,
      timeZone: 'UTC',
    });
    t.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data.id as string;
  };
  await schedule('Morning', outer.id, '2026-05-01T06:00:00Z', '2026-05-01T12:00:00Z', 1);
  const afternoon = await schedule('Afternoon', other.id, '2026-05-01T12:00:00Z', '2026-05-01T18:00:00Z', 2);
  await schedule('Evening', smart.id, '2026-05-01T18:00:00Z', '2026-05-01T23:00:00Z', 3);

  const { screenContext } = await import('../server/src/modules/content/screen-context.js');
  const { currentManifest } = await import('../server/src/modules/content/manifest.js');
  const { manifestCache } = await import('../server/src/modules/content/manifest.cache.js');
  const { forgetAllParts, playlistParts } = await import('../server/src/modules/content/playlist-parts.js');
  const at = Date.parse('2026-06-01T10:05:00Z');
  const build = async () => {
    manifestCache(app.deps).delete(screen.screenId);
    const entry = await currentManifest(app.deps, (await screenContext(app.deps.db, screen.screenId))!, at);
    return { body: entry.body, etag: entry.etag, manifest: JSON.parse(entry.body).data };
  };
  const cold = async () => {
    forgetAllParts(app.deps.db);
    return build();
  };
  /** The playlist object a segment of the last warm build showed, by playlist id. */
  let shown = new Map<string, unknown>();
  const { buildManifest } = await import('../server/src/modules/content/manifest.js');
  const objects = async () => {
    const built = await buildManifest(app.deps.db, (await screenContext(app.deps.db, screen.screenId))!, at);
    return new Map(built.manifest.timeline.flatMap((s) => (s.playlist ? [[s.playlist.id, s.playlist] as const] : [])));
  };
  /** After a change: the build with the parts kept equals the build from nothing; answers the playlists it built anew. */
  const check = async (what: string) => {
    const before = shown;
    const now = await objects();
    const warm = await build();
    const fresh = await cold();
    t.equal(warm.body, fresh.body, `${what}: the same bytes as a build from nothing`);
    t.equal(warm.etag, fresh.etag, `${what}: the same ETag`);
    const rebuilt = [...now].filter(([id, p]) => before.has(id) && before.get(id) !== p).map(([id]) => id);
    // The parts the build from nothing left: what the next change starts from.
    shown = await objects();
    return { manifest: warm.manifest, rebuilt: rebuilt.sort() };
  };

  const first = await cold();
  shown = await objects();
  t.ok(playlistParts(app.deps.db).size >= 3, 'parts are kept');
  const names = (m: any, id: string) => m.timeline.find((s: any) => s.playlist?.id === id)?.playlist.items.map((i: any) => `${i.name}/${i.durationMs}`);
  t.same(names(first.manifest, outer.id), ['red.png/5000', 'Site/30000', 'green.png/4000']);
  const again = await check('no change');
  t.same(again.rebuilt, [], 'nothing built anew');

  // A nested playlist's item: the playlist nesting it is built anew, the others are not.
  const innerItem = (await call('GET', `/api/v1/playlists/${inner.id}`)).body.data.items[0].id;
  t.equal((await call('PATCH', `/api/v1/playlists/${inner.id}/items/${innerItem}`, { durationMs: 4500 })).status, 200);
  let r = await check('a nested playlist edited');
  t.same(names(r.manifest, outer.id), ['red.png/5000', 'Site/30000', 'green.png/4500']);
  t.same(r.rebuilt, [outer.id], 'only the playlist that nests it is built anew');

  // An asset renamed: every playlist showing it.
  t.equal((await call('PATCH', `/api/v1/assets/${red}`, { name: 'Crimson' })).status, 200);
  r = await check('an asset renamed');
  t.same(names(r.manifest, other.id), ['Crimson/6000', 'Site/30000']);
  // The smart playlist too: every asset change announces the tag rules (a name may order them).
  t.same(r.rebuilt, [outer.id, other.id, smart.id].sort());

  // An asset tagged for the smart playlist: its tag rule now plays it.
  t.equal((await call('PATCH', `/api/v1/assets/${green}`, { tags: ['menu'] })).status, 200);
  r = await check('an asset tagged');
  t.ok(names(r.manifest, smart.id).includes('green.png/10000'), 'the smart playlist plays the tagged asset');
  t.ok(r.rebuilt.includes(smart.id), 'the smart playlist is built anew');
  t.notOk(r.rebuilt.includes(other.id), 'a playlist without that asset is not');

  // A day-part changed: the item plays other hours.
  const outerItems = (await call('GET', `/api/v1/playlists/${outer.id}`)).body.data.items;
  t.equal(
    (await call('PATCH', `/api/v1/playlists/${outer.id}/items/${outerItems[0].id}`, { dayparts: [{ days: [1, 2, 3, 4, 5], from: '09:00', to: '11:00' }] }))
      .status,
    200,
  );
  r = await check('a day-part changed');
  t.same(r.rebuilt, [outer.id]);

  // An asset archived: left out, with its warning, wherever it played.
  t.equal((await call('POST', '/api/v1/assets/archive', { ids: [red] })).status, 200);
  r = await check('an asset archived');
  t.same(names(r.manifest, other.id), ['Site/30000']);
  t.ok(
    r.manifest.warnings.some((w: any) => w.assetId === red),
    'the archived asset is named in the warnings',
  );

  // A schedule moved: what plays changes, the playlists' parts stay.
  t.equal((await call('PATCH', `/api/v1/schedules/${afternoon}`, { startsAt: '2026-05-01T13:00:00Z', endsAt: '2026-05-01T17:00:00Z' })).status, 200);
  r = await check('a schedule moved');
  t.same(r.rebuilt, [], 'no playlist built anew');

  // An item removed from a playlist.
  const otherItems = (await call('GET', `/api/v1/playlists/${other.id}`)).body.data.items;
  t.equal((await call('DELETE', `/api/v1/playlists/${other.id}/items/${otherItems[0].id}`)).status, 204);
  r = await check('an item removed');
  t.same(r.rebuilt, [other.id]);
});
