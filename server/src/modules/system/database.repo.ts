import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';

/** The database file itself: its versions and size (status), and its upkeep (the vacuum action). */

/** The SQLite library's version. */
export async function sqliteVersion(db: Db): Promise<string> {
  const r = await sql<{ v: string }>`select sqlite_version() as v`.execute(db);
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

/** The bytes of the database's pages (what the main file holds once the WAL is folded back). */
export async function pageBytes(db: Db): Promise<number> {
  const r = await sql<{ n: number }>`select page_count * page_size as n from pragma_page_count(), pragma_page_size()`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** Rebuilds the database file compactly. */
export async function vacuum(db: Db): Promise<void> {
  await sql`vacuum`.execute(db);
}

/** Refreshes the query planner's statistics. */
export async function optimize(db: Db): Promise<void> {
  await sql`pragma optimize`.execute(db);
}
