import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { daily, type ReportRange, screens, series, summary } from '../server/src/modules/noise-reports/noise-reports.service.js';
import { newScreenRow } from '../server/src/modules/screens/screens.repo.js';
import type { Db } from '../server/src/platform/db/database.js';
import { migrate, openDatabase } from '../server/src/platform/db/database.js';
import { MIGRATIONS } from '../server/src/platform/db/migrations/index.js';
import { signedInApp } from './helpers/auth.js';
import { noiseBuckets } from './helpers/noise.js';
import { pairScreen } from './helpers/screens.js';

/**
 * Migration 0480 (noise tables keyed by the screen's number and started_ms): a database in the
 * old layout, holding exactly what the heartbeats of a running server stored, answers every
 * report exactly as that server does once migrated, and holds the same rows.
 */

const DAY = 86_400_000;

async function reports(db: Db, range: ReportRange) {
  return {
    summary: await summary(db, range),
    series10s: await series(db, { ...range, to: range.from + 6 * 3_600_000 }, '10s'),
    series1m: await series(db, range, '1m'),
    series5m: await series(db, range, '5m'),
    series1h: await series(db, range, '1h'),
    series1d: await series(db, range, '1d'),
    daily: await daily(db, range),
    screens: await screens(db, range, 'averageLevel', 'desc'),
    // An odd range: not on any roll-up's grain, so the raw buckets answer.
    odd: await summary(db, { ...range, from: range.from + 12_345, to: range.to - 54_321 }),
  };
}

t.test('migration 0480 moves every noise row and the reports answer exactly as before', async (t) => {
  const { app, owner } = await signedInApp(t);
  const a = await pairScreen(app, owner, { name: 'Alpha' });
  const b = await pairScreen(app, owner, { name: 'Beta' });
  const start = Date.parse('2026-03-28T20:00:00Z'); // Berlin's spring-forward night, Kolkata's half-hour offset
  for (const [screen, seed] of [
    [a, 1],
    [b, 2],
  ] as const) {
    for (let beat = 0; beat < 12; beat++) {
      const pendingHistory = Array.from({ length: 120 }, (_, i) => {
        const x = (beat * 120 + i) * 7919 + seed * 104729;
        const monitoredMs = 1000 + (x % 9001);
        return {
          startedAt: new Date(start + (beat * 130 + i) * 10_000).toISOString(),
          averageLevel: 20 + (x % 600) / 10,
          peakLevel: Math.min(100, 40 + (x % 600) / 10),
          monitoredMs,
          warningMs: Math.min(monitoredMs, (x * 3) % 5000),
          loudMs: Math.min(monitoredMs, (x * 7) % 3000),
          ...(i % 13 === 0 ? {} : { triggerCount: x % 4 }),
        };
      });
      const res = await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: screen.headers, json: { noiseMeter: { pendingHistory } } });
      t.equal(res.status, 200);
    }
  }
  const ids = [a.screenId, b.screenId].sort();
  const range = (zone: string): ReportRange => ({ instanceId: 'i', instanceName: 'n', from: start - DAY, to: start + 2 * DAY, zone, screenIds: ids });
  const expected = { berlin: await reports(app.deps.db, range('Europe/Berlin')), kolkata: await reports(app.deps.db, range('Asia/Kolkata')) };
  t.ok(expected.berlin.summary.monitoredMs > 0, 'the reports have figures');

  // The same rows in the layout before 0480: screen ids, ISO starts, received_at text.
  const db = app.deps.db;
  const buckets = await noiseBuckets(db);
  const rollup = async (table: 'noise_minutes' | 'noise_hours' | 'noise_days') =>
    (await db.selectFrom(table).innerJoin('screens', 'screens.num', `${table}.screen_num`).selectAll(table).select('screens.id as screen_id').execute()).map(
      ({ screen_num: _n, ...r }) => r as Record<string, unknown>,
    );
  const minutes = await rollup('noise_minutes');
  const hours = await rollup('noise_hours');
  const days = await rollup('noise_days');
  t.ok(buckets.length === 2 * 12 * 120 && minutes.length && hours.length && days.length);

  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-0480-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const old = openDatabase(path.join(dir, 'placard.db'));
  t.teardown(() => old.close());
  await migrate(
    old.db,
    MIGRATIONS.filter((m) => m.version < 480),
  );
  const raw = old.sqlite;
  // An earlier screen that is gone: the rowids of the others do not start at 1.
  for (const [id, name] of [['0190f5a2-0000-7000-8000-000000000000', 'Gone'], ...ids.map((id, i) => [id, i ? 'Beta' : 'Alpha'])] as const)
    await old.db.insertInto('screens').values(newScreenRow({ id, name })).execute();
  raw.prepare("delete from screens where name = 'Gone'").run();
  const insertBucket = raw.prepare(
    'insert into noise_buckets (screen_id, started_at, started_ms, average_level, peak_level, monitored_ms, warning_ms, loud_ms, trigger_count, received_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const insertRollup = (table: string, rows: Record<string, unknown>[]) => {
    for (const r of rows) {
      const cols = Object.keys(r);
      raw.prepare(`insert into ${table} (${cols.join(', ')}) values (${cols.map(() => '?').join(', ')})`).run(...cols.map((c) => r[c]));
    }
  };
  raw.transaction(() => {
    for (const r of buckets)
      insertBucket.run(
        r.screen_id,
        r.started_at,
        r.started_ms,
        r.average_level,
        r.peak_level,
        r.monitored_ms,
        r.warning_ms,
        r.loud_ms,
        r.trigger_count,
        new Date(r.received_ms).toISOString(),
      );
    insertRollup('noise_minutes', minutes);
    insertRollup('noise_hours', hours);
    insertRollup('noise_days', days);
  })();

  await migrate(old.db);
  t.same(raw.pragma('foreign_key_check'), [], 'every moved row names a screen that exists');
  t.same(await noiseBuckets(old.db), buckets, 'every bucket moved, with its values, start and receipt time');
  const moved = async (table: 'noise_minutes' | 'noise_hours' | 'noise_days') =>
    (
      await old.db.selectFrom(table).innerJoin('screens', 'screens.num', `${table}.screen_num`).selectAll(table).select('screens.id as screen_id').execute()
    ).map(({ screen_num: _n, ...r }) => r as Record<string, unknown>);
  t.same(await moved('noise_minutes'), minutes, 'minute roll-ups moved');
  t.same(await moved('noise_hours'), hours, 'hour roll-ups moved');
  t.same(await moved('noise_days'), days, 'day roll-ups moved');
  t.strictSame(
    { berlin: await reports(old.db, range('Europe/Berlin')), kolkata: await reports(old.db, range('Asia/Kolkata')) },
    expected,
    'every report answers as the running server did',
  );

  // Numbers: existing screens keep distinct ones; a new screen gets the next; a deleted screen's noise goes with it.
  const nums = raw.prepare('select id, num from screens order by num').all() as { id: string; num: number }[];
  t.equal(new Set(nums.map((n) => n.num)).size, 2);
  await old.db
    .insertInto('screens')
    .values(newScreenRow({ id: '0190f5a2-0000-7000-8000-0000000000ff', name: 'New' }))
    .execute();
  const added = raw.prepare('select num from screens where name = ?').pluck().get('New') as number;
  t.equal(added, Math.max(...nums.map((n) => n.num)) + 1, 'a new screen is numbered on insert, after the others');
  raw.prepare('delete from screens where id = ?').run(ids[0]);
  t.same(
    (await noiseBuckets(old.db)).map((r) => r.screen_id),
    buckets.filter((r) => r.screen_id !== ids[0]).map((r) => r.screen_id),
    'a deleted screen’s buckets go with it',
  );
  for (const table of ['noise_minutes', 'noise_hours', 'noise_days'])
    t.equal(
      raw
        .prepare(`select count(*) from ${table} where screen_num = ?`)
        .pluck()
        .get(nums.find((n) => n.id === ids[0])!.num),
      0,
      `${table} of the deleted screen go too`,
    );
});

t.test('screens made by the API are numbered, distinct and stable', async (t) => {
  const { app, owner } = await signedInApp(t);
  const made = [];
  for (let i = 0; i < 3; i++) made.push(await pairScreen(app, owner, { name: `S${i}` }));
  const nums = () => app.database.sqlite.prepare('select num from screens order by created_at, id').pluck().all() as number[];
  const first = nums();
  t.equal(first.length, 3);
  t.equal(new Set(first).size, 3, 'one number each');
  t.ok(
    first.every((n) => Number.isInteger(n) && n > 0),
    'positive integers',
  );
  await app.database.db.updateTable('screens').set({ name: 'Renamed' }).where('id', '=', made[0]!.screenId).execute();
  t.same(nums(), first, 'an update keeps them');
});
