import type { Db } from '../../platform/db/database.js';
import { prepared } from '../../platform/db/prepared.js';
import type { DeviceCredentialsTable } from '../../platform/db/schema.js';

const credentialByPublicId = prepared((db: Db, publicId: string) => db.selectFrom('device_credentials').selectAll().where('public_id', '=', publicId));

/** The device credential with this public id (any state): every device request asks, so it is prepared. */
export async function findCredentialByPublicId(db: Db, publicId: string): Promise<DeviceCredentialsTable | undefined> {
  return (await credentialByPublicId(db, publicId)).rows[0];
}

/** The row and screen of the credential with this public id (throws when there is none). */
export function credentialOwnerRow(db: Db, publicId: string): Promise<Pick<DeviceCredentialsTable, 'id' | 'screen_id'>> {
  return db.selectFrom('device_credentials').select(['id', 'screen_id']).where('public_id', '=', publicId).executeTakeFirstOrThrow();
}

export async function setCredentialLastUsed(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('device_credentials').set({ last_used_at: at }).where('id', '=', id).execute();
}

export async function insertDeviceCredential(db: Db, row: DeviceCredentialsTable): Promise<void> {
  await db.insertInto('device_credentials').values(row).execute();
}

/** Revokes the screen's live credentials (at most one) at `at`. */
export async function revokeDeviceCredentials(db: Db, screenId: string, at: string): Promise<void> {
  await db.updateTable('device_credentials').set({ revoked_at: at }).where('screen_id', '=', screenId).where('revoked_at', 'is', null).execute();
}
