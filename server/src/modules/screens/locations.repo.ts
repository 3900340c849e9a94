import type { Db } from '../../platform/db/database.js';
import type { LocationsTable } from '../../platform/db/schema.js';
import { afterCursor } from '../../platform/http/pagination.js';

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

export function findLocation(db: Db, id: string): Promise<LocationsTable | undefined> {
  return db.selectFrom('locations').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Locations by name (then id) after `cursor`, names containing `q` (case-insensitive): `limit + 1` rows, for toPage. */
export function listLocations(db: Db, filter: { q?: string; cursor?: string; limit: number }): Promise<LocationsTable[]> {
  let q = db
    .selectFrom('locations')
    .selectAll()
    .where(afterCursor('name', 'id', 'asc', filter.cursor));
  if (filter.q) {
    const needle = filter.q.toLowerCase();
    q = q.where((eb) => eb(eb.fn('instr', [eb.fn('lower', ['name']), eb.val(needle)]), '>', 0));
  }
  return q
    .orderBy('name')
    .orderBy('id')
    .limit(filter.limit + 1)
    .execute();
}

/** How many screens each location of `ids` holds (locations without screens are absent). */
export async function screenCountsAt(db: Db, ids: readonly string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (ids.length === 0) return counts;
  const rows = await db
    .selectFrom('screens')
    .select(['location_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('location_id', 'in', [...ids])
    .groupBy('location_id')
    .execute();
  for (const r of rows) counts.set(r.location_id!, Number(r.n));
  return counts;
}

export async function insertLocation(db: Db, row: LocationsTable): Promise<void> {
  await db.insertInto('locations').values(row).execute();
}

export async function updateLocation(db: Db, id: string, set: Partial<LocationsTable>): Promise<void> {
  await db.updateTable('locations').set(set).where('id', '=', id).execute();
}

export async function deleteLocationRow(db: Db, id: string): Promise<void> {
  await db.deleteFrom('locations').where('id', '=', id).execute();
}

/** Every location, by name (then id). */
export function allLocations(db: Db): Promise<LocationsTable[]> {
  return db.selectFrom('locations').selectAll().orderBy('name').orderBy('id').execute();
}

/** Creates the location `id` with `values`, or updates it to them (the settings import). */
export async function upsertLocation(db: Db, id: string, values: Omit<LocationsTable, 'id' | 'created_at'>, createdAt: string): Promise<void> {
  await db
    .insertInto('locations')
    .values({ id, ...values, created_at: createdAt })
    .onConflict((oc) => oc.column('id').doUpdateSet(values))
    .execute();
}
