/**
 * What schedules read of screens, groups and locations (owned by the screens module): the
 * places a schedule targets, the screens they reach and their time zones. Plain SQL, so
 * this module does not reach into that one's files. Content reads the same through this
 * module's index.ts (its manifest and assignments need who a target reaches too).
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

/** Every screen the targets reach (directly, through a group, through a location). */
export async function screensOf(db: Db, targets: Targets): Promise<string[]> {
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

/** The targets that still exist (a group or location deleted later simply drops out). */
export async function existingTargets(db: Db, targets: Targets): Promise<Targets> {
  const missing = new Set(await missingTargets(db, targets));
  return {
    screenIds: targets.screenIds.filter((id) => !missing.has(`screen ${id}`)),
    groupIds: targets.groupIds.filter((id) => !missing.has(`group ${id}`)),
    locationIds: targets.locationIds.filter((id) => !missing.has(`location ${id}`)),
  };
}
