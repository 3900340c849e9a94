import path from 'node:path';
import t, { type Test } from 'tap';
import { signedInApp, signIn } from './helpers/auth.js';
import { tempDataDir, type TestApp } from './helpers/harness.js';
import { openSocket, pairScreen, type PairedScreen } from './helpers/screens.js';
import { migrate, openDatabase } from '../server/src/platform/db/database.js';
import { MIGRATIONS } from '../server/src/platform/db/migrations/index.js';
import { widgetPublishable } from '../server/src/modules/widgets/index.js';
import { playlistPublishable } from '../server/src/modules/content/index.js';

/** Widgets on the publication model (issue 20): the row (and its bundle) plays, the draft is edited. */

async function setup(t: Test) {
  const { app, owner, call } = await signedInApp(t);
  const editor = await signIn(app, { role: 'editor' });
  const asEditor = (method: string, p: string, json?: unknown) => app.json(p, { method, headers: editor.headers, ...(json !== undefined ? { json } : {}) });
  const screen = await pairScreen(app, owner);
  /** A playlist assigned to the screen, published (with approvals on a new playlist is a draft until published). */
  const assign = async (widgetId: string) => {
    const playlist = (await call('POST', '/api/v1/playlists', { name: 'Loop' })).body.data;
    t.equal((await call('POST', `/api/v1/playlists/${playlist.id}/items`, { widgetId })).status, 201);
    const state = await playlistPublishable.state(app.deps.db, playlist.id);
    if (state.unpublishedChanges)
      await app.deps.db.transaction().execute((trx) => playlistPublishable.publish(trx, playlist.id, state.draft, owner.user.id, '', 'submission'));
    t.equal((await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: playlist.id })).status, 200);
    return playlist.id as string;
  };
  const manifest = async (s: PairedScreen = screen) => (await app.json('/api/v1/player/manifest', { headers: s.headers })).body.data;
  /** The bundle document the screen downloads for `widgetId` (null: the manifest does not list it). */
  const played = async (widgetId: string) => {
    const m = await manifest();
    const w = m.widgets.find((x: any) => x.widgetId === widgetId);
    if (!w) return null;
    return { bundleId: w.bundleId as string, html: await (await app.fetch(w.url, { headers: screen.headers })).text(), revision: m.revision as number };
  };
  const approvals = async (required: boolean) => t.equal((await call('PATCH', '/api/v1/settings', { approvals: { required } })).status, 200);
  return { app, owner, call, editor, asEditor, screen, assign, manifest, played, approvals };
}

async function publishDraft(app: TestApp, id: string, by: string | null) {
  const state = await widgetPublishable.state(app.deps.db, id);
  const pub = await app.deps.db.transaction().execute((trx) => widgetPublishable.publish(trx, id, state.draft, by, '', 'submission'));
  await widgetPublishable.announce(app.deps, id);
  return pub;
}

t.test('approvals off: a change rebuilds the bundle at once and records a publication', async (t) => {
  const { app, call, asEditor, assign, played } = await setup(t);
  const made = await call('POST', '/api/v1/widgets', { name: 'Hello', type: 'text', settings: { text: 'Hello one' } });
  t.equal(made.status, 201);
  t.match(made.body.data, { publication: { number: 1 }, unpublishedChanges: false });
  const id = made.body.data.id;
  await assign(id);
  t.match((await played(id))?.html, /Hello one/);

  const patched = await asEditor('PATCH', `/api/v1/widgets/${id}`, { settings: { text: 'Hello two' } });
  t.equal(patched.status, 200, 'editors change widgets at once while approvals are off, as before');
  t.match(patched.body.data, { settings: { text: 'Hello two' }, publication: { number: 2 }, unpublishedChanges: false });
  t.match((await played(id))?.html, /Hello two/, 'the screen gets the new bundle');
  const list = await widgetPublishable.publications(app.deps.db, id, { limit: 5 });
  t.same(
    list.items.map((p) => [p.number, p.source]),
    [
      [2, 'edit'],
      [1, 'edit'],
    ],
  );
  t.match((await widgetPublishable.publication(app.deps.db, id, list.items[0]!.id))?.snapshot, {
    name: 'Hello',
    type: 'text',
    settings: { text: 'Hello two' },
    template: null,
    binding: null,
  });
  t.match((await call('GET', '/api/v1/widgets')).body.data.items[0], { id, publication: { number: 2 }, unpublishedChanges: false });
});

t.test('approvals on: an editor’s change is a draft; the screen keeps its bundle until it is published', async (t) => {
  const { app, owner, call, asEditor, screen, assign, played, approvals } = await setup(t);
  const made = (await call('POST', '/api/v1/widgets', { name: 'Hello', type: 'text', settings: { text: 'Live words' } })).body.data;
  await assign(made.id);
  await approvals(true);
  const before = await played(made.id);
  t.match(before?.html, /Live words/);

  const patched = await asEditor('PATCH', `/api/v1/widgets/${made.id}`, { settings: { text: 'Draft words' } });
  t.equal(patched.status, 200);
  t.match(patched.body.data, { settings: { text: 'Draft words' }, unpublishedChanges: true, publication: { number: 1 }, revision: made.revision + 1 });
  t.match(
    (await call('GET', `/api/v1/widgets/${made.id}`)).body.data,
    { settings: { text: 'Draft words' }, bundle: { id: before?.bundleId } },
    'GET answers the draft',
  );
  const still = await played(made.id);
  t.equal(still?.bundleId, before?.bundleId, 'no new bundle');
  t.match(still?.html, /Live words/);
  t.equal(still?.revision, before?.revision, 'the manifest did not change');
  // Bad input is refused as before.
  t.equal((await asEditor('PATCH', `/api/v1/widgets/${made.id}`, { settings: { text: 42 } })).status, 400);

  // Publishing the draft rebuilds the bundle and tells the screen within a second.
  const socket = await openSocket(t, app, screen.credential);
  const sent = Date.now();
  t.match(await publishDraft(app, made.id, owner.user.id), { number: 2, source: 'submission' });
  await socket.next((m) => m.type === 'manifest.changed' && m.revision > before!.revision, sent);
  const after = await played(made.id);
  t.not(after?.bundleId, before?.bundleId);
  t.match(after?.html, /Draft words/);
  t.match((await call('GET', `/api/v1/widgets/${made.id}`)).body.data, { unpublishedChanges: false, publication: { number: 2 } });

  // restoreDraft: publication 1 back into the draft (the screen keeps publication 2).
  const list = await widgetPublishable.publications(app.deps.db, made.id, { limit: 5 });
  const first = await widgetPublishable.publication(app.deps.db, made.id, list.items[1]!.id);
  const rev = (await widgetPublishable.state(app.deps.db, made.id)).revision;
  await app.deps.db.transaction().execute((trx) => widgetPublishable.restoreDraft(trx, made.id, first!.snapshot));
  t.match((await call('GET', `/api/v1/widgets/${made.id}`)).body.data, { settings: { text: 'Live words' }, unpublishedChanges: true, revision: rev + 1 });
  t.match((await played(made.id))?.html, /Draft words/);

  // A new widget plays nothing until published.
  const fresh = await asEditor('POST', '/api/v1/widgets', { name: 'New', type: 'text', settings: { text: 'Fresh words' } });
  t.equal(fresh.status, 201);
  t.match(fresh.body.data, { publication: null, unpublishedChanges: true });
  const freshId = fresh.body.data.id;
  await assign(freshId);
  const m = await played(freshId);
  t.equal(m, null, 'a never-published widget is absent from the manifest');
  await publishDraft(app, freshId, owner.user.id);
  t.match((await played(freshId))?.html, /Fresh words/, 'published: it plays');

  // Publish refuses a snapshot whose data source is gone.
  const ghost = { name: 'X', type: 'text', settings: { text: 'x' }, template: null, binding: { sourceId: '0190f5a2-7b3c-7def-8abc-000000000999', view: null } };
  const refused = await app.deps.db
    .transaction()
    .execute((trx) => widgetPublishable.publish(trx, freshId, ghost, owner.user.id, '', 'submission'))
    .catch((e) => e);
  t.match(refused, { status: 409, details: { missing: ['data source 0190f5a2-7b3c-7def-8abc-000000000999'] } });

  // Deleting a published widget needs a publisher; an unpublished one the editor may delete.
  const lonely = (await call('POST', '/api/v1/widgets', { name: 'Lonely', type: 'text', settings: { text: 'l' } })).body.data.id;
  await publishDraft(app, lonely, owner.user.id);
  t.match(await asEditor('DELETE', `/api/v1/widgets/${lonely}`), { status: 403, body: { error: { code: 'forbidden', message: /publisher/ } } });
  const draftOnly = (await asEditor('POST', '/api/v1/widgets', { name: 'Draft only', type: 'text', settings: { text: 'd' } })).body.data.id;
  t.equal((await asEditor('DELETE', `/api/v1/widgets/${draftOnly}`)).status, 204);
  t.equal((await call('DELETE', `/api/v1/widgets/${lonely}`)).status, 204);
  t.equal(
    (await app.deps.db.selectFrom('content_publications').select('id').where('content_id', '=', lonely).execute()).length,
    0,
    'its publications went too',
  );
});

t.test('the migration publishes every existing widget as it is', async (t) => {
  const dir = tempDataDir(t);
  const database = openDatabase(path.join(dir, 'placard.db'));
  t.teardown(() => database.close());
  const db = database.db;
  await migrate(
    db,
    MIGRATIONS.filter((m) => m.version < 370),
  );
  const at = '2026-01-02T03:04:05.000Z';
  const W = '0190f5a2-7b3c-7def-8abc-0000000000d1';
  await db
    .insertInto('widgets')
    .values({
      id: W,
      name: 'Old',
      type: 'text',
      settings: '{"text":"hi"}',
      template: null,
      binding: null,
      revision: 2,
      content_revision: 2,
      errors: '[]',
      created_at: at,
      updated_at: at,
      created_by: null,
      updated_by: null,
    } as any)
    .execute();
  await migrate(db);
  t.match(await db.selectFrom('widgets').selectAll().where('id', '=', W).executeTakeFirstOrThrow(), { published_at: at, draft: null });
  const pubs = await db.selectFrom('content_publications').selectAll().where('content_id', '=', W).execute();
  t.equal(pubs.length, 1);
  t.match(pubs[0], { content_type: 'widget', number: 1, source: 'migration', published_at: at });
  t.same(JSON.parse(pubs[0]!.snapshot), { name: 'Old', type: 'text', settings: { text: 'hi' }, template: null, binding: null });
});
