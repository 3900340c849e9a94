import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';

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
  const k = grain ? sql`(t.started_ms / ${grain}) * ${grain}` : sql`0`;
  const sid = perScreen ? sql`s.id` : sql`''`;
  const sums =
    table === 'noise_buckets'
      ? sql`count(*) as n, sum(t.monitored_ms) as m, sum(t.average_level * t.monitored_ms) as l, max(t.peak_level) as p,
          sum(t.warning_ms) as w, sum(t.loud_ms) as ld, sum(coalesce(t.trigger_count, 0)) as tc`
      : sql`sum(t.bucket_count) as n, sum(t.monitored_ms) as m, sum(t.level_ms) as l, max(t.peak_level) as p,
          sum(t.warning_ms) as w, sum(t.loud_ms) as ld, sum(t.trigger_count) as tc`;
  const ids = sql.join(screenIds.map((id) => sql`${id}`));
  const groupBy = [...(perScreen ? [sql`s.id`] : []), ...(grain ? [sql`k`] : [])];
  // The screens by id, then each one's rows by its number and a range of starts: the primary key.
  const rows = await sql<GrainRow>`
    select ${sid} as screen_id, ${k} as k, ${sums}
    from screens s cross join ${sql.table(table)} t
    where s.id in (${ids}) and t.screen_num = s.num and t.started_ms >= ${from} and t.started_ms < ${to}
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
