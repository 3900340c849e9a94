import type { Db } from '../../platform/db/database.js';

/** Whether a location with this id exists. */
export async function locationExists(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom('locations').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** The time zone of each location of `ids` that exists. */
export async function locationTimeZones(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  const zones = new Map<string, string>();
  if (ids.length === 0) return zones;
  for (const l of await db
    .selectFrom('locations')
    .select(['id', 'time_zone'])
    .where('id', 'in', [...ids])
    .execute())
    zones.set(l.id, l.time_zone);
  return zones;
}
