import path from 'node:path';
import { sql } from 'kysely';
import t from 'tap';
import { DatabaseTooNewError, migrate, openDatabase } from '../server/src/platform/db/database.js';
import { MIGRATIONS, type Migration } from '../server/src/platform/db/migrations/index.js';
import { tempDataDir } from './helpers/harness.js';

t.test('every migration runs on an empty database and is recorded', async (t) => {
  const dir = tempDataDir(t);
  const { db, sqlite, close } = openDatabase(path.join(dir, 'placard.db'));
  t.teardown(close);
  const report = await migrate(db);
  t.same(report.applied, MIGRATIONS.map((m) => m.version));
  const rows = await db.selectFrom('schema_migrations').selectAll().orderBy('version').execute();
  t.same(rows.map((r) => r.version), MIGRATIONS.map((m) => m.version));
  t.same(rows.map((r) => r.name), MIGRATIONS.map((m) => m.name));
  t.same(sqlite.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
  t.same(sqlite.pragma('foreign_key_check'), []);
  t.equal(sqlite.pragma('journal_mode', { simple: true }), 'wal');
  t.equal(sqlite.pragma('synchronous', { simple: true }), 2, 'synchronous=FULL');
  t.equal(sqlite.pragma('foreign_keys', { simple: true }), 1);
  t.ok((sqlite.pragma('busy_timeout', { simple: true }) as number) >= 1000);
  const again = await migrate(db);
  t.same(again.applied, [], 'running again applies nothing');
});

t.test('versions strictly increase', async (t) => {
  const versions = MIGRATIONS.map((m) => m.version);
  t.same(versions, [...versions].sort((a, b) => a - b));
  t.equal(new Set(versions).size, versions.length);
});

t.test('a failing migration leaves nothing behind', async (t) => {
  const dir = tempDataDir(t);
  const { db, close } = openDatabase(path.join(dir, 'placard.db'));
  t.teardown(close);
  const broken: Migration = {
    version: 999,
    name: 'broken',
    async up(trx) {
      await trx.schema.createTable('half_done').addColumn('id', 'integer').execute();
      await sql`select * from no_such_table`.execute(trx);
    },
  };
  await t.rejects(migrate(db, [...MIGRATIONS, broken]));
  const tables = await sql<{ name: string }>`select name from sqlite_master where name = 'half_done'`.execute(db);
  t.same(tables.rows, [], 'the table the failed migration made is rolled back');
  const recorded = await db.selectFrom('schema_migrations').select('version').where('version', '=', 999).execute();
  t.same(recorded, []);
});

t.test('the server refuses a database newer than itself', async (t) => {
  const dir = tempDataDir(t);
  const { db, close } = openDatabase(path.join(dir, 'placard.db'));
  t.teardown(close);
  await migrate(db);
  await db.insertInto('schema_migrations').values({ version: 10_000, name: 'from the future', applied_at: new Date().toISOString() }).execute();
  const err = await migrate(db).catch((e: unknown) => e);
  t.type(err, DatabaseTooNewError);
  t.match((err as Error).message, /schema version 10000/);
});
