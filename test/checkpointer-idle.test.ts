import { statSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import t from 'tap';
import { checkpointer } from '../server/src/platform/db/checkpointer.js';
import { openDatabase } from '../server/src/platform/db/database.js';
import { tempDataDir } from './helpers/harness.js';

/**
 * The checkpointer's worker thread (platform/db/checkpointer.ts) runs only while there is
 * something to checkpoint (issue 24, idle memory: the thread is ~15 MiB): it starts at a
 * commit, copies the WAL into the database file, stops once no WAL changed for
 * `idleStopMs`, and starts again at the next commit.
 */

async function until(what: string, probe: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

t.test('the worker starts at a commit, stops when idle, and starts again at the next commit', async (t) => {
  const saved = checkpointer.idleStopMs;
  checkpointer.idleStopMs = 600;
  t.teardown(() => {
    checkpointer.idleStopMs = saved;
  });
  const db = openDatabase(path.join(tempDataDir(t), 'placard.db'));
  let closed = false;
  t.teardown(() => (closed ? undefined : db.close()));
  await sql`create table t (id integer primary key, v text)`.execute(db.db);

  await until('the worker to start after the first commits', () => checkpointer.running);
  await until('the worker to stop once nothing changes', () => !checkpointer.running);
  t.pass('stopped while idle');

  const before = statSync(db.file).size;
  await db.db.transaction().execute(async (trx) => {
    for (let i = 0; i < 100; i++)
      await trx
        .insertInto('t' as never)
        .values({ id: i, v: 'x'.repeat(20_000) } as never)
        .execute();
  });
  await until('the worker to start again', () => checkpointer.running);
  await until('the WAL copied into the database file', () => statSync(db.file).size >= before + 2_000_000);
  t.pass('the restarted worker checkpointed the new commits');

  // Closing while the worker runs: the close waits for the worker's connection, then it stops.
  await db.close();
  closed = true;
  await until('the worker to stop with nothing registered', () => !checkpointer.running);
  t.pass('no worker is left once every database is closed');
});
