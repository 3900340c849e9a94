import type { Db } from '../../platform/db/database.js';

export async function readMeta(db: Db, key: string): Promise<string | null> {
  return (await db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst())?.value ?? null;
}

export async function writeMeta(db: Db, key: string, value: string): Promise<void> {
  await db
    .insertInto('meta')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}

/** How many rows a venue table holds, and the first 50 names (by name, then id). */
export async function countAndNames(db: Db, table: 'screens' | 'locations' | 'screen_groups' | 'assets' | 'playlists' | 'layouts' | 'schedules') {
  const count = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const rows = await db.selectFrom(table).select('name').orderBy('name').orderBy('id').limit(50).execute();
  return { count: Number(count.n), names: rows.map((r) => r.name) };
}
