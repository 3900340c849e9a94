import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { sql } from 'kysely';
import type { Test } from 'tap';
import { type Db, openDatabase } from '../../server/src/platform/db/database.js';
import { isPostgres } from '../../server/src/platform/db/dialect.js';
import { TEST_DATABASE_URL, testDatabaseTarget } from './postgres.js';

/** Every row of every table, ordered: the whole database as data (SQLite or PostgreSQL). */
export async function dumpTables(db: Db): Promise<Record<string, unknown[]>> {
  const postgres = isPostgres(db);
  const tables = (
    postgres
      ? await sql<{ name: string }>`select table_name as name from information_schema.tables
          where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`.execute(db)
      : await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name`.execute(db)
  ).rows.map((r) => r.name);
  const out: Record<string, unknown[]> = {};
  for (const name of tables) {
    const cols = (
      postgres
        ? await sql<{ name: string }>`select column_name as name from information_schema.columns
            where table_schema = current_schema() and table_name = ${name} order by ordinal_position`.execute(db)
        : await sql<{ name: string }>`select name from pragma_table_info(${name})`.execute(db)
    ).rows.map((c) => `"${c.name}"`);
    out[name] = (await sql.raw(`select * from "${name}" order by ${cols.join(', ')}`).execute(db)).rows;
  }
  return out;
}

/**
 * The database inside an extracted backup (`staging`), opened: the SQLite file, or with
 * PLACARD_TEST_DATABASE_URL the pg_dump restored by pg_restore itself into an empty
 * database of its own. Closed (and dropped) at the test's teardown.
 */
export async function archivedDatabase(t: Test, staging: string): Promise<Db> {
  if (!TEST_DATABASE_URL) {
    const opened = openDatabase(path.join(staging, 'placard.db'));
    t.teardown(() => opened.close());
    return opened.db;
  }
  const url = await testDatabaseTarget(t, staging, { empty: true });
  execFileSync('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${url}`, path.join(staging, 'placard.pgdump')]);
  const opened = openDatabase(url, { poolSize: 1 });
  // (The database is dropped `with (force)`, whichever teardown runs first.)
  t.teardown(() => opened.close());
  return opened.db;
}
