/** Default-playlist assignments of screens and groups: what plays when no schedule applies. */
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { invalidReference, notFound } from '../../platform/http/errors.js';
import { deleteAssignment, latestAssignment, upsertAssignment, type AssignmentTarget } from './assignments.repo.js';
import { contentChanged } from './changes.js';
import { playlistExists } from './playlists.repo.js';
import { screenContext, screensOf } from './screen-context.js';
import { groupExists } from './screen-context.repo.js';

/** A screen's own assignment and the one it inherits from its groups (404 for an unknown screen). */
export async function screenAssignment(db: Db, screenId: string) {
  const screen = await screenContext(db, screenId);
  if (!screen) throw notFound('Screen');
  const own = await latestAssignment(db, 'screen', [screenId]);
  const group = await latestAssignment(db, 'group', screen.groupIds);
  return {
    screenId,
    playlistId: own?.playlist_id ?? null,
    playlistName: own?.name ?? null,
    updatedAt: own?.updated_at ?? null,
    inherited: group ? { groupId: group.target_id, playlistId: group.playlist_id, playlistName: group.name, updatedAt: group.updated_at } : null,
  };
}

/** A group's assignment, fields null when it has none. */
export async function groupAssignment(db: Db, groupId: string) {
  const a = await latestAssignment(db, 'group', [groupId]);
  return { groupId, playlistId: a?.playlist_id ?? null, playlistName: a?.name ?? null, updatedAt: a?.updated_at ?? null };
}

export async function screenOr404(db: Db, id: string): Promise<void> {
  if (!(await screenContext(db, id))) throw notFound('Screen');
}

export async function groupOr404(db: Db, id: string) {
  const group = await groupExists(db, id);
  if (!group) throw notFound('Group');
  return group;
}

/** Assigns a playlist to a screen or group (null removes the assignment), then bumps the screens it reaches. */
export async function assign(deps: AppDeps, type: AssignmentTarget, targetId: string, playlistId: string | null, userId: string): Promise<void> {
  const db = deps.db;
  if (playlistId === null) {
    await deleteAssignment(db, type, targetId);
  } else {
    if (!(await playlistExists(db, playlistId))) {
      throw invalidReference(`No playlist ${playlistId}`, { path: ['playlistId'], message: 'no such playlist' });
    }
    await upsertAssignment(db, type, targetId, playlistId, userId);
  }
  const screens = await screensOf(
    db,
    type === 'screen' ? { screenIds: [targetId], groupIds: [], locationIds: [] } : { screenIds: [], groupIds: [targetId], locationIds: [] },
  );
  await contentChanged(deps, [{ kind: 'assignment', id: targetId }], screens);
}
