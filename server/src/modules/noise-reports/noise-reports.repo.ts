import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { MAX_BUCKET_MS, MIN_BUCKET_MS } from '../screens/index.js';

/** What the noise reports read: roll-ups and raw buckets, grouped in SQL on a grain; instance and screen names. */

export interface GrainRow {
  screen_id: string;
  k: number;
  n: number;
  m: number;
  l: number;
  p: number | null;
  w: number;
  ld: number;
  tc: number;
}

/**
 * The same range on raw buckets' `started_at` (UTC text with milliseconds, which sorts as the
 * time does): the primary key (screen_id, started_at) then finds a screen's buckets in the
 * range by itself (the table has no time index, migration 0470).
 */
function startedAtRange(from: number, to: number) {
  // Starts are whole ms: start >= from is start >= ceil(from), start < to is start < ceil(to).
  const [lo, hi] = [Math.ceil(from), Math.ceil(to)];
  const above = lo > MIN_BUCKET_MS && lo <= MAX_BUCKET_MS ? sql` and started_at >= ${new Date(lo).toISOString()}` : sql``;
  const below = hi > MIN_BUCKET_MS && hi <= MAX_BUCKET_MS ? sql` and started_at < ${new Date(hi).toISOString()}` : sql``;
  return sql`${above}${below}`;
}

export type SourceTable = 'noise_hours' | 'noise_minutes' | 'noise_buckets';

/**
 * Sums over [from, to) of the screens, grouped by `grain` (k = the grain's start; 0 with no grain)
 * and, when `perScreen`, by screen. The roll-ups carry their sums; raw buckets are summed here.
 */
export async function grainSums(
  db: Db,
  table: SourceTable,
  screenIds: readonly string[],
  from: number,
  to: number,
  grain: number | null,
  perScreen: boolean,
): Promise<GrainRow[]> {
  if (!screenIds.length) return [];
  const k = grain ? sql`(started_ms / ${grain}) * ${grain}` : sql`0`;
  const sid = perScreen ? sql`screen_id` : sql`''`;
  const sums =
    table === 'noise_buckets'
      ? sql`count(*) as n, sum(monitored_ms) as m, sum(average_level * monitored_ms) as l, max(peak_level) as p,
          sum(warning_ms) as w, sum(loud_ms) as ld, sum(coalesce(trigger_count, 0)) as tc`
      : sql`sum(bucket_count) as n, sum(monitored_ms) as m, sum(level_ms) as l, max(peak_level) as p,
          sum(warning_ms) as w, sum(loud_ms) as ld, sum(trigger_count) as tc`;
  const ids = sql.join(screenIds.map((id) => sql`${id}`));
  const groupBy = [...(perScreen ? [sql`screen_id`] : []), ...(grain ? [sql`k`] : [])];
  const rows = await sql<GrainRow>`
    select ${sid} as screen_id, ${k} as k, ${sums}
    from ${sql.table(table)}
    where screen_id in (${ids}) and started_ms >= ${from} and started_ms < ${to}${table === 'noise_buckets' ? startedAtRange(from, to) : sql``}
    ${groupBy.length ? sql`group by ${sql.join(groupBy)}` : sql``}`.execute(db);
  return rows.rows.filter((r) => Number(r.n) > 0);
}

/** A noise-meter instance's name, or undefined. */
export async function noiseInstance(db: Db, id: string) {
  return db.selectFrom('plugin_instances').select(['id', 'name']).where('id', '=', id).where('plugin_id', '=', 'noise-meter').executeTakeFirst();
}

/** The screens' names and their location's zone (null: the default zone). */
export async function screenRows(db: Db, screenIds: readonly string[]) {
  if (!screenIds.length) return [];
  return db
    .selectFrom('screens as s')
    .leftJoin('locations as l', 'l.id', 's.location_id')
    .select(['s.id', 's.name', 'l.time_zone'])
    .where('s.id', 'in', [...screenIds])
    .orderBy('s.id')
    .execute();
}

/** Deletes the roll-ups (the noise-meter's uninstall with purge; the plugins module deletes the raw buckets). */
export async function deleteRollups(db: Db): Promise<void> {
  for (const table of ['noise_minutes', 'noise_hours', 'noise_days'] as const) await db.deleteFrom(table).execute();
}
