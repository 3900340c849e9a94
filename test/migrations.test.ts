import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { sql } from 'kysely';
import t from 'tap';
import { DatabaseTooNewError, migrate, openDatabase, UnknownMigrationError } from '../server/src/platform/db/database.js';
import { MIGRATIONS, type Migration } from '../server/src/platform/db/migrations/index.js';
import { tempDataDir } from './helpers/harness.js';

t.test('every migration runs on an empty database and is recorded', async (t) => {
  const dir = tempDataDir(t);
  const { db, sqlite, close } = openDatabase(path.join(dir, 'placard.db'));
  t.teardown(close);
  const report = await migrate(db);
  t.same(
    report.applied,
    MIGRATIONS.map((m) => m.version),
  );
  const rows = await db.selectFrom('schema_migrations').selectAll().orderBy('version').execute();
  t.same(
    rows.map((r) => r.version),
    MIGRATIONS.map((m) => m.version),
  );
  t.same(
    rows.map((r) => r.name),
    MIGRATIONS.map((m) => m.name),
  );
  t.same(sqlite.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
  t.same(sqlite.pragma('foreign_key_check'), []);
  t.equal(sqlite.pragma('journal_mode', { simple: true }), 'wal');
  // NORMAL on the handle; commits are made durable by an fsync of the WAL off the event loop
  // (platform/db/database.ts, test/database-wal-sync.test.ts).
  t.equal(sqlite.pragma('synchronous', { simple: true }), 1, 'synchronous=NORMAL plus WalSync');
  t.equal(sqlite.pragma('foreign_keys', { simple: true }), 1);
  t.ok((sqlite.pragma('busy_timeout', { simple: true }) as number) >= 1000);
  const again = await migrate(db);
  t.same(again.applied, [], 'running again applies nothing');
});

t.test('versions strictly increase', async (t) => {
  const versions = MIGRATIONS.map((m) => m.version);
  t.same(
    versions,
    [...versions].sort((a, b) => a - b),
  );
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

t.test('the server process stops with one line on a newer database, and on one it does not know', async (t) => {
  for (const [version, expected] of [
    [10_000, /^placard: the database is at schema version 10000 but this server knows only up to \d+/],
    [MIGRATIONS[1]!.version + 1, /^placard: the database records schema migration\(s\) \d+ that this server does not know/],
  ] as const) {
    const dir = tempDataDir(t);
    const { db, close } = openDatabase(path.join(dir, 'placard.db'));
    await migrate(db);
    await db.insertInto('schema_migrations').values({ version, name: 'elsewhere', applied_at: new Date().toISOString() }).execute();
    await close();
    const run = spawnSync(process.execPath, ['--import=tsx', 'server/src/main.ts'], {
      env: { ...process.env, PLACARD_DATA_DIR: dir, PLACARD_PORT: '0', PLACARD_HTTPS_PORT: '0', PLACARD_HOST: '127.0.0.1' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    t.equal(run.status, 1, `exit 1 (version ${version})`);
    const lines = run.stderr.trim().split('\n');
    t.equal(lines.length, 1, run.stderr);
    t.match(lines[0], expected);
  }
});

t.test('a database recording a migration this server never had is refused', async (t) => {
  const dir = tempDataDir(t);
  const { db, close } = openDatabase(path.join(dir, 'placard.db'));
  t.teardown(close);
  await migrate(db);
  const inside = MIGRATIONS[1]!.version + 1; // between two known versions, as another build's would be
  await db.insertInto('schema_migrations').values({ version: inside, name: 'other build', applied_at: new Date().toISOString() }).execute();
  const err = await migrate(db).catch((e: unknown) => e);
  t.type(err, UnknownMigrationError);
  t.same((err as UnknownMigrationError).versions, [inside]);
});
