import t, { type Test } from 'tap';
import { signedInApp, signIn } from './helpers/auth.js';
import { contended } from './helpers/harness.js';

async function setup(t: Test) {
  const { app, owner, call } = await signedInApp(t);
  // Playlists that have something to play (a schedule whose playlist has nothing playable falls through).
  let site: string | undefined;
  const playable = async (name: string) => {
    site ??= (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id as string;
    const res = await call('POST', '/api/v1/playlists', { name, items: [{ assetId: site }] });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body.data.id as string;
  };
  return { app, owner, call, playable };
}

const ID = '0190f5a2-7b3c-7def-8abc-0123456789ab';

t.test('schedule input is checked before anything is stored', async (t) => {
  const { call } = await setup(t);
  const playlist = (await call('POST', '/api/v1/playlists', { name: 'P' })).body.data;
  const base = {
    name: 'S',
    content: { playlistId: playlist.id },
    targets: { screenIds: [ID] },
    startsAt: '2026-06-01T09:00:00Z',
    endsAt: '2026-06-01T17:00:00Z',
  };
  const cases: [string, unknown, RegExp][] = [
    ['unknown campaign', { ...base, content: { campaignId: ID } }, /No campaign/],
    ['two contents', { ...base, content: { playlistId: playlist.id, layoutId: ID } }, /exactly one/],
    ['unknown playlist', { ...base, content: { playlistId: ID } }, /No playlist/],
    ['no targets', { ...base, targets: {} }, /at least one/],
    ['unknown target', base, /Unknown targets/],
    ['bad zone', { ...base, timeZone: 'Mars/Olympus' }, /IANA/],
  ];
  for (const [label, body, message] of cases) {
    const res = await call('POST', '/api/v1/schedules', body);
    t.equal(res.status, 400, label);
    t.match(res.body.error.message, message, label);
  }
  t.equal((await call('GET', '/api/v1/schedules')).body.data.items.length, 0);
  const preview = await call('POST', '/api/v1/schedules/preview', { screenId: ID, from: '2026-06-01T00:00:00Z', to: '2026-06-02T00:00:00Z' });
  t.match(
    preview,
    { status: 400, body: { error: { code: 'validation_failed', details: { issues: [{ path: ['screenId'] }] } } } },
    'an unknown screen in the body',
  );
  t.equal((await call('POST', '/api/v1/schedules/preview', { screenId: ID, from: '2026-06-02T00:00:00Z', to: '2026-06-01T00:00:00Z' })).status, 400);
  t.equal((await call('POST', '/api/v1/schedules/preview', { from: '2026-06-01T00:00:00Z', to: '2026-06-02T00:00:00Z' })).status, 400);
});

t.test('recurrence across a DST change, priority then recency, group preview, reasons', async (t) => {
  const { app, owner, call, playable } = await setup(t);
  const { pairScreen } = await import('./helpers/screens.js');
  const now = new Date().toISOString();
  const LOC = '0190f5a2-7b3c-7def-8abc-0000000000a1';
  const NY = '0190f5a2-7b3c-7def-8abc-0000000000a2';
  const GROUP = '0190f5a2-7b3c-7def-8abc-0000000000b1';
  await app.deps.db
    .insertInto('locations')
    .values([
      { id: LOC, name: 'London', address: null, time_zone: 'Europe/London', latitude: null, longitude: null, notes: null, created_at: now, updated_at: now },
      {
        id: NY,
        name: 'New York',
        address: null,
        time_zone: 'America/New_York',
        latitude: null,
        longitude: null,
        notes: null,
        created_at: now,
        updated_at: now,
      },
    ])
    .execute();
  await app.deps.db
    .insertInto('screen_groups')
    .values({ id: GROUP, name: 'All', description: null, policy: null, span: null, created_at: now, updated_at: now })
    .execute();
  const london = await pairScreen(app, owner, { name: 'London', locationId: LOC, groupIds: [GROUP] });
  const ny = await pairScreen(app, owner, { name: 'NY', locationId: NY, groupIds: [GROUP] });
  const mk = playable;
  const day = await mk('Day');
  const promo = await mk('Promo');
  const newer = await mk('Newer');

  // Local wall-clock times, following each screen's zone.
  const daily = await call('POST', '/api/v1/schedules', {
    name: 'Opening hours',
    content: { playlistId: day },
    targets: { groupIds: [GROUP] },
    startsAt: '2026-03-27T09:00:00',
    endsAt: '2026-03-27T17:00:00',
    rrule: 'FREQ=DAILY',
    priority: 1,
  });
  t.equal(daily.status, 201);
  t.equal(daily.body.data.timeZone, 'UTC', 'targets in two zones: entered in UTC, followed per screen');
  const preview = async (body: unknown) => (await call('POST', '/api/v1/schedules/preview', body)).body.data;
  let p = await preview({ screenId: london.screenId, from: '2026-03-28T00:00:00Z', to: '2026-03-30T00:00:00Z' });
  t.equal(p.timeZone, 'Europe/London');
  t.same(
    p.timeline.filter((s: any) => s.source.type === 'schedule').map((s: any) => [s.startsAt, s.endsAt]),
    [
      ['2026-03-28T09:00:00.000Z', '2026-03-28T17:00:00.000Z'],
      ['2026-03-29T08:00:00.000Z', '2026-03-29T16:00:00.000Z'],
    ],
    '09:00-17:00 London on both sides of the change to BST',
  );
  t.match(p.timeline[0], { source: { type: 'idle' }, content: null, reason: /idle/ });
  p = await preview({ screenId: ny.screenId, from: '2026-03-28T00:00:00Z', to: '2026-03-29T00:00:00Z' });
  t.same(
    p.timeline.filter((s: any) => s.source.type === 'schedule').map((s: any) => s.startsAt),
    ['2026-03-28T13:00:00.000Z'],
    '09:00 in New York (EDT)',
  );

  // Priority beats the daily schedule; on equal priority the more recent one wins.
  const hi = await call('POST', '/api/v1/schedules', {
    name: 'Promo',
    content: { playlistId: promo },
    targets: { screenIds: [london.screenId] },
    startsAt: '2026-03-28T12:00:00Z',
    endsAt: '2026-03-28T13:00:00Z',
    timeZone: 'UTC',
    priority: 9,
  });
  t.equal(hi.body.data.followsScreenTimeZone, false);
  await call('POST', '/api/v1/schedules', {
    name: 'Newer',
    content: { playlistId: newer },
    targets: { locationIds: [LOC] },
    startsAt: '2026-03-28T15:00:00Z',
    endsAt: '2026-03-28T16:00:00Z',
    timeZone: 'UTC',
    priority: 1,
  });
  p = await preview({ screenId: london.screenId, from: '2026-03-28T09:00:00Z', to: '2026-03-28T17:00:00Z' });
  t.same(
    p.timeline.map((s: any) => `${s.startsAt.slice(11, 16)}-${s.endsAt.slice(11, 16)} ${s.content?.name}`),
    ['09:00-12:00 Day', '12:00-13:00 Promo', '13:00-15:00 Day', '15:00-16:00 Newer', '16:00-17:00 Day'],
  );
  t.match(p.timeline[1].reason, /"Promo" \(priority 9\) applies and beats "Opening hours" \(priority 1\)/);
  t.match(p.timeline[3].reason, /changed earlier/);
  t.same(
    p.timeline[3].outranked.map((o: any) => o.name),
    ['Opening hours'],
  );

  // A group's preview uses the group's schedules only.
  p = await preview({ groupId: GROUP, from: '2026-03-28T09:00:00Z', to: '2026-03-28T17:00:00Z' });
  t.equal(p.timeZone, 'America/New_York', 'members split evenly: the first zone alphabetically');
  t.same(
    p.timeline.map((s: any) => `${s.startsAt.slice(11, 16)} ${s.content?.name ?? s.source.type}`),
    ['09:00 idle', '13:00 Day'],
    'the group-wide schedule at 09:00 New York; Promo and Newer do not target the group',
  );

  // PATCH moves the schedule to another target; list filters.
  const moved = await call('PATCH', `/api/v1/schedules/${hi.body.data.id}`, { targets: { screenIds: [ny.screenId] }, priority: 3 });
  t.equal(moved.status, 200);
  t.same(moved.body.data.targets, { screenIds: [ny.screenId], groupIds: [], locationIds: [] });
  t.equal((await call('GET', `/api/v1/schedules?screenId=${ny.screenId}`)).body.data.items.length, 1);
  t.equal((await call('GET', `/api/v1/schedules?screenId=${london.screenId}`)).body.data.items.length, 0);
  const rec = await call('PATCH', `/api/v1/schedules/${daily.body.data.id}`, { endsAt: null });
  t.equal(rec.status, 400, 'a recurring schedule keeps its endsAt');
  t.equal((await call('PATCH', `/api/v1/schedules/${daily.body.data.id}`, { rrule: 'FREQ=NEVER' })).status, 400);
  t.equal((await call('DELETE', `/api/v1/schedules/${hi.body.data.id}`)).status, 204);
  t.equal((await call('GET', `/api/v1/schedules/${hi.body.data.id}`)).status, 404);
});

t.test('a group, location or screen that schedules target is not deleted (409 naming them); its assignment goes with it', async (t) => {
  const { app, owner, call } = await setup(t);
  const { pairScreen } = await import('./helpers/screens.js');
  const group = (await call('POST', '/api/v1/screen-groups', { name: 'Temp' })).body.data.id as string;
  const other = (await call('POST', '/api/v1/screen-groups', { name: 'Other' })).body.data.id as string;
  const location = (await call('POST', '/api/v1/locations', { name: 'Annex', timeZone: 'Europe/London' })).body.data.id as string;
  const screen = await pairScreen(app, owner, { name: 'Kiosk' });
  const p = (await call('POST', '/api/v1/playlists', { name: 'P' })).body.data.id;
  const q = (await call('POST', '/api/v1/playlists', { name: 'Q' })).body.data.id;
  const schedule = (name: string, targets: object) =>
    call('POST', '/api/v1/schedules', { name, content: { playlistId: p }, targets, startsAt: '2026-06-01T09:00:00Z', timeZone: 'UTC' });
  const s = await schedule('S', { groupIds: [group] });
  t.equal(s.status, 201);
  const onLocation = await schedule('At the annex', { locationIds: [location] });
  const onScreen = await schedule('On the kiosk', { screenIds: [screen.screenId] });
  t.equal((await call('PUT', `/api/v1/screen-groups/${group}/playlist-assignment`, { playlistId: q })).status, 200);

  let res = await call('DELETE', `/api/v1/screen-groups/${group}`);
  t.equal(res.status, 409);
  t.match(res.body.error, { code: 'conflict', message: 'Group "Temp" is named by schedule "S"; change those first' });
  t.same(res.body.error.details.usedBy, [{ type: 'schedule', id: s.body.data.id, name: 'S' }]);
  res = await call('DELETE', `/api/v1/locations/${location}`);
  t.equal(res.status, 409);
  t.same(res.body.error.details.usedBy, [{ type: 'schedule', id: onLocation.body.data.id, name: 'At the annex' }]);
  res = await call('DELETE', `/api/v1/screens/${screen.screenId}`);
  t.equal(res.status, 409);
  t.same(res.body.error.details.usedBy, [{ type: 'schedule', id: onScreen.body.data.id, name: 'On the kiosk' }]);
  t.equal((await call('GET', `/api/v1/schedules/${s.body.data.id}`)).body.data.targets.groupIds[0], group, 'the schedule still targets the group');

  // Once the schedules target something else, the deletes go through.
  t.equal((await call('PATCH', `/api/v1/schedules/${s.body.data.id}`, { targets: { groupIds: [other] } })).status, 200);
  t.equal((await call('DELETE', `/api/v1/schedules/${onLocation.body.data.id}`)).status, 204);
  t.equal((await call('PATCH', `/api/v1/schedules/${onScreen.body.data.id}`, { targets: { groupIds: [other] } })).status, 200);
  t.equal((await call('DELETE', `/api/v1/screen-groups/${group}`)).status, 204);
  t.equal((await call('DELETE', `/api/v1/locations/${location}`)).status, 204);
  t.equal((await call('DELETE', `/api/v1/screens/${screen.screenId}`)).status, 204);
  t.equal((await call('DELETE', `/api/v1/playlists/${q}`)).status, 204, 'the deleted group’s assignment went with it');
  const stale = await app.deps.db.selectFrom('schedule_targets').selectAll().where('target_id', 'in', [group, location, screen.screenId]).execute();
  t.same(stale, [], 'no schedule names what is gone');
  // Another group's delete is refused in turn.
  t.equal((await call('DELETE', `/api/v1/screen-groups/${other}`)).status, 409);
});

t.test('a schedule created while its group is deleted: one of the two is refused, never a schedule naming a deleted group', async (t) => {
  const { app, call } = await setup(t);
  const p = (await call('POST', '/api/v1/playlists', { name: 'P' })).body.data.id;
  // Holds the app's one database connection; each step lets exactly one queued query through.
  const hold = () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    return { release, held: app.deps.db.connection().execute(() => gate) };
  };
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const seen = new Set<string>();
  // The schedule's request gets n queries ahead before the delete joins it: every interleaving
  // of the two, from "the delete goes first" to "the schedule is written first".
  for (let n = 0; n < 7; n++) {
    const group = (await call('POST', '/api/v1/screen-groups', { name: `G${n}` })).body.data.id as string;
    let h = hold();
    const created = call('POST', '/api/v1/schedules', {
      name: `S${n}`,
      content: { playlistId: p },
      targets: { groupIds: [group] },
      startsAt: '2026-06-01T09:00:00Z',
    });
    await pause(100);
    for (let i = 0; i < n; i++) {
      const next = hold();
      h.release();
      await h.held;
      h = next;
      await pause(20);
    }
    const deleted = call('DELETE', `/api/v1/screen-groups/${group}`);
    await pause(100);
    h.release();
    await h.held;
    const outcome = `${(await created).status}/${(await deleted).status}`;
    seen.add(outcome);
    t.ok(['201/409', '400/204'].includes(outcome), `${n} queries ahead: schedule and delete answered ${outcome}`);
  }
  // Holding "the one connection" orders the two requests on SQLite only; PostgreSQL's pool lets
  // them run side by side, so which one wins there is up to it (the invariants below still hold).
  if (app.database.kind === 'sqlite') t.same([...seen].sort(), ['201/409', '400/204'], 'both orders were tried');
  const stale = await app.deps.db
    .selectFrom('schedule_targets as t')
    .leftJoin('screen_groups as g', 'g.id', 't.target_id')
    .select('t.target_id')
    .where('t.target_type', '=', 'group')
    .where('g.id', 'is', null)
    .execute();
  t.same(stale, [], 'no schedule targets a deleted group');
});

t.test('a schedule that follows the screens’ zone keeps its local times when edited', async (t) => {
  const { app, owner, call, playable } = await setup(t);
  const { pairScreen } = await import('./helpers/screens.js');
  const now = new Date().toISOString();
  const LON = '0190f5a2-7b3c-7def-8abc-0000000000c1';
  const NY = '0190f5a2-7b3c-7def-8abc-0000000000c2';
  const MOVING = '0190f5a2-7b3c-7def-8abc-0000000000c3';
  await app.deps.db
    .insertInto('locations')
    .values([
      { id: LON, name: 'London', address: null, time_zone: 'Europe/London', latitude: null, longitude: null, notes: null, created_at: now, updated_at: now },
      {
        id: NY,
        name: 'New York',
        address: null,
        time_zone: 'America/New_York',
        latitude: null,
        longitude: null,
        notes: null,
        created_at: now,
        updated_at: now,
      },
      { id: MOVING, name: 'Moving', address: null, time_zone: 'Europe/London', latitude: null, longitude: null, notes: null, created_at: now, updated_at: now },
    ])
    .execute();
  const london = await pairScreen(app, owner, { name: 'London', locationId: LON });
  const ny = await pairScreen(app, owner, { name: 'NY', locationId: NY });
  const moving = await pairScreen(app, owner, { name: 'Moving', locationId: MOVING });
  const playlist = await playable('Day');
  const window = { from: '2026-06-10T00:00:00Z', to: '2026-06-11T00:00:00Z' };
  const scheduled = async (screenId: string) =>
    (await call('POST', '/api/v1/schedules/preview', { screenId, ...window })).body.data.timeline
      .filter((s: any) => s.source.type === 'schedule')
      .map((s: any) => [s.startsAt, s.endsAt]);
  const daily = {
    name: 'Opening hours',
    content: { playlistId: playlist },
    startsAt: '2026-06-01T09:00:00',
    endsAt: '2026-06-01T17:00:00',
    rrule: 'FREQ=DAILY',
  };

  // Made for London screens, moved to New York screens: 09:00-17:00 New York (EDT, UTC-4).
  const s = (await call('POST', '/api/v1/schedules', { ...daily, targets: { screenIds: [london.screenId] } })).body.data;
  t.match(s, { timeZone: 'Europe/London', followsScreenTimeZone: true });
  t.same(await scheduled(london.screenId), [['2026-06-10T08:00:00.000Z', '2026-06-10T16:00:00.000Z']], '09:00-17:00 BST');
  const moved = await call('PATCH', `/api/v1/schedules/${s.id}`, { targets: { screenIds: [ny.screenId] } });
  t.equal(moved.status, 200);
  t.equal(moved.body.data.timeZone, 'America/New_York');
  t.same(await scheduled(ny.screenId), [['2026-06-10T13:00:00.000Z', '2026-06-10T21:00:00.000Z']], 'still 09:00-17:00, now on New York’s clock');
  const nyClock = new Intl.DateTimeFormat('en-GB', { timeZone: 'America/New_York', hour: '2-digit', minute: '2-digit', hour12: false });
  t.equal(nyClock.format(Date.parse(moved.body.data.nextOccurrence.startsAt)), '09:00', 'the next occurrence is at 09:00 New York');

  // Targets in two zones (entered in UTC), then back to London only: 09:00 everywhere, then 09:00 London.
  await call('PATCH', `/api/v1/schedules/${s.id}`, { targets: { screenIds: [ny.screenId, london.screenId] } });
  t.same(await scheduled(london.screenId), [['2026-06-10T08:00:00.000Z', '2026-06-10T16:00:00.000Z']], 'mixed zones: 09:00 London');
  t.same(await scheduled(ny.screenId), [['2026-06-10T13:00:00.000Z', '2026-06-10T21:00:00.000Z']], 'mixed zones: 09:00 New York');
  await call('PATCH', `/api/v1/schedules/${s.id}`, { targets: { screenIds: [london.screenId] } });
  t.same(await scheduled(london.screenId), [['2026-06-10T08:00:00.000Z', '2026-06-10T16:00:00.000Z']], 'back to London only: still 09:00');

  // The location moves to New York's zone; a mere rename keeps 09:00 local.
  const r = (await call('POST', '/api/v1/schedules', { ...daily, name: 'Moving hours', targets: { locationIds: [MOVING] } })).body.data;
  t.equal((await call('PATCH', `/api/v1/locations/${MOVING}`, { timeZone: 'America/New_York' })).status, 200);
  t.same(await scheduled(moving.screenId), [['2026-06-10T13:00:00.000Z', '2026-06-10T21:00:00.000Z']], 'the screen follows its new zone');
  const renamed = await call('PATCH', `/api/v1/schedules/${r.id}`, { name: 'Renamed hours' });
  t.equal(renamed.status, 200);
  t.equal(renamed.body.data.timeZone, 'America/New_York');
  t.same(await scheduled(moving.screenId), [['2026-06-10T13:00:00.000Z', '2026-06-10T21:00:00.000Z']], 'the rename did not move it');

  // A fixed zone changed without new times keeps the wall clock too; given times are taken as given.
  const fixed = (await call('POST', '/api/v1/schedules', { ...daily, name: 'Fixed', timeZone: 'Europe/London', targets: { screenIds: [ny.screenId] } })).body
    .data;
  const rezoned = await call('PATCH', `/api/v1/schedules/${fixed.id}`, { timeZone: 'Asia/Tokyo' });
  t.equal(rezoned.body.data.startsAt, '2026-06-01T00:00:00.000Z', '09:00 Tokyo');
  const retimed = await call('PATCH', `/api/v1/schedules/${fixed.id}`, { startsAt: '2026-06-01T10:00:00', endsAt: '2026-06-01T11:00:00' });
  t.match(retimed.body.data, { startsAt: '2026-06-01T01:00:00.000Z', endsAt: '2026-06-01T02:00:00.000Z' });
});

t.test('sources with nothing to play are passed over, and the preview says which and why', async (t) => {
  const { app, owner, call, playable } = await setup(t);
  const { pairScreen } = await import('./helpers/screens.js');
  const group = (await call('POST', '/api/v1/screen-groups', { name: 'Foyer' })).body.data;
  const screen = await pairScreen(app, owner, { name: 'Foyer left', groupIds: [group.id] });
  const full = await playable('Full');
  const empty = (await call('POST', '/api/v1/playlists', { name: 'Empty' })).body.data.id;
  const site = (await call('GET', `/api/v1/playlists/${full}`)).body.data.items[0].assetId;
  const lunchOnly = (
    await call('POST', '/api/v1/playlists', {
      name: 'Lunch only',
      items: [{ assetId: site, dayparts: [{ days: [1, 2, 3, 4, 5, 6, 7], from: '12:00', to: '14:00' }] }],
    })
  ).body.data.id;
  const layout = (await call('POST', '/api/v1/layouts', { name: 'Board', zones: [] })).body.data.id;
  t.equal((await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: empty })).status, 200);
  t.equal((await call('PUT', `/api/v1/screen-groups/${group.id}/playlist-assignment`, { playlistId: full })).status, 200);
  const at = (h: number) => `2026-06-10T${String(h).padStart(2, '0')}:00:00.000Z`;
  const schedule = async (name: string, content: unknown, from: number, to: number, priority: number) =>
    (
      await call('POST', '/api/v1/schedules', {
        name,
        content,
        targets: { screenIds: [screen.screenId] },
        startsAt: at(from),
        endsAt: at(to),
        timeZone: 'UTC',
        priority,
      })
    ).body.data.id as string;
  const unpublished = await schedule('Board time', { layoutId: layout }, 9, 10, 9);
  const hollow = await schedule('Hollow', { playlistId: empty }, 10, 11, 5);
  const lunch = await schedule('Lunch', { playlistId: lunchOnly }, 11, 15, 3);

  const res = await call('POST', '/api/v1/schedules/preview', { screenId: screen.screenId, from: at(8), to: at(18) });
  t.equal(res.status, 200);
  const timeline = res.body.data.timeline;
  t.same(
    timeline.map((s: any) => [
      s.startsAt.slice(11, 13),
      s.endsAt.slice(11, 13),
      s.source.type,
      s.source.name,
      s.content?.name,
      s.skipped.map((k: any) => `${k.type}:${k.name}:${k.reason}`),
    ]),
    [
      ['08', '09', 'group-assignment', 'Foyer', 'Full', ['assignment:Foyer left:playlist_empty']],
      ['09', '10', 'group-assignment', 'Foyer', 'Full', ['schedule:Board time:layout_unpublished', 'assignment:Foyer left:playlist_empty']],
      ['10', '11', 'group-assignment', 'Foyer', 'Full', ['schedule:Hollow:playlist_empty', 'assignment:Foyer left:playlist_empty']],
      ['11', '12', 'group-assignment', 'Foyer', 'Full', ['schedule:Lunch:playlist_empty', 'assignment:Foyer left:playlist_empty']],
      ['12', '14', 'schedule', 'Lunch', 'Lunch only', []],
      ['14', '15', 'group-assignment', 'Foyer', 'Full', ['schedule:Lunch:playlist_empty', 'assignment:Foyer left:playlist_empty']],
      ['15', '18', 'group-assignment', 'Foyer', 'Full', ['assignment:Foyer left:playlist_empty']],
    ],
    'empty sources fall through to the next one; a day-parted playlist plays only in its day-parts',
  );
  t.equal(
    timeline[1].reason,
    'Schedule "Board time" (priority 9) is skipped because its layout "Board" has never been published; the screen’s own playlist assignment "Empty" has nothing to play here: group "Foyer"’s playlist assignment "Full" plays',
  );
  t.match(timeline[2].reason, /^Schedule "Hollow" \(priority 5\) is skipped because its playlist "Empty" has nothing to play here/);
  t.match(timeline[2].skipped[0], { id: hollow, content: { type: 'playlist', id: empty, name: 'Empty' } });
  t.match(timeline[1].skipped[0], { id: unpublished, priority: 9, content: { type: 'layout', id: layout, name: 'Board' } });
  t.equal(timeline[4].source.id, lunch);
  t.same(
    res.body.data.warnings.map((w: any) => w.code).sort(),
    ['layout_unpublished', 'playlist_empty', 'playlist_empty'],
    'the unpublished layout, the hollow schedule and the empty assignment are named (the day-parted one plays for a while)',
  );
  t.match(
    res.body.data.warnings.find((w: any) => w.scheduleId === hollow),
    { code: 'playlist_empty', playlistId: empty },
  );

  // With the screen's own assignment playable, it is named as the source.
  t.equal((await call('POST', `/api/v1/playlists/${empty}/items`, { assetId: site })).status, 201);
  const after = (await call('POST', '/api/v1/schedules/preview', { screenId: screen.screenId, from: at(15), to: at(18) })).body.data.timeline;
  t.match(after, [
    {
      source: { type: 'assignment', id: screen.screenId, name: 'Foyer left' },
      content: { name: 'Empty' },
      skipped: [],
      reason: 'No schedule applies: the screen’s own playlist assignment "Empty" plays',
    },
  ]);
  const groupView = (await call('POST', '/api/v1/schedules/preview', { groupId: group.id, from: at(15), to: at(18) })).body.data.timeline;
  t.match(groupView, [
    {
      source: { type: 'group-assignment', id: group.id, name: 'Foyer' },
      content: { name: 'Full' },
      reason: 'No schedule applies: the group’s playlist assignment "Full" plays',
    },
  ]);
});

t.test('disable and enable; the preview covers at most 62 days', async (t) => {
  const { app, owner, call, playable } = await setup(t);
  const { pairScreen } = await import('./helpers/screens.js');
  const screen = await pairScreen(app, owner, { name: 'Solo' });
  const playlist = await playable('Always');
  const s = (
    await call('POST', '/api/v1/schedules', {
      name: 'Always on',
      content: { playlistId: playlist },
      targets: { screenIds: [screen.screenId] },
      startsAt: '2026-06-01T00:00:00Z',
      timeZone: 'UTC',
    })
  ).body.data;
  const window = { screenId: screen.screenId, from: '2026-06-10T00:00:00Z', to: '2026-06-11T00:00:00Z' };
  const sources = async () => (await call('POST', '/api/v1/schedules/preview', window)).body.data.timeline.map((x: any) => x.source.type);
  t.same(await sources(), ['schedule']);

  const off = await call('POST', `/api/v1/schedules/${s.id}/disable`);
  t.match(off.body.data, { enabled: false, nextOccurrence: null });
  t.same(await sources(), ['idle'], 'disabled: kept, but plays nothing');
  t.equal((await call('GET', `/api/v1/schedules?enabled=false`)).body.data.items.length, 1);
  const on = await call('POST', `/api/v1/schedules/${s.id}/enable`);
  t.equal(on.status, 200);
  t.match(on.body.data, { id: s.id, enabled: true });
  t.ok(Date.parse(on.body.data.updatedAt) >= Date.parse(off.body.data.updatedAt));
  t.same(await sources(), ['schedule'], 'enabled again: it plays');
  t.equal((await call('POST', `/api/v1/schedules/${s.id}/enable`)).body.data.enabled, true, 'enabling twice is fine');
  t.equal((await call('POST', '/api/v1/schedules/0190f5a2-7b3c-7def-8abc-0123456789ab/enable')).status, 404);
  const editor = await signIn(app, { role: 'editor' });
  t.equal((await app.json(`/api/v1/schedules/${s.id}/disable`, { method: 'POST', headers: editor.headers })).status, 403, 'publishers and above');

  const day = 86_400_000;
  const from = Date.parse('2026-06-01T00:00:00Z');
  const at = (ms: number) => new Date(ms).toISOString();
  const exact = await call('POST', '/api/v1/schedules/preview', { screenId: screen.screenId, from: at(from), to: at(from + 62 * day) });
  t.equal(exact.status, 200, '62 days exactly');
  const over = await call('POST', '/api/v1/schedules/preview', { screenId: screen.screenId, from: at(from), to: at(from + 62 * day + 1000) });
  t.equal(over.status, 400);
  t.match(over.body.error, { code: 'validation_failed', message: /at most 62 days/, details: { issues: [{ path: ['to'] }] } });
});

t.test('schedules carry a revision: If-Match refuses a stale change, and racing edits cannot both win', async (t) => {
  const { app, owner, call, playable } = await setup(t);
  const { pairScreen } = await import('./helpers/screens.js');
  const screen = await pairScreen(app, owner, { name: 'Door' });
  const playlist = await playable('Menu');
  const made = await call('POST', '/api/v1/schedules', {
    name: 'Lunch',
    content: { playlistId: playlist },
    targets: { screenIds: [screen.screenId] },
    startsAt: '2026-06-01T11:00:00Z',
    endsAt: '2026-06-01T14:00:00Z',
    rrule: 'FREQ=DAILY',
    timeZone: 'UTC',
  });
  t.equal(made.status, 201);
  t.equal(made.body.data.revision, 1);
  t.equal(made.headers.get('etag'), '"1"');
  const id = made.body.data.id as string;
  t.equal((await call('GET', `/api/v1/schedules/${id}`)).headers.get('etag'), '"1"');

  const renamed = await call('PATCH', `/api/v1/schedules/${id}`, { name: 'Lunch menu' }, { 'if-match': '"1"' });
  t.equal(renamed.status, 200);
  t.match(renamed.body.data, { name: 'Lunch menu', revision: 2 });
  t.equal(renamed.headers.get('etag'), '"2"');

  const stale = await call('PATCH', `/api/v1/schedules/${id}`, { priority: 5 }, { 'if-match': '"1"' });
  t.equal(stale.status, 412);
  t.equal(stale.body.error.code, 'version_conflict');
  t.equal((await call('GET', `/api/v1/schedules/${id}`)).body.data.priority, 0, 'the stale change was not applied');
  t.equal((await call('POST', `/api/v1/schedules/${id}/disable`, undefined, { 'if-match': '"1"' })).status, 412, 'disable checks If-Match too');
  t.equal((await call('DELETE', `/api/v1/schedules/${id}`, undefined, { 'if-match': '"1"' })).status, 412, 'and delete');
  t.equal((await call('PATCH', `/api/v1/schedules/${id}`, { priority: 5 }, { 'if-match': 'soon' })).status, 400, 'an If-Match that is no revision');

  const off = await call('POST', `/api/v1/schedules/${id}/disable`, undefined, { 'if-match': '"2"' });
  t.match(off.body.data, { enabled: false, revision: 3 });
  t.equal((await call('POST', `/api/v1/schedules/${id}/disable`)).body.data.revision, 3, 'a toggle that changes nothing keeps the revision');
  t.equal((await call('PATCH', `/api/v1/schedules/${id}`, { priority: 5 })).body.data.revision, 4, 'without If-Match a change applies');

  // Five edits sent at once, all naming revision 4: exactly one wins, the others get 412.
  const results = await contended(app, () =>
    [1, 2, 3, 4, 5].map((n) => call('PATCH', `/api/v1/schedules/${id}`, { name: `Edit ${n}` }, { 'if-match': '"4"' })),
  );
  const statuses = results.map((r) => r.status).sort();
  t.same(statuses, [200, 412, 412, 412, 412], 'one edit wins');
  const winner = results.find((r) => r.status === 200)!.body.data;
  const now = (await call('GET', `/api/v1/schedules/${id}`)).body.data;
  t.match(now, { name: winner.name, revision: 5 }, 'the winner’s change is what is stored');
  t.equal((await call('DELETE', `/api/v1/schedules/${id}`, undefined, { 'if-match': '"5"' })).status, 204);
});
