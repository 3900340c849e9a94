import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import type { RecoveryCodesTable, SessionsTable, UsersTable } from '../../platform/db/schema.js';
import { ROLES, type Role } from '../../platform/http/auth.js';
import { afterCursor } from '../../platform/http/pagination.js';

export type UserRow = UsersTable;

export const UserDto = z
  .object({
    id: z.string(),
    email: z.string(),
    displayName: z.string(),
    role: z.enum(ROLES),
    disabled: z.boolean(),
    totpEnabled: z.boolean(),
    /** False until the user has a password (made without one, waiting for a set-password link). */
    passwordSet: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'User' });
export type UserDto = z.infer<typeof UserDto>;

export function toUserDto(row: UserRow): UserDto {
  return {
    id: row.id,
    email: row.email,
    displayName: row.display_name,
    role: row.role,
    disabled: row.disabled_at !== null,
    totpEnabled: row.totp_enabled === 1,
    passwordSet: row.password_hash !== null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
}

export async function countUsers(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Active (not disabled) owners: there must always be one. */
export async function countActiveOwners(db: Db, exceptUserId?: string): Promise<number> {
  let q = db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('role', '=', 'owner')
    .where('disabled_at', 'is', null);
  if (exceptUserId) q = q.where('id', '!=', exceptUserId);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

export async function insertUser(db: Db, input: { email: string; displayName: string; role: Role; passwordHash: string | null }): Promise<UserRow> {
  const now = new Date().toISOString();
  const row: UserRow = {
    id: uuidv7(),
    email: normalizeEmail(input.email),
    display_name: input.displayName,
    role: input.role,
    password_hash: input.passwordHash,
    disabled_at: null,
    totp_secret_sealed: null,
    totp_pending_sealed: null,
    totp_enabled: 0,
    totp_last_step: null,
    preferences: '{}',
    created_at: now,
    updated_at: now,
  };
  await db.insertInto('users').values(row).execute();
  return row;
}

export async function updateUser(db: Db, id: string, patch: Partial<Omit<UserRow, 'id' | 'created_at'>>): Promise<UserRow> {
  await db
    .updateTable('users')
    .set({ ...patch, updated_at: new Date().toISOString() })
    .where('id', '=', id)
    .execute();
  return (await findUserById(db, id))!;
}

/** Inserts the first owner, checked and inserted in one transaction (two racing setups make one owner); null when a user exists. */
export function insertFirstOwner(db: Db, input: { email: string; displayName: string; passwordHash: string }): Promise<UserRow | null> {
  return db.transaction().execute(async (trx) => {
    if ((await countUsers(trx)) > 0) return null;
    return insertUser(trx, { ...input, role: 'owner' });
  });
}

/** Ends every session of a user (disable, role change, security reset, password change). */
export async function endUserSessions(db: Db, userId: string, exceptSessionId?: string): Promise<void> {
  let q = db.deleteFrom('sessions').where('user_id', '=', userId);
  if (exceptSessionId) q = q.where('id', '!=', exceptSessionId);
  await q.execute();
}

/** How many sessions a user has, but `exceptSessionId`. */
export async function countUserSessions(db: Db, userId: string, exceptSessionId: string): Promise<number> {
  const row = await db
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('id', '!=', exceptSessionId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One page of users by email (`limit + 1` rows for toPage); `q` is literal text in the email or display name. */
export function listUsers(db: Db, filter: { cursor?: string; limit: number; q?: string; role?: Role; disabled?: 'true' | 'false' }): Promise<UserRow[]> {
  let q = db
    .selectFrom('users')
    .selectAll()
    .where(afterCursor('email', 'id', 'asc', filter.cursor));
  if (filter.q) {
    // instr, not LIKE: the search text is literal (no % or _ wildcards).
    const needle = filter.q.toLowerCase();
    q = q.where((eb) =>
      eb.or([eb(eb.fn('instr', ['email', eb.val(needle)]), '>', 0), eb(eb.fn('instr', [eb.fn('lower', ['display_name']), eb.val(needle)]), '>', 0)]),
    );
  }
  if (filter.role) q = q.where('role', '=', filter.role);
  if (filter.disabled) q = q.where('disabled_at', filter.disabled === 'true' ? 'is not' : 'is', null);
  return q
    .orderBy('email')
    .orderBy('id')
    .limit(filter.limit + 1)
    .execute();
}

/** Clears a user's TOTP, recovery codes and passkeys and ends their sessions, in one transaction. */
export function resetUserSecurity(db: Db, userId: string): Promise<UserRow> {
  return db.transaction().execute(async (trx) => {
    await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
    await trx.deleteFrom('passkeys').where('user_id', '=', userId).execute();
    await endUserSessions(trx, userId);
    return updateUser(trx, userId, { totp_enabled: 0, totp_secret_sealed: null, totp_pending_sealed: null, totp_last_step: null });
  });
}

export { newId } from '../../platform/db/ids.js';

/**
 * Deletes a disabled user for good, in one transaction with its checks: never an enabled
 * user, never the last active owner (disabled owners do not count).
 */
export function deleteDisabledUser(db: Db, id: string): Promise<'deleted' | 'not_found' | 'not_disabled' | 'last_owner'> {
  return db.transaction().execute(async (trx) => {
    const user = await findUserById(trx, id);
    if (!user) return 'not_found';
    if (!user.disabled_at) return 'not_disabled';
    if (user.role === 'owner' && (await countActiveOwners(trx, user.id)) === 0) return 'last_owner';
    await trx.deleteFrom('users').where('id', '=', user.id).execute();
    return 'deleted';
  });
}

// ---------------------------------------------------------------- the directory

/** Users who can sign in, by display name (then id) after `cursor`: `limit + 1` rows, for toPage. */
export function directoryRows(db: Db, query: { limit: number; cursor?: string; q?: string; roles?: readonly Role[] }) {
  let q = db
    .selectFrom('users')
    .select(['id', 'display_name', 'role'])
    .where('disabled_at', 'is', null)
    .where(afterCursor('display_name', 'id', 'asc', query.cursor));
  if (query.roles) q = q.where('role', 'in', [...query.roles]);
  if (query.q) q = q.where((eb) => eb(eb.fn('instr', [eb.fn('lower', ['display_name']), eb.val(query.q!.toLowerCase())]), '>', 0));
  return q
    .orderBy('display_name')
    .orderBy('id')
    .limit(query.limit + 1)
    .execute();
}

/** One user's directory fields (any state). */
export function directoryRow(db: Db, id: string) {
  return db.selectFrom('users').select(['id', 'display_name', 'role', 'disabled_at']).where('id', '=', id).executeTakeFirst();
}

// ---------------------------------------------------------------- second factors

/** Records `step` as the user's last accepted TOTP step unless one as new was taken; answers whether it was. */
export async function advanceTotpStep(db: Db, userId: string, step: number): Promise<boolean> {
  const res = await db
    .updateTable('users')
    .set({ totp_last_step: step })
    .where('id', '=', userId)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Replaces the user's recovery codes with `rows`, in one transaction. */
export async function replaceRecoveryCodes(db: Db, userId: string, rows: RecoveryCodesTable[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
    await trx.insertInto('recovery_codes').values(rows).execute();
  });
}

/** Marks the user's unused code with this hash used at `at`; answers whether there was one. */
export async function spendRecoveryCodeHash(db: Db, userId: string, codeHash: string, at: string): Promise<boolean> {
  const res = await db
    .updateTable('recovery_codes')
    .set({ used_at: at })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function countUnusedRecoveryCodes(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('recovery_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// ---------------------------------------------------------------- console sessions (sessions.ts's store)

export function findSession(db: Db, id: string): Promise<SessionsTable | undefined> {
  return db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function deleteSession(db: Db, id: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', id).execute();
}

export async function touchSession(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('sessions').set({ last_seen_at: at }).where('id', '=', id).execute();
}

/** Creates the session row, or replaces its data, user and last use (its creation and expiry stay). */
export async function saveSession(db: Db, row: SessionsTable): Promise<void> {
  await db
    .insertInto('sessions')
    .values(row)
    .onConflict((oc) => oc.column('id').doUpdateSet({ data: row.data, user_id: row.user_id, last_seen_at: row.last_seen_at }))
    .execute();
}

/** Deletes sessions past their expiry at `now` or last seen at `idleSince` or before. */
export async function deleteExpiredSessions(db: Db, now: string, idleSince: string): Promise<void> {
  await db
    .deleteFrom('sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleSince)]))
    .execute();
}
