import path from 'node:path';
import { sql, type Transaction } from 'kysely';
import t, { type Test } from 'tap';
import { openDatabase } from '../server/src/platform/db/database.js';
import type { Database } from '../server/src/platform/db/schema.js';
import { groupCommit } from '../server/src/modules/screens/group-commit.js';
import { tempDataDir } from './helpers/harness.js';

async function scratch(t: Test) {
  const opened = openDatabase(path.join(tempDataDir(t), 'gc.db'));
  t.teardown(() => opened.close());
  const db = opened.db;
  await sql`create table gc_test (id text primary key) strict`.execute(db);
  const ids = async () => (await sql<{ id: string }>`select id from gc_test order by id`.execute(db)).rows.map((r) => r.id);
  return { db, ids };
}

const insert = (trx: Transaction<Database>, id: string) => sql`insert into gc_test (id) values (${id})`.execute(trx);

t.test('one job that throws fails only its own caller; the others in the batch commit', async (t) => {
  const { db, ids } = await scratch(t);
  const seen: Transaction<Database>[] = [];
  const boom = new Error('job b broke');
  const results = await Promise.allSettled([
    groupCommit(db, async (trx) => {
      seen.push(trx);
      await insert(trx, 'a');
      return 'A';
    }),
    groupCommit(db, async (trx) => {
      seen.push(trx);
      await insert(trx, 'b'); // written, then undone with the job
      throw boom;
    }),
    groupCommit(db, async (trx) => {
      seen.push(trx);
      await insert(trx, 'c');
      return 'C';
    }),
  ]);
  t.equal(seen.length, 3);
  t.ok(
    seen.every((x) => x === seen[0]),
    'the three jobs shared one transaction (one batch)',
  );
  t.same(results, [
    { status: 'fulfilled', value: 'A' },
    { status: 'rejected', reason: boom },
    { status: 'fulfilled', value: 'C' },
  ]);
  t.same(await ids(), ['a', 'c'], 'the failed job left nothing; the others are committed');
});

t.test('a job failing on a constraint (an SQLite error) does not take its neighbours down', async (t) => {
  const { db, ids } = await scratch(t);
  await sql`insert into gc_test (id) values ('taken')`.execute(db);
  const results = await Promise.allSettled([
    groupCommit(db, (trx) => insert(trx, 'x').then(() => 1)),
    groupCommit(db, async (trx) => {
      await insert(trx, 'y');
      await insert(trx, 'taken'); // UNIQUE constraint failed
      return 2;
    }),
    groupCommit(db, (trx) => insert(trx, 'z').then(() => 3)),
  ]);
  t.same(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  t.match((results[1] as PromiseRejectedResult).reason, { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
  t.same(await ids(), ['taken', 'x', 'z'], '"y" was rolled back with its job');
  // The committer keeps working after a failed job.
  t.equal(await groupCommit(db, (trx) => insert(trx, 'w').then(() => 'later')), 'later');
  t.same(await ids(), ['taken', 'w', 'x', 'z']);
});
