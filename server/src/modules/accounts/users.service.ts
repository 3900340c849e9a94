import type { Db } from '../../platform/db/database.js';
import type { Role, SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { countActiveOwners, endUserSessions, findUserById, updateUser, type UserRow } from './users.repo.js';

/** Admins manage everyone but owners; only an owner touches an owner or makes one. */
export function assertMayManage(actor: SessionPrincipal, target: UserRow | { role: UserRow['role'] }) {
  if (target.role === 'owner' && actor.role !== 'owner') throw new ApiError('forbidden', 'Only an owner can manage owners');
}

/**
 * Changes a user's role, display name or disabled state. Read, check and write in one
 * transaction (it holds the database's one connection): two owners disabling or demoting
 * each other at once cannot both pass the last-active-owner check. A role change or
 * disabling ends the user's sessions (`sessionsEnded`).
 */
export function changeUser(
  db: Db,
  actor: SessionPrincipal,
  id: string,
  change: { role?: Role; displayName?: string; disabled?: boolean },
): Promise<{ updated: UserRow; sessionsEnded: boolean }> {
  return db.transaction().execute(async (trx) => {
    const user = await findUserById(trx, id);
    if (!user) throw notFound('User');
    assertMayManage(actor, user);
    if (change.role) assertMayManage(actor, { role: change.role });
    const demoting = change.role !== undefined && change.role !== 'owner' && user.role === 'owner';
    const disabling = change.disabled === true && !user.disabled_at;
    if ((demoting || (disabling && user.role === 'owner')) && (await countActiveOwners(trx, user.id)) === 0) {
      throw new ApiError('conflict', 'This is the last active owner; make another owner first');
    }
    const updated = await updateUser(trx, user.id, {
      ...(change.role ? { role: change.role } : {}),
      ...(change.displayName ? { display_name: change.displayName } : {}),
      ...(change.disabled !== undefined ? { disabled_at: change.disabled ? (user.disabled_at ?? new Date().toISOString()) : null } : {}),
    });
    // Privileges changed: the user's sessions end (they sign in again under the new role).
    const sessionsEnded = Boolean((change.role && change.role !== user.role) || disabling);
    if (sessionsEnded) await endUserSessions(trx, user.id);
    return { updated, sessionsEnded };
  });
}
