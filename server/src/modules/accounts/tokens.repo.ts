import type { Db } from '../../platform/db/database.js';
import type { IntegrationTokensTable } from '../../platform/db/schema.js';
import { afterCursor } from '../../platform/http/pagination.js';

export type TokenRow = IntegrationTokensTable;

export function findTokenByPublicId(db: Db, publicId: string): Promise<TokenRow | undefined> {
  return db.selectFrom('integration_tokens').selectAll().where('public_id', '=', publicId).executeTakeFirst();
}

export function findTokenById(db: Db, id: string): Promise<TokenRow | undefined> {
  return db.selectFrom('integration_tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

/** One page of tokens, newest first: `limit + 1` rows for toPage. */
export function listTokens(db: Db, cursor: string | undefined, limit: number): Promise<TokenRow[]> {
  return db
    .selectFrom('integration_tokens')
    .selectAll()
    .where(afterCursor('created_at', 'id', 'desc', cursor))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
}

export async function insertToken(db: Db, row: TokenRow): Promise<void> {
  await db.insertInto('integration_tokens').values(row).execute();
}

export async function setTokenLastUsed(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('integration_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
}

export async function setTokenRevoked(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('integration_tokens').set({ revoked_at: at }).where('id', '=', id).execute();
}
