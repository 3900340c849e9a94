import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import type { DataSourceRowsTable } from '../../platform/db/schema.js';
import { notFound } from '../../platform/http/errors.js';

/**
 * Records of manual tables (issue 18, migration 0340): a table's rows are its records. The
 * shared primitives every records part uses: read one, and append to its audit trail.
 */

export type RecordRow = DataSourceRowsTable;

/** Who did it: a console user or an integration token. */
export interface Actor {
  userId: string | null;
  tokenId: string | null;
}

/** A record of the table, or 404 naming it. */
export async function findRecord(db: Db, sourceId: string, recordId: string): Promise<RecordRow> {
  const row = await db.selectFrom('data_source_rows').selectAll().where('source_id', '=', sourceId).where('id', '=', recordId.toLowerCase()).executeTakeFirst();
  if (!row) throw notFound(`Record ${recordId} of this table`);
  return row;
}

export type RecordEventKind =
  | 'created'
  | 'updated'
  | 'deleted'
  | 'transition'
  | 'approval'
  | 'comment'
  | 'attachment_added'
  | 'attachment_removed'
  | 'scheduled';

/** Appends one entry to a record's audit trail (numbered 1, 2, ... per record); answers its id. */
export async function appendEvent(
  db: Db,
  sourceId: string,
  recordId: string,
  kind: RecordEventKind,
  actor: Actor,
  data: object = {},
  at = nowIso(),
): Promise<string> {
  const id = newId();
  await db
    .insertInto('data_source_record_events')
    .values({
      id,
      source_id: sourceId,
      record_id: recordId,
      seq: sql<number>`(select coalesce(max(seq), 0) + 1 from data_source_record_events where record_id = ${recordId})`,
      kind,
      user_id: actor.userId,
      token_id: actor.tokenId,
      data: JSON.stringify(data),
      at,
    })
    .execute();
  return id;
}
