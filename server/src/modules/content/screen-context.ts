/**
 * What content needs to know about screens, groups and locations (owned by the screens
 * module): one place, read with plain SQL so this module does not reach into theirs.
 */
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { cachedSettings } from '../system/index.js';

/**
 * The zone of a screen without a location: the server's default time zone setting
 * (`settings.timeZone`, the box's own zone on a fresh install; docs/operations.md).
 */
export async function defaultTimeZone(db: Db): Promise<string> {
  return (await cachedSettings(db)).timeZone;
}

export interface Targets {
  screenIds: string[];
  groupIds: string[];
  locationIds: string[];
}

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

const present = new WeakMap<Db, boolean>();

/** Until the screens module's tables exist there are no screens to target. */
export async function fleetExists(db: Db): Promise<boolean> {
  if (present.get(db)) return true;
  const row = await sql<{
    n: number;
  }>`select count(*) as n from sqlite_master where type = 'table' and name in ('screens', 'screen_groups', 'screen_group_members', 'locations')`.execute(db);
  const found = Number(row.rows[0]?.n ?? 0) === 4;
  if (found) present.set(db, true);
  return found;
}

export async function screenContext(db: Db, screenId: string): Promise<ScreenContext | undefined> {
  if (!(await fleetExists(db))) return undefined;
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
  if (!(await fleetExists(db))) return undefined;
  return (await sql<{ id: string; name: string }>`select id, name from screen_groups where id = ${groupId}`.execute(db)).rows[0];
}

/** Every screen the targets reach (directly, through a group, through a location). */
export async function screensOf(db: Db, targets: Targets): Promise<string[]> {
  if (!(await fleetExists(db))) return [];
  const out = new Set<string>();
  if (targets.screenIds.length)
    for (const r of (await sql<{ id: string }>`select id from screens where id in (${sql.join(targets.screenIds)})`.execute(db)).rows) out.add(r.id);
  if (targets.groupIds.length)
    for (const r of (await sql<{ id: string }>`select screen_id as id from screen_group_members where group_id in (${sql.join(targets.groupIds)})`.execute(db))
      .rows)
      out.add(r.id);
  if (targets.locationIds.length)
    for (const r of (await sql<{ id: string }>`select id from screens where location_id in (${sql.join(targets.locationIds)})`.execute(db)).rows) out.add(r.id);
  return [...out];
}

/** Targets that do not exist, as readable strings. */
export async function missingTargets(db: Db, targets: Targets): Promise<string[]> {
  const all = [
    ...targets.screenIds.map((id) => `screen ${id}`),
    ...targets.groupIds.map((id) => `group ${id}`),
    ...targets.locationIds.map((id) => `location ${id}`),
  ];
  if (!(await fleetExists(db))) return all;
  const found = new Set<string>();
  const add = (kind: string, rows: { id: string }[]) => {
    for (const r of rows) found.add(`${kind} ${r.id}`);
  };
  if (targets.screenIds.length)
    add('screen', (await sql<{ id: string }>`select id from screens where id in (${sql.join(targets.screenIds)})`.execute(db)).rows);
  if (targets.groupIds.length)
    add('group', (await sql<{ id: string }>`select id from screen_groups where id in (${sql.join(targets.groupIds)})`.execute(db)).rows);
  if (targets.locationIds.length)
    add('location', (await sql<{ id: string }>`select id from locations where id in (${sql.join(targets.locationIds)})`.execute(db)).rows);
  return all.filter((x) => !found.has(x));
}

/** The time zones of the places the targets are in (locations, screens' locations, members'). */
export async function zonesOf(db: Db, targets: Targets): Promise<string[]> {
  if (!(await fleetExists(db))) return [];
  const zones = new Set<string>();
  if (targets.locationIds.length)
    for (const r of (await sql<{ z: string }>`select time_zone as z from locations where id in (${sql.join(targets.locationIds)})`.execute(db)).rows)
      zones.add(r.z);
  const screens = await screensOf(db, { screenIds: targets.screenIds, groupIds: targets.groupIds, locationIds: [] });
  if (screens.length) {
    const rows = await sql<{
      z: string | null;
    }>`select l.time_zone as z from screens s left join locations l on l.id = s.location_id where s.id in (${sql.join(screens)})`.execute(db);
    const fallback = await defaultTimeZone(db);
    for (const r of rows.rows) zones.add(r.z ?? fallback);
  }
  return [...zones];
}

/** The zone most of a group's members are in (ties: alphabetical), else the default. */
export async function groupZone(db: Db, groupId: string): Promise<string> {
  const rows = await sql<{ z: string | null; n: number }>`
    select l.time_zone as z, count(*) as n from screen_group_members m join screens s on s.id = m.screen_id left join locations l on l.id = s.location_id
    where m.group_id = ${groupId} group by l.time_zone order by n desc, z`.execute(db);
  return rows.rows[0]?.z ?? (await defaultTimeZone(db));
}

/** The targets that still exist (a group or location deleted later simply drops out). */
export async function existingTargets(db: Db, targets: Targets): Promise<Targets> {
  const missing = new Set(await missingTargets(db, targets));
  return {
    screenIds: targets.screenIds.filter((id) => !missing.has(`screen ${id}`)),
    groupIds: targets.groupIds.filter((id) => !missing.has(`group ${id}`)),
    locationIds: targets.locationIds.filter((id) => !missing.has(`location ${id}`)),
  };
}
