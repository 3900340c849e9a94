/**
 * Noise history reports at scale (issue 22): fills a fresh database with --screens (100) x
 * --days (30) of ten-second buckets (about 26 million rows) with one prepared statement in big
 * transactions, builds the roll-ups with bulk SQL equivalent to the heartbeat's (minutes from
 * the buckets, hours from the minutes; local days from the hours in JS with the same
 * aggregateBuckets/localDay code the heartbeat uses), then times each report (median of
 * --runs, 5) next to a full scan of the raw buckets answering the same question, and heartbeat
 * ingest of 120 buckets with and without the roll-ups (in rounds, alternating).
 *   npm run bench:noise-reports [-- --screens 100 --days 30 --runs 5 --beats 600]
 * `--dir DIR` keeps the filled database in DIR and reuses it on the next run with the same
 * --screens and --days (the fill takes minutes); `--only reports|ingest` runs one half, e.g.
 * the ingest ratio again on a quiet machine.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { daily, type ReportRange, screens, series, summary } from '../../server/src/modules/noise-reports/noise-reports.service.js';
import { type HeartbeatBody, ingestHeartbeat } from '../../server/src/modules/screens/heartbeat.js';
import { localDay } from '../../server/src/modules/screens/noise-rollups.repo.js';
import { newScreenRow } from '../../server/src/modules/screens/screens.repo.js';
import { migrate, openDatabase } from '../../server/src/platform/db/database.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const N = { screens: arg('screens', 100), days: arg('days', 30), runs: arg('runs', 5), beats: arg('beats', 600) };
const option = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const keepDir = option('dir');
const only = option('only');
const DAY = 86_400_000;
const HOUR = 3_600_000;
const ZONE = 'Europe/Berlin';

const dir = keepDir ?? mkdtempSync(path.join(os.tmpdir(), 'placard-bench-noise-'));
mkdirSync(dir, { recursive: true });
const marker = path.join(dir, 'bench.json');
const kept = existsSync(marker) ? (JSON.parse(readFileSync(marker, 'utf8')) as { screens: number; days: number; start: number; end: number }) : null;
const reuse = kept !== null && kept.screens === N.screens && kept.days === N.days;
if (keepDir && !reuse) rmSync(path.join(dir, 'placard.db'), { force: true });
const database = openDatabase(path.join(dir, 'placard.db'));
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  await migrate(database.db);
  const raw = database.sqlite;
  // Whole days, ending at a UTC midnight a few days ago (or the kept database's).
  const end = reuse ? kept.end : Math.floor(Date.now() / DAY) * DAY - 2 * DAY;
  const start = end - N.days * DAY;
  let fillMs = 0;
  let rollupMs = 0;
  let rows = N.screens * N.days * 8640;
  const screenRows = reuse ? ((await database.db.selectFrom('screens').selectAll().orderBy('name').execute()) as ReturnType<typeof newScreenRow>[]) : [];
  const screenIds = screenRows.map((r) => r.id).sort();
  if (!reuse) {
    const location = uuidv7();
    raw
      .prepare("insert into locations (id, name, time_zone, created_at, updated_at) values (?, 'Bench', ?, ?, ?)")
      .run(location, ZONE, new Date().toISOString(), new Date().toISOString());
    for (let i = 0; i < N.screens; i++) {
      const row = newScreenRow({ id: uuidv7(), name: `Screen ${String(i).padStart(3, '0')}`, location_id: location });
      screenRows.push(row);
      screenIds.push(row.id);
      await database.db.insertInto('screens').values(row).execute();
    }
    screenIds.sort();

    let t0 = process.hrtime.bigint();
    const insert = raw.prepare(
      'insert into noise_buckets (screen_num, started_ms, average_level, peak_level, monitored_ms, warning_ms, loud_ms, trigger_count, received_ms) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const received = Date.now();
    const numOf = raw.prepare('select num from screens where id = ?').pluck();
    rows = 0;
    for (const id of screenIds) {
      const num = numOf.get(id) as number;
      raw.transaction(() => {
        let x = rows;
        for (let t = start; t < end; t += 10_000) {
          x = (x * 1103515245 + 12345) & 0x7fffffff;
          const level = 30 + (x % 500) / 10;
          insert.run(num, t, level, Math.min(100, level + 15), 10_000, x % 3000, x % 1000, x % 3, received);
          rows++;
        }
      })();
    }
    fillMs = ms(t0);

    t0 = process.hrtime.bigint();
    raw.exec(`insert into noise_minutes (screen_num, started_ms, bucket_count, monitored_ms, level_ms, peak_level, warning_ms, loud_ms, trigger_count)
      select screen_num, (started_ms / 60000) * 60000, count(*), sum(monitored_ms),
        sum(average_level * monitored_ms), max(peak_level), sum(warning_ms), sum(loud_ms), sum(coalesce(trigger_count, 0))
      from noise_buckets group by screen_num, started_ms / 60000`);
    raw.exec(`insert into noise_hours (screen_num, started_ms, bucket_count, monitored_ms, level_ms, peak_level, warning_ms, loud_ms, trigger_count)
      select screen_num, (started_ms / 3600000) * 3600000, sum(bucket_count), sum(monitored_ms),
        sum(level_ms), max(peak_level), sum(warning_ms), sum(loud_ms), sum(trigger_count)
      from noise_minutes group by screen_num, started_ms / 3600000`);
    const dayInsert = raw.prepare(
      `insert into noise_days (screen_num, time_zone, day, started_ms, ends_ms, bucket_count, monitored_ms, level_ms, peak_level, warning_ms, loud_ms, trigger_count)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (screen_num, time_zone, day) do update set bucket_count = bucket_count + excluded.bucket_count, monitored_ms = monitored_ms + excluded.monitored_ms,
         level_ms = level_ms + excluded.level_ms, peak_level = max(peak_level, excluded.peak_level), warning_ms = warning_ms + excluded.warning_ms,
         loud_ms = loud_ms + excluded.loud_ms, trigger_count = trigger_count + excluded.trigger_count`,
    );
    raw.transaction(() => {
      for (const h of raw.prepare('select * from noise_hours').all() as any[]) {
        const d = localDay(h.started_ms, ZONE);
        dayInsert.run(
          h.screen_num,
          ZONE,
          d.day,
          d.startMs,
          d.endMs,
          h.bucket_count,
          h.monitored_ms,
          h.level_ms,
          h.peak_level,
          h.warning_ms,
          h.loud_ms,
          h.trigger_count,
        );
      }
    })();
    rollupMs = ms(t0);
    raw.exec('analyze');
    if (keepDir) writeFileSync(marker, JSON.stringify({ screens: N.screens, days: N.days, start, end }));
  }

  const range: ReportRange = { instanceId: 'bench', instanceName: 'bench', from: start, to: end, zone: ZONE, screenIds };
  const ids = screenIds.map((s) => `'${s}'`).join(',');
  const where = `screen_num in (select num from screens where id in (${ids})) and started_ms >= ${start} and started_ms < ${end}`;
  const sums =
    'count(*), sum(monitored_ms), sum(average_level * monitored_ms), max(peak_level), sum(warning_ms), sum(loud_ms), sum(coalesce(trigger_count, 0))';
  const scans: Record<string, () => unknown> = {
    summary: () => [
      raw.prepare(`select ${sums} from noise_buckets where ${where}`).get(),
      raw.prepare(`select started_ms / ${HOUR}, ${sums} from noise_buckets where ${where} group by 1`).all(),
    ],
    'series (auto: 1h)': () => raw.prepare(`select started_ms / ${HOUR}, ${sums} from noise_buckets where ${where} group by 1`).all(),
    daily: () => raw.prepare(`select started_ms / ${HOUR}, ${sums} from noise_buckets where ${where} group by 1`).all(),
    screens: () => raw.prepare(`select screen_num, ${sums} from noise_buckets where ${where} group by 1`).all(),
  };
  const reports: Record<string, () => Promise<unknown>> = {
    summary: () => summary(database.db, range),
    'series (auto: 1h)': () => series(database.db, range, 'auto'),
    daily: () => daily(database.db, range),
    screens: () => screens(database.db, range, 'averageLevel', 'desc'),
  };
  const table: { report: string; reportMs: number; scanMs: number; ratio: number }[] = [];
  for (const name of only === 'ingest' ? [] : Object.keys(reports)) {
    const r: number[] = [];
    const s: number[] = [];
    for (let i = 0; i < N.runs; i++) {
      let t = process.hrtime.bigint();
      await reports[name]!();
      r.push(ms(t));
      t = process.hrtime.bigint();
      scans[name]!();
      s.push(ms(t));
    }
    table.push({ report: name, reportMs: median(r), scanMs: median(s), ratio: median(s) / median(r) });
  }

  // Heartbeat ingest: 120 new buckets per heartbeat, alternating rounds with and without the roll-ups.
  const screen = screenRows[0]!;
  // After every bucket there (a kept database already holds earlier runs' heartbeats).
  const last = raw.prepare('select max(started_ms) as ms from noise_buckets where screen_num = (select num from screens where id = ?)').get(screen.id) as {
    ms: number | null;
  };
  let next = Math.max(end, (last.ms ?? 0) + 10_000) + DAY;
  const body = (): HeartbeatBody => {
    const pendingHistory = [];
    for (let i = 0; i < 120; i++, next += 10_000)
      pendingHistory.push({
        startedAt: new Date(next).toISOString(),
        averageLevel: 45,
        peakLevel: 70,
        monitoredMs: 10_000,
        warningMs: 500,
        loudMs: 100,
        triggerCount: 1,
      });
    return { playerFamily: 'desktop-linux', playerVersion: '1.0.0', noiseMeter: { status: 'active', currentLevel: 44, pendingHistory } } as HeartbeatBody;
  };
  const rate = { with: [] as number[], without: [] as number[] };
  const ingest = only !== 'reports';
  // Warm-up (statement cache, the zone clock's memo, the JIT) before measuring.
  for (let i = 0; ingest && i < 20; i++) await ingestHeartbeat({ db: database.db, skipNoiseRollups: i % 2 === 0 }, screen.id, body(), '127.0.0.1');
  for (let round = 0; ingest && round < 6; round++) {
    for (const mode of round % 2 ? (['without', 'with'] as const) : (['with', 'without'] as const)) {
      const t = process.hrtime.bigint();
      for (let i = 0; i < N.beats / 6; i++) await ingestHeartbeat({ db: database.db, skipNoiseRollups: mode === 'without' }, screen.id, body(), '127.0.0.1');
      rate[mode].push(N.beats / 6 / (ms(t) / 1000));
    }
  }
  const withRate = median(rate.with);
  const withoutRate = median(rate.without);

  console.log(`noise reports bench: ${N.screens} screens x ${N.days} days = ${rows.toLocaleString('en')} buckets (zone ${ZONE})`);
  if (reuse) console.log(`kept database in ${dir}: no fill`);
  else console.log(`fill ${(fillMs / 1000).toFixed(1)} s, roll-ups (bulk SQL + days in JS) ${(rollupMs / 1000).toFixed(1)} s`);
  console.log('report               | report ms (median) | raw scan ms | scan / report');
  for (const r of table)
    console.log(`${r.report.padEnd(20)} | ${r.reportMs.toFixed(1).padStart(18)} | ${r.scanMs.toFixed(0).padStart(11)} | ${r.ratio.toFixed(0).padStart(8)}x`);
  if (ingest)
    console.log(
      `heartbeat ingest, 120 buckets: with roll-ups ${withRate.toFixed(0)}/s, without ${withoutRate.toFixed(0)}/s: ratio ${(withRate / withoutRate).toFixed(3)} (loss ${((1 - withRate / withoutRate) * 100).toFixed(1)}%)`,
    );
} finally {
  await database.close();
  if (!keepDir) rmSync(dir, { recursive: true, force: true });
}
