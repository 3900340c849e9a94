import type { UploadsTable } from '../../platform/db/schema.js';
import type { DbOrTrx } from './media.repo.js';

/** The rows of partial uploads (tus): what was announced, the bytes received, when it expires. */

export async function findUpload(db: DbOrTrx, id: string): Promise<UploadsTable | undefined> {
  return db.selectFrom('uploads').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function uploadExists(db: DbOrTrx, id: string): Promise<boolean> {
  return Boolean(await db.selectFrom('uploads').select('id').where('id', '=', id).executeTakeFirst());
}

export async function insertUpload(db: DbOrTrx, row: UploadsTable): Promise<void> {
  await db.insertInto('uploads').values(row).execute();
}

/** The bytes received so far, and the expiry a PATCH renews. */
export async function recordUploadOffset(db: DbOrTrx, id: string, offset: number, updatedAt: string, expiresAt: string): Promise<void> {
  await db.updateTable('uploads').set({ offset_bytes: offset, updated_at: updatedAt, expires_at: expiresAt }).where('id', '=', id).execute();
}

export async function deleteUpload(db: DbOrTrx, id: string): Promise<void> {
  await db.deleteFrom('uploads').where('id', '=', id).execute();
}

/** Uploads past their `expires_at`, or untouched since `staleBefore`. */
export async function expiredUploadIds(db: DbOrTrx, now: string, staleBefore: string): Promise<string[]> {
  const rows = await db
    .selectFrom('uploads')
    .select('id')
    .where((eb) => eb.or([eb('expires_at', '<', now), eb('updated_at', '<', staleBefore)]))
    .execute();
  return rows.map((r) => r.id);
}
