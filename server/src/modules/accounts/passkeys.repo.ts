import type { Db } from '../../platform/db/database.js';
import type { PasskeysTable } from '../../platform/db/schema.js';

export type PasskeyRow = PasskeysTable;

/** A user's passkeys, oldest first. */
export function listUserPasskeys(db: Db, userId: string): Promise<PasskeyRow[]> {
  return db.selectFrom('passkeys').selectAll().where('user_id', '=', userId).orderBy('created_at').execute();
}

/** The credential ids and transports of a user's passkeys (for WebAuthn options). */
export function userPasskeyCredentials(db: Db, userId: string): Promise<{ credential_id: string; transports: string }[]> {
  return db.selectFrom('passkeys').select(['credential_id', 'transports']).where('user_id', '=', userId).execute();
}

export async function userHasPasskey(db: Db, userId: string): Promise<boolean> {
  return Boolean(await db.selectFrom('passkeys').select('id').where('user_id', '=', userId).executeTakeFirst());
}

export function findPasskeyByCredentialId(db: Db, credentialId: unknown): Promise<PasskeyRow | undefined> {
  return db
    .selectFrom('passkeys')
    .selectAll()
    .where('credential_id', '=', String(credentialId ?? ''))
    .executeTakeFirst();
}

export async function insertPasskey(db: Db, row: PasskeyRow): Promise<void> {
  await db.insertInto('passkeys').values(row).execute();
}

/** After an accepted assertion: the new sign counter, when, and whether it is backed up now. */
export async function recordPasskeyUse(db: Db, id: string, use: { counter: number; backedUp: boolean }): Promise<void> {
  await db
    .updateTable('passkeys')
    .set({ counter: use.counter, last_used_at: new Date().toISOString(), backed_up: use.backedUp ? 1 : 0 })
    .where('id', '=', id)
    .execute();
}

/** Renames one of the user's passkeys; undefined when the user has no such passkey. */
export async function renamePasskey(db: Db, userId: string, id: string, name: string): Promise<PasskeyRow | undefined> {
  const res = await db.updateTable('passkeys').set({ name }).where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) return undefined;
  return db.selectFrom('passkeys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Removes one of the user's passkeys; false when the user has no such passkey. */
export async function removePasskey(db: Db, userId: string, id: string): Promise<boolean> {
  const res = await db.deleteFrom('passkeys').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}
