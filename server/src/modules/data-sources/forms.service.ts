import type { Db } from '../../platform/db/database.js';
import { nowIso } from '../../platform/db/ids.js';
import { storableJson } from '../../platform/db/json.js';
import { ApiError } from '../../platform/http/errors.js';
import { type AccessLevel, levelsOf, requireLevel } from './access.js';
import { deleteSource, getSourceRow, parseJson, type SourceRow, updateSource } from './data-sources.repo.js';
import { createSource, type Env, rebuildManualSnapshot } from './data-sources.service.js';
import { columnsOf, type Field, fieldsFromColumns, FieldSchema, rowValues, type Value, validateValues } from './fields.js';
import {
  existingUserIds,
  findForm,
  findFormVersion,
  type FormRow,
  formVersionsOf,
  insertForm,
  insertFormVersion,
  listForms,
  updateForm,
} from './forms.repo.js';
import { stateCounts } from './records.repo.js';
import type { CreateFormBody, FormDto, MigrateBody, PatchFormBody } from './forms.schemas.js';
import { fireDataChange } from './hooks.js';
import { allRecordsOf, appendEvent, updateRecord } from './records.repo.js';
import type { Column, Row } from './providers/types.js';
import { DEFAULT_WORKFLOW, type Workflow } from './workflow-def.js';

/**
 * Forms of manual tables (issue 18, docs/data-sources.md "Forms"): a draft people edit, numbered
 * published versions that never change, and the workflow definition. Publishing makes the
 * table's columns follow the published fields. Records and the workflow's execution come later.
 */

const MANUAL = 'manual-table';
/** Rows a 409 lists at most. */
const MAX_LISTED_ROWS = 50;

function tableOnly(row: SourceRow): void {
  if (row.provider !== MANUAL) {
    throw new ApiError(
      'not_found',
      `Data source "${row.name}" is a ${row.provider} source: only a table (manual-table) has a form; its rows come from its document`,
    );
  }
}

/** The form of a table; a table made without one (POST /data-sources) gets it now, its draft from the columns. */
async function ensureForm(db: Db, row: SourceRow, userId: string | null): Promise<FormRow> {
  const found = await findForm(db, row.id);
  if (found) return found;
  const at = nowIso();
  await insertForm(db, {
    source_id: row.id,
    description: '',
    draft: JSON.stringify(fieldsFromColumns(parseJson<Column[]>(row.columns, []))),
    workflow: JSON.stringify(DEFAULT_WORKFLOW),
    published_version: 0,
    revision: 1,
    created_by: userId,
    updated_by: userId,
    created_at: at,
    updated_at: at,
  });
  return (await findForm(db, row.id))!;
}

/** Stored fields, read through the schema (defaults of fields added later apply). */
const fieldsOf = (json: string): Field[] => parseJson<unknown[]>(json, []).map((f) => FieldSchema.parse(f));

function dtoOf(
  source: SourceRow,
  form: FormRow,
  version: { version: number; fields: string; published_by: string | null; published_at: string } | undefined,
  level: AccessLevel,
): FormDto {
  return {
    sourceId: source.id,
    name: source.name,
    description: form.description,
    draft: { fields: fieldsOf(form.draft) },
    published: version
      ? { version: version.version, fields: fieldsOf(version.fields), publishedBy: version.published_by, publishedAt: version.published_at }
      : null,
    publishedVersion: form.published_version,
    workflow: parseJson<Workflow>(form.workflow, DEFAULT_WORKFLOW),
    revision: form.revision,
    myAccess: level,
    createdBy: form.created_by,
    updatedBy: form.updated_by,
    createdAt: form.created_at,
    updatedAt: form.updated_at,
  };
}

/** The form of a table (`version`: that published version instead of the newest). */
export async function getForm(env: Env, id: string, version?: number): Promise<FormDto> {
  const db = env.deps.db;
  const source = await getSourceRow(db, id);
  tableOnly(source);
  const level = await requireLevel(db, env.caller, id, 'viewer', source.name);
  const form = await ensureForm(db, source, null);
  const wanted = version ?? form.published_version;
  const published = wanted > 0 ? await findFormVersion(db, id, wanted) : undefined;
  if (version !== undefined && !published) {
    throw new ApiError('not_found', `The form of "${source.name}" has no published version ${version} (the newest is ${form.published_version})`);
  }
  return dtoOf(source, form, published, level);
}

export async function listFormDtos(env: Env, query: { limit: number; cursor?: string; q?: string }) {
  const db = env.deps.db;
  const page = await listForms(db, query);
  const [levels, versions] = await Promise.all([
    levelsOf(
      db,
      env.caller,
      page.items.map((r) => r.source_id),
    ),
    formVersionsOf(
      db,
      page.items.map((r) => ({ sourceId: r.source_id, version: r.published_version })),
    ),
  ]);
  const sources = await Promise.all(page.items.map((r) => getSourceRow(db, r.source_id)));
  return {
    items: page.items.map((r, i) => dtoOf(sources[i]!, r, versions.get(r.source_id), levels.get(r.source_id) ?? 'viewer')),
    nextCursor: page.nextCursor,
  };
}

/** A table and its form in one step; with `publish` (the default) the fields are version 1 and the table's columns at once. */
export async function createForm(env: Env, body: CreateFormBody): Promise<string> {
  const columns = body.publish ? columnsOf(body.fields) : [];
  const id = await createSource(env, { name: body.name, provider: MANUAL, config: { columns }, timeZone: body.timeZone });
  try {
    await env.deps.db.transaction().execute(async (trx) => {
      const at = nowIso();
      const fields = storableJson(body.fields, 'fields');
      await insertForm(trx, {
        source_id: id,
        description: body.description,
        draft: fields,
        workflow: storableJson(await checkedWorkflow(trx, body.workflow ?? DEFAULT_WORKFLOW), 'workflow'),
        published_version: body.publish ? 1 : 0,
        revision: 1,
        created_by: env.caller.userId,
        updated_by: env.caller.userId,
        created_at: at,
        updated_at: at,
      });
      if (body.publish) await insertFormVersion(trx, { source_id: id, version: 1, fields, published_by: env.caller.userId, published_at: at });
    });
  } catch (err) {
    await deleteSource(env.deps.db, id);
    throw err;
  }
  return id;
}

/** Reads the source and its form in a change's transaction, checks If-Match and the caller's access. */
async function forChange(env: Env, db: Db, id: string, needed: AccessLevel, expect: (revision: number) => void) {
  const source = await getSourceRow(db, id);
  tableOnly(source);
  const form = await ensureForm(db, source, env.caller.userId);
  expect(form.revision);
  await requireLevel(db, env.caller, id, needed, source.name);
  return { source, form };
}

async function saveForm(db: Db, form: FormRow, env: Env, set: Partial<FormRow>): Promise<void> {
  const done = await updateForm(db, form.source_id, form.revision, { ...set, updated_by: env.caller.userId, updated_at: nowIso() });
  if (!done) throw new ApiError('version_conflict', 'The form was changed meanwhile; reload it and apply your change again', { status: 409 });
}

/** Name (the table's) and description: editors. */
export async function patchForm(env: Env, id: string, body: PatchFormBody, expect: (revision: number) => void): Promise<void> {
  await env.deps.db.transaction().execute(async (trx) => {
    const { source, form } = await forChange(env, trx, id, 'editor', expect);
    if (body.name !== undefined && body.name !== source.name)
      await updateSource(trx, id, source.revision, { name: body.name, updated_by: env.caller.userId, updated_at: nowIso() });
    await saveForm(trx, form, env, body.description !== undefined ? { description: body.description } : {});
  });
}

/** Replaces the draft's fields: editors. */
export async function patchDraft(env: Env, id: string, fields: Field[], expect: (revision: number) => void): Promise<void> {
  await env.deps.db.transaction().execute(async (trx) => {
    const { form } = await forChange(env, trx, id, 'editor', expect);
    await saveForm(trx, form, env, { draft: storableJson(fields, 'fields') });
  });
}

async function checkedWorkflow(db: Db, wf: Workflow): Promise<Workflow> {
  const ids = [...new Set(wf.transitions.flatMap((t) => (t.who.userIds ?? []).map((u) => u.toLowerCase())))];
  if (ids.length) {
    const found = await existingUserIds(db, ids);
    const issues = wf.transitions.flatMap((t, i) =>
      (t.who.userIds ?? []).flatMap((u, j) =>
        found.has(u.toLowerCase()) ? [] : [{ location: 'body', path: ['transitions', i, 'who', 'userIds', j], message: 'no such user', code: 'custom' }],
      ),
    );
    if (issues.length) throw new ApiError('validation_failed', `Unknown user at ${issues[0]!.path.join('.')}`, { details: { issues } });
  }
  return {
    ...wf,
    transitions: wf.transitions.map((t) => ({ ...t, who: { ...t.who, ...(t.who.userIds ? { userIds: t.who.userIds.map((u) => u.toLowerCase()) } : {}) } })),
  };
}

/** Stores a checked workflow definition: owners. Nothing executes it yet. */
export async function putWorkflow(env: Env, id: string, wf: Workflow, expect: (revision: number) => void): Promise<void> {
  await env.deps.db.transaction().execute(async (trx) => {
    const { form } = await forChange(env, trx, id, 'owner', expect);
    // Records in a state the new definition drops would be stranded (no transition leaves it).
    const states = new Set(wf.states);
    const stranded = [...(await stateCounts(trx, id))].filter(([state]) => !states.has(state));
    if (stranded.length) {
      throw new ApiError(
        'conflict',
        `Records are in states this workflow drops (${stranded.map(([s, n]) => `${s}: ${n}`).join(', ')}); keep those states, or move the records out of them first`,
        { details: { states: Object.fromEntries(stranded) } },
      );
    }
    await saveForm(trx, form, env, { workflow: storableJson(await checkedWorkflow(trx, wf), 'workflow') });
  });
}

/** Writes the records a publish migrated (values changed), each with an 'updated' entry in its trail. */
async function saveMigrated(
  db: Db,
  sourceId: string,
  records: readonly { id: string; values: string; revision: number }[],
  rows: readonly Row[],
  how: { version: number; userId: string; at: string },
): Promise<void> {
  for (const [i, record] of records.entries()) {
    const before = parseJson<Row>(record.values, {});
    const after = rows[i]!;
    const changes = Object.fromEntries(
      Object.keys(after)
        .filter((k) => JSON.stringify(before[k] ?? null) !== JSON.stringify(after[k] ?? null))
        .map((k) => [k, { from: before[k] ?? null, to: after[k] ?? null }]),
    );
    if (Object.keys(changes).length === 0) continue;
    await updateRecord(db, record.id, record.revision, {
      values: storableJson(after, 'values'),
      form_version: how.version,
      updated_by: how.userId,
      updated_at: how.at,
    });
    const actor = { userId: how.userId, tokenId: null };
    await appendEvent(db, sourceId, record.id, 'updated', actor, { changes, migratedTo: how.version }, how.at);
  }
}

interface Broken {
  row: number;
  fields: { key: string; message: string }[];
}

/**
 * The table's rows under the new fields: each value that breaks a field is migrated as
 * `migrate` says (`clear` empties it, `{default}` puts that value), and the rows that still
 * break are answered. Only fields shown on screens are columns, so only they are checked.
 */
export function migrateRows(fields: readonly Field[], rows: readonly Row[], migrate: MigrateBody): { rows: Row[]; broken: Broken[]; changed: boolean } {
  const visible = fields.filter((f) => f.showOnScreens);
  const broken: Broken[] = [];
  let changed = false;
  const out = rows.map((row, i) => {
    const values = rowValues(visible, row);
    const next: Row = { ...row };
    for (const issue of validateValues(visible, values)) {
      const key = String(issue.path[0]);
      const how = migrate[key];
      if (how !== undefined) {
        const value: Value = how === 'clear' ? null : (how.default as Value);
        // Records keep values as the form gives them (a multi-choice stays a list; cells are made for the snapshot).
        (next as Record<string, Value>)[key] = value;
        values[key] = value;
        changed = true;
      }
    }
    const left = validateValues(visible, values);
    if (left.length) broken.push({ row: i, fields: left.map((l) => ({ key: String(l.path[0]), message: l.message })) });
    return next;
  });
  return { rows: out, broken, changed };
}

/** The draft becomes the next published version, the table's columns follow it: owners. */
export async function publishForm(env: Env, id: string, migrate: MigrateBody, expect: (revision: number) => void): Promise<number> {
  const { deps, caller } = env;
  let dataRevision: number | null = null;
  let version = 0;
  await deps.db.transaction().execute(async (trx) => {
    const { source, form } = await forChange(env, trx, id, 'owner', expect);
    const fields = fieldsOf(form.draft);
    const current = form.published_version > 0 ? await findFormVersion(trx, id, form.published_version) : undefined;
    if (current && JSON.stringify(fieldsOf(current.fields)) === JSON.stringify(fields)) {
      throw new ApiError('conflict', `The draft is already published as version ${form.published_version}; change it first`);
    }
    const keys = new Set(fields.map((f) => f.key));
    const issues = Object.entries(migrate).flatMap(([key, how]) => {
      const field = fields.find((f) => f.key === key);
      if (!field || !keys.has(key)) return [{ location: 'body', path: ['migrate', key], message: 'not a field of the draft', code: 'custom' }];
      if (how === 'clear') return [];
      return validateValues([{ ...field, required: true }], { [key]: how.default }).map((i) => ({
        location: 'body',
        path: ['migrate', key, 'default'],
        message: i.message,
        code: 'custom',
      }));
    });
    if (issues.length) throw new ApiError('validation_failed', `Invalid migrate: ${issues[0]!.path.join('.')} ${issues[0]!.message}`, { details: { issues } });
    // Every record, whatever its state: a draft or a submitted one must fit the new form too.
    const records = await allRecordsOf(trx, id);
    const result = migrateRows(
      fields,
      records.map((r) => parseJson<Row>(r.values, {})),
      migrate,
    );
    if (result.broken.length) {
      const keysBroken = [...new Set(result.broken.flatMap((b) => b.fields.map((f) => f.key)))];
      throw new ApiError(
        'conflict',
        `${result.broken.length} row(s) of the table would not fit the new form (${keysBroken.join(', ')}); send migrate to say what they get`,
        { details: { rowCount: result.broken.length, fields: keysBroken, rows: result.broken.slice(0, MAX_LISTED_ROWS) } },
      );
    }
    version = form.published_version + 1;
    const at = nowIso();
    if (result.changed) await saveMigrated(trx, id, records, result.rows, { version, userId: caller.userId, at });
    await insertFormVersion(trx, { source_id: id, version, fields: storableJson(fields, 'fields'), published_by: caller.userId, published_at: at });
    await saveForm(trx, form, env, { published_version: version });
    const columns = columnsOf(fields);
    await updateSource(trx, id, source.revision, {
      config: storableJson({ columns }, 'config'),
      columns: JSON.stringify(columns),
      updated_by: caller.userId,
      updated_at: at,
    });
    dataRevision = await rebuildManualSnapshot(trx, id, columns);
  });
  if (dataRevision !== null) await fireDataChange(deps, { sourceId: id, change: 'data', revision: dataRevision });
  return version;
}
