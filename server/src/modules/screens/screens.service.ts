import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { storableJson } from '../../platform/db/json.js';
import { invalidReference, notFound } from '../../platform/http/errors.js';
import { cachedSettings } from '../system/index.js';
import { lastScreenshots } from './commands.repo.js';
import { revokeDeviceCredentials } from './device-auth.repo.js';
import { locationExists, locationTimeZones } from './locations.repo.js';
import { nowShowingOf } from './now-showing.js';
import { bumpManifestRevision } from './revision.js';
import {
  deleteScreenRow,
  deriveStatus,
  findScreen,
  groupIdsOf,
  nowIso,
  type ORIENTATIONS,
  recordHistory,
  type ScreenDto,
  type ScreenRow,
  toScreenDto,
  updateScreen,
} from './screens.repo.js';
import { forgetTarget, refuseIfUsed } from './usage.js';

/** Whether a screen has a player socket open (the hub's count). */
export type Connected = (screenId: string) => boolean;

export async function screenOr404(db: Db, id: string): Promise<ScreenRow> {
  const row = await findScreen(db, id);
  if (!row) throw notFound('Screen');
  return row;
}

/** DTOs for rows, with groups, time zones and socket state filled in. */
export async function screenDtos(deps: AppDeps, rows: readonly ScreenRow[], connected: Connected): Promise<ScreenDto[]> {
  const db = deps.db;
  const groups = await groupIdsOf(
    db,
    rows.map((r) => r.id),
  );
  const zones = await locationTimeZones(db, [...new Set(rows.map((r) => r.location_id).filter((x): x is string => x !== null))]);
  const now = Date.now();
  const showing = await nowShowingOf(
    deps,
    rows.map((row) => ({ row, status: deriveStatus(row, now) })),
    now,
  );
  const defaultTimeZone = (await cachedSettings(db)).timeZone;
  const shots = await lastScreenshots(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) =>
    toScreenDto(
      r,
      {
        groupIds: groups.get(r.id) ?? [],
        timeZone: r.location_id ? (zones.get(r.location_id) ?? null) : null,
        defaultTimeZone,
        lastScreenshot: shots.get(r.id) ?? null,
        socketConnected: connected(r.id),
        nowShowing: showing.get(r.id) ?? null,
      },
      now,
    ),
  );
}

/** One screen's DTO; 404 when it does not exist. */
export async function oneScreenDto(deps: AppDeps, id: string, connected: Connected): Promise<ScreenDto> {
  const row = await screenOr404(deps.db, id);
  return (await screenDtos(deps, [row], connected))[0]!;
}

export interface ScreenChanges {
  name?: string;
  locationId?: string | null;
  notes?: string | null;
  orientation?: (typeof ORIENTATIONS)[number];
  tags?: string[];
}

/** PATCH /screens/{id}: 400 when `locationId` names no location; a change to what it plays bumps its manifest. */
export async function patchScreen(deps: AppDeps, row: ScreenRow, changes: ScreenChanges): Promise<void> {
  const db = deps.db;
  if (changes.locationId && !(await locationExists(db, changes.locationId)))
    throw invalidReference(`No location ${changes.locationId}`, { path: ['locationId'], message: 'no such location' });
  const set: Partial<ScreenRow> = { updated_at: nowIso() };
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.locationId !== undefined) set.location_id = changes.locationId;
  if (changes.notes !== undefined) set.notes = changes.notes;
  if (changes.orientation !== undefined) set.orientation = changes.orientation;
  if (changes.tags !== undefined) set.tags = storableJson(changes.tags, 'tags');
  await updateScreen(db, row.id, set);
  // Where it is (time zone, location targets), how it is turned and its tags change what it plays.
  const affectsPlayback =
    (changes.locationId !== undefined && changes.locationId !== row.location_id) ||
    (changes.orientation !== undefined && changes.orientation !== row.orientation) ||
    (changes.name !== undefined && changes.name !== row.name) ||
    changes.tags !== undefined;
  if (affectsPlayback) await bumpManifestRevision(deps, [row.id]);
}

/** Disables a screen (recorded in its history); already disabled: nothing changes. */
export async function disableScreen(db: Db, row: ScreenRow, by: string): Promise<void> {
  if (row.disabled_at) return;
  await updateScreen(db, row.id, { disabled_at: nowIso(), updated_at: nowIso() });
  await recordHistory(db, row.id, 'disabled', { by });
}

/** Enables a disabled screen (recorded in its history); not disabled: nothing changes. */
export async function enableScreen(db: Db, row: ScreenRow, by: string): Promise<void> {
  if (!row.disabled_at) return;
  await updateScreen(db, row.id, { disabled_at: null, updated_at: nowIso() });
  await recordHistory(db, row.id, 'enabled', { by });
}

/** Revokes the screen's credential and, the first time, the screen itself (one transaction). */
export async function revokeScreen(db: Db, row: ScreenRow, by: string): Promise<void> {
  const now = nowIso();
  await db.transaction().execute(async (trx) => {
    await revokeDeviceCredentials(trx, row.id, now);
    if (!row.revoked_at) {
      await updateScreen(trx, row.id, { revoked_at: now, updated_at: now });
      await recordHistory(trx, row.id, 'revoked', { by });
    }
  });
}

/** Deletes a screen unless something names it (409); other modules' leftovers go in the same transaction. */
export async function deleteScreen(deps: AppDeps, row: ScreenRow): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await refuseIfUsed(deps, trx, 'screen', row.id, `Screen "${row.name}"`);
    await deleteScreenRow(trx, row.id);
    await forgetTarget(deps, trx, 'screen', row.id);
  });
}
