import type { Db } from '../../platform/db/database.js';

/** Names of things by id, for answers that name what they mention (ids that name nothing are left out). */
export async function namesOf(
  db: Db,
  table: 'assets' | 'playlists' | 'layouts' | 'schedules' | 'widgets',
  ids: ReadonlySet<string>,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (ids.size === 0) return out;
  for (const r of await db
    .selectFrom(table)
    .select(['id', 'name'])
    .where('id', 'in', [...ids])
    .execute())
    out.set(r.id, r.name);
  return out;
}
