import type { Db } from '../../platform/db/database.js';
import type { PairingSessionsTable } from '../../platform/db/schema.js';

export function findPairingSession(db: Db, id: string): Promise<PairingSessionsTable | undefined> {
  return db.selectFrom('pairing_sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Pending sessions started from `address` that have not expired at `nowText`. */
export async function countLivePending(db: Db, address: string, nowText: string): Promise<number> {
  const live = await db
    .selectFrom('pairing_sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('address', '=', address)
    .where('status', '=', 'pending')
    .where('expires_at', '>', nowText)
    .executeTakeFirstOrThrow();
  return Number(live.n);
}

/** Whether a session not expired at `nowText` shows this code. */
export async function liveCodeTaken(db: Db, code: string, nowText: string): Promise<boolean> {
  return (await db.selectFrom('pairing_sessions').select('id').where('code', '=', code).where('expires_at', '>', nowText).executeTakeFirst()) !== undefined;
}

export async function insertPairingSession(db: Db, row: PairingSessionsTable): Promise<void> {
  await db.insertInto('pairing_sessions').values(row).execute();
}

/** The newest pending session showing `code` that has not expired at `nowText`. */
export function findPendingByCode(db: Db, code: string, nowText: string): Promise<PairingSessionsTable | undefined> {
  return db
    .selectFrom('pairing_sessions')
    .selectAll()
    .where('code', '=', code)
    .where('status', '=', 'pending')
    .where('expires_at', '>', nowText)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
}

export function findByEnrollmentTokenHash(db: Db, hash: string): Promise<PairingSessionsTable | undefined> {
  return db.selectFrom('pairing_sessions').selectAll().where('enrollment_token_hash', '=', hash).executeTakeFirst();
}

/** An approved session's enrolment token is now the one with this hash (earlier ones stop working). */
export async function setEnrollmentTokenHash(db: Db, id: string, hash: string): Promise<void> {
  await db.updateTable('pairing_sessions').set({ enrollment_token_hash: hash }).where('id', '=', id).where('status', '=', 'approved').execute();
}

/** Marks an approved session enrolled if its token is still `hash`; answers whether this call did. */
export async function markEnrolled(db: Db, id: string, hash: string, at: string): Promise<boolean> {
  const used = await db
    .updateTable('pairing_sessions')
    .set({ status: 'enrolled', enrollment_token_hash: null, enrolled_at: at })
    .where('id', '=', id)
    .where('status', '=', 'approved')
    .where('enrollment_token_hash', '=', hash)
    .executeTakeFirst();
  return Number(used.numUpdatedRows) === 1;
}

/** Decides a session that is still pending and not expired at `nowText`; answers whether this call did. */
export async function decidePending(
  db: Db,
  id: string,
  nowText: string,
  decision: Partial<Pick<PairingSessionsTable, 'screen_id' | 'replaces_screen' | 'enrollment_expires_at'>> & {
    status: 'approved' | 'rejected';
    decided_by: string;
    decided_at: string;
  },
): Promise<boolean> {
  const updated = await db
    .updateTable('pairing_sessions')
    .set(decision)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('expires_at', '>', nowText)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

/** Deletes pending and rejected sessions that expired before `before`; answers how many. */
export async function deleteFinishedPairings(db: Db, before: string): Promise<number> {
  const r = await db.deleteFrom('pairing_sessions').where('expires_at', '<', before).where('status', 'in', ['pending', 'rejected']).executeTakeFirst();
  return Number(r.numDeletedRows);
}
