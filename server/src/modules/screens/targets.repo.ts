import type { Db } from '../../platform/db/database.js';

/** What schedules, alerts and the manifest need to know about where a screen belongs. */
export interface ScreenTargets {
  screenId: string;
  /** Group ids, ordered by group name (then id). */
  groupIds: string[];
  locationId: string | null;
  /** The location's IANA time zone, or null when the screen has no location. */
  timeZone: string | null;
  location: { id: string; name: string; timeZone: string; latitude: number | null; longitude: number | null } | null;
}

/** A screen's groups and location (null when the screen does not exist). */
export async function resolveScreenTargets(db: Db, screenId: string): Promise<ScreenTargets | null> {
  const screen = await db.selectFrom('screens').select(['id', 'location_id']).where('id', '=', screenId).executeTakeFirst();
  if (!screen) return null;
  const groups = await screenGroupIds(db, screenId);
  const loc = screen.location_id
    ? await db.selectFrom('locations').select(['id', 'name', 'time_zone', 'latitude', 'longitude']).where('id', '=', screen.location_id).executeTakeFirst()
    : undefined;
  return {
    screenId,
    groupIds: groups,
    locationId: screen.location_id,
    timeZone: loc?.time_zone ?? null,
    location: loc ? { id: loc.id, name: loc.name, timeZone: loc.time_zone, latitude: loc.latitude, longitude: loc.longitude } : null,
  };
}

/** Group ids of one screen, ordered by group name (then id). */
export async function screenGroupIds(db: Db, screenId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('screen_group_members')
    .innerJoin('screen_groups', 'screen_groups.id', 'screen_group_members.group_id')
    .select('screen_group_members.group_id')
    .where('screen_group_members.screen_id', '=', screenId)
    .orderBy('screen_groups.name')
    .orderBy('screen_groups.id')
    .execute();
  return rows.map((r) => r.group_id);
}

/** The screen's location time zone, or null. */
export async function screenTimeZone(db: Db, screenId: string): Promise<string | null> {
  const row = await db
    .selectFrom('screens')
    .leftJoin('locations', 'locations.id', 'screens.location_id')
    .select('locations.time_zone')
    .where('screens.id', '=', screenId)
    .executeTakeFirst();
  return row?.time_zone ?? null;
}

/** Member screen ids of a group. */
export async function groupMemberIds(db: Db, groupId: string): Promise<string[]> {
  const rows = await db.selectFrom('screen_group_members').select('screen_id').where('group_id', '=', groupId).execute();
  return rows.map((r) => r.screen_id);
}

/** Screen ids at a location. */
export async function locationScreenIds(db: Db, locationId: string): Promise<string[]> {
  const rows = await db.selectFrom('screens').select('id').where('location_id', '=', locationId).execute();
  return rows.map((r) => r.id);
}

/**
 * Every screen a target set reaches (schedules: `{screenIds, groupIds, locationIds}`),
 * deduplicated. Unknown ids reach nothing.
 */
export async function screensForTargets(
  db: Db,
  targets: { screenIds?: readonly string[]; groupIds?: readonly string[]; locationIds?: readonly string[] },
): Promise<string[]> {
  const out = new Set<string>();
  if (targets.screenIds?.length) {
    for (const r of await db
      .selectFrom('screens')
      .select('id')
      .where('id', 'in', [...targets.screenIds])
      .execute())
      out.add(r.id);
  }
  if (targets.groupIds?.length) {
    for (const r of await db
      .selectFrom('screen_group_members')
      .select('screen_id')
      .where('group_id', 'in', [...targets.groupIds])
      .execute())
      out.add(r.screen_id);
  }
  if (targets.locationIds?.length) {
    for (const r of await db
      .selectFrom('screens')
      .select('id')
      .where('location_id', 'in', [...targets.locationIds])
      .execute())
      out.add(r.id);
  }
  return [...out];
}

/** A stored target of a takeover, plugin instance... ('all' has the id ''). */
export type TargetRef = { type: string; id: string };

/** The screens `targets` reach now ('all': every screen; groups' members; locations' screens), existing ones only, sorted. */
export async function screensOfTargets(db: Db, targets: readonly TargetRef[]): Promise<string[]> {
  if (targets.some((t) => t.type === 'all')) return (await db.selectFrom('screens').select('id').orderBy('id').execute()).map((r) => r.id);
  const ids = new Set<string>();
  const of = (type: string) => targets.filter((t) => t.type === type).map((t) => t.id);
  const [screens, groups, locations] = [of('screen'), of('group'), of('location')];
  // A target naming a screen deleted meanwhile reaches nothing.
  if (screens.length) for (const r of await db.selectFrom('screens').select('id').where('id', 'in', screens).execute()) ids.add(r.id);
  if (groups.length)
    for (const r of await db.selectFrom('screen_group_members').select('screen_id').where('group_id', 'in', groups).execute()) ids.add(r.screen_id);
  if (locations.length) for (const r of await db.selectFrom('screens').select('id').where('location_id', 'in', locations).execute()) ids.add(r.id);
  return [...ids].sort();
}

export const TARGET_TABLES = { screenIds: 'screens', groupIds: 'screen_groups', locationIds: 'locations' } as const;

/** Which of `ids` exist as the field's kind (screens, groups, locations). */
export async function knownTargetIds(db: Db, field: keyof typeof TARGET_TABLES, ids: readonly string[]): Promise<Set<string>> {
  return new Set((await db.selectFrom(TARGET_TABLES[field]).select('id').where('id', 'in', ids).execute()).map((r) => r.id));
}
