import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { purgeNoiseHistory } from '../server/src/modules/noise-reports/index.js';
import { applyRetention } from '../server/src/modules/screens/screens.module.js';
import { newScreenRow } from '../server/src/modules/screens/screens.repo.js';
import { migrate, openDatabase } from '../server/src/platform/db/database.js';
import { MIGRATIONS } from '../server/src/platform/db/migrations/index.js';
import { signedInApp } from './helpers/auth.js';
import type { TestApp } from './helpers/harness.js';
import { pairScreen, type PairedScreen } from './helpers/screens.js';
import { screenNum } from './helpers/noise.js';

/**
 * The roll-ups (minute, hour, local day) against sums computed here from the buckets sent
 * through real heartbeats, across Berlin's spring-forward night and a local midnight in
 * Kolkata (a half-hour offset); a retried heartbeat adds nothing.
 */

interface B {
  startedAt: string;
  averageLevel: number;
  peakLevel: number;
  monitoredMs: number;
  warningMs: number;
  loudMs: number;
  triggerCount?: number | null;
}

/** Deterministic buckets every 10 s from `from` to `to`, with a gap where `(i % 37) < 5`. */
function buckets(fromMs: number, toMs: number, seed: number): B[] {
  const out: B[] = [];
  for (let ms = fromMs, i = 0; ms < toMs; ms += 10_000, i++) {
    if (i % 37 < 5) continue;
    const x = (i * 7919 + seed * 104729) % 1000;
    const monitored = 2000 + ((x * 13) % 8001);
    out.push({
      startedAt: new Date(ms).toISOString(),
      averageLevel: Math.round((20 + (x % 600) / 10) * 10) / 10,
      peakLevel: Math.min(100, 30 + (x % 700) / 10),
      monitoredMs: monitored,
      warningMs: Math.min(monitored, (x * 3) % 4000),
      loudMs: Math.min(monitored, (x * 5) % 2000),
      triggerCount: i % 11 === 0 ? null : x % 3,
    });
  }
  return out;
}

async function send(app: TestApp, screen: PairedScreen, list: B[]) {
  for (let i = 0; i < list.length; i += 120) {
    const res = await app.json('/api/v1/player/heartbeat', {
      method: 'POST',
      headers: screen.headers,
      json: { noiseMeter: { pendingHistory: list.slice(i, i + 120) } },
    });
    if (res.status !== 200) throw new Error(`heartbeat ${res.status} ${JSON.stringify(res.body)}`);
  }
}

/** The local date of an instant in a zone, by Intl (independent of the server's zone clock). */
const localDate = (ms: number, zone: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);

function expected(list: B[], key: (ms: number) => string) {
  const m = new Map<
    string,
    { bucket_count: number; monitored_ms: number; level_ms: number; peak_level: number; warning_ms: number; loud_ms: number; trigger_count: number }
  >();
  for (const b of list) {
    const k = key(Date.parse(b.startedAt));
    const s = m.get(k) ?? { bucket_count: 0, monitored_ms: 0, level_ms: 0, peak_level: 0, warning_ms: 0, loud_ms: 0, trigger_count: 0 };
    s.bucket_count++;
    s.monitored_ms += b.monitoredMs;
    s.level_ms += b.averageLevel * b.monitoredMs;
    s.peak_level = Math.max(s.peak_level, b.peakLevel);
    s.warning_ms += b.warningMs;
    s.loud_ms += b.loudMs;
    s.trigger_count += b.triggerCount ?? 0;
    m.set(k, s);
  }
  return m;
}

function compare(t: Test, actual: { key: string; row: Record<string, number> }[], want: ReturnType<typeof expected>, label: string) {
  t.same(actual.map((a) => a.key).sort(), [...want.keys()].sort(), `${label}: the same keys`);
  for (const { key, row } of actual) {
    const w = want.get(key);
    if (!w) continue;
    for (const f of ['bucket_count', 'monitored_ms', 'peak_level', 'warning_ms', 'loud_ms', 'trigger_count'] as const)
      t.equal(row[f], w[f], `${label} ${key} ${f}`);
    t.ok(Math.abs(row.level_ms! - w.level_ms) < 1e-6 * Math.max(1, w.level_ms), `${label} ${key} level_ms`);
  }
}

async function check(t: Test, app: TestApp, screen: PairedScreen, list: B[], zone: string) {
  const db = app.deps.db;
  const minutes = await db.selectFrom('noise_minutes').selectAll().where('screen_num', '=', screenNum(screen.screenId)).execute();
  const hours = await db.selectFrom('noise_hours').selectAll().where('screen_num', '=', screenNum(screen.screenId)).execute();
  const days = await db.selectFrom('noise_days').selectAll().where('screen_num', '=', screenNum(screen.screenId)).execute();
  compare(
    t,
    minutes.map((r) => ({ key: new Date(r.started_ms).toISOString().slice(0, 16), row: r as any })),
    expected(list, (ms) => new Date(ms).toISOString().slice(0, 16)),
    `${zone} minutes`,
  );
  compare(
    t,
    hours.map((r) => ({ key: new Date(r.started_ms).toISOString().slice(0, 13), row: r as any })),
    expected(list, (ms) => new Date(ms).toISOString().slice(0, 13)),
    `${zone} hours`,
  );
  compare(
    t,
    days.map((r) => ({ key: r.day, row: r as any })),
    expected(list, (ms) => localDate(ms, zone)),
    `${zone} days`,
  );
  for (const d of days) {
    t.equal(d.time_zone, zone);
    t.equal(localDate(d.started_ms, zone), d.day, 'a day starts on its own date');
    t.equal(localDate(d.started_ms - 1, zone) < d.day, true, 'a day starts at local midnight');
    t.equal(localDate(d.ends_ms, zone) > d.day && localDate(d.ends_ms - 1, zone) === d.day, true, 'a day ends at the next local midnight');
  }
  return { minutes, hours, days };
}

t.test('roll-ups equal the sums of the buckets sent, across DST and a half-hour zone; a retry adds nothing', async (t) => {
  const { app, owner } = await signedInApp(t);
  const loc = async (name: string, timeZone: string) =>
    (await app.json('/api/v1/locations', { method: 'POST', headers: owner.headers, json: { name, timeZone } })).body.data.id as string;
  const berlin = await pairScreen(app, owner, { name: 'Berlin', locationId: await loc('Berlin', 'Europe/Berlin') });
  const kolkata = await pairScreen(app, owner, { name: 'Kolkata', locationId: await loc('Kolkata', 'Asia/Kolkata') });

  // Berlin: 22:30Z on March 28 (23:30 CET) to 01:30Z on March 29 (03:30 CEST): a local midnight and the jump.
  const b1 = buckets(Date.parse('2026-03-28T22:30:00Z'), Date.parse('2026-03-29T01:30:00Z'), 1);
  // Kolkata: 18:00Z to 19:10Z on March 28: local midnight is 18:30Z.
  const k1 = buckets(Date.parse('2026-03-28T18:00:00Z'), Date.parse('2026-03-28T19:10:00Z'), 2);
  await send(app, berlin, b1);
  await send(app, kolkata, k1);
  const first = await check(t, app, berlin, b1, 'Europe/Berlin');
  t.equal(first.days.length, 2, 'two Berlin days');
  const march29 = first.days.find((d) => d.day === '2026-03-29')!;
  t.equal(march29.ends_ms - march29.started_ms, 23 * 3600_000, 'March 29 in Berlin has 23 hours');
  await check(t, app, kolkata, k1, 'Asia/Kolkata');

  // A retry of the same heartbeats, and one overlapping half old, half new buckets.
  await send(app, berlin, b1);
  const b2 = buckets(Date.parse('2026-03-29T01:00:00Z'), Date.parse('2026-03-29T02:00:00Z'), 1);
  await send(app, berlin, b2);
  const all = new Map<string, B>();
  for (const b of [...b1, ...b2]) if (!all.has(b.startedAt)) all.set(b.startedAt, b);
  await check(t, app, berlin, [...all.values()], 'Europe/Berlin');

  // Autumn: October 25 has 25 hours in Berlin.
  const b3 = buckets(Date.parse('2026-10-24T21:50:00Z'), Date.parse('2026-10-24T22:20:00Z'), 3);
  await send(app, berlin, b3);
  const oct = await app.deps.db
    .selectFrom('noise_days')
    .selectAll()
    .where('screen_num', '=', screenNum(berlin.screenId))
    .where('day', '=', '2026-10-25')
    .executeTakeFirstOrThrow();
  t.equal(oct.ends_ms - oct.started_ms, 25 * 3600_000, 'October 25 in Berlin has 25 hours');

  // Retention: raw buckets go after noiseHistoryDays, roll-ups stay (hours and days for 5 years, minutes 400 days).
  const now = Date.parse('2027-03-01T00:00:00Z');
  await applyRetention(app.deps, now, { heartbeatDays: 30, noiseHistoryDays: 30, screenshotDays: 30 });
  const count = async (table: 'noise_buckets' | 'noise_minutes' | 'noise_hours' | 'noise_days') =>
    Number(
      (
        await app.deps.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  t.equal(await count('noise_buckets'), 0, 'raw buckets pruned');
  t.ok((await count('noise_minutes')) > 0, 'minute roll-ups kept');
  await applyRetention(app.deps, Date.parse('2027-12-15T00:00:00Z'), { heartbeatDays: 30, noiseHistoryDays: 30, screenshotDays: 30 });
  t.equal(await count('noise_minutes'), 0, 'minute roll-ups pruned after 400 days');
  t.ok((await count('noise_hours')) > 0 && (await count('noise_days')) > 0, 'hour and day roll-ups kept');

  // Purge (uninstall with purge): everything goes.
  await send(app, kolkata, buckets(Date.parse('2027-05-01T00:00:00Z'), Date.parse('2027-05-01T00:10:00Z'), 4));
  t.ok((await purgeNoiseHistory(app.deps.db)) > 0);
  for (const table of ['noise_buckets', 'noise_minutes', 'noise_hours', 'noise_days'] as const) t.equal(await count(table), 0, `${table} purged`);
});

t.test('migration 0450 drops the roll-ups’ started_at and keeps every row and sum', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-0450-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const database = openDatabase(path.join(dir, 'placard.db'));
  t.teardown(() => database.close());
  const before = MIGRATIONS.filter((m) => m.version < 450);
  await migrate(database.db, before);
  const raw = database.sqlite;
  await database.db
    .insertInto('screens')
    .values(newScreenRow({ id: 's1', name: 'One' }))
    .execute();
  const sums = '3, 30000, 1350000.5, 71.5, 1500, 300, 2';
  raw.exec(`insert into noise_minutes values ('s1', 60000, '1970-01-01T00:01:00.000Z', ${sums})`);
  raw.exec(`insert into noise_hours values ('s1', 0, '1970-01-01T00:00:00.000Z', ${sums})`);
  raw.exec(`insert into noise_days values ('s1', 'UTC', '1970-01-01', 0, '1970-01-01T00:00:00.000Z', 86400000, ${sums})`);
  await migrate(
    database.db,
    MIGRATIONS.filter((m) => m.version < 480),
  );
  const expected = { bucket_count: 3, monitored_ms: 30000, level_ms: 1350000.5, peak_level: 71.5, warning_ms: 1500, loud_ms: 300, trigger_count: 2 };
  t.same(raw.prepare('select * from noise_minutes').all(), [{ screen_id: 's1', started_ms: 60000, ...expected }]);
  t.same(raw.prepare('select * from noise_hours').all(), [{ screen_id: 's1', started_ms: 0, ...expected }]);
  t.same(raw.prepare('select * from noise_days').all(), [
    { screen_id: 's1', time_zone: 'UTC', day: '1970-01-01', started_ms: 0, ends_ms: 86400000, ...expected },
  ]);
});
