/**
 * What content needs to know about screens, groups and locations (owned by the screens
 * module): one place, read with plain SQL so this module does not reach into theirs. Who a
 * target reaches, and the default zone, are the schedules module's (modules/schedules/fleet-context.ts).
 */
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { defaultTimeZone } from '../schedules/index.js';

export { defaultTimeZone, screensOf, type Targets } from '../schedules/index.js';

export interface ScreenContext {
  id: string;
  name: string;
  timeZone: string;
  locationId: string | null;
  groupIds: string[];
  manifestRevision: number;
  /** The display size (device pixels) the player last reported, when plausible: full-screen media is picked for it. */
  display: { width: number; height: number } | null;
}

const plausible = (n: unknown): n is number => typeof n === 'number' && n >= 16 && n <= 16384;

export async function screenContext(db: Db, screenId: string): Promise<ScreenContext | undefined> {
  const row = (
    await sql<{
      id: string;
      name: string;
      location_id: string | null;
      time_zone: string | null;
      manifest_revision: number;
      display_width: number | null;
      display_height: number | null;
    }>`
      select s.id, s.name, s.location_id, l.time_zone, s.manifest_revision,
        json_extract(s.last_status, '$.display.width') as display_width, json_extract(s.last_status, '$.display.height') as display_height
      from screens s left join locations l on l.id = s.location_id where s.id = ${screenId}`.execute(db)
  ).rows[0];
  if (!row) return undefined;
  const groups = await sql<{ group_id: string }>`select group_id from screen_group_members where screen_id = ${screenId} order by group_id`.execute(db);
  return {
    id: row.id,
    name: row.name,
    timeZone: row.time_zone ?? (await defaultTimeZone(db)),
    locationId: row.location_id,
    groupIds: groups.rows.map((g) => g.group_id),
    manifestRevision: row.manifest_revision,
    display:
      plausible(row.display_width) && plausible(row.display_height) ? { width: Math.round(row.display_width), height: Math.round(row.display_height) } : null,
  };
}

export async function groupExists(db: Db, groupId: string): Promise<{ id: string; name: string } | undefined> {
  return (await sql<{ id: string; name: string }>`select id, name from screen_groups where id = ${groupId}`.execute(db)).rows[0];
}

/** The zone most of a group's members are in (ties: alphabetical), else the default. */
export async function groupZone(db: Db, groupId: string): Promise<string> {
  const rows = await sql<{ z: string | null; n: number }>`
    select l.time_zone as z, count(*) as n from screen_group_members m join screens s on s.id = m.screen_id left join locations l on l.id = s.location_id
    where m.group_id = ${groupId} group by l.time_zone order by n desc, z`.execute(db);
  return rows.rows[0]?.z ?? (await defaultTimeZone(db));
}

/** Id and name of the given screens that exist, by name (then id). */
export async function screenNames(db: Db, screenIds: readonly string[]): Promise<{ id: string; name: string }[]> {
  if (screenIds.length === 0) return [];
  return db
    .selectFrom('screens')
    .select(['id', 'name'])
    .where('id', 'in', [...screenIds])
    .orderBy('name')
    .orderBy('id')
    .execute();
}
