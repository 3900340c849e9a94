import { type Db, readNow } from '../../platform/db/database.js';
import { type DialectName, dialectOf, sqlText } from '../../platform/db/dialect.js';
import { executeText, prepared } from '../../platform/db/prepared.js';
import type { DeviceCredentialsTable, ScreensTable } from '../../platform/db/schema.js';

const credentialByPublicId = prepared((db: Db, publicId: string) => db.selectFrom('device_credentials').selectAll().where('public_id', '=', publicId));

/** The device credential with this public id (any state): every device request asks, so it is prepared. */
export async function findCredentialByPublicId(db: Db, publicId: string): Promise<DeviceCredentialsTable | undefined> {
  return (await credentialByPublicId(db, publicId)).rows[0];
}

/**
 * What authenticating a device credential checks: the credential's hash, revocation and last
 * use, and whether its screen exists (`id` null: it does not), is revoked or disabled.
 */
export interface CredentialCheckColumns {
  cred_id: string;
  cred_secret_hash: string;
  cred_revoked_at: string | null;
  cred_last_used_at: string | null;
  id: string | null;
  revoked_at: string | null;
  disabled_at: string | null;
}

/**
 * The credential and its screen in one statement (each statement outside a transaction is a
 * read transaction of its own: in WAL mode ~4 µs of shared-memory locking before any row,
 * more than the lookup). A left join: a credential whose screen is gone still answers.
 */
const CREDENTIAL_COLUMNS = `c.id as cred_id, c.secret_hash as cred_secret_hash, c.revoked_at as cred_revoked_at, c.last_used_at as cred_last_used_at`;

const CREDENTIAL_WITH_SCREEN_SQL = `select ${CREDENTIAL_COLUMNS}, s.* from device_credentials c left join screens s on s.id = c.screen_id where c.public_id = ?`;

export type CredentialWithScreenRow = Omit<CredentialCheckColumns, 'id'> & { [K in keyof ScreensTable]: K extends 'id' ? string | null : ScreensTable[K] };

/** The credential with this public id and its screen's whole row (null columns when the screen is gone). */
export function credentialWithScreen(db: Db, publicId: string): CredentialWithScreenRow | undefined | Promise<CredentialWithScreenRow | undefined> {
  return firstRow<CredentialWithScreenRow>(db, CREDENTIAL_WITH_SCREEN_SQL, publicId);
}

/**
 * The first row of a read by public id: at once when the database can answer now (outside any
 * transaction: `readNow`, what `executeText` does too), else queued. At once, the caller awaits
 * no promise: every request of a device pays each promise with an async hook (the request scope).
 */
function firstRow<R>(db: Db, sql: string, publicId: string): R | undefined | Promise<R | undefined> {
  const rows = readNow(db, sql, [publicId]);
  return rows ? (rows[0] as R | undefined) : executeText<R>(db, sql, [publicId]).then((r) => r.rows[0]);
}

/**
 * What a device route that needs only the screen's context reads (the manifest, asked by every
 * player, mostly answered 304): the credential's checks and the screen's context, in one
 * statement. No wide column is read (the last status is a few hundred bytes to kilobytes of
 * JSON; only its display size is extracted). The context is what content's screen context is
 * made of (modules/content/screen-context.ts).
 */
const credentialWithContextSql = (d: DialectName) => `
  select ${CREDENTIAL_COLUMNS}, s.id, s.revoked_at, s.disabled_at, s.name, s.location_id, l.time_zone, s.manifest_revision,
    ${sqlText.jsonNumber(d, 's.last_status', '$.display.width')} as display_width, ${sqlText.jsonNumber(d, 's.last_status', '$.display.height')} as display_height,
    (select ${sqlText.jsonArrayAgg(d, 'm.group_id', 'm.group_id')} from screen_group_members m where m.screen_id = s.id) as group_ids,
    exists(select 1 from presentation_network_members n where n.screen_id = s.id) as in_network
  from device_credentials c left join screens s on s.id = c.screen_id left join locations l on l.id = s.location_id
  where c.public_id = ?`;
const CREDENTIAL_WITH_CONTEXT_SQL = { sqlite: credentialWithContextSql('sqlite'), postgres: credentialWithContextSql('postgres') };

export interface DeviceContextRow extends CredentialCheckColumns {
  name: string;
  location_id: string | null;
  /** The location's zone (null: no location). */
  time_zone: string | null;
  manifest_revision: number;
  display_width: unknown;
  display_height: unknown;
  /** JSON array of the screen's group ids, in order. */
  group_ids: string;
  /**
   * 1 when the screen is a member of a presentation network (the presentation-networks module's
   * table, read here so that the manifest of a screen in none asks no more: content's
   * manifest-network.ts), else 0.
   */
  in_network: number;
}

/** The credential with this public id, its screen's state and its screen's context (null columns when the screen is gone). */
export function credentialWithContext(db: Db, publicId: string): DeviceContextRow | undefined | Promise<DeviceContextRow | undefined> {
  return firstRow<DeviceContextRow>(db, CREDENTIAL_WITH_CONTEXT_SQL[dialectOf(db)], publicId);
}

const CREDENTIAL_CHECK_SQL = `select ${CREDENTIAL_COLUMNS}, s.id, s.revoked_at, s.disabled_at from device_credentials c left join screens s on s.id = c.screen_id where c.public_id = ?`;

/**
 * The credential with this public id and only what its checks need of its screen (id and
 * state): for a device route whose handler needs the screen's id alone (the heartbeat, which
 * reads what it compares with in its own transaction). No status document is read.
 */
export function credentialCheck(db: Db, publicId: string): CredentialCheckColumns | undefined | Promise<CredentialCheckColumns | undefined> {
  return firstRow<CredentialCheckColumns>(db, CREDENTIAL_CHECK_SQL, publicId);
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
