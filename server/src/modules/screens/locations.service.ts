import type { AppDeps } from '../../platform/app-deps.js';
import type { LocationsTable } from '../../platform/db/schema.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { deleteLocationRow, findLocation, updateLocation } from './locations.repo.js';
import { bumpManifestRevision } from './revision.js';
import { nowIso } from './screens.repo.js';
import { locationScreenIds } from './targets.repo.js';
import { forgetTarget, refuseIfUsed } from './usage.js';

export interface LocationChanges {
  name?: string;
  address?: string | null;
  timeZone?: string;
  latitude?: number | null;
  longitude?: number | null;
  notes?: string | null;
}

/**
 * PATCH /locations/{id} (404 when unknown): a new time zone re-times every screen there
 * (their manifests are bumped). Answers the location as it is now and its screen count.
 */
export async function changeLocation(deps: AppDeps, id: string, changes: LocationChanges): Promise<{ row: LocationsTable; screenCount: number }> {
  const db = deps.db;
  const row = await findLocation(db, id);
  if (!row) throw notFound('Location');
  const set: Partial<LocationsTable> = { updated_at: nowIso() };
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.address !== undefined) set.address = changes.address;
  if (changes.timeZone !== undefined) set.time_zone = changes.timeZone;
  if (changes.latitude !== undefined) set.latitude = changes.latitude;
  if (changes.longitude !== undefined) set.longitude = changes.longitude;
  if (changes.notes !== undefined) set.notes = changes.notes;
  await updateLocation(db, row.id, set);
  const screens = await locationScreenIds(db, row.id);
  if (changes.timeZone !== undefined && changes.timeZone !== row.time_zone) await bumpManifestRevision(deps, screens);
  const updated = (await findLocation(db, row.id))!;
  return { row: updated, screenCount: screens.length };
}

/**
 * Deletes a location (404 when unknown), in one transaction: refused (409) while screens
 * are there (`details.screenIds`), schedules target it (`details.usedBy`) or other records
 * point at it.
 */
export async function deleteLocation(deps: AppDeps, id: string): Promise<void> {
  const row = await findLocation(deps.db, id);
  if (!row) throw notFound('Location');
  await deps.db.transaction().execute(async (trx) => {
    const screens = await locationScreenIds(trx, row.id);
    if (screens.length)
      throw new ApiError('conflict', `${screens.length} screen(s) are at this location; move them first`, {
        details: { screenIds: screens.slice(0, 100) },
      });
    await refuseIfUsed(deps, trx, 'location', row.id, `Location "${row.name}"`);
    try {
      await deleteLocationRow(trx, row.id);
    } catch (err) {
      if (/FOREIGN KEY/i.test(String((err as Error).message)))
        throw new ApiError('conflict', 'The location is still used (alerts or other records point at it)');
      throw err;
    }
    await forgetTarget(deps, trx, 'location', row.id);
  });
}
