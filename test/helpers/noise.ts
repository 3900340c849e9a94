import { sql } from 'kysely';
import type { Db } from '../../server/src/platform/db/database.js';

/**
 * Noise tables in tests. They are keyed by the screen's number and the start in epoch ms
 * (migration 0480); tests name screens by id, and compare starts as the ISO text the API shows.
 */

/** The number of the screen `id`, as an expression (`where('screen_num', '=', screenNum(id))`). */
export const screenNum = (id: string) => sql<number>`(select num from screens where id = ${id})`;

export interface BucketRow {
  screen_id: string;
  started_at: string;
  started_ms: number;
  average_level: number;
  peak_level: number;
  monitored_ms: number;
  warning_ms: number;
  loud_ms: number;
  trigger_count: number | null;
  received_ms: number;
}

/** Stored buckets, with their screen's id and the start as UTC ISO text: of one screen, or all, by start then level. */
export async function noiseBuckets(db: Db, screenId?: string): Promise<BucketRow[]> {
  const rows = await sql<Omit<BucketRow, 'started_at'>>`
    select s.id as screen_id, b.started_ms, b.average_level, b.peak_level, b.monitored_ms, b.warning_ms, b.loud_ms, b.trigger_count, b.received_ms
    from noise_buckets b join screens s on s.num = b.screen_num
    ${screenId === undefined ? sql`` : sql`where s.id = ${screenId}`}
    order by b.started_ms, b.average_level`.execute(db);
  return rows.rows.map((r) => ({ ...r, started_at: new Date(r.started_ms).toISOString() }));
}
