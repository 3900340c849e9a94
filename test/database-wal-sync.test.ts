import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import t from 'tap';
import type { Test } from 'tap';
import { deferDurability, holdConnection, openDatabase, WalSync } from '../server/src/platform/db/database.js';
import { executeText } from '../server/src/platform/db/prepared.js';
import { groupCommit } from '../server/src/modules/screens/index.js';
import { tempDataDir } from './helpers/harness.js';

/**
 * Durability off the event loop (platform/db/database.ts): the handle runs
 * synchronous=NORMAL and every write waits, after releasing the connection, for an fsync
 * of the WAL that started after it. What can fail here: a write resolving before its
 * fsync, a read paying for one, a read held behind a write's fsync, two waiters sharing
 * an fsync that started before the second one's write.
 */
async function opened(t: Test) {
  const db = openDatabase(path.join(tempDataDir(t), 'placard.db'));
  t.teardown(() => db.close());
  await sql`create table t (id integer primary key, v text)`.execute(db.db);
  return db;
}

t.test('the handle runs WAL with synchronous=NORMAL, and the WAL has a syncer', async (t) => {
  const db = await opened(t);
  t.equal(db.sqlite.pragma('journal_mode', { simple: true }), 'wal');
  t.equal(db.sqlite.pragma('synchronous', { simple: true }), 1, 'NORMAL: no fsync on the JavaScript thread at commit');
  t.ok(db.walSync, 'a file database has a WalSync');
  t.ok(existsSync(`${db.file}-wal`));
  const memory = openDatabase(':memory:');
  t.equal(memory.walSync, null, 'in memory there is nothing to sync');
  t.equal(memory.sqlite.pragma('synchronous', { simple: true }), 2);
  await memory.close();
});

t.test('a write resolves only after an fsync; a read costs none', async (t) => {
  const db = await opened(t);
  const wal = db.walSync!;
  const before = wal.completed;
  await db.db
    .insertInto('t' as never)
    .values({ id: 1, v: 'a' } as never)
    .execute();
  t.equal(wal.completed, before + 1, 'the autocommit insert waited for one fsync');
  await db.db
    .selectFrom('t' as never)
    .selectAll()
    .execute();
  await sql`select count(*) from t`.execute(db.db);
  t.equal(wal.completed, before + 1, 'reads do not fsync');
  await db.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('t' as never)
      .values({ id: 2, v: 'b' } as never)
      .execute();
    await trx
      .insertInto('t' as never)
      .values({ id: 3, v: 'c' } as never)
      .execute();
    t.equal(wal.completed, before + 1, 'no fsync inside the transaction');
  });
  t.equal(wal.completed, before + 2, 'the transaction resolved after the fsync that follows its commit');
  await db.db.transaction().execute(async (trx) => {
    await trx
      .selectFrom('t' as never)
      .selectAll()
      .execute();
  });
  t.equal(wal.completed, before + 2, 'a read-only transaction does not fsync');
});

t.test('a group commit resolves its callers after the fsync that follows the commit', async (t) => {
  const db = await opened(t);
  const wal = db.walSync!;
  const before = wal.completed;
  const seen: number[] = [];
  await Promise.all(
    [10, 11, 12].map((id) =>
      groupCommit(db.db, async (trx) => {
        await trx
          .insertInto('t' as never)
          .values({ id, v: 'g' } as never)
          .execute();
      }).then(() => seen.push(wal.completed)),
    ),
  );
  t.same(seen, [before + 1, before + 1, before + 1], 'three writes, one transaction, one fsync, all resolved after it');
});

t.test('a write with RETURNING is a write: it waits for its fsync, and is never run as a read at once', async (t) => {
  const db = await opened(t);
  const wal = db.walSync!;
  const before = wal.completed;
  const returned = await db.db
    .insertInto('t' as never)
    .values({ id: 40, v: 'r' } as never)
    .returning('id' as never)
    .execute();
  t.same(returned, [{ id: 40 }]);
  t.equal(wal.completed, before + 1, 'an insert ... returning waited for one fsync');
  // executeText tries a read at once first: a statement that answers rows but writes is queued instead.
  const pending = executeText(db.db, 'update t set v = ? where id = ? returning v', ['s', 40]);
  t.equal((db.sqlite.prepare('select v from t where id = 40').get() as { v: string }).v, 'r', 'not run at once, as a read would be');
  t.same((await pending).rows, [{ v: 's' }]);
  t.equal(wal.completed, before + 2, 'and it waited for its fsync');
});

t.test('a transaction holding the connection runs its statements at once; released, they queue again', async (t) => {
  const db = await opened(t);
  const wal = db.walSync!;
  const before = wal.completed;
  const count = () => (db.sqlite.prepare('select count(*) as n from t').get() as { n: number }).n;
  await db.db.transaction().execute(async (trx) => {
    // Counts the statements that go through kysely's executor on this transaction.
    let viaKysely = 0;
    const executeQuery = trx.executeQuery.bind(trx);
    trx.executeQuery = ((query: Parameters<typeof executeQuery>[0]) => {
      viaKysely++;
      return executeQuery(query);
    }) as typeof trx.executeQuery;
    const release = holdConnection(db.db, trx);
    const write = executeText(trx, 'insert into t (id, v) values (?, ?)', [50, 'h']);
    t.equal(count(), 1, 'the insert ran before its promise was awaited');
    t.equal(Number((await write).numAffectedRows), 1, 'its result says so');
    const read = executeText<{ v: string }>(trx, 'select v from t where id = ?', [50]);
    t.same((await read).rows, [{ v: 'h' }], 'a read sees the transaction’s own write');
    await t.rejects(executeText(trx, 'insert into t (id, v) values (?, ?)', [50, 'again']), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' }, 'an error rejects');
    t.equal(viaKysely, 0, 'none went through kysely');
    release();
    await executeText(trx, 'insert into t (id, v) values (?, ?)', [51, 'q']);
    t.equal(viaKysely, 1, 'released: the next one did');
  });
  t.equal(count(), 2);
  t.equal(wal.completed, before + 1, 'the writes run at once made the transaction wait for its fsync');
  const outside = executeText(db.db, 'insert into t (id, v) values (?, ?)', [52, 'o']);
  t.equal(count(), 2, 'outside a transaction a write is never run at once');
  await outside;
});

t.test('a read is not held behind a write waiting for its fsync', async (t) => {
  const db = await opened(t);
  const order: string[] = [];
  const write = db.db
    .insertInto('t' as never)
    .values({ id: 20, v: 'w' } as never)
    .execute()
    .then(() => order.push('write'));
  const read = db.db
    .selectFrom('t' as never)
    .selectAll()
    .execute()
    .then((rows) => order.push(`read ${rows.length}`));
  await Promise.all([write, read]);
  t.same(order, ['read 1', 'write'], 'the read ran (and saw the committed row) while the write waited for the disk');
});

t.test('WalSync: a caller arriving during an fsync gets the next one, shared with the others', async (t) => {
  const db = await opened(t);
  await db.db
    .insertInto('t' as never)
    .values({ id: 30, v: 'x' } as never)
    .execute();
  const wal = new WalSync(`${db.file}-wal`);
  t.teardown(() => wal.release());
  const first = wal.sync();
  const second = wal.sync();
  const third = wal.sync();
  t.not(first, second, 'the second caller does not share the fsync already running');
  t.equal(second, third, 'callers arriving meanwhile share the next one');
  await first;
  t.equal(wal.completed, 1);
  await second;
  t.equal(wal.completed, 2, 'exactly one more fsync served both');
  await wal.sync();
  t.equal(wal.completed, 3, 'idle again: a new call starts its own');
});

t.test('WalSync: a missing WAL file fails the write that waits for it', async (t) => {
  const wal = new WalSync(path.join(tempDataDir(t), 'nothing.db-wal'));
  await t.rejects(wal.sync(), { code: 'ENOENT' });
  await wal.release();
});

t.test('checkpoints happen in the checkpointer’s worker, not inside our commits', async (t) => {
  const db = await opened(t);
  t.equal(db.sqlite.pragma('wal_autocheckpoint', { simple: true }), 0, 'the handle never checkpoints inside a commit');
  const before = statSync(db.file).size;
  // About 8 MiB of pages through the WAL, in one transaction.
  await db.db.transaction().execute(async (trx) => {
    for (let i = 0; i < 400; i++)
      await trx
        .insertInto('t' as never)
        .values({ id: 1000 + i, v: 'x'.repeat(20_000) } as never)
        .execute();
  });
  // The worker checkpoints every 200 ms: wait for the database file to receive them.
  for (let i = 0; i < 100 && statSync(db.file).size < before + 8_000_000; i++) await new Promise((r) => setTimeout(r, 100));
  t.ok(statSync(db.file).size >= before + 8_000_000, 'the worker copied the WAL into the database file');
  const rows = await db.db
    .selectFrom('t' as never)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  t.equal(Number((rows as { n: number }).n), 400);
});

t.test('deferDurability hands the commit’s fsync over instead of waiting for it', async (t) => {
  const db = await opened(t);
  const wal = db.walSync!;
  const before = wal.completed;
  const holder: { durable?: Promise<void> } = {};
  await db.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('t' as never)
      .values({ id: 40, v: 'd' } as never)
      .execute();
    deferDurability(db.db, holder);
  });
  t.ok(holder.durable, 'the fsync was started and handed over');
  t.equal(wal.completed, before, 'the transaction resolved without waiting for it');
  await holder.durable;
  t.equal(wal.completed, before + 1, 'the handed-over promise resolves after the fsync');
  const next = await db.db
    .insertInto('t' as never)
    .values({ id: 41, v: 'e' } as never)
    .execute();
  t.ok(next);
  t.equal(wal.completed, before + 2, 'the next write waits for its own fsync again');
});
