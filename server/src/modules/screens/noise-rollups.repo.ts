import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { type DialectName, dialectOf, sqlText } from '../../platform/db/dialect.js';
import { deleteInBatches } from '../../platform/db/batch.js';
import { executeText } from '../../platform/db/prepared.js';
import type { NoiseBucketsTable, NoiseDaysTable, NoiseRollupTable, NoiseSums } from '../../platform/db/schema.js';
import { instantOf, wallClock } from '../../platform/time/zone-clock.js';

/**
 * Noise history roll-ups (docs/noise-reports.md): per screen, per UTC minute, UTC hour and
 * local day (the screen's zone when the buckets arrive), the sums every report is exact
 * from. The heartbeat adds the buckets it actually inserted (a retry inserts none, so adds
 * nothing), aggregated here in JS, with one upsert statement per roll-up table.
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** Kept: minute roll-ups 400 days, hour and day roll-ups 5 years (raw buckets: `retention.noiseHistoryDays`). */
export const MINUTE_ROLLUP_DAYS = 400;
export const HOUR_ROLLUP_DAYS = 1830;
export const DAY_ROLLUP_DAYS = 1830;

type Bucket = Pick<NoiseBucketsTable, 'started_ms' | 'average_level' | 'peak_level' | 'monitored_ms' | 'warning_ms' | 'loud_ms' | 'trigger_count'>;

const empty = (): NoiseSums => ({ bucket_count: 0, monitored_ms: 0, level_ms: 0, peak_level: 0, warning_ms: 0, loud_ms: 0, trigger_count: 0 });

function add(s: NoiseSums, b: Bucket) {
  s.bucket_count += 1;
  s.monitored_ms += b.monitored_ms;
  s.level_ms += b.average_level * b.monitored_ms;
  if (b.peak_level > s.peak_level) s.peak_level = b.peak_level;
  s.warning_ms += b.warning_ms;
  s.loud_ms += b.loud_ms;
  s.trigger_count += b.trigger_count ?? 0;
}

/** The local day (YYYY-MM-DD) of `ms` in `zone` and the instants it starts and ends at. */
export function localDay(ms: number, zone: string): { day: string; startMs: number; endMs: number } {
  const wall = wallClock(ms, zone);
  const floating = Math.floor(wall / DAY_MS) * DAY_MS;
  return { day: new Date(floating).toISOString().slice(0, 10), startMs: instantOf(floating, zone), endMs: instantOf(floating + DAY_MS, zone) };
}

export interface RollupRows {
  minutes: NoiseRollupTable[];
  hours: NoiseRollupTable[];
  days: NoiseDaysTable[];
}

/** The roll-up rows a screen's newly inserted buckets add. */
export function aggregateBuckets(screenNum: number, buckets: readonly Bucket[], zone: string): RollupRows {
  const minutes = new Map<number, NoiseRollupTable>();
  const hours = new Map<number, NoiseRollupTable>();
  const days = new Map<string, NoiseDaysTable>();
  let dayCache: { startMs: number; endMs: number; day: string } | null = null;
  for (const b of buckets) {
    const m = b.started_ms - (((b.started_ms % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);
    const h = b.started_ms - (((b.started_ms % HOUR_MS) + HOUR_MS) % HOUR_MS);
    let ms = minutes.get(m);
    if (!ms) minutes.set(m, (ms = { screen_num: screenNum, started_ms: m, ...empty() }));
    add(ms, b);
    let hs = hours.get(h);
    if (!hs) hours.set(h, (hs = { screen_num: screenNum, started_ms: h, ...empty() }));
    add(hs, b);
    if (!dayCache || b.started_ms < dayCache.startMs || b.started_ms >= dayCache.endMs) dayCache = localDay(b.started_ms, zone);
    let ds = days.get(dayCache.day);
    if (!ds)
      days.set(
        dayCache.day,
        (ds = { screen_num: screenNum, time_zone: zone, day: dayCache.day, started_ms: dayCache.startMs, ends_ms: dayCache.endMs, ...empty() }),
      );
    add(ds, b);
  }
  return { minutes: [...minutes.values()], hours: [...hours.values()], days: [...days.values()] };
}

const SUMS = ['bucket_count', 'monitored_ms', 'level_ms', 'peak_level', 'warning_ms', 'loud_ms', 'trigger_count'] as const;
/** The conflict's update: the row's sums plus the new ones (the table's own columns named by the table: PostgreSQL wants it). */
const addSums = (table: string, d: DialectName) =>
  SUMS.map((c) => (c === 'peak_level' ? `${c} = ${sqlText.greatest(d)}(${table}.${c}, excluded.${c})` : `${c} = ${table}.${c} + excluded.${c}`)).join(', ');
const UPSERTS = {
  noise_minutes: { columns: ['screen_num', 'started_ms', ...SUMS] as const, key: 'screen_num, started_ms' },
  noise_hours: { columns: ['screen_num', 'started_ms', ...SUMS] as const, key: 'screen_num, started_ms' },
  noise_days: { columns: ['screen_num', 'time_zone', 'day', 'started_ms', 'ends_ms', ...SUMS] as const, key: 'screen_num, time_zone, day' },
};
/** Statement texts by table and row count (at most MAX_BUCKETS rows, so bounded). */
const upsertTexts = new Map<string, string>();

/**
 * One `insert … on conflict do update` adding `rows` to `table`. The text is written once per
 * table and row count and handed to the driver already compiled: kysely's builder cost more
 * than SQLite's work here (the heartbeat runs three of these per request; issue 22's ingest
 * benchmark), and the database's statement cache then reuses the prepared statement.
 */
function upsert<T extends keyof typeof UPSERTS>(trx: Db, table: T, rows: readonly Record<(typeof UPSERTS)[T]['columns'][number], unknown>[]) {
  const { columns, key } = UPSERTS[table];
  const dialect = dialectOf(trx);
  const id = `${dialect}/${table}/${rows.length}`;
  let text = upsertTexts.get(id);
  if (!text) {
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    text = `insert into ${table} (${columns.join(', ')}) values ${Array(rows.length).fill(tuple).join(', ')} on conflict (${key}) do update set ${addSums(table, dialect)}`;
    upsertTexts.set(id, text);
  }
  const parameters: unknown[] = [];
  for (const row of rows) for (const c of columns) parameters.push(row[c as keyof typeof row]);
  return executeText(trx, text, parameters);
}

/** Adds the rows to the roll-ups: one upsert statement per table. */
export async function addToRollups(trx: Db, rows: RollupRows): Promise<void> {
  if (rows.minutes.length) await upsert(trx, 'noise_minutes', rows.minutes);
  if (rows.hours.length) await upsert(trx, 'noise_hours', rows.hours);
  if (rows.days.length) await upsert(trx, 'noise_days', rows.days);
}

/**
 * Deletes roll-ups past their retention (module constants above), screen by screen along the
 * primary keys (the tables have no time index, see migration 0440), in batches; answers how many rows.
 */
export async function pruneNoiseRollups(db: Db, now: number): Promise<number> {
  let total = 0;
  const screens = await db.selectFrom('screens').select('num').execute();
  for (const [table, days] of [
    ['noise_minutes', MINUTE_ROLLUP_DAYS],
    ['noise_hours', HOUR_ROLLUP_DAYS],
    ['noise_days', DAY_ROLLUP_DAYS],
  ] as const) {
    const before = now - days * DAY_MS;
    const key = sql.raw(table === 'noise_days' ? 'screen_num, time_zone, day' : 'screen_num, started_ms');
    for (const { num } of screens)
      total += await deleteInBatches(
        db,
        (limit) =>
          sql`delete from ${sql.table(table)} where (${key}) in (select ${key} from ${sql.table(table)} where screen_num = ${num} and started_ms < ${before} limit ${limit})`,
      );
  }
  return total;
}

/** Deletes every noise bucket and roll-up (the plugins module's uninstall with purge), in batches. */
export async function purgeNoiseHistory(db: Db): Promise<number> {
  let total = 0;
  for (const [table, key] of [
    ['noise_buckets', 'screen_num, started_ms'],
    ['noise_minutes', 'screen_num, started_ms'],
    ['noise_hours', 'screen_num, started_ms'],
    ['noise_days', 'screen_num, time_zone, day'],
  ] as const) {
    const k = sql.raw(key);
    total += await deleteInBatches(db, (limit) => sql`delete from ${sql.table(table)} where (${k}) in (select ${k} from ${sql.table(table)} limit ${limit})`);
  }
  return total;
}
