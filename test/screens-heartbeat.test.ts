import t, { type Test } from 'tap';
import { signIn } from './helpers/auth.js';
import { startApp, type TestApp } from './helpers/harness.js';
import { pairScreen, type PairedScreen } from './helpers/screens.js';

const GRID = Math.floor(Date.now() / 10_000) * 10_000 - 3600_000;
const bucket = (i: number, over: Record<string, unknown> = {}) => ({
  startedAt: new Date(GRID + i * 10_000).toISOString(),
  averageLevel: 40,
  peakLevel: 70,
  monitoredMs: 10_000,
  warningMs: 1000,
  loudMs: 0,
  triggerCount: 0,
  ...over,
});

async function setup(t: Test) {
  const app = await startApp(t);
  const owner = await signIn(app);
  const screen = await pairScreen(app, owner);
  const beat = (json: unknown, headers: Record<string, string> = screen.headers) => app.json('/api/v1/player/heartbeat', { method: 'POST', headers, json });
  return { app, owner, screen, beat };
}

const bucketCount = async (app: TestApp, screen: PairedScreen) =>
  Number((await app.deps.db.selectFrom('noise_buckets').select((eb) => eb.fn.countAll<number>().as('n')).where('screen_id', '=', screen.screenId).executeTakeFirstOrThrow()).n);

t.test('success: 200 with ignoredFields, noiseHistory.accepted, serverTime, manifestRevision, heartbeatIntervalSec', async (t) => {
  const { beat } = await setup(t);
  const res = await beat({ playerFamily: 'desktop-linux', playerVersion: '1.2.3' });
  t.equal(res.status, 200);
  const d = res.body.data;
  t.same(d.ignoredFields, []);
  t.same(d.noiseHistory, { accepted: 0 });
  t.ok(Math.abs(Date.parse(d.serverTime) - Date.now()) < 5000);
  t.match(d.serverTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.equal(d.manifestRevision, 1);
  t.equal(d.heartbeatIntervalSec, 30);
});

t.test('the screen comes from the credential; a screenId in the body changes nothing', async (t) => {
  const { app, owner, screen, beat } = await setup(t);
  const other = await pairScreen(app, owner, { name: 'Other' });
  const res = await beat({ screenId: other.screenId, playerVersion: '9.9.9', noiseMeter: { pendingHistory: [bucket(0)] } });
  t.equal(res.status, 200);
  const mine = await app.deps.db.selectFrom('screens').selectAll().where('id', '=', screen.screenId).executeTakeFirstOrThrow();
  const theirs = await app.deps.db.selectFrom('screens').selectAll().where('id', '=', other.screenId).executeTakeFirstOrThrow();
  t.equal(mine.player_version, '9.9.9');
  t.equal(theirs.player_version, '1.0.0');
  t.equal(theirs.last_heartbeat_at, null);
  t.equal(await bucketCount(app, screen), 1);
  t.equal(await bucketCount(app, other), 0);
  t.notOk(JSON.parse(mine.last_status!).screenId, 'the body screenId is not kept');
});

t.test('credentials: unknown/malformed 401 invalid_credential, revoked 401 credential_revoked, disabled 403 screen_disabled', async (t) => {
  const { app, owner, screen, beat } = await setup(t);
  for (const auth of ['Bearer svc_device_nope', 'Bearer svc_device_abcdefgh.abcdefghijklmnopqrstuvwxyz', `Bearer ${screen.credential}x`, 'Bearer svc_device_' + '.'.repeat(30)]) {
    const res = await beat({}, { authorization: auth });
    t.equal(res.status, 401, auth);
    t.equal(res.body.error.code, 'invalid_credential', auth);
  }
  t.equal((await beat({}, {})).status, 401, 'no credential');
  t.equal((await beat({}, owner.headers)).status, 401, 'a console session is not a device');

  await app.deps.db.updateTable('screens').set({ disabled_at: new Date().toISOString() }).where('id', '=', screen.screenId).execute();
  const disabled = await beat({});
  t.equal(disabled.status, 403);
  t.equal(disabled.body.error.code, 'screen_disabled');
  await app.deps.db.updateTable('screens').set({ disabled_at: null }).where('id', '=', screen.screenId).execute();
  await app.deps.db.updateTable('device_credentials').set({ revoked_at: new Date().toISOString() }).where('screen_id', '=', screen.screenId).execute();
  const revoked = await beat({});
  t.equal(revoked.status, 401);
  t.equal(revoked.body.error.code, 'credential_revoked');
});

t.test('invalid bodies: 400 validation_failed with details', async (t) => {
  const { app, screen, beat } = await setup(t);
  const cases: [string, unknown][] = [
    ['an array', []],
    ['noiseMeter not an object', { noiseMeter: 5 }],
    ['status outside the enum', { noiseMeter: { status: 'deafening' } }],
    ['currentLevel over 100', { noiseMeter: { currentLevel: 100.5 } }],
    ['currentLevel negative', { noiseMeter: { currentLevel: -1 } }],
    ['currentLevel a string', { noiseMeter: { currentLevel: '50' } }],
    ['121 buckets', { noiseMeter: { pendingHistory: Array.from({ length: 121 }, (_, i) => bucket(i)) } }],
    ['startedAt off the grid', { noiseMeter: { pendingHistory: [bucket(0, { startedAt: new Date(GRID + 5000).toISOString() })] } }],
    ['startedAt with a fraction', { noiseMeter: { pendingHistory: [bucket(0, { startedAt: new Date(GRID + 1).toISOString() })] } }],
    ['startedAt not a date', { noiseMeter: { pendingHistory: [bucket(0, { startedAt: 'yesterday' })] } }],
    ['startedAt without zone', { noiseMeter: { pendingHistory: [bucket(0, { startedAt: '2026-01-01T10:00:00' })] } }],
    ['averageLevel over 100', { noiseMeter: { pendingHistory: [bucket(0, { averageLevel: 101 })] } }],
    ['peakLevel over 100', { noiseMeter: { pendingHistory: [bucket(0, { peakLevel: 100.01 })] } }],
    ['monitoredMs over 10000', { noiseMeter: { pendingHistory: [bucket(0, { monitoredMs: 10_001 })] } }],
    ['warningMs over 10000', { noiseMeter: { pendingHistory: [bucket(0, { warningMs: 10_001 })] } }],
    ['loudMs over 10000', { noiseMeter: { pendingHistory: [bucket(0, { loudMs: 10_001 })] } }],
    ['loudMs not an integer', { noiseMeter: { pendingHistory: [bucket(0, { loudMs: 1.5 })] } }],
    ['triggerCount over 1000', { noiseMeter: { pendingHistory: [bucket(0, { triggerCount: 1001 })] } }],
    ['a required field missing', { noiseMeter: { pendingHistory: [{ startedAt: bucket(0).startedAt, averageLevel: 1, peakLevel: 1, monitoredMs: 1, warningMs: 1 }] } }],
    ['pendingHistory not an array', { noiseMeter: { pendingHistory: {} } }],
  ];
  for (const [label, body] of cases) {
    const res = await beat(body);
    t.equal(res.status, 400, label);
    t.equal(res.body.error?.code, 'validation_failed', label);
    t.ok(Array.isArray(res.body.error?.details?.issues) && res.body.error.details.issues.length > 0, `${label}: details`);
  }
  t.equal((await beat('hello')).status, 400, 'a JSON string is not a status document');
  const malformed = await app.fetch('/api/v1/player/heartbeat', { method: 'POST', headers: { ...screen.headers, 'content-type': 'application/json' }, body: '{"noiseMeter":' });
  t.equal(malformed.status, 400);
  t.equal(await bucketCount(app, screen), 0, 'a rejected body stores nothing');
  const row = await app.deps.db.selectFrom('screens').select('last_heartbeat_at').where('id', '=', screen.screenId).executeTakeFirstOrThrow();
  t.equal(row.last_heartbeat_at, null, 'a rejected heartbeat does not count as contact');

  // The bounds themselves are fine.
  const edge = await beat({ noiseMeter: { status: 'loud', currentLevel: 100, pendingHistory: [bucket(0, { averageLevel: 100, peakLevel: 100, monitoredMs: 10_000, warningMs: 10_000, loudMs: 10_000, triggerCount: 1000 })] } });
  t.equal(edge.status, 200);
  for (const status of ['active', 'normal', 'loud', 'unavailable', 'inactive']) t.equal((await beat({ noiseMeter: { status } })).status, 200, status);
  const full = await beat({ noiseMeter: { pendingHistory: Array.from({ length: 120 }, (_, i) => bucket(i + 1)) } });
  t.equal(full.status, 200, '120 buckets is the limit');
  t.equal(full.body.data.noiseHistory.accepted, 120);
});

t.test('playerFamily outside the enum is recorded as absent; architecture only for edge', async (t) => {
  const { app, screen, beat } = await setup(t);
  const read = () => app.deps.db.selectFrom('screens').select(['player_family', 'player_architecture']).where('id', '=', screen.screenId).executeTakeFirstOrThrow();
  t.equal((await beat({ playerFamily: 'windows', playerArchitecture: 'x86_64' })).status, 200, 'an unknown family is not an error');
  t.same(await read(), { player_family: null, player_architecture: null });
  t.equal((await beat({ playerFamily: 42 })).status, 200);
  t.same(await read(), { player_family: null, player_architecture: null });
  await beat({ playerFamily: 'android', playerArchitecture: 'aarch64' });
  t.same(await read(), { player_family: 'android', player_architecture: null }, 'architecture dropped when not edge');
  await beat({ playerFamily: 'edge', playerArchitecture: 'aarch64' });
  t.same(await read(), { player_family: 'edge', player_architecture: 'aarch64' });
  await beat({ playerFamily: 'edge', playerArchitecture: 'x86_64' });
  t.same(await read(), { player_family: 'edge', player_architecture: 'x86_64' });
  await beat({ playerFamily: 'edge', playerArchitecture: 'mips' });
  t.same(await read(), { player_family: 'edge', player_architecture: null }, 'an unknown architecture leaves edge without one');
  await beat({ playerFamily: 'desktop-linux', playerArchitecture: 'x86_64' });
  t.same(await read(), { player_family: 'desktop-linux', player_architecture: null });
  const screenRes = await app.json(`/api/v1/player/config`, { headers: screen.headers });
  t.equal(screenRes.status, 200);
});

t.test('malformed optional playback identifiers are dropped and named in ignoredFields', async (t) => {
  const { app, screen, beat } = await setup(t);
  const good = '0190F5A2-7B3C-7DEF-8ABC-0123456789AB';
  const res = await beat({
    currentPlaylistId: good,
    currentLayoutId: 'not-a-uuid',
    currentItemId: 12,
    currentAssetId: null,
    currentScheduleId: { id: 1 },
    currentCampaignId: '',
  });
  t.equal(res.status, 200);
  t.same(res.body.data.ignoredFields.sort(), ['currentCampaignId', 'currentItemId', 'currentLayoutId', 'currentScheduleId']);
  const status = JSON.parse((await app.deps.db.selectFrom('screens').select('last_status').where('id', '=', screen.screenId).executeTakeFirstOrThrow()).last_status!);
  t.equal(status.currentPlaylistId, good.toLowerCase(), 'a good identifier is kept');
  t.notOk('currentLayoutId' in status, 'a dropped identifier is not kept');
  t.equal(status.currentAssetId, null);
});

t.test('noise buckets: idempotent on (screen, startedAt); accepted is the same on a retry', async (t) => {
  const { app, screen, beat } = await setup(t);
  const body = { noiseMeter: { status: 'normal', currentLevel: 33, pendingHistory: [bucket(0), bucket(1), bucket(2)] } };
  const first = await beat(body);
  t.equal(first.body.data.noiseHistory.accepted, 3);
  const retry = await beat(body);
  t.equal(retry.body.data.noiseHistory.accepted, 3, 'a retry gets the same answer');
  t.equal(await bucketCount(app, screen), 3, 'no duplicates');

  // The same instant in another offset is the same bucket.
  const shifted = new Date(GRID).toISOString().replace('Z', '+00:00');
  const again = await beat({ noiseMeter: { pendingHistory: [bucket(0, { startedAt: shifted, averageLevel: 99 })] } });
  t.equal(again.body.data.noiseHistory.accepted, 1);
  t.equal(await bucketCount(app, screen), 3);
  const stored = await app.deps.db.selectFrom('noise_buckets').selectAll().where('screen_id', '=', screen.screenId).orderBy('started_ms').execute();
  t.equal(stored[0]!.average_level, 40, 'the first write wins');
  t.equal(stored[0]!.started_at, new Date(GRID).toISOString());

  // Overlapping batch: old and new buckets all count.
  const overlap = await beat({ noiseMeter: { pendingHistory: [bucket(2), bucket(3), bucket(4)] } });
  t.equal(overlap.body.data.noiseHistory.accepted, 3);
  t.equal(await bucketCount(app, screen), 5);
});

t.test('concurrent retries of the same heartbeat never duplicate a bucket', async (t) => {
  const { app, screen, beat } = await setup(t);
  const body = { noiseMeter: { pendingHistory: Array.from({ length: 120 }, (_, i) => bucket(i)) } };
  const results = await Promise.all(Array.from({ length: 12 }, () => beat(body)));
  t.same(results.map((r) => r.status), Array(12).fill(200));
  t.same(results.map((r) => r.body.data.noiseHistory.accepted), Array(12).fill(120));
  t.equal(await bucketCount(app, screen), 120);
});

t.test('extra fields are accepted and the last status document is kept; display control never decides online', async (t) => {
  const { app, owner, screen, beat } = await setup(t);
  const res = await beat({
    playerVersion: '3.0.0',
    os: { name: 'Debian', version: '12' },
    resolution: { width: 1920, height: 1080 },
    storage: { freeBytes: 123, totalBytes: 456 },
    displayControl: { providers: ['cec'], power: 'off', policyState: 'enforced' },
    somethingNew: [1, 2, 3],
  });
  t.equal(res.status, 200);
  const list = await app.json(`/api/v1/screens/${screen.screenId}`, { headers: owner.headers });
  if (list.status === 200) {
    t.equal(list.body.data.status, 'online', 'online although the display reports off');
    t.match(list.body.data.lastStatus, { os: { name: 'Debian' }, resolution: { width: 1920 }, displayControl: { power: 'off' }, somethingNew: [1, 2, 3], playerVersion: '3.0.0' });
  }
  const row = await app.deps.db.selectFrom('screens').selectAll().where('id', '=', screen.screenId).executeTakeFirstOrThrow();
  t.equal(row.player_version, '3.0.0');
  t.match(JSON.parse(row.last_status!), { storage: { freeBytes: 123 } });
});

t.test('liveness keeps a screen online and is recorded', async (t) => {
  const { app, screen } = await setup(t);
  const res = await app.json('/api/v1/player/liveness', { method: 'POST', headers: screen.headers });
  t.equal(res.status, 200);
  t.match(res.body.data, { manifestRevision: 1, heartbeatIntervalSec: 30 });
  const row = await app.deps.db.selectFrom('screens').selectAll().where('id', '=', screen.screenId).executeTakeFirstOrThrow();
  t.ok(row.last_liveness_at);
  t.equal(row.last_heartbeat_at, null);
  t.equal(row.known_status, 'online');
});

