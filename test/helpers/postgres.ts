import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Test } from 'tap';
import { migrate, openDatabase } from '../../server/src/platform/db/database.js';

/**
 * PostgreSQL for the tests (issue 25). With PLACARD_TEST_DATABASE_URL set (a URL of a
 * server where the role may create databases: `bash scripts/pg-cluster.sh start` prints
 * one), the harness gives each test a database of its own, copied from a template that
 * holds the migrated schema: made once per schema (its name carries a hash of the
 * migrations and the dialect translation), by whichever test process comes first.
 */
export const TEST_DATABASE_URL = process.env.PLACARD_TEST_DATABASE_URL || null;

const here = path.dirname(fileURLToPath(import.meta.url));
const dbDir = path.join(here, '../../server/src/platform/db');

function schemaHash(): string {
  const hash = createHash('sha256');
  const migrations = path.join(dbDir, 'migrations');
  for (const name of readdirSync(migrations).sort()) hash.update(name).update(readFileSync(path.join(migrations, name)));
  for (const name of ['dialect.ts', 'postgres.ts', 'database.ts']) hash.update(readFileSync(path.join(dbDir, name)));
  return hash.digest('hex').slice(0, 12);
}

function urlFor(base: string, database: string): string {
  const u = new URL(base);
  u.pathname = `/${database}`;
  return u.toString();
}

async function withAdmin<T>(base: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

let template: Promise<string> | null = null;

/** The migrated template's name, made if it is not there yet (under a lock shared by all test processes). */
function ensureTemplate(base: string): Promise<string> {
  template ??= withAdmin(base, async (admin) => {
    const name = `placard_tpl_${schemaHash()}`;
    await admin.query(`select pg_advisory_lock(hashtext('placard test template'))`);
    try {
      const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
      if (found.rowCount) return name;
      const building = `${name}_building`;
      await admin.query(`drop database if exists ${building} with (force)`);
      await admin.query(`create database ${building}`);
      const opened = openDatabase(urlFor(base, building), { poolSize: 1 });
      try {
        await migrate(opened.db);
      } finally {
        await opened.close();
      }
      await admin.query(`alter database ${building} rename to ${name}`);
      return name;
    } finally {
      await admin.query(`select pg_advisory_unlock(hashtext('placard test template'))`);
    }
  });
  return template;
}

/**
 * A new database with the migrated schema: its URL, and `drop` for the end of the test
 * (after whatever uses it has closed its pool; with `t`, dropped at the test's teardown).
 */
export async function freshPostgresDatabase(t?: Test, base = TEST_DATABASE_URL): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!base) throw new Error('PLACARD_TEST_DATABASE_URL is not set');
  const tpl = await ensureTemplate(base);
  const name = `placard_t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  await withAdmin(base, (admin) => admin.query(`create database ${name} template ${tpl}`));
  const drop = async () => {
    await withAdmin(base, (admin) => admin.query(`drop database if exists ${name} with (force)`));
  };
  t?.teardown(drop);
  return { url: urlFor(base, name), drop };
}

/**
 * A database for a test that has no app (a CLI test): the SQLite file in `dataDir`, or with
 * PLACARD_TEST_DATABASE_URL a fresh PostgreSQL database of its own (dropped at teardown;
 * `empty`: not even migrated, as a new server's). Answers what openDatabase opens.
 */
export async function testDatabaseTarget(t: Test, dataDir: string, options: { empty?: boolean } = {}): Promise<string> {
  if (!TEST_DATABASE_URL) return path.join(dataDir, 'placard.db');
  if (!options.empty) return (await freshPostgresDatabase(t)).url;
  const name = `placard_t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  await withAdmin(TEST_DATABASE_URL, (admin) => admin.query(`create database ${name} template template0`));
  t.teardown(() => withAdmin(TEST_DATABASE_URL, (admin) => admin.query(`drop database if exists ${name} with (force)`)).then(() => undefined));
  return urlFor(TEST_DATABASE_URL, name);
}

/** What a spawned `placard` CLI needs in its environment to open `target` (a testDatabaseTarget, or an app's database URL). */
export function cliDatabaseEnv(target: string | null): Record<string, string> {
  return target && /^postgres(ql)?:\/\//i.test(target) ? { PLACARD_DATABASE_URL: target } : {};
}
