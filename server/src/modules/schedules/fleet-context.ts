/**
 * What schedules read of screens, groups and locations (owned by the screens module): the
 * places a schedule targets, the screens they reach and their time zones. Plain SQL
 * (fleet-context.repo.ts), so this module does not reach into that one's files. Content
 * reads the same through this module's index.ts (its manifest and assignments need who a
 * target reaches too).
 */
import type { Db } from '../../platform/db/database.js';
import { cachedSettings } from '../system/index.js';
import {
  existingGroupIds,
  existingLocationIds,
  existingScreenIds,
  locationZones,
  screenIdsAtLocations,
  screenIdsInGroups,
  screenLocationZones,
} from './fleet-context.repo.js';

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
  if (targets.screenIds.length) for (const id of await existingScreenIds(db, targets.screenIds)) out.add(id);
  if (targets.groupIds.length) for (const id of await screenIdsInGroups(db, targets.groupIds)) out.add(id);
  if (targets.locationIds.length) for (const id of await screenIdsAtLocations(db, targets.locationIds)) out.add(id);
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
  const add = (kind: string, ids: string[]) => {
    for (const id of ids) found.add(`${kind} ${id}`);
  };
  if (targets.screenIds.length) add('screen', await existingScreenIds(db, targets.screenIds));
  if (targets.groupIds.length) add('group', await existingGroupIds(db, targets.groupIds));
  if (targets.locationIds.length) add('location', await existingLocationIds(db, targets.locationIds));
  return all.filter((x) => !found.has(x));
}

/** The time zones of the places the targets are in (locations, screens' locations, members'). */
export async function zonesOf(db: Db, targets: Targets): Promise<string[]> {
  const zones = new Set<string>();
  if (targets.locationIds.length) for (const z of await locationZones(db, targets.locationIds)) zones.add(z);
  const screens = await screensOf(db, { screenIds: targets.screenIds, groupIds: targets.groupIds, locationIds: [] });
  if (screens.length) {
    const rows = await screenLocationZones(db, screens);
    const fallback = await defaultTimeZone(db);
    for (const z of rows) zones.add(z ?? fallback);
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
