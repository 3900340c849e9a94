import type { Db } from '../../platform/db/database.js';
import type { DataSourceFormsTable, DataSourceFormVersionsTable } from '../../platform/db/schema.js';
import { afterCursor, toPage } from '../../platform/http/pagination.js';

export type FormRow = DataSourceFormsTable;
export type FormVersionRow = DataSourceFormVersionsTable;

export async function findForm(db: Db, sourceId: string): Promise<FormRow | undefined> {
  return db.selectFrom('data_source_forms').selectAll().where('source_id', '=', sourceId).executeTakeFirst();
}

export async function insertForm(db: Db, row: FormRow): Promise<void> {
  await db
    .insertInto('data_source_forms')
    .values(row)
    .onConflict((oc) => oc.column('source_id').doNothing())
    .execute();
}

/** Applies `set` and bumps the revision, only if the form is still at `revision`. */
export async function updateForm(db: Db, sourceId: string, revision: number, set: Partial<Omit<FormRow, 'source_id' | 'revision'>>): Promise<boolean> {
  const res = await db
    .updateTable('data_source_forms')
    .set({ ...set, revision: revision + 1 })
    .where('source_id', '=', sourceId)
    .where('revision', '=', revision)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function insertFormVersion(db: Db, row: FormVersionRow): Promise<void> {
  await db.insertInto('data_source_form_versions').values(row).execute();
}

export async function findFormVersion(db: Db, sourceId: string, version: number): Promise<FormVersionRow | undefined> {
  return db.selectFrom('data_source_form_versions').selectAll().where('source_id', '=', sourceId).where('version', '=', version).executeTakeFirst();
}

/** The published versions of these forms' sources (newest only when `version` is not given). */
export async function formVersionsOf(db: Db, keys: readonly { sourceId: string; version: number }[]): Promise<Map<string, FormVersionRow>> {
  const out = new Map<string, FormVersionRow>();
  const wanted = keys.filter((k) => k.version > 0);
  if (wanted.length === 0) return out;
  const rows = await db
    .selectFrom('data_source_form_versions')
    .selectAll()
    .where((eb) => eb.or(wanted.map((k) => eb.and([eb('source_id', '=', k.sourceId), eb('version', '=', k.version)]))))
    .execute();
  for (const r of rows) out.set(r.source_id, r);
  return out;
}

/** Forms with their source's name, by name (cursor paging). */
export async function listForms(db: Db, query: { limit: number; cursor?: string; q?: string }) {
  let q = db
    .selectFrom('data_source_forms as f')
    .innerJoin('data_sources as s', 's.id', 'f.source_id')
    .selectAll('f')
    .select(['s.id as id', 's.name as name'])
    .where(afterCursor('s.name', 's.id', 'asc', query.cursor));
  if (query.q) q = q.where((eb) => eb(eb.fn('instr', [eb.fn('lower', ['s.name']), eb.val(query.q!.toLowerCase())]), '>', 0));
  const rows = await q
    .orderBy('s.name')
    .orderBy('s.id')
    .limit(query.limit + 1)
    .execute();
  return toPage(rows, query.limit, (r) => r.name);
}

/** Whether a table's columns follow a published form (then its config's columns are not changed by hand). */
export async function hasPublishedForm(db: Db, sourceId: string): Promise<boolean> {
  return ((await findForm(db, sourceId))?.published_version ?? 0) > 0;
}

/** Which of the ids are users (a workflow's named approvers). */
export async function existingUserIds(db: Db, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  return new Set((await db.selectFrom('users').select('id').where('id', 'in', ids).execute()).map((u) => u.id));
}

/** A duplicated table keeps its form: draft, workflow and published versions (the copy's revision starts at 1). */
export async function copyForm(db: Db, fromId: string, toId: string, userId: string, at: string): Promise<void> {
  const form = await findForm(db, fromId);
  if (!form) return;
  await insertForm(db, { ...form, source_id: toId, revision: 1, created_by: userId, updated_by: userId, created_at: at, updated_at: at });
  const versions = await db.selectFrom('data_source_form_versions').selectAll().where('source_id', '=', fromId).execute();
  if (versions.length)
    await db
      .insertInto('data_source_form_versions')
      .values(versions.map((v) => ({ ...v, source_id: toId })))
      .execute();
}

/** The fields (JSON) of a table's newest published form version, or null without one. */
export async function publishedFieldsJson(db: Db, sourceId: string): Promise<string | null> {
  const row = await db
    .selectFrom('data_source_forms as f')
    .innerJoin('data_source_form_versions as v', (j) => j.onRef('v.source_id', '=', 'f.source_id').onRef('v.version', '=', 'f.published_version'))
    .select('v.fields')
    .where('f.source_id', '=', sourceId)
    .executeTakeFirst();
  return row?.fields ?? null;
}
