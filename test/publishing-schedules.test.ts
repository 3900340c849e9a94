import path from 'node:path';
import t, { type Test } from 'tap';
import { signedInApp, signIn } from './helpers/auth.js';
import { tempDataDir, type TestApp } from './helpers/harness.js';
import { openSocket, pairScreen } from './helpers/screens.js';
import { migrate, openDatabase } from '../server/src/platform/db/database.js';
import { MIGRATIONS } from '../server/src/platform/db/migrations/index.js';
import { schedulePublishable } from '../server/src/modules/schedules/index.js';

/** Schedules on the publication model (issue 20): the row plays, the draft is edited, publications are recorded. */

const hour = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

async function setup(t: Test) {
  const { app, owner, call } = await signedInApp(t);
  const editor = await signIn(app, { role: 'editor' });
  const asEditor = (method: string, p: string, json?: unknown) => app.json(p, { method, headers: editor.headers, ...(json !== undefined ? { json } : {}) });
  const site = (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id as string;
  const playable = async (name: string) => {
    const res = await call('POST', '/api/v1/playlists', { name, items: [{ assetId: site }] });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body.data.id as string;
  };
  const screen = await pairScreen(app, owner);
  const other = await pairScreen(app, owner, { name: 'Other' });
  /** The source the screen's manifest plays now. */
  const playingNow = async (s = screen) => {
    const res = await app.json('/api/v1/player/manifest', { headers: s.headers });
    const now = Date.now();
    const seg = res.body.data.timeline.find((x: any) => Date.parse(x.start ?? x.startsAt) <= now && now < Date.parse(x.end ?? x.endsAt));
    return { source: (seg ?? res.body.data.timeline[0]).source, revision: res.body.data.revision as number };
  };
  /** The source the schedule preview names now. */
  const previewNow = async (s = screen) => {
    const res = await call('POST', '/api/v1/schedules/preview', { screenId: s.screenId, from: iso(Date.now()), to: iso(Date.now() + hour) });
    return res.body.data.timeline[0].source;
  };
  const body = (playlistId: string, extra: Record<string, unknown> = {}) => ({
    name: 'Promo',
    content: { playlistId },
    targets: { screenIds: [screen.screenId] },
    startsAt: iso(Date.now() - hour),
    endsAt: iso(Date.now() + 24 * hour),
    ...extra,
  });
  const approvals = async (required: boolean) => t.equal((await call('PATCH', '/api/v1/settings', { approvals: { required } })).status, 200);
  return { app, owner, call, editor, asEditor, playable, screen, other, playingNow, previewNow, body, approvals };
}

async function publishDraft(app: TestApp, id: string, by: string | null) {
  const state = await schedulePublishable.state(app.deps.db, id);
  const pub = await app.deps.db.transaction().execute((trx) => schedulePublishable.publish(trx, id, state.draft, by, 'ok', 'submission'));
  await schedulePublishable.announce(app.deps, id);
  return pub;
}

t.test('approvals off: every write plays at once and records a publication; editors still need a publisher', async (t) => {
  const { app, call, asEditor, playable, playingNow, previewNow, body } = await setup(t);
  const p = await playable('P');
  const created = await call('POST', '/api/v1/schedules', body(p));
  t.equal(created.status, 201);
  const id = created.body.data.id;
  t.match(created.body.data, { publication: { number: 1 }, unpublishedChanges: false });
  t.match(await playingNow(), { source: { type: 'schedule', id } }, 'the screen plays it at once');
  t.match(await previewNow(), { type: 'schedule', id });

  const patched = await call('PATCH', `/api/v1/schedules/${id}`, { priority: 7 });
  t.match(patched.body.data, { priority: 7, publication: { number: 2 }, unpublishedChanges: false });
  t.equal((await call('POST', `/api/v1/schedules/${id}/disable`)).body.data.publication.number, 3, 'disable is a publication too');
  t.not((await playingNow()).source.type, 'schedule', 'disabled: the screen stops playing it at once');
  const list = await schedulePublishable.publications(app.deps.db, id, { limit: 10 });
  t.same(
    list.items.map((x) => [x.number, x.source]),
    [
      [3, 'edit'],
      [2, 'edit'],
      [1, 'edit'],
    ],
  );
  const second = await schedulePublishable.publication(app.deps.db, id, list.items[1]!.id);
  t.match(second?.snapshot, { name: 'Promo', priority: 7, enabled: true, targets: { screenIds: [created.body.data.targets.screenIds[0]] } });

  const refused = await asEditor('PATCH', `/api/v1/schedules/${id}`, { priority: 1 });
  t.match(refused, { status: 403, body: { error: { code: 'forbidden', message: /publisher/ } } }, 'an editor’s change would go live: refused as before');
  t.equal((await asEditor('POST', '/api/v1/schedules', body(p))).status, 403);

  t.equal((await call('DELETE', `/api/v1/schedules/${id}`)).status, 204);
  t.equal((await schedulePublishable.publications(app.deps.db, id, { limit: 10 }).catch((e) => e)).status, 404, 'its publications went with it');
});

t.test('approvals on: an editor edits the draft; screens keep the publication until it is published', async (t) => {
  const { app, owner, call, asEditor, playable, screen, other, playingNow, previewNow, body, approvals } = await setup(t);
  const p = await playable('P');
  await approvals(true);

  // A new schedule does not play until published.
  const created = await asEditor('POST', '/api/v1/schedules', body(p));
  t.equal(created.status, 201);
  const id = created.body.data.id;
  t.match(created.body.data, { publication: null, unpublishedChanges: true, name: 'Promo' });
  t.not((await playingNow()).source.type, 'schedule', 'never published: not in the manifest');
  t.not((await previewNow()).type, 'schedule', 'nor in the preview');
  t.match(await call('GET', `/api/v1/schedules/${id}`), { body: { data: { publication: null, unpublishedChanges: true } } });

  // Publishing it (what an approved submission does) makes it play and tells the screen.
  const socket = await openSocket(t, app, screen.credential);
  const before = await playingNow();
  let sent = Date.now();
  const pub1 = await publishDraft(app, id, owner.user.id);
  t.match(pub1, { number: 1, source: 'submission', publishedBy: owner.user.id });
  await socket.next((m) => m.type === 'manifest.changed' && m.revision > before.revision, sent);
  t.match(await playingNow(), { source: { type: 'schedule', id } });
  t.match(await previewNow(), { type: 'schedule', id });
  const published = (await call('GET', `/api/v1/schedules/${id}`)).body.data;
  t.match(published, { publication: { id: pub1.id, number: 1 }, unpublishedChanges: false });

  // Edits change GET (the draft) but neither the preview nor the manifest.
  const rev = (await playingNow()).revision;
  const pausedDraft = await asEditor('PATCH', `/api/v1/schedules/${id}`, { priority: 5, enabled: false, targets: { screenIds: [other.screenId] } });
  t.equal(pausedDraft.status, 200);
  t.match(pausedDraft.body.data, {
    priority: 5,
    enabled: false,
    targets: { screenIds: [other.screenId] },
    unpublishedChanges: true,
    publication: { number: 1 },
    revision: published.revision + 1,
  });
  t.match((await call('GET', `/api/v1/schedules/${id}`)).body.data, { enabled: false, priority: 5, unpublishedChanges: true }, 'GET answers the draft');
  t.match(await playingNow(), { source: { type: 'schedule', id }, revision: rev }, 'the screen still plays it, manifest unchanged');
  t.match(await previewNow(), { type: 'schedule', id });
  t.not((await playingNow(other)).source.type, 'schedule', 'the draft’s new target does not play it');
  t.equal((await asEditor('POST', `/api/v1/schedules/${id}/enable`)).body.data.enabled, true, 'enable edits the draft too');
  t.equal((await asEditor('POST', `/api/v1/schedules/${id}/disable`)).body.data.enabled, false);
  t.match(await playingNow(), { source: { type: 'schedule', id } });
  // Bad input is checked exactly as before and stores nothing.
  const bad = await asEditor('PATCH', `/api/v1/schedules/${id}`, { endsAt: iso(Date.now() - 2 * hour) });
  t.equal(bad.status, 400);
  t.equal((await call('GET', `/api/v1/schedules/${id}`)).body.data.revision, pausedDraft.body.data.revision + 2);

  const state = await schedulePublishable.state(app.deps.db, id);
  t.match(state, { unpublishedChanges: true, published: { number: 1 }, draft: { enabled: false, priority: 5 } });
  const cmp = schedulePublishable.comparable(state.draft);
  t.same(cmp.items, [{ key: `screen:${other.screenId}`, label: `screen ${other.screenId}`, fields: {} }]);
  t.equal(cmp.fields.priority, 5);

  // restoreDraft: publication 1 back into the draft.
  const revBefore = state.revision;
  const p1 = await schedulePublishable.publication(app.deps.db, id, pub1.id);
  await app.deps.db.transaction().execute((trx) => schedulePublishable.restoreDraft(trx, id, p1!.snapshot));
  t.match((await call('GET', `/api/v1/schedules/${id}`)).body.data, {
    enabled: true,
    priority: 0,
    targets: { screenIds: [screen.screenId] },
    revision: revBefore + 1,
  });

  // Publishing the paused draft stops it on the screen and tells it.
  await asEditor('PATCH', `/api/v1/schedules/${id}`, { enabled: false });
  const rev2 = (await playingNow()).revision;
  sent = Date.now();
  t.match(await publishDraft(app, id, owner.user.id), { number: 2 });
  await socket.next((m) => m.type === 'manifest.changed' && m.revision > rev2, sent);
  t.not((await playingNow()).source.type, 'schedule');

  // Publish refuses a draft whose playlist was deleted meanwhile.
  const gone = await playable('Gone');
  t.equal((await asEditor('PATCH', `/api/v1/schedules/${id}`, { content: { playlistId: gone } })).status, 200);
  t.equal((await call('DELETE', `/api/v1/playlists/${gone}`)).status, 204, 'no published schedule shows it');
  const draft = (await schedulePublishable.state(app.deps.db, id)).draft;
  const refused = await app.deps.db
    .transaction()
    .execute((trx) => schedulePublishable.publish(trx, id, draft, owner.user.id, '', 'submission'))
    .catch((e) => e);
  t.match(refused, { code: 'conflict', status: 409, details: { missing: [`playlist ${gone}`] } });
  t.equal((await schedulePublishable.publications(app.deps.db, id, { limit: 10 })).items.length, 2, 'nothing was published');
  const restoreRefused = await app.deps.db
    .transaction()
    .execute((trx) => schedulePublishable.restoreDraft(trx, id, draft))
    .catch((e) => e);
  t.match(restoreRefused, { status: 409, details: { missing: [`playlist ${gone}`] } });

  // Deleting a schedule screens play needs a publisher; an unpublished one the editor may delete.
  const del = await asEditor('DELETE', `/api/v1/schedules/${id}`);
  t.match(del, { status: 403, body: { error: { code: 'forbidden', message: /publisher/ } } });
  const fresh = (await asEditor('POST', '/api/v1/schedules', body(p))).body.data.id;
  t.equal((await asEditor('DELETE', `/api/v1/schedules/${fresh}`)).status, 204);
  t.equal((await call('DELETE', `/api/v1/schedules/${id}`)).status, 204);
});

t.test('the migration publishes every existing schedule as it is (publication 1, source migration)', async (t) => {
  const dir = tempDataDir(t);
  const database = openDatabase(path.join(dir, 'placard.db'));
  t.teardown(() => database.close());
  const db = database.db;
  await migrate(
    db,
    MIGRATIONS.filter((m) => m.version < 370),
  );
  const at = '2026-01-02T03:04:05.000Z';
  const P = '0190f5a2-7b3c-7def-8abc-0000000000c1';
  const S = '0190f5a2-7b3c-7def-8abc-0000000000c2';
  const G = '0190f5a2-7b3c-7def-8abc-0000000000c3';
  await db
    .insertInto('playlists')
    .values({ id: P, name: 'P', created_at: at, updated_at: at } as any)
    .execute();
  await db
    .insertInto('schedules')
    .values({
      id: S,
      name: 'Old',
      content_type: 'playlist',
      playlist_id: P,
      layout_id: null,
      campaign_id: null,
      starts_at: at,
      ends_at: null,
      rrule: null,
      time_zone: 'Europe/London',
      follow_screen_zone: 1,
      priority: 3,
      enabled: 1,
      revision: 4,
      created_by: null,
      created_at: at,
      updated_at: at,
    } as any)
    .execute();
  await db.insertInto('schedule_targets').values({ schedule_id: S, target_type: 'group', target_id: G }).execute();
  await migrate(db);
  const row = await db.selectFrom('schedules').selectAll().where('id', '=', S).executeTakeFirstOrThrow();
  t.match(row, { published_at: at, draft: null, revision: 4 });
  const pubs = await db.selectFrom('content_publications').selectAll().where('content_id', '=', S).execute();
  t.equal(pubs.length, 1);
  t.match(pubs[0], { content_type: 'schedule', number: 1, source: 'migration', published_at: at, published_by: null });
  t.same(JSON.parse(pubs[0]!.snapshot), {
    name: 'Old',
    content: { type: 'playlist', id: P },
    targets: { screenIds: [], groupIds: [G], locationIds: [] },
    startsAt: at,
    endsAt: null,
    rrule: null,
    timeZone: 'Europe/London',
    followScreenZone: true,
    priority: 3,
    enabled: true,
  });
});
