/**
 * What a manifest build reuses (issue 24, docs/performance.md "Manifest"): the body serialised
 * in one pass is exactly `JSON.stringify({ data: manifest })` and its ETag is the revision and a hash of the
 * manifest without `screenId`, `revision` and `generatedAt`; day-part windows and schedule expansions are kept per
 * rule and schedule version and hour window, so an edit within the hour still reaches the manifest.
 */
import { createHash } from 'node:crypto';
import t from 'tap';
import { signedInApp } from './helpers/auth.js';
import { pairScreen } from './helpers/screens.js';

async function setup(t: Parameters<typeof signedInApp>[0]) {
  const { app, owner, call } = await signedInApp(t);
  const screen = await pairScreen(app, owner, { name: 'Lobby' });
  const site = (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id as string;
  const { screenContext } = await import('../server/src/modules/content/screen-context.js');
  const { buildManifest, currentManifest } = await import('../server/src/modules/content/manifest.js');
  const at = Date.parse('2026-06-01T10:05:00Z');
  const current = async () => currentManifest(app.deps, (await screenContext(app.deps.db, screen.screenId))!, at);
  return { app, call, screen, site, at, current, buildManifest, screenContext };
}

t.test('the body is the built manifest as JSON, and the ETag hashes it without generatedAt', async (t) => {
  const { app, call, screen, site, at, current, buildManifest, screenContext } = await setup(t);
  // The assignment's playlist plays around a daily schedule: it is shown by several segments.
  const rest = (await call('POST', '/api/v1/playlists', { name: 'Rest', items: [{ assetId: site, durationMs: 7000 }] })).body.data;
  const lunch = (await call('POST', '/api/v1/playlists', { name: 'Lunch', items: [{ assetId: site }] })).body.data;
  t.equal((await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: rest.id })).status, 200);
  const s = await call('POST', '/api/v1/schedules', {
    name: 'Lunch',
    content: { playlistId: lunch.id },
    targets: { screenIds: [screen.screenId] },
    startsAt: '2026-05-01T12:00:00Z',
    endsAt: '2026-05-01T13:00:00Z',
    rrule: 'FREQ=DAILY',
    timeZone: 'UTC',
  });
  t.equal(s.status, 201);
  const entry = await current();
  const built = await buildManifest(app.deps.db, (await screenContext(app.deps.db, screen.screenId))!, at);
  const timeline = built.manifest.timeline;
  t.ok(timeline.filter((x) => x.playlist?.id === rest.id).length >= 2, 'a playlist shown by several segments');
  t.equal(entry.body, JSON.stringify({ data: built.manifest }), 'the same bytes as JSON.stringify');
  t.equal(entry.bytes.toString(), entry.body);
  // The hash leaves out the screen's id and revision too (issue 24: one hash serves every screen of a shared build).
  const { generatedAt: _g, screenId: _s, revision: _r, ...stable } = built.manifest;
  const hash = createHash('sha256').update(JSON.stringify(stable)).digest('base64url').slice(0, 27);
  t.equal(entry.etag, `"m${built.manifest.revision}-${hash}"`, 'the revision and the hash of the manifest without screenId, revision and generatedAt');
});

t.test('a schedule’s new times reach the manifest within the hour', async (t) => {
  const { call, screen, site, current } = await setup(t);
  const p = (await call('POST', '/api/v1/playlists', { name: 'Lunch', items: [{ assetId: site }] })).body.data;
  const s = await call('POST', '/api/v1/schedules', {
    name: 'Lunch',
    content: { playlistId: p.id },
    targets: { screenIds: [screen.screenId] },
    startsAt: '2026-05-01T12:00:00Z',
    endsAt: '2026-05-01T13:00:00Z',
    rrule: 'FREQ=DAILY',
    timeZone: 'UTC',
  });
  t.equal(s.status, 201);
  const starts = async () =>
    JSON.parse((await current()).body)
      .data.timeline.filter((x: any) => x.source.type === 'schedule')
      .map((x: any) => `${x.startsAt}/${x.endsAt}`);
  t.same(await starts(), ['2026-06-01T12:00:00.000Z/2026-06-01T13:00:00.000Z', '2026-06-02T12:00:00.000Z/2026-06-02T13:00:00.000Z']);
  const moved = await call('PATCH', `/api/v1/schedules/${s.body.data.id}`, { startsAt: '2026-05-01T14:00:00Z', endsAt: '2026-05-01T16:00:00Z' });
  t.equal(moved.status, 200);
  t.same(
    await starts(),
    ['2026-06-01T14:00:00.000Z/2026-06-01T16:00:00.000Z', '2026-06-02T14:00:00.000Z/2026-06-02T16:00:00.000Z'],
    'the same schedule, the same hour: its new occurrences',
  );
  t.equal((await call('PATCH', `/api/v1/schedules/${s.body.data.id}`, { rrule: 'FREQ=DAILY;INTERVAL=2' })).status, 200);
  t.same(await starts(), ['2026-06-02T14:00:00.000Z/2026-06-02T16:00:00.000Z'], 'a new rule: its occurrences (every other day from 1 May)');
});

t.test('an item’s new day-parts and validity reach the manifest within the hour', async (t) => {
  const { call, screen, site, current } = await setup(t);
  const p = (
    await call('POST', '/api/v1/playlists', {
      name: 'Parts',
      items: [{ assetId: site, dayparts: [{ days: [1, 2, 3, 4, 5, 6, 7], from: '08:00', to: '20:00' }] }, { assetId: site }],
    })
  ).body.data;
  t.equal((await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: p.id })).status, 200);
  const windows = async () => JSON.parse((await current()).body).data.timeline[0].playlist.items[0].windows.map((w: any) => `${w.startsAt}/${w.endsAt}`);
  t.same(await windows(), [
    '2026-06-01T10:00:00.000Z/2026-06-01T20:00:00.000Z',
    '2026-06-02T08:00:00.000Z/2026-06-02T20:00:00.000Z',
    '2026-06-03T08:00:00.000Z/2026-06-03T10:00:00.000Z',
  ]);
  const items = (await call('GET', `/api/v1/playlists/${p.id}`)).body.data.items;
  const patched = await call('PATCH', `/api/v1/playlists/${p.id}/items/${items[0].id}`, {
    dayparts: [{ days: [1, 2, 3, 4, 5, 6, 7], from: '09:00', to: '17:00' }],
  });
  t.equal(patched.status, 200);
  t.same(
    await windows(),
    [
      '2026-06-01T10:00:00.000Z/2026-06-01T17:00:00.000Z',
      '2026-06-02T09:00:00.000Z/2026-06-02T17:00:00.000Z',
      '2026-06-03T09:00:00.000Z/2026-06-03T10:00:00.000Z',
    ],
    'new day-parts',
  );
  t.equal((await call('PATCH', `/api/v1/playlists/${p.id}/items/${items[0].id}`, { validUntil: '2026-06-01T15:00:00Z' })).status, 200);
  t.same(await windows(), ['2026-06-01T10:00:00.000Z/2026-06-01T15:00:00.000Z'], 'the same day-parts, a new end of validity');
});

t.test('requests for a screen while its manifest is built share that build', async (t) => {
  const { app, call, screen, site, at, current } = await setup(t);
  const { manifestCache } = await import('../server/src/modules/content/manifest.cache.js');
  const p = (await call('POST', '/api/v1/playlists', { name: 'Shared', items: [{ assetId: site }] })).body.data;
  t.equal((await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: p.id })).status, 200);
  const [a, b] = await Promise.all([current(), current()]);
  t.equal(a, b, 'one build answered both');
  t.equal(await current(), a, 'and was cached');
  manifestCache(app.deps).clear();
  const c = await current();
  t.not(c, a, 'a later request builds again');
  t.equal(c.etag, a.etag);
  // A request for another hour does not wait for this hour's build.
  manifestCache(app.deps).clear();
  const { currentManifest } = await import('../server/src/modules/content/manifest.js');
  const { screenContext } = await import('../server/src/modules/content/screen-context.js');
  const ctx = (await screenContext(app.deps.db, screen.screenId))!;
  const [now, later] = await Promise.all([currentManifest(app.deps, ctx, at), currentManifest(app.deps, ctx, at + 3_600_000)]);
  t.not(now.etag, later.etag, 'each hour its own build');
});
