import type { Db } from '../../platform/db/database.js';
import type { PasswordLinksTable } from '../../platform/db/schema.js';

export type PasswordLinkRow = PasswordLinksTable;

/** Ends every link of `userId` not used yet (a newer link, or a password set another way). */
export async function supersedeLinks(db: Db, userId: string, now: string): Promise<void> {
  await db.updateTable('password_links').set({ used_at: now, superseded: 1 }).where('user_id', '=', userId).where('used_at', 'is', null).execute();
}

export function findLinkByTokenHash(db: Db, tokenHash: string): Promise<PasswordLinkRow | undefined> {
  return db.selectFrom('password_links').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function insertLink(db: Db, row: PasswordLinkRow): Promise<void> {
  await db.insertInto('password_links').values(row).execute();
}

/** Spends a link by a conditional update: true for the one caller that spent it while unused and unexpired. */
export async function spendLink(db: Db, id: string, now: string): Promise<boolean> {
  const res = await db
    .updateTable('password_links')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}
