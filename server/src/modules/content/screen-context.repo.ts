/**
 * What content reads of screens, groups and locations (owned by the screens module), with
 * plain SQL so this module does not reach into theirs. screen-context.ts makes a screen's
 * context of these rows.
 */
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { type DialectName, dialectOf, sqlText } from '../../platform/db/dialect.js';
import { executeText } from '../../platform/db/prepared.js';

export interface ScreenContextRow {
  id: string;
  name: string;
  location_id: string | null;
  time_zone: string | null;
  manifest_revision: number;
  display_width: number | null;
  display_height: number | null;
  /** JSON array of the screen's group ids, in order. */
  group_ids: string;
}

/**
 * Asked by every manifest request (a 304 too) and every media download's guard: one statement,
 * compiled once (no query builder per call; the connection keeps it prepared by its text).
 */
const screenContextSql = (d: DialectName) => `
  select s.id, s.name, s.location_id, l.time_zone, s.manifest_revision,
    ${sqlText.jsonNumber(d, 's.last_status', '$.display.width')} as display_width, ${sqlText.jsonNumber(d, 's.last_status', '$.display.height')} as display_height,
    (select ${sqlText.jsonArrayAgg(d, 'm.group_id', 'm.group_id')} from screen_group_members m where m.screen_id = s.id) as group_ids
  from screens s left join locations l on l.id = s.location_id where s.id = ?`;
const SCREEN_CONTEXT_SQL = { sqlite: screenContextSql('sqlite'), postgres: screenContextSql('postgres') };

/** A screen with its location's zone, the display size its player last reported and its groups (by id). */
export async function screenContextRow(db: Db, screenId: string): Promise<ScreenContextRow | undefined> {
  return (await executeText<ScreenContextRow>(db, SCREEN_CONTEXT_SQL[dialectOf(db)], [screenId])).rows[0];
}

/** The given screens with their location's zone (no display: the resolver does not read it). */
export function screenZoneRows(db: Db, screenIds: readonly string[]) {
  return db
    .selectFrom('screens as s')
    .leftJoin('locations as l', 'l.id', 's.location_id')
    .select(['s.id', 's.name', 's.location_id', 'l.time_zone', 's.manifest_revision'])
    .where('s.id', 'in', [...screenIds])
    .execute();
}

/** The groups each of the given screens is in, by group id. */
export async function groupIdsByScreen(db: Db, screenIds: readonly string[]): Promise<Map<string, string[]>> {
  const groups = new Map<string, string[]>();
  for (const m of await db
    .selectFrom('screen_group_members')
    .select(['screen_id', 'group_id'])
    .where('screen_id', 'in', [...screenIds])
    .orderBy('group_id')
    .execute()) {
    const list = groups.get(m.screen_id) ?? [];
    list.push(m.group_id);
    groups.set(m.screen_id, list);
  }
  return groups;
}

/** Screens without a location (they run in the server's default zone). */
export async function screensWithoutLocation(db: Db): Promise<string[]> {
  return (await db.selectFrom('screens').select('id').where('location_id', 'is', null).execute()).map((r) => r.id);
}

/** Every screen's id. */
export async function everyScreenId(db: Db): Promise<string[]> {
  return (await db.selectFrom('screens').select('id').execute()).map((r) => r.id);
}

export async function groupExists(db: Db, groupId: string): Promise<{ id: string; name: string } | undefined> {
  return (await sql<{ id: string; name: string }>`select id, name from screen_groups where id = ${groupId}`.execute(db)).rows[0];
}

/** Id and name of the given groups that exist. */
export async function groupNames(db: Db, groupIds: readonly string[]): Promise<{ id: string; name: string }[]> {
  if (groupIds.length === 0) return [];
  return (await sql<{ id: string; name: string }>`select id, name from screen_groups where id in (${sql.join(groupIds)})`.execute(db)).rows;
}

/** The zone most of a group's members are in (ties: alphabetical); null when that is no location's (or the group has none). */
export async function mostCommonGroupZone(db: Db, groupId: string): Promise<string | null> {
  const rows = await sql<{ z: string | null; n: number }>`
    select l.time_zone as z, count(*) as n from screen_group_members m join screens s on s.id = m.screen_id left join locations l on l.id = s.location_id
    where m.group_id = ${groupId} group by l.time_zone order by n desc, z`.execute(db);
  return rows.rows[0]?.z ?? null;
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
