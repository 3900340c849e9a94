import path from 'node:path';
import { sql } from 'kysely';
import t from 'tap';
import { openDatabase } from '../server/src/platform/db/database.js';
import { prepared } from '../server/src/platform/db/prepared.js';
import { tempDataDir } from './helpers/harness.js';

/**
 * platform/db/prepared.ts: a kysely query compiled once and bound anew on each call. What
 * can fail: an argument bound to the wrong parameter, a constant of the query lost, a
 * query whose shape depends on its arguments accepted (it would run the first call's
 * shape for every later one).
 */
t.test('a prepared query binds each call’s arguments where they belong, constants kept', async (t) => {
  const opened = openDatabase(path.join(tempDataDir(t), 'placard.db'));
  t.teardown(() => opened.close());
  const db = opened.db;
  await sql`create table p (id integer primary key, kind text, screen text, at text)`.execute(db);
  await sql`insert into p values (1, 'queued', 'a', '2026-01-02'), (2, 'delivered', 'a', '2026-01-03'), (3, 'done', 'a', '2026-01-04'), (4, 'queued', 'b', '2026-01-05')`.execute(
    db,
  );
  const count = prepared((d: typeof db, screen: string, after: string) =>
    d
      .selectFrom('p' as never)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('kind' as never, 'in', ['queued', 'delivered'] as never)
      .where('screen' as never, '=', screen as never)
      .where('at' as never, '>', after as never),
  );
  const n = async (screen: string, after: string) => Number((await count(db, screen, after)).rows[0]?.n);
  t.equal(await n('a', '2026-01-01'), 2, 'the in-list constants stay in place');
  t.equal(await n('a', '2026-01-02'), 1, 'the second argument rebinds');
  t.equal(await n('b', '2026-01-01'), 1, 'the first argument rebinds');
  t.equal(await n('c', '2026-01-01'), 0);
  const update = prepared((d: typeof db, kind: string, id: number) =>
    d
      .updateTable('p' as never)
      .set({ kind } as never)
      .where('id' as never, '=', id as never),
  );
  const r = await update(db, 'done', 4);
  t.equal(r.numAffectedRows, 1n);
  t.same(await sql`select kind from p where id = 4`.execute(db).then((x) => x.rows), [{ kind: 'done' }]);
  await db.transaction().execute(async (trx) => {
    await update(trx, 'queued', 3);
  });
  t.equal(await n('a', '2026-01-01'), 3, 'inside a transaction too');
});

t.test('a query whose shape depends on an argument is refused at its first call', async (t) => {
  const opened = openDatabase(path.join(tempDataDir(t), 'placard.db'));
  t.teardown(() => opened.close());
  const db = opened.db;
  const inSql = prepared((d: typeof db, value: string) => d.selectNoFrom(sql.lit(value).as('x')));
  t.throws(() => inSql(db, 'x'), /every argument must be exactly one parameter/, 'an argument written into the SQL text');
  const unused = prepared((d: typeof db, _ignored: string) => d.selectNoFrom(sql<number>`1`.as('x')));
  t.throws(() => unused(db, 'y'), /every argument must be exactly one parameter/, 'an argument the query never uses');
});

t.test('a prepared read outside a transaction runs at once and sees what a queued read would', async (t) => {
  const opened = openDatabase(path.join(tempDataDir(t), 'placard.db'));
  t.teardown(() => opened.close());
  const db = opened.db;
  await sql`create table q (id integer primary key, v text)`.execute(db);
  await sql`insert into q values (1, 'committed')`.execute(db);
  const read = prepared((d: typeof db, id: number) =>
    d
      .selectFrom('q' as never)
      .select('v' as never)
      .where('id' as never, '=', id as never),
  );
  const value = async (d: typeof db) => (await read(d, 1)).rows[0] as { v: string } | undefined;
  t.same(await value(db), { v: 'committed' });

  // Another request holds the connection in a transaction with an uncommitted write: a read
  // on the database must not see it (it waits for the connection, then sees the commit),
  // while a read inside that transaction sees its own write.
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  let inside: unknown;
  const writer = db.transaction().execute(async (trx) => {
    await sql`update q set v = 'uncommitted' where id = 1`.execute(trx);
    inside = await value(trx);
    await held;
  });
  while (!opened.sqlite.inTransaction) await new Promise((r) => setImmediate(r));
  let outside: unknown = 'pending';
  const reader = value(db).then((v) => {
    outside = v;
  });
  await new Promise((r) => setTimeout(r, 20));
  t.equal(outside, 'pending', 'the read waits while a transaction holds the connection');
  release();
  await Promise.all([writer, reader]);
  t.same(inside, { v: 'uncommitted' }, 'the transaction reads its own write');
  t.same(outside, { v: 'uncommitted' }, 'the waiting read sees the committed write');

  // A prepared write still goes through the driver and waits for its fsync.
  const set = prepared((d: typeof db, v: string) =>
    d
      .updateTable('q' as never)
      .set({ v } as never)
      .where('id' as never, '=', 1 as never),
  );
  const before = opened.walSync!.completed;
  await set(db, 'written');
  t.ok(opened.walSync!.completed > before, 'the write waited for an fsync of the WAL');
  t.same(await value(db), { v: 'written' });

  // A bad read fails as a rejected promise, as kysely's would.
  const broken = prepared((d: typeof db, id: number) =>
    d
      .selectFrom('missing_table' as never)
      .selectAll()
      .where('id' as never, '=', id as never),
  );
  await t.rejects(() => broken(db, 1), /no such table/);
});
