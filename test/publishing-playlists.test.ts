/**
 * Playlists on the publication model (issue 20): screens play publications; with approvals
 * off every write publishes at once, with approvals on writes change the draft only.
 */
import path from 'node:path';
import t, { type Test } from 'tap';
import { migrate, openDatabase } from '../server/src/platform/db/database.js';
import { MIGRATIONS } from '../server/src/platform/db/migrations/index.js';
import { playlistPublishable, playlistSnapshot, type PlaylistSnapshot } from '../server/src/modules/content/index.js';
import { signedInApp, signIn } from './helpers/auth.js';
import { tempDataDir } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';

async function setup(t: Test) {
  const { app, owner, call } = await signedInApp(t);
  const screen = await pairScreen(app, owner, { name: 'Lobby' });
  const manifest = async () => {
    const res = await app.json('/api/v1/player/manifest', { headers: screen.headers });
    if (res.status !== 200) throw new Error(`manifest ${res.status}`);
    return res.body.data;
  };
  /** The URLs the screen's first timeline segment plays ([] when idle). */
  const playing = async (): Promise<string[]> => ((await manifest()).timeline[0].playlist?.items ?? []).map((i: { url: string }) => i.url);
  const site = async (n: number): Promise<string> =>
    (await call('POST', '/api/v1/assets/websites', { url: `https://example.org/${n}`, name: `Site ${n}` })).body.data.id;
  const editor = await signIn(app, { role: 'editor' });
  const asEditor = (method: string, p: string, json?: unknown) => app.json(p, { method, headers: editor.headers, ...(json !== undefined ? { json } : {}) });
  const approvalsOn = async () => t.equal((await call('PATCH', '/api/v1/settings', { approvals: { required: true } })).status, 200, 'approvals on');
  return { app, owner, call, screen, manifest, playing, site, editor, asEditor, approvalsOn };
}

t.test('approvals off: every write makes a publication and the screen plays it at once', async (t) => {
  const { app, call, screen, playing, site } = await setup(t);
  const a = await site(1);
  const b = await site(2);
  const made = await call('POST', '/api/v1/playlists', { name: 'Loop', items: [{ assetId: a }] });
  t.equal(made.status, 201);
  const id = made.body.data.id;
  t.match(made.body.data, { publication: { number: 1, publishedBy: made.body.data.publication.publishedBy }, unpublishedChanges: false });
  t.ok(made.body.data.publication.publishedBy, 'attributed to the creator');
  await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: id });
  t.same(await playing(), ['https://example.org/1']);
  const added = await call('POST', `/api/v1/playlists/${id}/items`, { assetId: b });
  t.equal(added.status, 201);
  t.same(await playing(), ['https://example.org/1', 'https://example.org/2'], 'the manifest changes as before');
  const got = (await call('GET', `/api/v1/playlists/${id}`)).body.data;
  t.match(got, { publication: { number: 2 }, unpublishedChanges: false });
  const pubs = await playlistPublishable.publications(app.deps.db, id, { limit: 10 });
  t.same(
    pubs.items.map((p) => [p.number, p.source]),
    [
      [2, 'edit'],
      [1, 'edit'],
    ],
  );
  // A rename is a write too.
  t.equal((await call('PATCH', `/api/v1/playlists/${id}`, { name: 'Loop 2' })).body.data.publication.number, 3);
  t.equal((await call('PATCH', `/api/v1/playlists/${id}`, {})).body.data.publication.number, 3, 'a write that changes nothing publishes nothing');
  t.equal((await app.json('/api/v1/player/manifest', { headers: screen.headers })).body.data.timeline[0].playlist.name, 'Loop 2');
});

t.test('approvals on: an editor changes the draft only; publishing reaches the screen; restoreDraft keeps item ids', async (t) => {
  const { app, owner, call, screen, playing, site, asEditor, approvalsOn } = await setup(t);
  const [a, b, c] = [await site(1), await site(2), await site(3)];
  const id = (await call('POST', '/api/v1/playlists', { name: 'Loop', items: [{ assetId: a }, { assetId: b }] })).body.data.id;
  await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: id });
  const live = ['https://example.org/1', 'https://example.org/2'];
  t.same(await playing(), live);
  const first = (await playlistPublishable.state(app.deps.db, id)).published!;
  await approvalsOn();

  // add, patch, reorder, delete: each changes the draft (GET answers it) but not the manifest
  const added = await asEditor('POST', `/api/v1/playlists/${id}/items`, { assetId: c });
  t.equal(added.status, 201);
  let got = (await asEditor('GET', `/api/v1/playlists/${id}`)).body.data;
  t.equal(got.items.length, 3, 'GET answers the draft');
  t.match(got, { unpublishedChanges: true, publication: { id: first.id, number: 1 } });
  t.same(await playing(), live, 'the screen still plays publication 1');
  const itemIds: string[] = got.items.map((i: { id: string }) => i.id);
  t.equal((await asEditor('PATCH', `/api/v1/playlists/${id}/items/${itemIds[0]}`, { enabled: false })).status, 200);
  t.same(await playing(), live, 'after a patch too');
  t.equal((await asEditor('PUT', `/api/v1/playlists/${id}/items/order`, { itemIds: [itemIds[2], itemIds[1], itemIds[0]] })).status, 200);
  t.same(await playing(), live, 'after a reorder too');
  t.equal((await asEditor('DELETE', `/api/v1/playlists/${id}/items/${itemIds[1]}`)).status, 204);
  t.same(await playing(), live, 'after a delete too');
  got = (await asEditor('GET', `/api/v1/playlists/${id}`)).body.data;
  t.same(
    got.items.map((i: { assetId: string; enabled: boolean }) => [i.assetId, i.enabled]),
    [
      [c, true],
      [a, false],
    ],
  );
  t.equal((await playlistPublishable.publications(app.deps.db, id, { limit: 10 })).items.length, 1, 'no publication was made');
  const listed = (await asEditor('GET', '/api/v1/playlists')).body.data.items.find((p: { id: string }) => p.id === id);
  t.match(listed, { unpublishedChanges: true, publication: { id: first.id, number: 1 } }, 'the list says so too');

  // Publishing the draft (what an approved submission does) reaches the screen.
  const state = await playlistPublishable.state(app.deps.db, id);
  t.equal(state.unpublishedChanges, true);
  t.equal(state.revision, got.revision);
  const pub = await app.deps.db.transaction().execute((trx) => playlistPublishable.publish(trx, id, state.draft, owner.user.id, 'approved', 'submission'));
  await playlistPublishable.announce(app.deps, id);
  t.match(pub, { number: 2, publishedBy: owner.user.id, source: 'submission', note: 'approved' });
  t.same(await playing(), ['https://example.org/3'], 'the new publication plays (the disabled item is left out)');
  t.match((await call('GET', `/api/v1/playlists/${id}`)).body.data, { unpublishedChanges: false, publication: { id: pub.id, number: 2 } });

  // Restoring publication 1 as the draft brings its items back with their ids.
  const one = await playlistPublishable.publication(app.deps.db, id, first.id);
  t.ok(one);
  await app.deps.db.transaction().execute((trx) => playlistPublishable.restoreDraft(trx, id, one!.snapshot));
  const restored = (await call('GET', `/api/v1/playlists/${id}`)).body.data;
  t.same(
    restored.items.map((i: { id: string }) => i.id),
    (one!.snapshot as PlaylistSnapshot).items.map((i) => i.id),
    'same item ids',
  );
  t.same(
    restored.items.map((i: { id: string }) => i.id),
    [itemIds[0], itemIds[1]],
    'the items of publication 1, in its order',
  );
  t.equal(restored.revision, got.revision + 1, 'the revision went up');
  t.equal(restored.unpublishedChanges, true, 'the screen still plays publication 2');
  t.same((await playlistPublishable.state(app.deps.db, id)).draft, one!.snapshot, 'the draft is the snapshot again');
  t.same(await playing(), ['https://example.org/3']);

  // compare's view of a snapshot
  const cmp = playlistPublishable.comparable(one!.snapshot);
  t.same(cmp.fields, { name: 'Loop', description: '', tagRule: null });
  t.same(
    cmp.items.map((i) => [i.key, i.label]),
    [
      [itemIds[0], `asset ${a}`],
      [itemIds[1], `asset ${b}`],
    ],
  );
  t.notOk('id' in cmp.items[0]!.fields, 'the key is not a field');

  // bad input to the adapter
  await t.rejects(playlistPublishable.state(app.deps.db, '0190f5a2-7b3c-7def-8abc-00000000dead'), { code: 'not_found' });
  await t.rejects(
    app.deps.db.transaction().execute((trx) => playlistPublishable.publish(trx, id, { nope: true }, null, '', 'edit')),
    { code: 'validation_failed' },
  );
});

t.test('a playlist never published plays nothing; publish and restore refuse a snapshot whose asset is gone', async (t) => {
  const { app, owner, call, screen, manifest, playing, site, approvalsOn } = await setup(t);
  const a = await site(1);
  const b = await site(2);
  await approvalsOn();
  const made = (await call('POST', '/api/v1/playlists', { name: 'New', items: [{ assetId: a }, { assetId: b }] })).body.data;
  t.match(made, { publication: null, unpublishedChanges: true });
  await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: made.id });
  t.same(await playing(), [], 'nothing plays');
  t.match(
    (await manifest()).warnings,
    [{ code: 'playlist_empty', playlistId: made.id, unpublished: true, message: /never published/ }],
    'the manifest says why',
  );

  // An admin force-deletes an asset the draft uses: publishing that draft is refused.
  t.equal((await call('DELETE', `/api/v1/assets/${b}?force=true`)).status, 204);
  const { draft } = await playlistPublishable.state(app.deps.db, made.id);
  const err = await app.deps.db
    .transaction()
    .execute((trx) => playlistPublishable.publish(trx, made.id, draft, owner.user.id, '', 'submission'))
    .catch((e: unknown) => e);
  t.match(err, { code: 'conflict', details: { missing: [`asset ${b}`] } });
  t.equal((await playlistPublishable.publications(app.deps.db, made.id, { limit: 10 })).items.length, 0, 'nothing was published');
  const restoreErr = await app.deps.db
    .transaction()
    .execute((trx) => playlistPublishable.restoreDraft(trx, made.id, draft))
    .catch((e: unknown) => e);
  t.match(restoreErr, { code: 'conflict', details: { missing: [`asset ${b}`] } });

  // Without the gone asset it publishes, and the screen plays it.
  const ok = { ...(draft as PlaylistSnapshot), items: (draft as PlaylistSnapshot).items.filter((i) => i.assetId === a) };
  await app.deps.db.transaction().execute((trx) => playlistPublishable.publish(trx, made.id, ok, owner.user.id, '', 'submission'));
  await playlistPublishable.announce(app.deps, made.id);
  t.same(await playing(), ['https://example.org/1']);
});

t.test('approvals on: deleting a published playlist or layout needs a publisher; direct layout publish is 409', async (t) => {
  const { app, call, site, asEditor, approvalsOn } = await setup(t);
  const a = await site(1);
  const published = (await call('POST', '/api/v1/playlists', { name: 'Published', items: [{ assetId: a }] })).body.data;
  const layout = (await call('POST', '/api/v1/layouts', { name: 'Board', width: 1920, height: 1080, zones: [] })).body.data;
  t.equal((await call('POST', `/api/v1/layouts/${layout.id}/publish`, {})).status, 200, 'approvals off: publish as before');
  const spare = (await call('POST', '/api/v1/layouts', { name: 'Spare', width: 1920, height: 1080, zones: [] })).body.data;
  await approvalsOn();
  const draftOnly = (await asEditor('POST', '/api/v1/playlists', { name: 'Draft only' })).body.data;

  let res = await asEditor('DELETE', `/api/v1/playlists/${published.id}`);
  t.equal(res.status, 403);
  t.equal(res.body.error.code, 'forbidden');
  t.match(res.body.error.message, /approvals are required/);
  res = await asEditor('DELETE', `/api/v1/layouts/${layout.id}`);
  t.equal(res.status, 403, 'a published layout too');
  t.equal((await asEditor('DELETE', `/api/v1/playlists/${draftOnly.id}`)).status, 204, 'a never-published playlist an editor may delete');
  t.equal((await asEditor('DELETE', `/api/v1/layouts/${spare.id}`)).status, 204, 'an unpublished layout too');

  res = await call('POST', `/api/v1/layouts/${layout.id}/publish`, {});
  t.equal(res.status, 409, 'the owner cannot publish directly either');
  t.equal(res.body.error.code, 'conflict');
  t.equal(res.body.error.message, `Approvals are required: submit it for approval (POST /api/v1/content-submissions/layout/${layout.id})`);

  t.equal((await call('DELETE', `/api/v1/playlists/${published.id}`)).status, 204, 'the owner may delete it');
  t.equal(await playlistPublishable.publications(app.deps.db, published.id, { limit: 10 }).catch((e: { code: string }) => e.code), 'not_found');
  const left = await app.deps.db.selectFrom('content_publications').select('id').where('content_id', '=', published.id).execute();
  t.same(left, [], 'its publications went with it');
  t.equal((await call('DELETE', `/api/v1/layouts/${layout.id}`)).status, 204);
});

t.test('migration 0365 publishes every existing playlist as it is (publication 1, source migration)', async (t) => {
  const dir = tempDataDir(t);
  const { db, close } = openDatabase(path.join(dir, 'placard.db'));
  t.teardown(close);
  await migrate(
    db,
    MIGRATIONS.filter((m) => m.version < 365),
  );
  const now = new Date().toISOString();
  const P = '0190f5a2-7b3c-7def-8abc-0000000000f1';
  const EMPTY = '0190f5a2-7b3c-7def-8abc-0000000000f2';
  const rule = JSON.stringify({ tags: ['menu'], match: 'any', order: 'name', durationMs: null, limit: 5 });
  await (db as any)
    .insertInto('playlists')
    .values([
      { id: P, name: 'Old', description: 'before', revision: 4, tag_rule: rule, created_by: null, created_at: now, updated_at: now },
      { id: EMPTY, name: 'Empty', description: '', revision: 1, tag_rule: null, created_by: null, created_at: now, updated_at: now },
    ])
    .execute();
  const item = (id: string, position: number, extra: object) => ({
    id,
    playlist_id: P,
    position,
    asset_id: null,
    widget_id: null,
    child_playlist_id: null,
    duration_ms: null,
    transition_type: 'none',
    transition_ms: 0,
    valid_from: null,
    valid_until: null,
    dayparts: '[]',
    enabled: 1,
    created_at: now,
    updated_at: now,
    ...extra,
  });
  await (db as any)
    .insertInto('playlist_items')
    .values([
      item('0190f5a2-7b3c-7def-8abc-0000000000e2', 1, { child_playlist_id: EMPTY, enabled: 0 }),
      item('0190f5a2-7b3c-7def-8abc-0000000000e1', 0, {
        asset_id: '0190f5a2-7b3c-7def-8abc-0000000000a9',
        duration_ms: 5000,
        transition_type: 'fade',
        transition_ms: 300,
        valid_from: '2026-01-01T00:00:00.000Z',
        dayparts: JSON.stringify([{ days: [1, 2], from: '09:00', to: '17:00' }]),
      }),
    ])
    .execute();
  await migrate(db);

  for (const id of [P, EMPTY]) {
    const row = await db.selectFrom('playlists').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const items = await db.selectFrom('playlist_items').selectAll().where('playlist_id', '=', id).orderBy('position').execute();
    const pubs = await db.selectFrom('content_publications').selectAll().where('content_id', '=', id).execute();
    t.equal(pubs.length, 1, `${row.name}: one publication`);
    t.match(pubs[0], { content_type: 'playlist', number: 1, source: 'migration', published_by: null, note: '' });
    t.match(pubs[0]!.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a uuid-shaped id');
    t.equal(row.published_publication_id, pubs[0]!.id, 'the playlist points at it');
    t.same(JSON.parse(pubs[0]!.snapshot), playlistSnapshot(row, items), `${row.name}: the snapshot is what playlistSnapshot builds`);
    t.equal(
      JSON.stringify(JSON.parse(pubs[0]!.snapshot)),
      JSON.stringify(playlistSnapshot(row, items)),
      'with the same key order (so the draft compares equal)',
    );
    const state = await playlistPublishable.state(db, id);
    t.equal(state.unpublishedChanges, false, `${row.name}: nothing to publish after the migration`);
  }
  const old = (await playlistPublishable.state(db, P)).draft as PlaylistSnapshot;
  t.same(
    old.items.map((i) => [i.id, i.enabled, i.playlistId]),
    [
      ['0190f5a2-7b3c-7def-8abc-0000000000e1', true, null],
      ['0190f5a2-7b3c-7def-8abc-0000000000e2', false, EMPTY],
    ],
    'items in position order',
  );
  t.same(old.tagRule, JSON.parse(rule));
});

t.test('approvals on: what a publication plays stays in use after the draft dropped it', async (t) => {
  const { call, site, asEditor, approvalsOn } = await setup(t);
  const a = await site(1);
  const child = (await call('POST', '/api/v1/playlists', { name: 'Child', items: [{ assetId: a }] })).body.data;
  const parent = (await call('POST', '/api/v1/playlists', { name: 'Parent' })).body.data;
  const nested = await call('POST', `/api/v1/playlists/${parent.id}/items`, { playlistId: child.id });
  t.equal(nested.status, 201);
  await approvalsOn();
  // The editor empties both drafts; the publications still play the asset and the child.
  t.equal((await asEditor('DELETE', `/api/v1/playlists/${child.id}/items/${child.items[0].id}`)).status, 204);
  t.equal((await asEditor('DELETE', `/api/v1/playlists/${parent.id}/items/${nested.body.data.id}`)).status, 204);
  let res = await call('DELETE', `/api/v1/assets/${a}`);
  t.equal(res.status, 409, 'the asset a screen may play cannot be deleted');
  t.match(res.body.error.details.usedBy, [{ type: 'playlist', id: child.id }]);
  res = await call('DELETE', `/api/v1/playlists/${child.id}`);
  t.equal(res.status, 409, 'nor the playlist a published parent nests');
  t.match(res.body.error.details.usedBy, [{ type: 'playlist', id: parent.id, name: 'Parent' }]);
  const impact = await call('POST', '/api/v1/content/impact', { playlistIds: [child.id] });
  t.equal(impact.status, 200);
  t.match(impact.body.data.usedBy, [{ type: 'playlist', id: parent.id }], 'impact names the published parent');
});
