import { sql } from 'kysely';
import t, { type Test } from 'tap';
import { ManifestDto } from '../server/src/modules/content/manifest.routes.js';
import { signedInApp } from './helpers/auth.js';
import { openSocket, pairScreen } from './helpers/screens.js';

const LOC = '0190f5a2-7b3c-7def-8abc-0000000000a1';
const GROUP = '0190f5a2-7b3c-7def-8abc-0000000000b1';

async function setup(t: Test) {
  const { app, owner, call } = await signedInApp(t);
  const now = new Date().toISOString();
  await app.deps.db
    .insertInto('locations')
    .values({
      id: LOC,
      name: 'London',
      address: null,
      time_zone: 'Europe/London',
      latitude: null,
      longitude: null,
      notes: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await app.deps.db
    .insertInto('screen_groups')
    .values({ id: GROUP, name: 'Bars', description: null, policy: null, span: null, created_at: now, updated_at: now })
    .execute();
  const screen = await pairScreen(app, owner, { name: 'Lobby', locationId: LOC, groupIds: [GROUP] });
  const manifest = (headers: Record<string, string> = {}) => app.json('/api/v1/player/manifest', { headers: { ...screen.headers, ...headers } });
  // A playlist with something to play (one with nothing playable is passed over).
  let site: string | undefined;
  const playable = async (name: string) => {
    site ??= (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id as string;
    const res = await call('POST', '/api/v1/playlists', { name, items: [{ assetId: site }] });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body.data as { id: string; name: string; revision: number };
  };
  return { app, owner, screen, call, manifest, playable };
}

t.test('the manifest resolves schedules, assignments and idle in the screen’s zone; ETag and 304', async (t) => {
  const { call, manifest, screen, playable } = await setup(t);
  let res = await manifest();
  t.equal(res.status, 200);
  t.ok(ManifestDto.safeParse(res.body.data).success, 'matches the documented schema');
  t.equal(res.body.data.timeZone, 'Europe/London');
  t.equal(res.body.data.screenId, screen.screenId);
  t.same(
    res.body.data.timeline.map((s: any) => s.source.type),
    ['idle'],
    'nothing scheduled or assigned',
  );
  t.equal(Date.parse(res.body.data.validUntil) - Date.parse(res.body.data.timeline[0].startsAt), 48 * 3600_000, '48 hours');
  const etag = res.headers.get('etag')!;
  t.ok(etag);
  t.equal(res.headers.get('content-encoding'), 'gzip', 'compressed for clients that accept gzip');
  const plain = await manifest({ 'accept-encoding': 'identity' });
  t.equal(plain.headers.get('content-encoding'), null);
  t.same(plain.body, res.body, 'the same manifest either way');
  const again = await manifest({ 'if-none-match': etag });
  t.equal(again.status, 304);

  const groupList = await playable('Group default');
  const own = await playable('Screen default');
  const lunch = await playable('Lunch');
  t.equal((await call('PUT', `/api/v1/screen-groups/${GROUP}/playlist-assignment`, { playlistId: groupList.id })).status, 200);
  res = await manifest({ 'if-none-match': etag });
  t.equal(res.status, 200, 'the group assignment changed the manifest');
  t.match(res.body.data.timeline, [
    {
      source: { type: 'group-assignment', id: GROUP },
      content: { type: 'playlist', id: groupList.id },
      playlist: { id: groupList.id, name: 'Group default', items: [{ kind: 'website', url: 'https://example.org/', durationMs: 30_000 }] },
    },
  ]);
  const screenAssign = await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: own.id });
  t.match(screenAssign.body.data, { playlistId: own.id, playlistName: 'Screen default', inherited: { groupId: GROUP, playlistId: groupList.id } });
  res = await manifest();
  t.same(
    res.body.data.timeline.map((s: any) => s.source.type),
    ['assignment'],
    'the screen’s own assignment beats the group’s',
  );

  // Every day 12:00-14:00 London time, following the screen's zone (no timeZone given).
  const today = new Date().toISOString().slice(0, 10);
  const sched = await call('POST', '/api/v1/schedules', {
    name: 'Lunch',
    content: { playlistId: lunch.id },
    targets: { locationIds: [LOC] },
    startsAt: `${today}T12:00:00`,
    endsAt: `${today}T14:00:00`,
    rrule: 'FREQ=DAILY',
    priority: 5,
  });
  t.equal(sched.status, 201);
  t.match(sched.body.data, { timeZone: 'Europe/London', followsScreenTimeZone: true, rrule: 'FREQ=DAILY' });
  res = await manifest();
  const lunches = res.body.data.timeline.filter((s: any) => s.source.type === 'schedule');
  t.ok(lunches.length >= 1 && lunches.length <= 3, `${lunches.length} lunch segments in 48 h`);
  for (const seg of lunches) {
    const local = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/London', hour: '2-digit', minute: '2-digit', hour12: false });
    t.ok(
      ['12:00', local.format(Date.parse(res.body.data.timeline[0].startsAt))].includes(local.format(Date.parse(seg.startsAt))),
      'starts 12:00 London (or the window start)',
    );
    // Between 12:00 and 14:00 London the 48 h window ends inside the last lunch, which it cuts.
    t.ok(['14:00', local.format(Date.parse(res.body.data.validUntil))].includes(local.format(Date.parse(seg.endsAt))), 'ends 14:00 London (or the window end)');
    t.equal(seg.playlist.name, 'Lunch');
  }
  t.equal(res.body.data.revision, (await manifest()).body.data.revision, 'stable between builds');

  // Deleting what is in use is refused, naming the users.
  const del = await call('DELETE', `/api/v1/playlists/${lunch.id}`);
  t.equal(del.status, 409);
  t.same(
    del.body.error.details.usedBy.map((u: any) => u.type),
    ['schedule'],
  );

  // Disabled: back to the assignment.
  t.equal((await call('POST', `/api/v1/schedules/${sched.body.data.id}/disable`)).body.data.enabled, false);
  res = await manifest();
  t.same(
    res.body.data.timeline.map((s: any) => s.source.type),
    ['assignment'],
  );

  // The screen's location moves to another zone: the manifest follows.
  t.equal((await call('PATCH', `/api/v1/locations/${LOC}`, { timeZone: 'America/New_York' })).status, 200);
  res = await manifest();
  t.equal(res.body.data.timeZone, 'America/New_York');
});

t.test('a layout plays only once published; the manifest carries its zones', async (t) => {
  const { call, manifest, screen, playable } = await setup(t);
  const menu = (await call('POST', '/api/v1/playlists', { name: 'Menu' })).body.data;
  const layout = (
    await call('POST', '/api/v1/layouts', {
      name: 'Board',
      zones: [{ id: 'left', name: 'Left', x: 0, y: 0, width: 960, height: 1080, content: { type: 'playlist', playlistId: menu.id } }],
    })
  ).body.data;
  const fallback = await playable('Fallback');
  await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: fallback.id });
  const start = new Date(Date.now() - 3600_000).toISOString();
  const end = new Date(Date.now() + 5 * 3600_000).toISOString();
  const s = await call('POST', '/api/v1/schedules', {
    name: 'Board',
    content: { layoutId: layout.id },
    targets: { screenIds: [screen.screenId] },
    startsAt: start,
    endsAt: end,
    timeZone: 'UTC',
  });
  t.equal(s.status, 201);
  let res = await manifest();
  t.same(
    res.body.data.timeline.map((x: any) => x.source.type),
    ['assignment'],
    'unpublished: falls through',
  );
  t.match(res.body.data.warnings, [{ code: 'layout_unpublished', layoutId: layout.id }]);

  await call('POST', `/api/v1/layouts/${layout.id}/publish`, {});
  res = await manifest();
  const seg = res.body.data.timeline.find((x: any) => x.source.type === 'schedule');
  t.match(seg, {
    content: { type: 'layout', id: layout.id },
    layout: { id: layout.id, revisionNumber: 1, width: 1920, height: 1080, zones: [{ id: 'left', x: 0, width: 960, playlist: { id: menu.id, name: 'Menu' } }] },
  });
  t.same(res.body.data.warnings, []);
  t.ok(ManifestDto.safeParse(res.body.data).success);

  const preview = await call('POST', '/api/v1/schedules/preview', { screenId: screen.screenId, from: start, to: end });
  t.equal(preview.status, 200);
  t.match(preview.body.data.timeline, [
    { source: { type: 'schedule', name: 'Board' }, content: { type: 'layout', name: 'Board' }, reason: /Schedule "Board"/ },
  ]);
});

t.test('changes push manifest.changed over the real WebSocket within a second', async (t) => {
  const { app, call, manifest, screen, playable } = await setup(t);
  const p = (await call('POST', '/api/v1/playlists', { name: 'Loop' })).body.data;
  const child = await playable('Child');
  await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: p.id });
  const first = await manifest();
  const rev0 = first.body.data.revision;
  const socket = await openSocket(t, app, screen.credential);

  // An item added to a playlist the screen plays (it had nothing to play: the screen was idle).
  t.same(
    first.body.data.timeline.map((s: any) => s.source.type),
    ['idle'],
  );
  let sent = Date.now();
  await call('POST', `/api/v1/playlists/${p.id}/items`, { playlistId: child.id });
  const m1 = await socket.next((m) => m.type === 'manifest.changed' && m.revision > rev0, sent);
  const after = await manifest({ 'if-none-match': first.headers.get('etag')! });
  t.equal(after.status, 200);
  t.equal(after.body.data.revision, m1.revision, 'the manifest carries the pushed revision');

  // A change deep inside a nested playlist reaches the screen too.
  await manifest();
  sent = Date.now();
  await call('PATCH', `/api/v1/playlists/${child.id}`, { name: 'Child 2' });
  const m2 = await socket.next((m) => m.type === 'manifest.changed' && m.revision > m1.revision, sent);
  t.ok(m2.revision > m1.revision);

  // A schedule targeting the screen's group pushes without any prior dependency.
  await manifest();
  sent = Date.now();
  await call('POST', '/api/v1/schedules', {
    name: 'G',
    content: { playlistId: child.id },
    targets: { groupIds: [GROUP] },
    startsAt: new Date().toISOString(),
    endsAt: new Date(Date.now() + 3600_000).toISOString(),
  });
  const m3 = await socket.next((m) => m.type === 'manifest.changed' && m.revision > m2.revision, sent);
  t.ok(m3.revision > m2.revision);
  const res = await manifest();
  t.ok(
    res.body.data.timeline.some((x: any) => x.source.type === 'schedule' && x.playlist.name === 'Child 2'),
    'the new schedule plays',
  );

  // Something the screen does not use does not bump it.
  const before = socket.messages.filter((m) => m.type === 'manifest.changed').length;
  const other = (await call('POST', '/api/v1/playlists', { name: 'Unused' })).body.data;
  await call('PATCH', `/api/v1/playlists/${other.id}`, { name: 'Unused 2' });
  await new Promise((r) => setTimeout(r, 200));
  t.equal(socket.messages.filter((m) => m.type === 'manifest.changed').length, before, 'no push for unrelated content');
});

t.test('the manifest needs a device credential', async (t) => {
  const { app, owner } = await setup(t);
  t.equal((await app.json('/api/v1/player/manifest')).status, 401);
  t.equal((await app.json('/api/v1/player/manifest', { headers: owner.headers })).status, 401);
  t.equal((await app.json('/api/v1/player/manifest', { headers: { authorization: 'Bearer svc_device_nope.nope' } })).status, 401);
});

t.test('a change committed while the first manifest is built is not lost', async (t) => {
  const { app, call, screen } = await setup(t);
  const { screenContext } = await import('../server/src/modules/content/screen-context.js');
  const { currentManifest } = await import('../server/src/modules/content/manifest.js');
  const { contentChanged } = await import('../server/src/modules/content/changes.js');
  const p = (await call('POST', '/api/v1/playlists', { name: 'Before' })).body.data;
  await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: p.id });

  // Right after the build has read the playlist (the query of its publication answers: screens
  // play publications, issue 20), an editor renames it and the change is announced, before the build has recorded what it used:
  // exactly the window of a first build, made deterministic on the app's one connection.
  let announced: Promise<void> | undefined;
  const plugin = {
    transformQuery: (args: any) => args.node,
    transformResult: async (args: any) => {
      if (!announced && JSON.stringify(args.result.rows ?? []).includes(p.id) && 'snapshot' in (args.result.rows?.[0] ?? {})) {
        // (what screens play is the publication: the rename reaches its snapshot, as publishing it would)
        if (app.database.kind === 'sqlite') {
          // the connection is held by this query: write on the raw handle (committed at once)
          app.database.sqlite.prepare('update playlists set name = ?, revision = revision + 1 where id = ?').run('After', p.id);
          app.database.sqlite
            .prepare(
              `update content_publications set snapshot = json_set(snapshot, '$.name', ?) where id = (select published_publication_id from playlists where id = ?)`,
            )
            .run('After', p.id);
        } else {
          // PostgreSQL: another connection of the pool, committed before the build goes on
          const db = app.deps.db;
          await db.updateTable('playlists').set({ name: 'After', revision: sql`revision + 1` }).where('id', '=', p.id).execute();
          const pub = await db
            .selectFrom('content_publications')
            .select(['id', 'snapshot'])
            .where('id', '=', (eb) => eb.selectFrom('playlists').select('published_publication_id').where('id', '=', p.id))
            .executeTakeFirstOrThrow();
          await db
            .updateTable('content_publications')
            .set({ snapshot: JSON.stringify({ ...JSON.parse(pub.snapshot), name: 'After' }) })
            .where('id', '=', pub.id)
            .execute();
        }
        // announced without waiting
        announced = contentChanged(app.deps, [{ kind: 'playlist', id: p.id }]);
      }
      return args.result;
    },
  };
  const site = (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/' })).body.data;
  t.equal((await call('POST', `/api/v1/playlists/${p.id}/items`, { assetId: site.id })).status, 201);
  const before = (await screenContext(app.deps.db, screen.screenId))!;
  const entry = await currentManifest({ ...app.deps, db: app.deps.db.withPlugin(plugin) }, before);
  t.ok(announced, 'the change happened during the build');
  await announced;
  const served = JSON.parse(entry.body).data;
  const after = (await screenContext(app.deps.db, screen.screenId))!;
  t.ok(
    served.timeline[0].playlist.name === 'After' || after.manifestRevision > before.manifestRevision,
    `the served manifest has the change (${served.timeline[0].playlist.name}) or the screen is told to fetch again (revision ${before.manifestRevision} -> ${after.manifestRevision})`,
  );
});

t.test('the ETag holds within the hour and moves with the window', async (t) => {
  const { app, screen } = await setup(t);
  const { screenContext } = await import('../server/src/modules/content/screen-context.js');
  const { currentManifest } = await import('../server/src/modules/content/manifest.js');
  const { manifestCache } = await import('../server/src/modules/content/manifest.cache.js');
  const ctx = (await screenContext(app.deps.db, screen.screenId))!;
  const at = Date.parse('2026-06-01T10:05:00Z');
  const first = await currentManifest(app.deps, ctx, at);
  manifestCache(app.deps).clear();
  const rebuilt = await currentManifest(app.deps, ctx, at + 50 * 60_000);
  t.not(JSON.parse(rebuilt.body).data.generatedAt, JSON.parse(first.body).data.generatedAt);
  t.equal(rebuilt.etag, first.etag, 'built again later in the hour: same ETag (generatedAt is not part of it), so a polling player gets 304');
  const next = await currentManifest(app.deps, ctx, at + 60 * 60_000);
  t.not(next.etag, first.etag, 'the next hour moves validUntil and refreshAfter: a new ETag, one 200 an hour');
  t.equal(JSON.parse(next.body).data.validUntil, '2026-06-03T11:00:00.000Z');
});

t.test('a schedule whose playlist has nothing to play falls through; adding an item pushes the change', async (t) => {
  const { app, call, manifest, screen, playable } = await setup(t);
  const fallback = await playable('Fallback');
  await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: fallback.id });
  const hollow = (await call('POST', '/api/v1/playlists', { name: 'Hollow' })).body.data;
  const s = await call('POST', '/api/v1/schedules', {
    name: 'Hollow hour',
    content: { playlistId: hollow.id },
    targets: { screenIds: [screen.screenId] },
    startsAt: new Date(Date.now() - 600_000).toISOString(),
    endsAt: new Date(Date.now() + 3600_000).toISOString(),
    timeZone: 'UTC',
    priority: 5,
  });
  t.equal(s.status, 201);
  let res = await manifest();
  t.same(
    res.body.data.timeline.map((x: any) => x.source.type),
    ['assignment'],
    'the empty schedule does not win',
  );
  t.match(res.body.data.warnings, [{ code: 'playlist_empty', scheduleId: s.body.data.id, playlistId: hollow.id }]);
  t.ok(ManifestDto.safeParse(res.body.data).success);

  const socket = await openSocket(t, app, screen.credential);
  const site = (await call('GET', `/api/v1/playlists/${fallback.id}`)).body.data.items[0].assetId;
  const sent = Date.now();
  t.equal((await call('POST', `/api/v1/playlists/${hollow.id}/items`, { assetId: site })).status, 201);
  const pushed = await socket.next((m) => m.type === 'manifest.changed' && m.revision > res.body.data.revision, sent);
  res = await manifest();
  t.equal(res.body.data.revision, pushed.revision);
  const seg = res.body.data.timeline.find((x: any) => x.source.type === 'schedule');
  t.match(seg, { source: { id: s.body.data.id }, playlist: { id: hollow.id, items: [{ assetId: site }] } }, 'now it has something to play, it plays');
  t.same(res.body.data.warnings, []);
});
