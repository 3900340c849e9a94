import type { Db } from '../../platform/db/database.js';
import type { DataSourceRecordAttachmentsTable } from '../../platform/db/schema.js';

/** Queries of record attachments and comments (issue 18): plain functions taking db or a transaction. */

export type AttachmentRow = DataSourceRecordAttachmentsTable;

/** Record ids of a table that have attachments (whose files a rows replacement must remove). */
export async function recordIdsWithAttachments(db: Db, sourceId: string): Promise<string[]> {
  const rows = await db.selectFrom('data_source_record_attachments').select('record_id').distinct().where('source_id', '=', sourceId).execute();
  return rows.map((r) => r.record_id);
}

/** The attachments of some records of a table, oldest first. */
export function attachmentRowsOf(db: Db, sourceId: string, recordIds: readonly string[]): Promise<AttachmentRow[]> {
  if (recordIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('data_source_record_attachments')
    .selectAll()
    .where('source_id', '=', sourceId)
    .where('record_id', 'in', [...recordIds])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function attachmentCount(db: Db, recordId: string): Promise<number> {
  const row = await db
    .selectFrom('data_source_record_attachments')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('record_id', '=', recordId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function insertAttachment(db: Db, row: AttachmentRow): Promise<void> {
  await db.insertInto('data_source_record_attachments').values(row).execute();
}

/** One attachment of one record of one table (all three must match). */
export function findAttachmentRow(db: Db, sourceId: string, recordId: string, attachmentId: string): Promise<AttachmentRow | undefined> {
  return db
    .selectFrom('data_source_record_attachments')
    .selectAll()
    .where('id', '=', attachmentId)
    .where('record_id', '=', recordId)
    .where('source_id', '=', sourceId)
    .executeTakeFirst();
}

export async function deleteAttachmentRow(db: Db, id: string): Promise<void> {
  await db.deleteFrom('data_source_record_attachments').where('id', '=', id).execute();
}

/** Users among `ids` with their role and whether they are disabled, and their grants on the source. */
export async function mentionCandidates(db: Db, sourceId: string, ids: readonly string[]) {
  if (ids.length === 0) return { users: [], grants: [] };
  const users = await db
    .selectFrom('users')
    .select(['id', 'role', 'disabled_at'])
    .where('id', 'in', [...ids])
    .execute();
  const grants = await db
    .selectFrom('data_source_grants')
    .select(['user_id', 'level'])
    .where('source_id', '=', sourceId)
    .where('user_id', 'in', [...ids])
    .execute();
  return { users, grants };
}
