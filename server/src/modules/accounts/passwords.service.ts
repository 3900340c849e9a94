import type { Db } from '../../platform/db/database.js';
import { sha256Hex } from '../../platform/security/secrets.js';
import { findLinkByTokenHash, insertLink, spendLink, supersedeLinks, type PasswordLinkRow } from './password-links.repo.js';
import { countUserSessions, endUserSessions, newId, updateUser, type UserRow } from './users.repo.js';

/** Why a link does not work; the page words it for the person holding it. */
export type LinkProblem = 'unknown' | 'used' | 'expired';

/** The link row behind a token, and whether it still works. */
export async function findLink(db: Db, token: string): Promise<{ row: PasswordLinkRow | undefined; problem: LinkProblem | null }> {
  const row = await findLinkByTokenHash(db, sha256Hex(token));
  if (!row) return { row: undefined, problem: 'unknown' as const };
  if (row.used_at) return { row, problem: 'used' as const };
  if (Date.parse(row.expires_at) <= Date.now()) return { row, problem: 'expired' as const };
  return { row, problem: null };
}

/**
 * Your own new password, in one transaction: the hash, your unused links end, and every
 * session of the account ends (the asking one too: it continues under a new key). Answers
 * how many sessions other than `sessionId` there were.
 */
export function changeOwnPassword(db: Db, input: { userId: string; sessionId: string; passwordHash: string; now: string }): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const others = await countUserSessions(trx, input.userId, input.sessionId);
    await updateUser(trx, input.userId, { password_hash: input.passwordHash });
    await supersedeLinks(trx, input.userId, input.now);
    // Every session ends, this one too: it continues under a new key, so a copy of
    // its old cookie stops working as well.
    await endUserSessions(trx, input.userId);
    return others;
  });
}

/** Another user's password set by an admin, in one transaction with ending their links and sessions. */
export function setUserPassword(db: Db, userId: string, passwordHash: string): Promise<UserRow> {
  return db.transaction().execute(async (trx) => {
    const now = new Date().toISOString();
    await supersedeLinks(trx, userId, now);
    await endUserSessions(trx, userId);
    return updateUser(trx, userId, { password_hash: passwordHash });
  });
}

/** Records a new link (its token's hash only) and ends the user's earlier unused ones, in one transaction. */
export async function issuePasswordLink(db: Db, input: { userId: string; token: string; createdBy: string; now: string; expiresAt: string }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await supersedeLinks(trx, input.userId, input.now);
    await insertLink(trx, {
      id: newId(),
      user_id: input.userId,
      token_hash: sha256Hex(input.token),
      created_by: input.createdBy,
      created_at: input.now,
      expires_at: input.expiresAt,
      used_at: null,
      superseded: 0,
    });
  });
}

/**
 * Spends a link and sets the password. The link is spent by a conditional update in the same
 * transaction as the password: of two uses at once exactly one sets it (false for the other).
 */
export function usePasswordLink(db: Db, input: { linkId: string; userId: string; passwordHash: string; now: string }): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (!(await spendLink(trx, input.linkId, input.now))) return false;
    await updateUser(trx, input.userId, { password_hash: input.passwordHash });
    await supersedeLinks(trx, input.userId, input.now);
    await endUserSessions(trx, input.userId);
    return true;
  });
}
