import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { dialectOf, isPostgres, sqlText } from '../../platform/db/dialect.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import type { DataSourceRowsTable } from '../../platform/db/schema.js';
import { notFound } from '../../platform/http/errors.js';
import { decodeCursor, toPage } from '../../platform/http/pagination.js';

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

// ---- reading and writing records (records.service.ts) ----

export const RECORD_SORTS = ['position', 'updatedAt', 'createdAt'] as const;

export interface RecordQuery {
  limit: number;
  cursor?: string;
  state?: string;
  live?: boolean;
  q?: string;
  createdBy?: string;
  updatedSince?: string;
  /** position, updatedAt, createdAt, or a field key (checked by the caller). */
  sort: string;
  direction: 'asc' | 'desc';
}

/**
 * The sort key of a listing as SQL: a column, or a field's value (empty values as ''), and
 * how a cursor's key compares with it. A field's value on PostgreSQL is its jsonb (numbers
 * order as numbers, strings as text; the cursor carries its JSON text).
 */
function sortKeyOf(db: Db, sort: string) {
  const column = { position: 'position', updatedAt: 'updated_at', createdAt: 'created_at' }[sort];
  if (column) return { key: sql<string | number>`${sql.ref(column)}`, cursorKey: (k: unknown) => sql`${k}` };
  if (isPostgres(db))
    return { key: sql<string | number>`coalesce("values"::jsonb -> ${sort}, '""'::jsonb)`, cursorKey: (k: unknown) => sql`cast(${k} as jsonb)` };
  return { key: sql<string | number>`coalesce(json_extract("values", ${`$.${sort}`}), '')`, cursorKey: (k: unknown) => sql`${k}` };
}

/** A page of a table's records, filtered and sorted, with the cursor to the next one. */
export async function listRecords(db: Db, sourceId: string, query: RecordQuery) {
  const { key, cursorKey } = sortKeyOf(db, query.sort);
  let q = db.selectFrom('data_source_rows').selectAll().select(key.as('sort_key')).where('source_id', '=', sourceId);
  if (query.state !== undefined) q = q.where('state', '=', query.state);
  if (query.live !== undefined) q = q.where('live', '=', query.live ? 1 : 0);
  if (query.createdBy !== undefined) q = q.where('created_by', '=', query.createdBy.toLowerCase());
  if (query.updatedSince !== undefined) q = q.where('updated_at', '>=', query.updatedSince);
  // In the values, not the keys: each value as text (a multi-choice list as its JSON).
  if (query.q)
    q = q.where(
      sql<boolean>`exists (select 1 from ${sql.raw(sqlText.jsonObjectValues(dialectOf(db), 'data_source_rows."values"', 'j'))} where instr(lower(cast(j.value as text)), ${query.q.toLowerCase()}) > 0)`,
    );
  if (query.cursor) {
    const pos = decodeCursor(query.cursor);
    const op = sql.raw(query.direction === 'asc' ? '>' : '<');
    q = q.where(sql<boolean>`(${key}, id) ${op} (${cursorKey(pos.key)}, ${pos.id})`);
  }
  const dir = sql.raw(query.direction);
  const rows = await q
    .orderBy(sql`${key} ${dir}`)
    .orderBy(sql`id ${dir}`)
    .limit(query.limit + 1)
    .execute();
  const page = toPage(rows, query.limit, (r) => r.sort_key);
  return { items: page.items.map(({ sort_key: _, ...r }) => r as RecordRow), nextCursor: page.nextCursor };
}

export async function insertRecord(db: Db, row: RecordRow): Promise<void> {
  await db.insertInto('data_source_rows').values(row).execute();
}

/** The number of records of a table (the position after the last one when positions have no gaps). */
export async function recordCount(db: Db, sourceId: string): Promise<number> {
  const r = await db
    .selectFrom('data_source_rows')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('source_id', '=', sourceId)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** The position after the last record. */
export async function endPosition(db: Db, sourceId: string): Promise<number> {
  const r = await db
    .selectFrom('data_source_rows')
    .select((eb) => eb.fn.max('position').as('p'))
    .where('source_id', '=', sourceId)
    .executeTakeFirst();
  return r?.p == null ? 0 : Number(r.p) + 1;
}

/** Makes room at `position`: records at or after it move one down. */
export async function openPosition(db: Db, sourceId: string, position: number): Promise<void> {
  await db
    .updateTable('data_source_rows')
    .set((eb) => ({ position: eb('position', '+', 1) }))
    .where('source_id', '=', sourceId)
    .where('position', '>=', position)
    .execute();
}

/** Applies `set` and bumps the revision, only if the record is still at `revision` (answers whether it was). */
export async function updateRecord(db: Db, id: string, revision: number, set: Partial<Omit<RecordRow, 'id' | 'source_id' | 'revision'>>): Promise<boolean> {
  const res = await db
    .updateTable('data_source_rows')
    .set({ ...set, revision: revision + 1 })
    .where('id', '=', id)
    .where('revision', '=', revision)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Moves a record to `to` (clamped to the table), the records between shift by one. */
export async function moveRecord(db: Db, record: RecordRow, to: number): Promise<number> {
  const count = await recordCount(db, record.source_id);
  const target = Math.min(to, count - 1);
  if (target === record.position) return target;
  const down = target < record.position;
  await db
    .updateTable('data_source_rows')
    .set((eb) => ({ position: eb('position', down ? '+' : '-', 1) }))
    .where('source_id', '=', record.source_id)
    .where('id', '<>', record.id)
    .where('position', down ? '>=' : '>', down ? target : record.position)
    .where('position', down ? '<' : '<=', down ? record.position : target)
    .execute();
  return target;
}

export async function deleteRecordRow(db: Db, id: string): Promise<void> {
  await db.deleteFrom('data_source_rows').where('id', '=', id).execute();
}

/** Every record of a table (all states, not only live ones), in order: what a form publish checks and migrates. */
export async function allRecordsOf(db: Db, sourceId: string): Promise<Pick<RecordRow, 'id' | 'values' | 'revision'>[]> {
  return db.selectFrom('data_source_rows').select(['id', 'values', 'revision']).where('source_id', '=', sourceId).orderBy('position').orderBy('id').execute();
}

/** A record's audit trail (comments too), oldest first, with the names of the people. */
/** How many records of the table are in each state. */
export async function stateCounts(db: Db, sourceId: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('data_source_rows')
    .select(['state', db.fn.countAll<number>().as('n')])
    .where('source_id', '=', sourceId)
    .groupBy('state')
    .execute();
  return new Map(rows.map((r) => [r.state, Number(r.n)]));
}

export async function eventsOf(db: Db, recordId: string, limit = 1000) {
  return db
    .selectFrom('data_source_record_events as e')
    .leftJoin('users as u', 'u.id', 'e.user_id')
    .select(['e.id', 'e.seq', 'e.kind', 'e.user_id', 'e.token_id', 'e.data', 'e.at', 'u.display_name'])
    .where('e.record_id', '=', recordId)
    .orderBy('e.seq')
    .limit(limit)
    .execute();
}

// ---- approvals toward N-person transitions ----

export async function approvalsOf(db: Db, recordIds: readonly string[]) {
  if (recordIds.length === 0) return [];
  return db
    .selectFrom('data_source_record_approvals')
    .selectAll()
    .where('record_id', 'in', [...recordIds])
    .orderBy('at')
    .execute();
}

export async function addApproval(db: Db, recordId: string, transition: string, userId: string, comment: string | null, at: string): Promise<void> {
  await db.insertInto('data_source_record_approvals').values({ record_id: recordId, transition, user_id: userId, comment, at }).execute();
}

export async function clearApprovals(db: Db, recordId: string): Promise<void> {
  await db.deleteFrom('data_source_record_approvals').where('record_id', '=', recordId).execute();
}

// ---- the publishing window ----

/** Published records whose `live` no longer matches their window at `now`. */
export async function windowFlips(db: Db, now: string): Promise<Pick<RecordRow, 'id' | 'source_id' | 'live' | 'revision' | 'publish_at' | 'unpublish_at'>[]> {
  return db
    .selectFrom('data_source_rows')
    .select(['id', 'source_id', 'live', 'revision', 'publish_at', 'unpublish_at'])
    .where('state', '=', 'published')
    .where((eb) => eb.or([eb('publish_at', 'is not', null), eb('unpublish_at', 'is not', null)]))
    .where(sql<boolean>`live <> (case when (publish_at is null or publish_at <= ${now}) and (unpublish_at is null or unpublish_at > ${now}) then 1 else 0 end)`)
    .limit(500)
    .execute();
}

// ---- the approvals inbox ----

/** Records waiting in (source, state) on any of `transitions` the user has not approved yet. */
export interface Waiting {
  sourceId: string;
  state: string;
  transitions: string[];
}

export async function waitingRecords(db: Db, userId: string, waiting: readonly Waiting[], page: { limit: number; cursor?: string }) {
  if (waiting.length === 0) return { items: [] as RecordRow[], nextCursor: null };
  const key = sql<string>`coalesce(state_changed_at, created_at)`;
  let q = db
    .selectFrom('data_source_rows as r')
    .selectAll('r')
    .select(key.as('sort_key'))
    .where((eb) =>
      eb.or(
        waiting.map((w) =>
          eb.and([
            eb('r.source_id', '=', w.sourceId),
            eb('r.state', '=', w.state),
            sql<boolean>`(select count(*) from data_source_record_approvals a where a.record_id = r.id and a.user_id = ${userId} and a.transition in (${sql.join(w.transitions)})) < ${w.transitions.length}`,
          ]),
        ),
      ),
    );
  if (page.cursor) {
    const pos = decodeCursor(page.cursor);
    q = q.where(sql<boolean>`(${key}, r.id) > (${pos.key}, ${pos.id})`);
  }
  const rows = await q
    .orderBy(key)
    .orderBy('r.id')
    .limit(page.limit + 1)
    .execute();
  const out = toPage(rows, page.limit, (r) => r.sort_key);
  return { items: out.items.map(({ sort_key: _, ...r }) => r as RecordRow), nextCursor: out.nextCursor };
}

/** Every table's workflow (tables with a form), with the table's name. */
export async function allWorkflows(db: Db) {
  return db
    .selectFrom('data_source_forms as f')
    .innerJoin('data_sources as s', 's.id', 'f.source_id')
    .select(['f.source_id', 'f.workflow', 's.name'])
    .where('s.provider', '=', 'manual-table')
    .execute();
}
