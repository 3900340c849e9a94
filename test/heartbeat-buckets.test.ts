import t from 'tap';
import { z } from 'zod';
import {
  bucketsValid,
  gridMs,
  HeartbeatBody,
  MAX_BUCKETS,
  NoiseBucket,
  parseGridTime,
  parseGridTimeFully,
  safeParseHeartbeatFully,
} from '../server/src/modules/screens/heartbeat.js';
import { pruneNoiseBuckets } from '../server/src/modules/screens/heartbeat.repo.js';
import { playerRoutes } from '../server/src/modules/screens/player.routes.js';
import { safeParseBody } from '../server/src/platform/http/router.js';
import { signedInApp } from './helpers/auth.js';
import { pairScreen } from './helpers/screens.js';
import { noiseBuckets, screenNum } from './helpers/noise.js';

/**
 * The heartbeat's hand-written bucket checks (gridMs, bucketsValid, and the route's body
 * pre-check as the router applies it, safeParseBody) against zod's full validation: they may only accept what zod accepts, with the same
 * values, and a refused body gets zod's own issues.
 */

// A deterministic pseudo-random sequence (the same cases every run).
let seed = 24;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const pad = (n: number, w: number) => String(n).padStart(w, '0');

function dateTimeText(): string {
  const year = pick([0, 1, 99, 100, 1900, 1969, 1970, 2000, 2024, 2025, 2026, 2100, 9999, 10000]);
  const month = pick([0, 1, 2, 4, 6, 9, 11, 12, 13]);
  const day = pick([0, 1, 15, 28, 29, 30, 31, 32]);
  const hour = pick([0, 9, 23, 24]);
  const minute = pick([0, 30, 59, 60]);
  const second = pick([0, 10, 5, 50, 59, 60]);
  const fraction = pick(['', '', '.000', '.0', '.000000', '.001', '.5', '.']);
  const zone = pick(['Z', 'Z', 'z', '+01:00', '-05:30', '+23:59', '+24:00', '-00:00', '+0100', '', '+01:60']);
  const sep = pick(['T', 'T', 'T', 't', ' ']);
  const y = year >= 10000 ? String(year) : pad(year, 4);
  return `${y}-${pad(month, 2)}-${pad(day, 2)}${sep}${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}${fraction}${zone}`;
}

t.test('gridMs accepts only what the full parse accepts, at the same instant', async (t) => {
  let fast = 0;
  let agreed = 0;
  const differ: string[] = [];
  const texts = [
    '2026-01-01T10:00:10.000Z',
    '2026-01-01T10:00:10Z',
    '2026-01-01T11:00:10+01:00',
    '2024-02-29T00:00:00Z',
    '2025-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2000-02-29T00:00:00Z',
    '9999-12-31T23:59:50Z',
    '9999-12-31T23:59:50-01:00',
    '0100-01-01T00:00:00+01:00',
    '2026-01-01T10:00:10.000Z ',
    `2026-01-01T10:00:10.${'0'.repeat(60)}Z`,
    ...Array.from({ length: 20_000 }, dateTimeText),
  ];
  for (const s of texts) {
    const quick = gridMs(s);
    const full = parseGridTimeFully(s);
    if (quick !== null) {
      fast++;
      if (!('ms' in full) || full.ms !== quick) t.fail(`${s}: gridMs ${quick}, full ${JSON.stringify(full)}`);
      else agreed++;
    }
    if (JSON.stringify(parseGridTime(s)) !== JSON.stringify(full)) differ.push(s);
  }
  t.strictSame(differ, [], 'parseGridTime answers what the full parse does, error messages included');
  t.equal(agreed, fast, 'every date-time gridMs accepted, the full parse accepted at the same instant');
  t.ok(fast > 100, `the fast path took the common forms (${fast} of ${texts.length})`);
  t.equal(gridMs('2026-01-01T11:00:10+01:00'), Date.UTC(2026, 0, 1, 10, 0, 10), 'an offset is subtracted');
  t.equal(gridMs('2026-01-01T04:30:10-05:30'), Date.UTC(2026, 0, 1, 10, 0, 10), 'a negative offset is added');
});

const good = (i: number) => ({
  startedAt: new Date(Date.UTC(2026, 0, 1) + i * 10_000).toISOString(),
  averageLevel: 41.5,
  peakLevel: 73.2,
  monitoredMs: 10_000,
  warningMs: 1200,
  loudMs: 300,
  triggerCount: 1,
});

function mutated(i: number): Record<string, unknown> {
  const b: Record<string, unknown> = good(i);
  const field = pick(['startedAt', 'averageLevel', 'peakLevel', 'monitoredMs', 'warningMs', 'loudMs', 'triggerCount', 'extra']);
  const value = pick<unknown>([
    undefined,
    null,
    -1,
    -0,
    0,
    0.5,
    100,
    100.01,
    1000,
    1001,
    10_000,
    10_001,
    '40',
    true,
    {},
    [],
    Number.NaN,
    '2026-01-01T00:00:05Z',
    '2026-01-01T00:00:10Z',
    dateTimeText(),
  ]);
  if (value === undefined) delete b[field];
  else b[field] = value;
  return b;
}

const heartbeatRoute = playerRoutes.find((r) => r.path === '/api/v1/player/heartbeat')!;
/** The heartbeat's body as the router validates it: the route's pre-check, then HeartbeatBody. */
const routerParse = (body: unknown) => safeParseBody(heartbeatRoute, body) as ReturnType<typeof safeParseHeartbeatFully>;

t.test('bucketsValid and the heartbeat route’s body pre-check agree with zod, issues included', async (t) => {
  t.equal(heartbeatRoute.body, HeartbeatBody, 'the route validates with HeartbeatBody');
  t.ok(heartbeatRoute.bodyPrecheck, 'and gives a pre-check');
  let fast = 0;
  const Buckets = z.array(NoiseBucket).max(MAX_BUCKETS);
  let accepted = 0;
  const differ: string[] = [];
  for (let n = 0; n < 3000; n++) {
    const list: unknown[] = Array.from({ length: 1 + Math.floor(rand() * 4) }, (_, i) => (rand() < 0.5 ? good(i) : mutated(i)));
    if (rand() < 0.05) list.push(pick([null, 'bucket', 7, [good(9)]]));
    const body = { playerFamily: pick(['desktop-linux', 'nonsense']), noiseMeter: { status: pick(['normal', 'deafening']), pendingHistory: list } };
    const mine = routerParse(body);
    const zods = safeParseHeartbeatFully(body);
    if (heartbeatRoute.bodyPrecheck!(body)) fast++;
    if (bucketsValid(list)) {
      accepted++;
      if (!Buckets.safeParse(list).success) t.fail(`bucketsValid accepted what zod refused: ${JSON.stringify(list)}`);
    }
    const outcome = (r: typeof mine) => JSON.stringify(r.success ? r.data : r.error.issues);
    if (mine.success !== zods.success || outcome(mine) !== outcome(zods)) differ.push(JSON.stringify(body));
  }
  t.strictSame(differ.slice(0, 5), [], 'the router answers what zod does: the same values, or the same issues');
  t.ok(accepted > 300 && fast > 300, `the fast path was taken (${accepted} bucket lists, ${fast} bodies)`);
  const full = Array.from({ length: MAX_BUCKETS }, (_, i) => good(i));
  t.ok(bucketsValid(full), `${MAX_BUCKETS} buckets are valid`);
  t.notOk(bucketsValid([...full, good(MAX_BUCKETS)]), `${MAX_BUCKETS + 1} are not`);
  t.notOk(routerParse({ noiseMeter: { pendingHistory: [...full, good(MAX_BUCKETS)] } }).success, 'nor does the body accept them');
});

t.test('over HTTP: a bad bucket gets the envelope zod gives it; good ones are stored as sent', async (t) => {
  const { app, owner } = await signedInApp(t);
  const screen = await pairScreen(app, owner);
  const beat = (json: unknown) => app.json('/api/v1/player/heartbeat', { method: 'POST', headers: screen.headers, json });
  const bad = [
    [good(0), { ...good(1), peakLevel: 101 }, good(2)],
    [good(0), { ...good(1), startedAt: '2026-01-01T00:00:05Z' }],
    [{ ...good(0), loudMs: 1.5, triggerCount: '2' }],
    [good(0), { ...good(1), startedAt: '2026-02-30T00:00:00Z' }],
  ];
  for (const list of bad) {
    const body = { noiseMeter: { pendingHistory: list } };
    const res = await beat(body);
    const zods = safeParseHeartbeatFully(body);
    t.equal(res.status, 400);
    t.equal(res.body.error.code, 'validation_failed');
    const issues = zods.error!.issues.map((i) => ({ location: 'body', path: i.path, message: i.message, code: i.code }));
    t.strictSame(res.body.error.details.issues, issues, 'the issues zod names');
    t.equal(res.body.error.message, `Invalid request body.${issues[0]!.path.join('.')}: ${issues[0]!.message}`);
  }
  const sent = [
    { ...good(0), startedAt: '2026-01-01T01:00:00+01:00' },
    { ...good(1), startedAt: '2026-01-01T00:00:10Z', triggerCount: null },
    { ...good(2), startedAt: '2026-01-01T00:00:20.000Z' },
    { ...good(3), startedAt: '2026-01-01T00:00:30.0Z', averageLevel: 0, peakLevel: 100 },
  ];
  const res = await beat({ noiseMeter: { pendingHistory: sent } });
  t.equal(res.status, 200);
  t.equal(res.body.data.noiseHistory.accepted, 4);
  const rows = await noiseBuckets(app.deps.db, screen.screenId);
  t.strictSame(
    rows.map((r) => [r.started_at, r.started_ms, r.average_level, r.peak_level, r.trigger_count]),
    [
      ['2026-01-01T00:00:00.000Z', Date.UTC(2026, 0, 1), 41.5, 73.2, 1],
      ['2026-01-01T00:00:10.000Z', Date.UTC(2026, 0, 1, 0, 0, 10), 41.5, 73.2, null],
      ['2026-01-01T00:00:20.000Z', Date.UTC(2026, 0, 1, 0, 0, 20), 41.5, 73.2, 1],
      ['2026-01-01T00:00:30.000Z', Date.UTC(2026, 0, 1, 0, 0, 30), 0, 100, 1],
    ],
    'stored in UTC with milliseconds, whatever form was sent',
  );
});

t.test('a bucket sent twice in one heartbeat, or again later, is stored and rolled up once: the first one', async (t) => {
  const { app, owner } = await signedInApp(t);
  const screen = await pairScreen(app, owner);
  const beat = (json: unknown) => app.json('/api/v1/player/heartbeat', { method: 'POST', headers: screen.headers, json });
  const first = { ...good(0), averageLevel: 10 };
  const again = { ...good(0), startedAt: '2026-01-01T01:00:00+01:00', averageLevel: 90 };
  const res = await beat({ noiseMeter: { pendingHistory: [first, good(1), again] } });
  t.equal(res.status, 200);
  t.equal(res.body.data.noiseHistory.accepted, 3, 'every bucket of the request counts as stored');
  const later = await beat({ noiseMeter: { pendingHistory: [{ ...good(1), averageLevel: 99 }, good(2)] } });
  t.equal(later.body.data.noiseHistory.accepted, 2);
  const rows = await app.deps.db
    .selectFrom('noise_buckets')
    .select(['started_ms', 'average_level'])
    .where('screen_num', '=', screenNum(screen.screenId))
    .orderBy('started_ms')
    .execute();
  t.strictSame(
    rows.map((r) => [r.started_ms, r.average_level]),
    [
      [Date.UTC(2026, 0, 1), 10],
      [Date.UTC(2026, 0, 1, 0, 0, 10), 41.5],
      [Date.UTC(2026, 0, 1, 0, 0, 20), 41.5],
    ],
    'one row per start, the first write winning',
  );
  const minute = await app.deps.db
    .selectFrom('noise_minutes')
    .select(['bucket_count', 'level_ms'])
    .where('screen_num', '=', screenNum(screen.screenId))
    .executeTakeFirstOrThrow();
  t.strictSame([minute.bucket_count, minute.level_ms], [3, (10 + 41.5 + 41.5) * 10_000], 'the roll-up adds each stored bucket once');
});

t.test('the heartbeat answers the effective policy’s interval, with every change to the policies or groups', async (t) => {
  const { app, owner } = await signedInApp(t);
  const s = await pairScreen(app, owner);
  const h = owner.headers;
  const interval = async () => {
    const hb = await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json: {} });
    const eff = (await app.json(`/api/v1/screens/${s.screenId}/effective-policy`, { headers: h })).body.data;
    t.equal(hb.body.data.heartbeatIntervalSec, eff.values.heartbeatIntervalSec, 'the same as the effective policy');
    const row = await app.deps.db.selectFrom('screens').select('expected_interval_sec').where('id', '=', s.screenId).executeTakeFirstOrThrow();
    t.equal(row.expected_interval_sec, hb.body.data.heartbeatIntervalSec, 'and recorded on the screen');
    return hb.body.data.heartbeatIntervalSec as number;
  };
  t.equal(await interval(), 30, 'the default');
  const group = async (name: string) =>
    (await app.json('/api/v1/screen-groups', { method: 'POST', headers: h, json: { name, screenIds: [s.screenId] } })).body.data.id as string;
  const put = (url: string, json: unknown) => app.json(url, { method: 'PUT', headers: h, json });
  const b = await group('B');
  t.equal((await put(`/api/v1/screen-groups/${b}/policy`, { heartbeatIntervalSec: 120 })).status, 200);
  t.equal(await interval(), 120, 'a group’s');
  const a = await group('A');
  await put(`/api/v1/screen-groups/${a}/policy`, { volumePercent: 10 });
  t.equal(await interval(), 120, 'a first-sorting group without the key leaves it to the next');
  await put(`/api/v1/screen-groups/${a}/policy`, { heartbeatIntervalSec: 60 });
  t.equal(await interval(), 60, 'the first-sorting group wins');
  await put(`/api/v1/screens/${s.screenId}/policy`, { heartbeatIntervalSec: 15 });
  t.equal(await interval(), 15, 'the screen’s own wins over its groups');
  await put(`/api/v1/screens/${s.screenId}/policy`, { logLevel: 'warn' });
  t.equal(await interval(), 60, 'its own without the key leaves it to the groups');
  await app.json(`/api/v1/screen-groups/${a}/screens/${s.screenId}`, { method: 'DELETE', headers: h });
  t.equal(await interval(), 120, 'leaving a group drops its policy');
  await app.json(`/api/v1/screen-groups/${b}`, { method: 'DELETE', headers: h });
  t.equal(await interval(), 30, 'a deleted group’s too');
});

t.test('the prune deletes every screen’s buckets before the cutoff, and only those', async (t) => {
  const { app, owner } = await signedInApp(t);
  const one = await pairScreen(app, owner, { name: 'One' });
  const two = await pairScreen(app, owner, { name: 'Two' });
  const send = (s: typeof one, list: unknown[]) =>
    app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json: { noiseMeter: { pendingHistory: list } } });
  t.equal(
    (
      await send(
        one,
        Array.from({ length: 100 }, (_, i) => good(i)),
      )
    ).status,
    200,
  );
  t.equal(
    (
      await send(
        two,
        Array.from({ length: 50 }, (_, i) => good(i * 3)),
      )
    ).status,
    200,
  );
  const starts = async (s: typeof one) =>
    (await app.deps.db.selectFrom('noise_buckets').select('started_ms').where('screen_num', '=', screenNum(s.screenId)).orderBy('started_ms').execute()).map(
      (r) => r.started_ms,
    );
  const cutoff = Date.UTC(2026, 0, 1) + 45 * 10_000 + 1; // not on the grid: a bucket starting at 45 goes
  t.equal(await pruneNoiseBuckets(app.deps.db, cutoff), 46 + 16);
  t.strictSame(
    await starts(one),
    Array.from({ length: 54 }, (_, i) => Date.UTC(2026, 0, 1) + (i + 46) * 10_000),
  );
  t.strictSame(
    await starts(two),
    Array.from({ length: 34 }, (_, i) => Date.UTC(2026, 0, 1) + (i + 16) * 30_000),
  );
  t.equal(await pruneNoiseBuckets(app.deps.db, cutoff), 0, 'nothing left before it');
  t.equal(await pruneNoiseBuckets(app.deps.db, Date.UTC(10_000, 0, 1)), 88, 'a cutoff past year 9999 deletes them all');
});
