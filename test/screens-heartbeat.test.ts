import t, { type Test } from 'tap';
import { signedInApp } from './helpers/auth.js';
import type { TestApp } from './helpers/harness.js';
import { pairScreen, type PairedScreen } from './helpers/screens.js';
import { noiseBuckets, screenNum } from './helpers/noise.js';

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
  const { app, owner } = await signedInApp(t);
  const screen = await pairScreen(app, owner);
  const beat = (json: unknown, headers: Record<string, string> = screen.headers) => app.json('/api/v1/player/heartbeat', { method: 'POST', headers, json });
  return { app, owner, screen, beat };
}

const bucketCount = async (app: TestApp, screen: PairedScreen) =>
  Number(
    (
      await app.deps.db
        .selectFrom('noise_buckets')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('screen_num', '=', screenNum(screen.screenId))
        .executeTakeFirstOrThrow()
    ).n,
  );

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
  for (const auth of [
    'Bearer svc_device_nope',
    'Bearer svc_device_abcdefgh.abcdefghijklmnopqrstuvwxyz',
    `Bearer ${screen.credential}x`,
    `Bearer svc_device_${'.'.repeat(30)}`,
  ]) {
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
    ...(['startedAt', 'averageLevel', 'peakLevel', 'monitoredMs', 'warningMs', 'loudMs'] as const).map((field): [string, unknown] => {
      const { [field]: _gone, ...rest } = bucket(0);
      return [`required ${field} missing`, { noiseMeter: { pendingHistory: [rest] } }];
    }),
    ...(['startedAt', 'averageLevel', 'peakLevel', 'monitoredMs', 'warningMs', 'loudMs'] as const).map((field): [string, unknown] => [
      `required ${field} null`,
      { noiseMeter: { pendingHistory: [bucket(0, { [field]: null })] } },
    ]),
    ['startedAt a number', { noiseMeter: { pendingHistory: [bucket(0, { startedAt: GRID })] } }],
    ['startedAt an object', { noiseMeter: { pendingHistory: [bucket(0, { startedAt: { at: bucket(0).startedAt } })] } }],
    ['monitoredMs not an integer', { noiseMeter: { pendingHistory: [bucket(0, { monitoredMs: 9999.5 })] } }],
    ['warningMs not an integer', { noiseMeter: { pendingHistory: [bucket(0, { warningMs: 0.1 })] } }],
    ['triggerCount not an integer', { noiseMeter: { pendingHistory: [bucket(0, { triggerCount: 2.5 })] } }],
    ['triggerCount a string', { noiseMeter: { pendingHistory: [bucket(0, { triggerCount: '2' })] } }],
    ['averageLevel a string', { noiseMeter: { pendingHistory: [bucket(0, { averageLevel: '40' })] } }],
    ['monitoredMs negative', { noiseMeter: { pendingHistory: [bucket(0, { monitoredMs: -1 })] } }],
    ['one bad bucket among good ones', { noiseMeter: { pendingHistory: [bucket(0), bucket(1, { peakLevel: 101 }), bucket(2)] } }],
    ['pendingHistory not an array', { noiseMeter: { pendingHistory: {} } }],
  ];
  for (const [label, body] of cases) {
    const res = await beat(body);
    t.equal(res.status, 400, label);
    t.equal(res.body.error?.code, 'validation_failed', label);
    t.ok(Array.isArray(res.body.error?.details?.issues) && res.body.error.details.issues.length > 0, `${label}: details`);
  }
  t.equal((await beat('hello')).status, 400, 'a JSON string is not a status document');
  const malformed = await app.fetch('/api/v1/player/heartbeat', {
    method: 'POST',
    headers: { ...screen.headers, 'content-type': 'application/json' },
    body: '{"noiseMeter":',
  });
  t.equal(malformed.status, 400);
  t.equal(await bucketCount(app, screen), 0, 'a rejected body stores nothing');
  const row = await app.deps.db.selectFrom('screens').select('last_heartbeat_at').where('id', '=', screen.screenId).executeTakeFirstOrThrow();
  t.equal(row.last_heartbeat_at, null, 'a rejected heartbeat does not count as contact');

  // The bounds themselves are fine.
  const edge = await beat({
    noiseMeter: {
      status: 'loud',
      currentLevel: 100,
      pendingHistory: [bucket(0, { averageLevel: 100, peakLevel: 100, monitoredMs: 10_000, warningMs: 10_000, loudMs: 10_000, triggerCount: 1000 })],
    },
  });
  t.equal(edge.status, 200);
  for (const status of ['active', 'normal', 'loud', 'unavailable', 'inactive']) t.equal((await beat({ noiseMeter: { status } })).status, 200, status);
  const full = await beat({ noiseMeter: { pendingHistory: Array.from({ length: 120 }, (_, i) => bucket(i + 1)) } });
  t.equal(full.status, 200, '120 buckets is the limit');
  t.equal(full.body.data.noiseHistory.accepted, 120);
});

t.test('startedAt is a strict RFC 3339 date-time on the ten-second grid; offsets are normalised to UTC', async (t) => {
  const { app, screen, beat } = await setup(t);
  const one = (startedAt: unknown) => beat({ noiseMeter: { pendingHistory: [bucket(0, { startedAt })] } });
  const refused: [string, string][] = [
    ['2026-02-30T00:00:00Z', 'a day the month does not have (Date.parse rolls it to March 2)'],
    ['2025-02-29T00:00:00Z', 'February 29 of a common year'],
    ['2026-04-31T00:00:00Z', 'April 31'],
    ['2026-13-01T00:00:00Z', 'month 13'],
    ['2026-00-10T00:00:00Z', 'month 00'],
    ['2026-01-00T00:00:00Z', 'day 00'],
    ['2026-01-01T24:00:00Z', 'hour 24'],
    ['2026-01-01T23:60:00Z', 'minute 60'],
    ['2026-01-01T23:59:60Z', 'a leap second (on the grid by its digits, not a real slot)'],
    ['2026-01-01T00:00:00.0009Z', '0.9 ms off the grid (Date.parse truncates it)'],
    ['2026-01-01T00:00:00.000000001Z', 'one nanosecond off the grid'],
    ['2026-01-01T00:00:00.Z', 'an empty fraction'],
    ['2026-01-01t00:00:00Z', 'lower-case t'],
    ['2026-01-01T00:00:00z', 'lower-case z'],
    ['2026-01-01 00:00:00Z', 'a space for T'],
    ['2026-01-01T00:00:00+24:00', 'an offset of 24 hours'],
    ['2026-01-01T00:00:00+02:60', 'an offset minute of 60'],
    ['2026-01-01T00:00:00+0200', 'an offset without its colon'],
    ['2026-01-01T00:00:05+02:00', 'off the grid in an offset'],
    ['2026-1-01T00:00:00Z', 'a one-digit month'],
    ['+002026-01-01T00:00:00Z', 'an expanded year'],
  ];
  for (const [startedAt, why] of refused) {
    const res = await one(startedAt);
    t.equal(res.status, 400, `${startedAt}: ${why}`);
    t.equal(res.body.error?.code, 'validation_failed', startedAt);
    t.match(
      res.body.error?.details?.issues?.[0],
      { location: 'body', path: ['noiseMeter', 'pendingHistory', 0, 'startedAt'] },
      `${startedAt}: the issue names the field`,
    );
  }
  t.equal(await bucketCount(app, screen), 0, 'none of them stored anything');

  // Accepted: a zero fraction, a leap day, and a non-zero offset that lands on the grid, stored as UTC.
  const accepted: [string, string][] = [
    ['2026-01-01T00:00:10.000Z', '2026-01-01T00:00:10.000Z'],
    ['2026-01-01T00:00:20.000000Z', '2026-01-01T00:00:20.000Z'],
    ['2024-02-29T23:59:50Z', '2024-02-29T23:59:50.000Z'],
    ['2026-03-01T01:30:40+02:00', '2026-02-28T23:30:40.000Z'],
    ['2026-01-01T00:00:30-05:30', '2026-01-01T05:30:30.000Z'],
    ['2026-06-15T12:00:00+00:00', '2026-06-15T12:00:00.000Z'],
  ];
  for (const [startedAt] of accepted) {
    const res = await one(startedAt);
    t.equal(res.status, 200, startedAt);
    t.equal(res.body.data?.noiseHistory?.accepted, 1, startedAt);
  }
  const stored = await noiseBuckets(app.deps.db, screen.screenId);
  t.same(
    stored.map((r) => r.started_at),
    accepted.map(([, utc]) => utc).sort(),
    'each stored once, normalised to UTC',
  );
  t.ok(
    stored.every((r) => r.started_ms === Date.parse(r.started_at) && r.started_ms % 10_000 === 0),
    'started_ms is the same instant, on the grid',
  );
  // The +02:00 bucket again, written in UTC: the same bucket, not a new one.
  t.equal((await one('2026-02-28T23:30:40Z')).body.data.noiseHistory.accepted, 1);
  t.equal(await bucketCount(app, screen), accepted.length);
});

t.test('playerFamily outside the enum is recorded as absent; architecture only for edge', async (t) => {
  const { app, screen, beat } = await setup(t);
  const read = () =>
    app.deps.db.selectFrom('screens').select(['player_family', 'player_architecture']).where('id', '=', screen.screenId).executeTakeFirstOrThrow();
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

t.test('playerVersion: a string up to 100 characters is kept; anything else is recorded as absent, never an error', async (t) => {
  const { app, screen, beat } = await setup(t);
  const read = async () => {
    const row = await app.deps.db.selectFrom('screens').select(['player_version', 'last_status']).where('id', '=', screen.screenId).executeTakeFirstOrThrow();
    return { version: row.player_version, status: JSON.parse(row.last_status!) };
  };
  t.equal((await beat({ playerVersion: '2.0.0' })).status, 200);
  t.equal((await read()).version, '2.0.0');
  for (const bad of [5, 'x'.repeat(101), { v: 1 }]) {
    const res = await beat({ playerVersion: bad });
    t.equal(res.status, 200, `${JSON.stringify(bad).slice(0, 20)}: not an error`);
    t.same(res.body.data.ignoredFields, [], 'not a playback identifier');
    const { version, status } = await read();
    t.equal(version, null, 'recorded as absent');
    t.notOk('playerVersion' in status, 'and not kept in the status document');
  }
  await beat({ playerVersion: '2.0.1' });
  await beat({});
  t.equal((await read()).version, '2.0.1', 'left out: the last one stays');
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
  const status = JSON.parse(
    (await app.deps.db.selectFrom('screens').select('last_status').where('id', '=', screen.screenId).executeTakeFirstOrThrow()).last_status!,
  );
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
  const stored = await noiseBuckets(app.deps.db, screen.screenId);
  t.equal(stored[0]!.average_level, 40, 'the first write wins');
  t.equal(stored[0]!.started_at, new Date(GRID).toISOString());

  // Overlapping batch: old and new buckets all count.
  const overlap = await beat({ noiseMeter: { pendingHistory: [bucket(2), bucket(3), bucket(4)] } });
  t.equal(overlap.body.data.noiseHistory.accepted, 3);
  t.equal(await bucketCount(app, screen), 5);
});

t.test('stored buckets carry the values sent; triggerCount may be omitted; each screen has its own buckets', async (t) => {
  const { app, owner, screen, beat } = await setup(t);
  const other = await pairScreen(app, owner, { name: 'Other' });
  const sent = [
    bucket(0, { averageLevel: 12.5, peakLevel: 88.25, monitoredMs: 9500, warningMs: 1500, loudMs: 700, triggerCount: 3 }),
    (({ triggerCount: _omit, ...rest }) => ({ ...rest, averageLevel: 0, peakLevel: 0, monitoredMs: 0, warningMs: 0, loudMs: 0 }))(bucket(1)),
    bucket(2, { triggerCount: null }),
  ];
  const res = await beat({ noiseMeter: { pendingHistory: sent } });
  t.equal(res.status, 200, 'an omitted or null triggerCount is accepted');
  t.equal(res.body.data.noiseHistory.accepted, 3);
  const rows = await noiseBuckets(app.deps.db, screen.screenId);
  t.same(
    rows.map((r) => [r.started_at, r.average_level, r.peak_level, r.monitored_ms, r.warning_ms, r.loud_ms, r.trigger_count]),
    [
      [sent[0]!.startedAt, 12.5, 88.25, 9500, 1500, 700, 3],
      [sent[1]!.startedAt, 0, 0, 0, 0, 0, null],
      [sent[2]!.startedAt, 40, 70, 10_000, 1000, 0, null],
    ],
  );

  // The other screen sends a bucket with the same startedAt: its own row, untouched by the first.
  const theirs = await beat(
    { noiseMeter: { pendingHistory: [bucket(0, { averageLevel: 77, peakLevel: 99, monitoredMs: 5000, warningMs: 10, loudMs: 20, triggerCount: 9 })] } },
    other.headers,
  );
  t.equal(theirs.body.data.noiseHistory.accepted, 1);
  const both = (await noiseBuckets(app.deps.db)).filter((r) => r.started_at === sent[0]!.startedAt);
  t.same(
    both.map((r) => [r.screen_id, r.average_level, r.peak_level, r.monitored_ms, r.warning_ms, r.loud_ms, r.trigger_count]),
    [
      [screen.screenId, 12.5, 88.25, 9500, 1500, 700, 3],
      [other.screenId, 77, 99, 5000, 10, 20, 9],
    ],
  );
  t.equal(await bucketCount(app, other), 1);
  t.equal(await bucketCount(app, screen), 3);
});

t.test('concurrent retries of the same heartbeat never duplicate a bucket', async (t) => {
  const { app, screen, beat } = await setup(t);
  const body = { noiseMeter: { pendingHistory: Array.from({ length: 120 }, (_, i) => bucket(i)) } };
  const results = await Promise.all(Array.from({ length: 12 }, () => beat(body)));
  t.same(
    results.map((r) => r.status),
    Array(12).fill(200),
  );
  t.same(
    results.map((r) => r.body.data.noiseHistory.accepted),
    Array(12).fill(120),
  );
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
  t.equal(list.status, 200);
  t.equal(list.body.data.status, 'online', 'online although the display reports off');
  t.match(list.body.data.lastStatus, {
    os: { name: 'Debian' },
    resolution: { width: 1920 },
    displayControl: { power: 'off' },
    somethingNew: [1, 2, 3],
    playerVersion: '3.0.0',
  });
  const listed = await app.json(`/api/v1/screens?status=online`, { headers: owner.headers });
  t.same(
    listed.body.data.items.map((s: any) => s.id),
    [screen.screenId],
    'the status filter agrees',
  );
  const row = await app.deps.db.selectFrom('screens').selectAll().where('id', '=', screen.screenId).executeTakeFirstOrThrow();
  t.equal(row.player_version, '3.0.0');
  t.match(JSON.parse(row.last_status!), { storage: { freeBytes: 123 } });

  // Display control saying "on" does not bring back a screen whose last contact is old.
  const hourAgo = Date.now() - 3600_000;
  await app.deps.db
    .updateTable('screens')
    .set({ last_seen_ms: hourAgo, last_seen_at: new Date(hourAgo).toISOString(), last_heartbeat_at: new Date(hourAgo).toISOString() })
    .where('id', '=', screen.screenId)
    .execute();
  await app.deps.db
    .updateTable('screens')
    .set({ last_status: JSON.stringify({ displayControl: { power: 'on', policyState: 'enforced' }, display: { power: 'on' } }) })
    .where('id', '=', screen.screenId)
    .execute();
  const old = await app.json(`/api/v1/screens/${screen.screenId}`, { headers: owner.headers });
  t.equal(old.body.data.status, 'offline', 'an hour without contact is offline whatever the display control fields say');
});

t.test('liveness keeps a screen online and is recorded', async (t) => {
  const { app, owner, screen, beat } = await setup(t);
  const status = async () => (await app.json(`/api/v1/screens/${screen.screenId}`, { headers: owner.headers })).body.data.status;
  t.equal(await status(), 'pending', 'never seen');
  const res = await app.json('/api/v1/player/liveness', { method: 'POST', headers: screen.headers });
  t.equal(res.status, 200);
  t.match(res.body.data, { manifestRevision: 1, heartbeatIntervalSec: 30 });
  const row = await app.deps.db.selectFrom('screens').selectAll().where('id', '=', screen.screenId).executeTakeFirstOrThrow();
  t.ok(row.last_liveness_at);
  t.equal(row.last_heartbeat_at, null);
  t.equal(await status(), 'online', 'the API derives online from the liveness receipt');

  // An old heartbeat plus a recent liveness ping: online.
  t.equal((await beat({ playerVersion: '1.0.1' })).status, 200);
  const longAgo = Date.now() - 2 * 3600_000;
  await app.deps.db
    .updateTable('screens')
    .set({
      last_heartbeat_at: new Date(longAgo).toISOString(),
      last_liveness_at: null,
      last_seen_at: new Date(longAgo).toISOString(),
      last_seen_ms: longAgo,
      known_status: 'offline',
    })
    .where('id', '=', screen.screenId)
    .execute();
  t.equal(await status(), 'offline', 'two hours after the last heartbeat, no liveness: offline');
  t.equal((await app.json('/api/v1/player/liveness', { method: 'POST', headers: screen.headers })).status, 200);
  t.equal(await status(), 'online', 'a recent liveness ping makes it online although the heartbeat is old');
  const after = await app.deps.db.selectFrom('screens').selectAll().where('id', '=', screen.screenId).executeTakeFirstOrThrow();
  t.equal(after.last_heartbeat_at, new Date(longAgo).toISOString(), 'liveness does not pass for a heartbeat');
  const history = await app.json(`/api/v1/screens/${screen.screenId}/player-history`, { headers: owner.headers });
  t.ok(
    history.body.data.items.some((h: any) => h.kind === 'status' && h.detail.from === 'offline' && h.detail.to === 'online'),
    'the transition is in the player history',
  );
});

t.test('a status document over 64 KiB keeps the documented fields and drops the rest, largest first', async (t) => {
  const { app, owner, screen, beat } = await setup(t);
  const documented = {
    playerFamily: 'edge',
    playerArchitecture: 'aarch64',
    playerVersion: '4.5.6',
    os: { name: 'Debian', version: '12', kernel: '6.1.0' },
    resolution: { width: 3840, height: 2160 },
    display: { width: 3840, height: 2160 },
    storage: { freeBytes: 1234567, totalBytes: 9876543 },
    displayControl: {
      providers: ['cec', 'ddc'],
      power: 'on',
      policyState: 'enforced',
      observations: Array.from({ length: 40 }, (_, i) => ({ at: i, power: 'on' })),
    },
    currentPlaylistId: '0190f5a2-7b3c-7def-8abc-0123456789ab',
    currentAssetId: '0190f5a2-7b3c-7def-8abc-0123456789ac',
  };
  const lastStatus = async () => (await app.json(`/api/v1/screens/${screen.screenId}`, { headers: owner.headers })).body.data.lastStatus;
  const storedBytes = async () =>
    Buffer.byteLength((await app.deps.db.selectFrom('screens').select('last_status').where('id', '=', screen.screenId).executeTakeFirstOrThrow()).last_status!);

  // One big unknown field: it alone goes.
  const res = await beat({ ...documented, debugDump: 'x'.repeat(80_000), small: { note: 'kept' } });
  t.equal(res.status, 200);
  const kept = await lastStatus();
  t.match(kept, documented, 'player version, OS, resolution, storage, display control and playback ids are kept');
  t.same(kept.small, { note: 'kept' }, 'a small unknown field is kept too');
  t.notOk('debugDump' in kept);
  t.equal(kept.truncated, true);
  t.same(kept.droppedFields, ['debugDump']);
  t.equal(kept.droppedFieldCount, 1);
  t.ok((await storedBytes()) <= 64 * 1024);

  // Many unknown fields: the largest go first, only as many as needed.
  const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`extra${String(i).padStart(2, '0')}`, 'y'.repeat(1000 + i * 100)]));
  await beat({ ...documented, ...many });
  const trimmed = await lastStatus();
  t.match(trimmed, documented);
  t.equal(trimmed.truncated, true);
  t.ok(trimmed.droppedFields.length > 0 && trimmed.droppedFields.length < 30, `dropped ${trimmed.droppedFields.length} of 30`);
  t.equal(trimmed.droppedFields[0], 'extra29', 'the largest first');
  t.ok(trimmed.droppedFields.every((k: string) => !(k in trimmed)));
  t.ok('extra00' in trimmed, 'the smallest survive');
  const size = await storedBytes();
  t.ok(size <= 64 * 1024 && size > 60 * 1024, `${size} bytes: under the limit, not far under it`);

  // Multi-byte text counts in bytes, not characters.
  await beat({ ...documented, notes: 'é'.repeat(40_000) });
  t.notOk('notes' in (await lastStatus()), '80 000 bytes in 40 000 characters is over the limit');

  // A documented field that alone is over the limit goes too (and says so); the others stay.
  await beat({ ...documented, displayControl: { observations: 'z'.repeat(70_000) } });
  const huge = await lastStatus();
  t.notOk('displayControl' in huge);
  t.same(huge.droppedFields, ['displayControl']);
  t.match(huge, { playerVersion: '4.5.6', os: documented.os, storage: documented.storage, currentPlaylistId: documented.currentPlaylistId });

  // Under the limit: stored whole, no marker.
  await beat(documented);
  const whole = await lastStatus();
  t.match(whole, documented);
  t.notOk('truncated' in whole);
  const row = await app.deps.db.selectFrom('screens').select('player_version').where('id', '=', screen.screenId).executeTakeFirstOrThrow();
  t.equal(row.player_version, '4.5.6');
});
