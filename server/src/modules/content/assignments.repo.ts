/** The playlist_assignments table: a screen's or group's default playlist. */
import type { Db } from '../../platform/db/database.js';
import { now } from './common.js';

export type AssignmentTarget = 'screen' | 'group';

/** Of the given screens or groups, the most recently assigned, with its playlist's name. */
export async function latestAssignment(db: Db, type: AssignmentTarget, ids: readonly string[]) {
  if (ids.length === 0) return undefined;
  return db
    .selectFrom('playlist_assignments as a')
    .innerJoin('playlists as p', 'p.id', 'a.playlist_id')
    .select(['a.target_id', 'a.playlist_id', 'p.name', 'a.updated_at'])
    .where('a.target_type', '=', type)
    .where('a.target_id', 'in', ids)
    .orderBy('a.updated_at', 'desc')
    .orderBy('a.target_id')
    .executeTakeFirst();
}

/** The assignments of the given screens or groups, the most recently assigned first. */
export async function assignmentsOf(db: Db, type: AssignmentTarget, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('playlist_assignments')
    .selectAll()
    .where('target_type', '=', type)
    .where('target_id', 'in', [...ids])
    .orderBy('updated_at', 'desc')
    .orderBy('target_id')
    .execute();
}

export async function deleteAssignment(db: Db, type: AssignmentTarget, targetId: string): Promise<void> {
  await db.deleteFrom('playlist_assignments').where('target_type', '=', type).where('target_id', '=', targetId).execute();
}

/** Assigns `playlistId` to the screen or group, replacing what it had. */
export async function upsertAssignment(db: Db, type: AssignmentTarget, targetId: string, playlistId: string, userId: string): Promise<void> {
  await db
    .insertInto('playlist_assignments')
    .values({ target_type: type, target_id: targetId, playlist_id: playlistId, updated_by: userId, updated_at: now() })
    .onConflict((oc) => oc.columns(['target_type', 'target_id']).doUpdateSet({ playlist_id: playlistId, updated_by: userId, updated_at: now() }))
    .execute();
}
