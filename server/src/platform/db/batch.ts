import type { RawBuilder } from 'kysely';
import type { Db } from './database.js';

/** The event loop time one batch may take (issue 24: a prune must never block requests for more than 10 ms). */
const TARGET_BUSY_MS = 3;
const FIRST_BATCH = 100;
const MIN_BATCH = 10;
const MAX_BATCH = 5_000;

/**
 * Deletes in batches: runs `statement(limit)` (a DELETE of at most `limit` rows, e.g.
 * `delete from t where id in (select id from t where ... limit ${limit})`) until a batch
 * deletes fewer than `limit`, yielding to the event loop between batches. better-sqlite3
 * is synchronous: one DELETE of 200 000 rows would stop every request for seconds (measured
 * 3.5 s for noise buckets, scripts/bench/status.ts), and what one row costs differs by table
 * and by disk (noise buckets: 5-30 µs). So the batch size adapts: each batch's time on the
 * event loop (its event-loop-utilisation, not the fsync it then waits for off the loop) steers
 * the next batch towards TARGET_BUSY_MS, growing at most by half a step. Answers the number of
 * rows deleted.
 */
export async function deleteInBatches(db: Db, statement: (limit: number) => RawBuilder<unknown>): Promise<number> {
  let total = 0;
  let size = FIRST_BATCH;
  for (;;) {
    const before = performance.eventLoopUtilization();
    const result = await statement(size).execute(db);
    const busyMs = performance.eventLoopUtilization(before).active;
    const n = Number(result.numAffectedRows ?? 0n);
    total += n;
    if (n < size) return total;
    size = Math.round(Math.min(MAX_BATCH, size * 1.5, Math.max(MIN_BATCH, (size * TARGET_BUSY_MS) / Math.max(busyMs, 0.05))));
    await new Promise((resolve) => setImmediate(resolve));
  }
}
