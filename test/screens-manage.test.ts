import t from 'tap';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';
import { pruneHistory, sweepStatuses } from '../server/src/modules/screens/screens.module.js';
import { recordStatusChange, screensForStatusSweep } from '../server/src/modules/screens/heartbeat.repo.js';
import { DEFAULT_SETTINGS } from '../server/src/modules/system/settings.js';
import { bumpManifestRevision } from '../server/src/modules/screens/revision.js';
import { resolveScreenTargets, screensForTargets } from '../server/src/modules/screens/targets.repo.js';

t.test('list with derived status and filters; get; patch', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const loc = await app.json('/api/v1/locations', {
    method: 'POST',
    headers: owner.headers,
    json: { name: 'Paris shop', timeZone: 'Europe/Paris', latitude: 48.85, longitude: 2.35, address: '1 rue X' },
  });
  t.equal(loc.status, 201);
  const group = await app.json('/api/v1/screen-groups', { method: 'POST', headers: owner.headers, json: { name: 'Windows' } });
  t.equal(group.status, 201);
  const a = await pairScreen(app, owner, { name: 'Alpha', playerFamily: 'android', locationId: loc.body.data.id, groupIds: [group.body.data.id] });
  const b = await pairScreen(app, owner, { name: 'Beta', playerFamily: 'edge' });
  const c = await pairScreen(app, owner, { name: 'Gamma 100%', playerFamily: 'desktop-linux' });
  await pairScreen(app, owner, { name: 'Delta' });

  // a: online (heartbeat now); b: stale (seen 5 min ago); c: offline (seen 2 h ago); d: pending
  await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: a.headers, json: { playerFamily: 'android' } });
  await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: b.headers, json: { playerFamily: 'edge', playerArchitecture: 'aarch64' } });
  await app.json('/api/v1/player/liveness', { method: 'POST', headers: c.headers });
  const ago = (ms: number) => ({ last_seen_ms: Date.now() - ms, last_seen_at: new Date(Date.now() - ms).toISOString() });
  await app.deps.db
    .updateTable('screens')
    .set(ago(5 * 60_000))
    .where('id', '=', b.screenId)
    .execute();
  await app.deps.db
    .updateTable('screens')
    .set(ago(2 * 3600_000))
    .where('id', '=', c.screenId)
    .execute();

  const list = async (q = '') => (await app.json(`/api/v1/screens${q}`, { headers: owner.headers })).body.data;
  const all = await list();
  t.same(
    all.items.map((s: any) => [s.name, s.status]),
    [
      ['Alpha', 'online'],
      ['Beta', 'stale'],
      ['Delta', 'pending'],
      ['Gamma 100%', 'offline'],
    ],
  );
  const names = async (q: string) => (await list(q)).items.map((s: any) => s.name);
  t.same(await names('?status=online'), ['Alpha']);
  t.same(await names('?status=stale'), ['Beta']);
  t.same(await names('?status=offline'), ['Gamma 100%']);
  t.same(await names('?status=pending'), ['Delta']);
  t.same(await names(`?groupId=${group.body.data.id}`), ['Alpha']);
  t.same(await names(`?locationId=${loc.body.data.id}`), ['Alpha']);
  t.same(await names('?family=edge'), ['Beta']);
  t.same(await names('?q=ALP'), ['Alpha']);
  t.same(await names('?q=100%25'), ['Gamma 100%'], 'search is literal');
  t.same(await names('?q=%25'), ['Gamma 100%']);
  const paged = await list('?limit=2');
  t.equal(paged.items.length, 2);
  const next = await list(`?limit=2&cursor=${paged.nextCursor}`);
  t.same(
    next.items.map((s: any) => s.name),
    ['Delta', 'Gamma 100%'],
  );
  t.equal(next.nextCursor, null);
  t.equal((await app.json('/api/v1/screens?status=bogus', { headers: owner.headers })).status, 400);

  const one = await app.json(`/api/v1/screens/${a.screenId}`, { headers: owner.headers });
  t.match(one.body.data, {
    id: a.screenId,
    name: 'Alpha',
    status: 'online',
    timeZone: 'Europe/Paris',
    playerFamily: 'android',
    groupIds: [group.body.data.id],
  });
  const edge = (await app.json(`/api/v1/screens/${b.screenId}`, { headers: owner.headers })).body.data;
  t.match(edge, { playerFamily: 'edge', playerArchitecture: 'aarch64' });
  t.equal((await app.json('/api/v1/screens/0190f5a2-7b3c-7def-8abc-0123456789ab', { headers: owner.headers })).status, 404);
  t.equal((await app.json('/api/v1/screens/not-a-uuid', { headers: owner.headers })).status, 404);

  const before = one.body.data.manifestRevision;
  const patched = await app.json(`/api/v1/screens/${a.screenId}`, {
    method: 'PATCH',
    headers: owner.headers,
    json: { name: 'Alpha 2', notes: 'by the door', orientation: 'portrait', tags: ['front', 'front', 'lobby'], locationId: null },
  });
  t.equal(patched.status, 200);
  t.match(patched.body.data, { name: 'Alpha 2', notes: 'by the door', orientation: 'portrait', tags: ['front', 'lobby'], locationId: null, timeZone: null });
  t.ok(patched.body.data.manifestRevision > before, 'moving or rotating bumps the manifest revision');
  t.same(await names('?tag=lobby'), ['Alpha 2']);
  t.equal((await app.json(`/api/v1/screens/${a.screenId}`, { method: 'PATCH', headers: owner.headers, json: { orientation: 'sideways' } })).status, 400);
  t.equal(
    (await app.json(`/api/v1/screens/${a.screenId}`, { method: 'PATCH', headers: owner.headers, json: { locationId: '0190f5a2-7b3c-7def-8abc-0123456789ab' } }))
      .status,
    400,
    'an unknown location in the body is invalid input',
  );
  t.equal((await app.json(`/api/v1/screens/${a.screenId}`, { method: 'PATCH', headers: owner.headers, json: { name: '' } })).status, 400);
  const viewer = await signIn(app, { role: 'viewer' });
  t.equal((await app.json('/api/v1/screens', { headers: viewer.headers })).status, 200, 'viewers read');
  t.equal(
    (await app.json(`/api/v1/screens/${a.screenId}`, { method: 'PATCH', headers: viewer.headers, json: { name: 'x' } })).status,
    403,
    'viewers do not edit',
  );
});

t.test('disable, enable, revoke and re-pair', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const beat = () => app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json: {} });
  t.equal((await beat()).status, 200);
  const disabled = await app.json(`/api/v1/screens/${s.screenId}/disable`, { method: 'POST', headers: owner.headers });
  t.equal(disabled.body.data.disabled, true);
  t.equal((await beat()).body.error.code, 'screen_disabled');
  t.equal((await app.json('/api/v1/player/config', { headers: s.headers })).status, 403);
  const enabled = await app.json(`/api/v1/screens/${s.screenId}/enable`, { method: 'POST', headers: owner.headers });
  t.equal(enabled.body.data.disabled, false);
  t.equal((await beat()).status, 200);

  const revoked = await app.json(`/api/v1/screens/${s.screenId}/revoke`, { method: 'POST', headers: owner.headers });
  t.equal(revoked.body.data.revoked, true);
  const after = await beat();
  t.equal(after.status, 401);
  t.equal(after.body.error.code, 'credential_revoked');

  // Pair again onto the same screen: history kept, a new credential works, the old one stays revoked.
  const started = (await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: {} })).body.data;
  const approved = await app.json(`/api/v1/screens/pairing/${started.id}/approve`, {
    method: 'POST',
    headers: owner.headers,
    json: { name: 'Back again', screenId: s.screenId },
  });
  t.equal(approved.body.data.screen.id, s.screenId);
  const token = (await app.json(`/api/v1/player/pairing-sessions/${started.id}`, { headers: { 'x-pairing-secret': started.pollSecret } })).body.data
    .enrollmentToken;
  const enrolled = await app.json('/api/v1/player/enroll', { method: 'POST', json: { enrollmentToken: token } });
  t.equal(enrolled.body.data.screenId, s.screenId);
  t.equal(
    (await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: { authorization: `Bearer ${enrolled.body.data.credential}` }, json: {} })).status,
    200,
  );
  t.equal((await beat()).body.error.code, 'credential_revoked', 'the old credential stays revoked');
  const screen = (await app.json(`/api/v1/screens/${s.screenId}`, { headers: owner.headers })).body.data;
  t.match(screen, { revoked: false, name: 'Back again' });

  const history = (await app.json(`/api/v1/screens/${s.screenId}/player-history?limit=500`, { headers: owner.headers })).body.data.items;
  const kinds = history.map((h: any) => h.kind);
  for (const k of ['paired', 'enrolled', 'heartbeat', 'disabled', 'enabled', 'revoked']) t.ok(kinds.includes(k), `history has ${k}`);
  t.ok(history[0].at >= history[history.length - 1].at, 'newest first');
  const onlyEvents = (await app.json(`/api/v1/screens/${s.screenId}/player-history?kind=disabled,enabled`, { headers: owner.headers })).body.data.items;
  t.same(
    onlyEvents.map((h: any) => h.kind),
    ['enabled', 'disabled'],
  );
});

t.test('player history: versions, status transitions, paging, pruning', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner, { playerVersion: '1.0.0' });
  const beat = (json: unknown) => app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json });
  await beat({ playerVersion: '1.0.0' });
  await beat({ playerVersion: '1.1.0' });
  const history = async (q = '') => (await app.json(`/api/v1/screens/${s.screenId}/player-history${q}`, { headers: owner.headers })).body.data;
  const versions = (await history('?kind=version')).items;
  t.equal(versions.length, 1);
  t.same(versions[0].detail, { from: '1.0.0', to: '1.1.0' });
  const statuses = (await history('?kind=status')).items;
  t.same(
    statuses.map((h: any) => h.detail),
    [{ from: 'pending', to: 'online' }],
  );

  // Offline without any request: the sweep records it.
  await app.deps.db
    .updateTable('screens')
    .set({ last_seen_ms: Date.now() - 3600_000 })
    .where('id', '=', s.screenId)
    .execute();
  t.equal(await sweepStatuses(app.deps.db), 1);
  t.equal(await sweepStatuses(app.deps.db), 0, 'a transition is recorded once');
  t.same((await history('?kind=status')).items[0].detail, { from: 'online', to: 'offline' });
  await beat({});
  t.same((await history('?kind=status')).items[0].detail, { from: 'offline', to: 'online' });

  // A heartbeat between the sweep's read and its write: the transition it derived is not recorded.
  await app.deps.db
    .updateTable('screens')
    .set({ last_seen_ms: Date.now() - 3600_000 })
    .where('id', '=', s.screenId)
    .execute();
  const read = (await screensForStatusSweep(app.deps.db)).find((r) => r.id === s.screenId)!;
  await beat({});
  t.equal(await recordStatusChange(app.deps.db, s.screenId, read.known_status, 'offline', Date.now(), read.last_seen_ms), false, 'seen since: not recorded');
  const after = await app.deps.db.selectFrom('screens').select('known_status').where('id', '=', s.screenId).executeTakeFirstOrThrow();
  t.equal(after.known_status, 'online', 'still online');
  t.same((await history('?kind=status')).items[0].detail, { from: 'offline', to: 'online' }, 'no status line for it');

  // kind= takes known kinds only: a typo is an error, not an empty list.
  for (const q of ['?kind=nope', '?kind=heartbeat,nope', '?kind=heartbeat,', '?kind=HEARTBEAT']) {
    const bad = await app.json(`/api/v1/screens/${s.screenId}/player-history${q}`, { headers: owner.headers });
    t.equal(bad.status, 400, `${q}: 400`);
    t.match(bad.body.error, { code: 'validation_failed', message: /kind must be one or more of heartbeat, liveness/ });
  }
  t.same([...new Set((await history('?kind=heartbeat,status')).items.map((h: any) => h.kind))].sort(), ['heartbeat', 'status']);

  const page1 = await history('?limit=2');
  const page2 = await history(`?limit=2&cursor=${page1.nextCursor}`);
  t.equal(page1.items.length, 2);
  t.notSame(
    page1.items.map((h: any) => h.id),
    page2.items.map((h: any) => h.id),
  );
  t.ok(page2.items[0].id < page1.items[1].id);

  // Pruning: an old heartbeat goes, a recent one stays, an old event stays (kept a year).
  const old = Date.now() - DEFAULT_SETTINGS.retention.heartbeatDays * 24 * 3600_000 - 3600_000;
  await app.deps.db
    .insertInto('screen_history')
    .values([
      { id: '0190f5a2-7b3c-7def-8abc-000000000001', screen_id: s.screenId, at: new Date(old).toISOString(), at_ms: old, kind: 'heartbeat', detail: '{}' },
      { id: '0190f5a2-7b3c-7def-8abc-000000000002', screen_id: s.screenId, at: new Date(old).toISOString(), at_ms: old, kind: 'version', detail: '{}' },
    ])
    .execute();
  await pruneHistory(app.deps.db);
  const ids = (await app.deps.db.selectFrom('screen_history').select('id').where('screen_id', '=', s.screenId).execute()).map((r) => r.id);
  t.notOk(ids.includes('0190f5a2-7b3c-7def-8abc-000000000001'), 'old heartbeat pruned');
  t.ok(ids.includes('0190f5a2-7b3c-7def-8abc-000000000002'), 'old event kept');
  t.ok(ids.length > 3, 'recent history kept');
  await app.deps.periodic.runNow('screens.retention');
});

t.test('bumpManifestRevision and targets helpers', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const loc = (await app.json('/api/v1/locations', { method: 'POST', headers: owner.headers, json: { name: 'NY', timeZone: 'America/New_York' } })).body.data;
  const g1 = (await app.json('/api/v1/screen-groups', { method: 'POST', headers: owner.headers, json: { name: 'B group' } })).body.data;
  const g2 = (await app.json('/api/v1/screen-groups', { method: 'POST', headers: owner.headers, json: { name: 'A group' } })).body.data;
  const s = await pairScreen(app, owner, { locationId: loc.id, groupIds: [g1.id, g2.id] });
  const other = await pairScreen(app, owner);
  const targets = await resolveScreenTargets(app.deps.db, s.screenId);
  t.same(targets?.groupIds, [g2.id, g1.id], 'groups ordered by name');
  t.equal(targets?.timeZone, 'America/New_York');
  t.equal(targets?.location?.name, 'NY');
  t.equal(await resolveScreenTargets(app.deps.db, '0190f5a2-7b3c-7def-8abc-0123456789ab'), null);
  t.same(
    (await screensForTargets(app.deps.db, { groupIds: [g1.id], locationIds: [loc.id], screenIds: [other.screenId] })).sort(),
    [s.screenId, other.screenId].sort(),
  );

  const rev = async (id: string) =>
    (await app.deps.db.selectFrom('screens').select('manifest_revision').where('id', '=', id).executeTakeFirstOrThrow()).manifest_revision;
  const r0 = await rev(s.screenId);
  await bumpManifestRevision(app.deps, [s.screenId, s.screenId, '0190f5a2-7b3c-7def-8abc-0123456789ab']);
  t.equal(await rev(s.screenId), r0 + 1, 'duplicates count once; unknown ids ignored');
  // A new time zone for the location re-times its screens.
  await app.json(`/api/v1/locations/${loc.id}`, { method: 'PATCH', headers: owner.headers, json: { timeZone: 'America/Chicago' } });
  t.equal(await rev(s.screenId), r0 + 2);
  const hb = await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json: {} });
  t.equal(hb.body.data.manifestRevision, r0 + 2, 'the heartbeat answers the current revision');
});

t.test('locations: CRUD, time zone validation, delete refused while screens are there', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const bad = await app.json('/api/v1/locations', { method: 'POST', headers: owner.headers, json: { name: 'X', timeZone: 'Mars/Olympus' } });
  t.equal(bad.status, 400);
  t.equal((await app.json('/api/v1/locations', { method: 'POST', headers: owner.headers, json: { name: 'X', timeZone: 'UTC', latitude: 91 } })).status, 400);
  const loc = (
    await app.json('/api/v1/locations', {
      method: 'POST',
      headers: owner.headers,
      json: { name: 'Lyon', timeZone: 'Europe/Paris', latitude: 45.76, longitude: 4.83 },
    })
  ).body.data;
  t.match(loc, { name: 'Lyon', timeZone: 'Europe/Paris', latitude: 45.76, longitude: 4.83, screenCount: 0 });
  const s = await pairScreen(app, owner, { locationId: loc.id });
  const listed = (await app.json('/api/v1/locations', { headers: owner.headers })).body.data.items;
  t.equal(listed[0].screenCount, 1);
  const del = await app.json(`/api/v1/locations/${loc.id}`, { method: 'DELETE', headers: owner.headers });
  t.equal(del.status, 409);
  await app.json(`/api/v1/screens/${s.screenId}`, { method: 'PATCH', headers: owner.headers, json: { locationId: null } });
  t.equal((await app.json(`/api/v1/locations/${loc.id}`, { method: 'DELETE', headers: owner.headers })).status, 204);
  t.equal((await app.json(`/api/v1/locations/${loc.id}`, { method: 'DELETE', headers: owner.headers })).status, 404);
  const editor = await signIn(app, { role: 'editor' });
  t.equal((await app.json('/api/v1/locations', { method: 'POST', headers: editor.headers, json: { name: 'Y', timeZone: 'UTC' } })).status, 403);
});

t.test('fleet health for integration tokens with fleet_health:read', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner, { name: 'One' });
  await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json: {} });
  await pairScreen(app, owner, { name: 'Two' });
  const mk = async (capabilities: string[]) =>
    (await app.json('/api/v1/integration-tokens', { method: 'POST', headers: owner.headers, json: { name: 'x', capabilities } })).body.data.token;
  const health = await mk(['fleet_health:read']);
  const rows = await mk(['manual_table_rows:write']);
  const res = await app.json('/api/v1/fleet-health', { headers: { authorization: `Bearer ${health}` } });
  t.equal(res.status, 200);
  t.match(res.body.data.totals, { screens: 2, online: 1, pending: 1, offline: 0 });
  t.same(
    res.body.data.screens.map((x: any) => [x.name, x.status]),
    [
      ['One', 'online'],
      ['Two', 'pending'],
    ],
  );
  t.equal((await app.json('/api/v1/fleet-health', { headers: { authorization: `Bearer ${rows}` } })).status, 403, 'another capability is not enough');
  t.equal((await app.json('/api/v1/screens', { headers: { authorization: `Bearer ${health}` } })).status, 401, 'no general console access');
  t.equal((await app.json('/api/v1/fleet-health', { headers: owner.headers })).status, 200, 'the console reads it too');
  t.equal((await app.json('/api/v1/fleet-health', { headers: s.headers })).status, 401, 'not for devices');
});
