/**
 * What schedules read of screens, groups and locations (owned by the screens module), with
 * plain SQL so this module does not reach into that one's files. fleet-context.ts puts
 * these together (who a target reaches, which targets exist, their zones). Each takes a
 * non-empty list of ids.
 */
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';

const ids = async (rows: Promise<{ rows: { id: string }[] }>) => (await rows).rows.map((r) => r.id);

/** Of the given screens, those that exist. */
export function existingScreenIds(db: Db, screenIds: readonly string[]): Promise<string[]> {
  return ids(sql<{ id: string }>`select id from screens where id in (${sql.join(screenIds)})`.execute(db));
}

/** The screens in any of the groups. */
export function screenIdsInGroups(db: Db, groupIds: readonly string[]): Promise<string[]> {
  return ids(sql<{ id: string }>`select screen_id as id from screen_group_members where group_id in (${sql.join(groupIds)})`.execute(db));
}

/** The screens at any of the locations. */
export function screenIdsAtLocations(db: Db, locationIds: readonly string[]): Promise<string[]> {
  return ids(sql<{ id: string }>`select id from screens where location_id in (${sql.join(locationIds)})`.execute(db));
}

/** Of the given groups, those that exist. */
export function existingGroupIds(db: Db, groupIds: readonly string[]): Promise<string[]> {
  return ids(sql<{ id: string }>`select id from screen_groups where id in (${sql.join(groupIds)})`.execute(db));
}

/** Of the given locations, those that exist. */
export function existingLocationIds(db: Db, locationIds: readonly string[]): Promise<string[]> {
  return ids(sql<{ id: string }>`select id from locations where id in (${sql.join(locationIds)})`.execute(db));
}

/** The time zones of the locations (one per location that exists). */
export async function locationZones(db: Db, locationIds: readonly string[]): Promise<string[]> {
  return (await sql<{ z: string }>`select time_zone as z from locations where id in (${sql.join(locationIds)})`.execute(db)).rows.map((r) => r.z);
}

/** The time zone of each screen's location (null: a screen without a location). */
export async function screenLocationZones(db: Db, screenIds: readonly string[]): Promise<(string | null)[]> {
  const rows = await sql<{
    z: string | null;
  }>`select l.time_zone as z from screens s left join locations l on l.id = s.location_id where s.id in (${sql.join(screenIds)})`.execute(db);
  return rows.rows.map((r) => r.z);
}
