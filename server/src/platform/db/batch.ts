import type { RawBuilder } from 'kysely';
import type { Db } from './database.js';

/**
 * Deletes in batches: runs `statement(limit)` (a DELETE of at most `limit` rows, e.g.
 * `delete from t where id in (select id from t where ... limit ${limit})`) until a batch
 * deletes fewer than `limit`, yielding to the event loop between batches. better-sqlite3
 * is synchronous: one DELETE of 200 000 rows would stop every request for seconds (measured
 * 3.5 s for noise buckets, scripts/bench/status.ts); a batch of 1 000 takes tens of milliseconds.
 * Answers the number of rows deleted.
 */
export async function deleteInBatches(db: Db, statement: (limit: number) => RawBuilder<unknown>, batchSize = 1_000): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await statement(batchSize).execute(db);
    const n = Number(result.numAffectedRows ?? 0n);
    total += n;
    if (n < batchSize) return total;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
