import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { isPostgres } from '../../platform/db/dialect.js';

/** The database file itself: its versions and size (status), and its upkeep (the vacuum action). */

/** The database engine's version (SQLite's library; PostgreSQL's server, e.g. `15.18`). */
export async function sqliteVersion(db: Db): Promise<string> {
  const r = isPostgres(db)
    ? await sql<{ v: string }>`select current_setting('server_version') as v`.execute(db)
    : await sql<{ v: string }>`select sqlite_version() as v`.execute(db);
  return r.rows[0]?.v ?? 'unknown';
}

/** The newest migration applied (0 for none). */
export async function schemaVersion(db: Db): Promise<number> {
  const row = await db
    .selectFrom('schema_migrations')
    .select((eb) => eb.fn.max('version').as('v'))
    .executeTakeFirst();
  return Number(row?.v ?? 0);
}

/** The bytes of the database's pages (what the main file holds once the WAL is folded back; PostgreSQL: the database's size). */
export async function pageBytes(db: Db): Promise<number> {
  const r = isPostgres(db)
    ? await sql<{ n: number }>`select pg_database_size(current_database()) as n`.execute(db)
    : await sql<{ n: number }>`select page_count * page_size as n from pragma_page_count(), pragma_page_size()`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** Rebuilds the database file compactly (PostgreSQL: VACUUM reclaims dead rows in place). */
export async function vacuum(db: Db): Promise<void> {
  await sql`vacuum`.execute(db);
}

/** Refreshes the query planner's statistics. */
export async function optimize(db: Db): Promise<void> {
  await (isPostgres(db) ? sql`analyze` : sql`pragma optimize`).execute(db);
}
