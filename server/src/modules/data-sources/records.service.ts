import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import { storableJson } from '../../platform/db/json.js';
import { ApiError } from '../../platform/http/errors.js';
import { type AccessLevel, type Caller, requireLevel } from './access.js';
import { getSourceRow, parseJson, type SourceRow } from './data-sources.repo.js';
import { rebuildManualSnapshot } from './data-sources.service.js';
import { type Field, type FieldIssue, FieldSchema, type Value, validateValues } from './fields.js';
import { findForm, findFormVersion } from './forms.repo.js';
import { fireDataChange } from './hooks.js';
import type { Column } from './providers/types.js';
import {
  type Actor,
  addApproval,
  appendEvent,
  approvalsOf,
  clearApprovals,
  deleteRecordRow,
  endPosition,
  eventsOf,
  findRecord,
  insertRecord,
  listRecords,
  moveRecord,
  openPosition,
  RECORD_SORTS,
  type RecordRow,
  recordCount,
  updateRecord,
} from './records.repo.js';
import type { CreateRecordBody, ListRecordsQuery, PatchRecordBody, RecordDto, TransitionBody } from './records.schemas.js';
import { DEFAULT_WORKFLOW, type Workflow } from './workflow-def.js';
import { decide, isLive, mayTake, stateAfterEdit, type Taker, transitionsFrom } from './workflow-run.js';
import { deleteRecordFiles } from './records-attachments.files.js';
import { attachmentsOf } from './records-attachments.service.js';

/**
 * Records of manual tables (issue 18, docs/data-sources.md "Records" and "Workflow"): create,
 * read, change and delete them, and move them through the form's workflow. Every change runs
 * in one transaction that reads the record, checks its revision and access, writes with
 * `where revision = ?`, appends to its audit trail and, when the live rows changed, rebuilds
 * the table's snapshot; the outputs hear of it after the commit.
 */

/**
 * Who writes: a console user (`caller`, whose access to the table is checked here) or an
 * integration token (`caller` null: the token's grant on the table was checked by its route).
 */
export interface Who {
  caller: Caller | null;
  actor: Actor;
}

export const whoOf = (caller: Caller): Who => ({ caller, actor: { userId: caller.userId, tokenId: null } });

const MANUAL = 'manual-table';

async function tableRow(db: Db, id: string): Promise<SourceRow> {
  const source = await getSourceRow(db, id);
  if (source.provider !== MANUAL) throw new ApiError('not_found', `Data source "${source.name}" is a ${source.provider} source: only a table has records`);
  return source;
}

/** The caller's level, 403 below `needed`; a token (its grant checked by its route) writes as an editor. */
async function accessOf(db: Db, who: Who, source: SourceRow, needed: AccessLevel): Promise<AccessLevel> {
  return who.caller ? requireLevel(db, who.caller, source.id, needed, source.name) : 'editor';
}

const takerOf = (who: Who, level: AccessLevel | null): Taker => ({ userId: who.caller?.userId ?? null, role: who.caller?.role ?? null, level });

interface FormState {
  workflow: Workflow;
  published: { version: number; fields: Field[] } | null;
}

async function formState(db: Db, sourceId: string): Promise<FormState> {
  const form = await findForm(db, sourceId);
  if (!form) return { workflow: DEFAULT_WORKFLOW, published: null };
  const workflow = parseJson<Workflow>(form.workflow, DEFAULT_WORKFLOW);
  const version = form.published_version > 0 ? await findFormVersion(db, sourceId, form.published_version) : undefined;
  const fields = version ? parseJson<unknown[]>(version.fields, []).map((f) => FieldSchema.parse(f)) : null;
  return { workflow, published: version && fields ? { version: version.version, fields } : null };
}

function publishedOrConflict(source: SourceRow, form: FormState) {
  if (!form.published) throw new ApiError('conflict', `The form of "${source.name}" has no published version yet: publish the form first`);
  return form.published;
}

/** The record's values after `incoming` (merged over `base`; fields missing in both get their default), 400 naming each bad field. */
function checkedValues(fields: readonly Field[], base: Record<string, unknown>, incoming: Record<string, unknown>): Record<string, Value> {
  const keys = new Set(fields.map((f) => f.key));
  const issues: FieldIssue[] = Object.keys(incoming)
    .filter((k) => !keys.has(k))
    .map((k) => ({ path: [k], message: 'is not a field of this form' }));
  const values: Record<string, Value> = {};
  for (const f of fields) values[f.key] = (f.key in incoming ? incoming[f.key] : f.key in base ? base[f.key] : (f.default ?? null)) as Value;
  issues.push(...validateValues(fields, values));
  if (issues.length) {
    const listed = issues.map((i) => ({ location: 'body', path: ['values', ...i.path], message: i.message, code: 'custom' }));
    throw new ApiError('validation_failed', `Invalid values: ${listed.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`, {
      details: { issues: listed },
    });
  }
  return values;
}

function checkWindow(publishAt: string | null, unpublishAt: string | null): void {
  if (publishAt && unpublishAt && Date.parse(unpublishAt) <= Date.parse(publishAt)) {
    throw new ApiError('validation_failed', 'unpublishAt must be after publishAt', {
      details: { issues: [{ location: 'body', path: ['unpublishAt'], message: 'must be after publishAt', code: 'custom' }] },
    });
  }
}

/** Rebuilds the table's snapshot from its live records; answers the new data revision (null: unchanged). */
export async function rebuildLive(db: Db, sourceId: string): Promise<number | null> {
  const source = await getSourceRow(db, sourceId);
  return rebuildManualSnapshot(db, sourceId, parseJson<Column[]>(source.columns, []));
}

async function fired(deps: AppDeps, sourceId: string, revision: number | null): Promise<void> {
  if (revision !== null) await fireDataChange(deps, { sourceId, change: 'data', revision });
}

type ApprovalRow = Awaited<ReturnType<typeof approvalsOf>>[number];

export function recordDto(r: RecordRow, approvals: readonly ApprovalRow[] = [], wf: Workflow = DEFAULT_WORKFLOW): RecordDto {
  const mine = approvals.filter((a) => a.record_id === r.id);
  const byTransition = new Map<string, string[]>();
  for (const a of mine) byTransition.set(a.transition, [...(byTransition.get(a.transition) ?? []), a.user_id]);
  return {
    id: r.id,
    sourceId: r.source_id,
    values: parseJson<Record<string, unknown>>(r.values, {}),
    state: r.state,
    revision: r.revision,
    formVersion: r.form_version,
    publishAt: r.publish_at,
    unpublishAt: r.unpublish_at,
    live: r.live === 1,
    position: r.position,
    createdBy: r.created_by,
    updatedBy: r.updated_by,
    createdByToken: r.created_by_token,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    stateChangedAt: r.state_changed_at,
    ...(byTransition.size
      ? {
          pendingApprovals: [...byTransition].map(([transition, userIds]) => ({
            transition,
            userIds,
            needed: wf.transitions.find((t) => t.name === transition)?.approvals ?? 1,
          })),
        }
      : {}),
  };
}

async function dtoOf(db: Db, sourceId: string, recordId: string): Promise<RecordDto> {
  const [row, form] = await Promise.all([findRecord(db, sourceId, recordId), formState(db, sourceId)]);
  return recordDto(row, await approvalsOf(db, [row.id]), form.workflow);
}

// ---- reading ----

export async function listRecordDtos(deps: AppDeps, who: Who, sourceId: string, query: ListRecordsQuery) {
  const db = deps.db;
  const source = await tableRow(db, sourceId);
  await accessOf(db, who, source, 'viewer');
  const form = await formState(db, sourceId);
  if (!(RECORD_SORTS as readonly string[]).includes(query.sort) && !form.published?.fields.some((f) => f.key === query.sort)) {
    throw new ApiError('validation_failed', `sort: "${query.sort}" is neither ${RECORD_SORTS.join(', ')} nor a field of the published form`, {
      details: { issues: [{ location: 'query', path: ['sort'], message: 'unknown sort', code: 'custom' }] },
    });
  }
  const page = await listRecords(db, sourceId, { ...query, live: query.live === undefined ? undefined : query.live === 'true' });
  const approvals = await approvalsOf(
    db,
    page.items.map((r) => r.id),
  );
  return { items: page.items.map((r) => recordDto(r, approvals, form.workflow)), nextCursor: page.nextCursor };
}

/** One record with its audit trail (oldest first) and the transitions that leave its state. */
export async function recordDetail(deps: AppDeps, who: Who, sourceId: string, recordId: string) {
  const db = deps.db;
  const source = await tableRow(db, sourceId);
  const level = await accessOf(db, who, source, 'viewer');
  const row = await findRecord(db, sourceId, recordId);
  const [form, approvals, events, files] = await Promise.all([
    formState(db, sourceId),
    approvalsOf(db, [row.id]),
    eventsOf(db, row.id),
    attachmentsOf(db, sourceId, [row.id]),
  ]);
  const taker = takerOf(who, level);
  return {
    ...recordDto(row, approvals, form.workflow),
    history: events.map((e) => ({
      id: e.id,
      seq: e.seq,
      kind: e.kind,
      userId: e.user_id,
      userName: e.display_name,
      tokenId: e.token_id,
      data: parseJson<Record<string, unknown>>(e.data, {}),
      at: e.at,
    })),
    transitions: transitionsFrom(form.workflow, row.state).map((t) => ({ name: t.name, label: t.label ?? null, to: t.to, mayTake: mayTake(t, taker) })),
    attachments: files.get(row.id) ?? [],
  };
}

// ---- changes ----

export async function createRecord(deps: AppDeps, who: Who, sourceId: string, body: CreateRecordBody): Promise<RecordDto> {
  let dataRevision: number | null = null;
  let dto: RecordDto | undefined;
  const id = newId();
  await deps.db.transaction().execute(async (trx) => {
    const source = await tableRow(trx, sourceId);
    await accessOf(trx, who, source, 'editor');
    const form = await formState(trx, sourceId);
    const published = publishedOrConflict(source, form);
    const values = checkedValues(published.fields, {}, body.values);
    const publishAt = body.publishAt ?? null;
    const unpublishAt = body.unpublishAt ?? null;
    checkWindow(publishAt, unpublishAt);
    const end = await endPosition(trx, sourceId);
    let position = end;
    if (body.position !== undefined && body.position < end) {
      position = Math.min(body.position, await recordCount(trx, sourceId));
      await openPosition(trx, sourceId, position);
    }
    const state = form.workflow.initial;
    const live = isLive(state, publishAt, unpublishAt);
    const at = nowIso();
    await insertRecord(trx, {
      id,
      source_id: sourceId,
      position,
      values: storableJson(values, 'values'),
      created_at: at,
      updated_at: at,
      state,
      revision: 1,
      form_version: published.version,
      publish_at: publishAt,
      unpublish_at: unpublishAt,
      live: live ? 1 : 0,
      state_changed_at: at,
      created_by: who.actor.userId,
      updated_by: who.actor.userId,
      created_by_token: who.actor.tokenId,
      updated_by_token: who.actor.tokenId,
    });
    await appendEvent(trx, sourceId, id, 'created', who.actor, { values, state, publishAt, unpublishAt }, at);
    if (live) dataRevision = await rebuildLive(trx, sourceId);
    dto = await dtoOf(trx, sourceId, id);
  });
  await fired(deps, sourceId, dataRevision);
  return dto!;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Changes values (merged, checked against the published form; the record moves to that
 * version), the window and the position. An edit of values may send the record back to the
 * initial state (workflow-run.ts stateAfterEdit) and clears approvals given so far.
 */
export async function patchRecord(
  deps: AppDeps,
  who: Who,
  sourceId: string,
  recordId: string,
  body: PatchRecordBody,
  expect: (revision: number) => void,
): Promise<RecordDto> {
  let dataRevision: number | null = null;
  let dto: RecordDto | undefined;
  let id = recordId;
  await deps.db.transaction().execute(async (trx) => {
    const source = await tableRow(trx, sourceId);
    const record = await findRecord(trx, sourceId, recordId);
    id = record.id;
    expect(record.revision);
    const level = await accessOf(trx, who, source, 'editor');
    const form = await formState(trx, sourceId);
    const set: Partial<RecordRow> = {};
    const data: Record<string, unknown> = {};
    const old = parseJson<Record<string, unknown>>(record.values, {});
    if (body.values !== undefined) {
      const published = publishedOrConflict(source, form);
      const values = checkedValues(published.fields, old, body.values);
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      for (const k of new Set([...Object.keys(old), ...Object.keys(values)]))
        if (!same(old[k], values[k])) changes[k] = { from: old[k] ?? null, to: values[k] ?? null };
      if (Object.keys(changes).length || record.form_version !== published.version) {
        set.values = storableJson(values, 'values');
        set.form_version = published.version;
        data.changes = changes;
        const state = stateAfterEdit(form.workflow, record.state, takerOf(who, level));
        if (state !== record.state) {
          set.state = state;
          data.state = { from: record.state, to: state };
        }
      }
    }
    const publishAt = body.publishAt !== undefined ? body.publishAt : record.publish_at;
    const unpublishAt = body.unpublishAt !== undefined ? body.unpublishAt : record.unpublish_at;
    checkWindow(publishAt, unpublishAt);
    if (publishAt !== record.publish_at) data.publishAt = { from: record.publish_at, to: (set.publish_at = publishAt) };
    if (unpublishAt !== record.unpublish_at) data.unpublishAt = { from: record.unpublish_at, to: (set.unpublish_at = unpublishAt) };
    if (body.position !== undefined && body.position !== record.position) {
      const position = await moveRecord(trx, record, body.position);
      if (position !== record.position) data.position = { from: record.position, to: (set.position = position) };
    }
    if (Object.keys(data).length === 0) {
      dto = await dtoOf(trx, sourceId, id);
      return;
    }
    const at = nowIso();
    const state = set.state ?? record.state;
    const live = isLive(state, publishAt, unpublishAt) ? 1 : 0;
    if (set.state !== undefined) set.state_changed_at = at;
    if (set.values !== undefined) await clearApprovals(trx, record.id);
    const done = await updateRecord(trx, record.id, record.revision, {
      ...set,
      live,
      updated_at: at,
      updated_by: who.actor.userId,
      updated_by_token: who.actor.tokenId,
    });
    if (!done) throw new ApiError('version_conflict', 'The record was changed meanwhile; reload it and apply your change again', { status: 409 });
    await appendEvent(trx, sourceId, record.id, 'updated', who.actor, data, at);
    if (live === 1 || record.live === 1) dataRevision = await rebuildLive(trx, sourceId);
    dto = await dtoOf(trx, sourceId, id);
  });
  await fired(deps, sourceId, dataRevision);
  return dto!;
}

export async function deleteRecord(deps: AppDeps, who: Who, sourceId: string, recordId: string, expect: (revision: number) => void): Promise<void> {
  let dataRevision: number | null = null;
  await deps.db.transaction().execute(async (trx) => {
    const source = await tableRow(trx, sourceId);
    const record = await findRecord(trx, sourceId, recordId);
    expect(record.revision);
    await accessOf(trx, who, source, 'editor');
    await deleteRecordRow(trx, record.id);
    // The trail stays (record_id is no reference): who deleted what it held.
    await appendEvent(trx, sourceId, record.id, 'deleted', who.actor, { values: parseJson(record.values, {}), state: record.state });
    if (record.live === 1) dataRevision = await rebuildLive(trx, sourceId);
  });
  await deleteRecordFiles(deps, sourceId, [recordId.toLowerCase()]); // its attachment rows went by cascade
  await fired(deps, sourceId, dataRevision);
}

/**
 * Takes one transition (docs "Workflow"): 400 for an unknown one, 409 when it does not leave
 * the record's state, 403 when the caller is not among its `who`, 400 without a required
 * comment, 409 for a second approval by the same person. A transition that needs N people
 * records each approval and moves the record at the Nth. The state is read and written in one
 * transaction (`where revision = ?`): of racing transitions exactly one wins.
 */
export async function takeTransition(
  deps: AppDeps,
  who: Who,
  sourceId: string,
  recordId: string,
  body: TransitionBody,
  expect: (revision: number) => void,
): Promise<RecordDto> {
  let dataRevision: number | null = null;
  let dto: RecordDto | undefined;
  let id = recordId;
  await deps.db.transaction().execute(async (trx) => {
    const source = await tableRow(trx, sourceId);
    const record = await findRecord(trx, sourceId, recordId);
    id = record.id;
    expect(record.revision);
    const level = await accessOf(trx, who, source, 'viewer');
    const form = await formState(trx, sourceId);
    const approvedBy = (await approvalsOf(trx, [record.id])).filter((a) => a.transition === body.transition).map((a) => a.user_id);
    const comment = body.comment?.trim() || null;
    const decision = decide(form.workflow, record.state, body.transition, takerOf(who, level), comment ?? undefined, approvedBy);
    const at = nowIso();
    const bump = (set: Partial<RecordRow>) =>
      updateRecord(trx, record.id, record.revision, { ...set, updated_at: at, updated_by: who.actor.userId, updated_by_token: who.actor.tokenId });
    switch (decision.kind) {
      case 'unknown':
        throw new ApiError('validation_failed', `"${body.transition}" is not a transition of this workflow (${decision.names.join(', ')})`, {
          details: { issues: [{ location: 'body', path: ['transition'], message: 'unknown transition', code: 'custom' }] },
        });
      case 'not_from_here':
        throw new ApiError(
          'conflict',
          `"${body.transition}" does not leave the state "${record.state}"; from there: ${decision.allowed.join(', ') || 'none'}`,
          { details: { state: record.state, allowed: decision.allowed } },
        );
      case 'forbidden':
        throw new ApiError('forbidden', `You may not take "${body.transition}" on records of "${source.name}"`);
      case 'comment_required':
        throw new ApiError('validation_failed', `"${body.transition}" needs a comment saying why`, {
          details: { issues: [{ location: 'body', path: ['comment'], message: 'is required for this transition', code: 'custom' }] },
        });
      case 'already_approved':
        throw new ApiError('conflict', `You already approved "${body.transition}" of this record; it needs another person`);
      case 'approval': {
        if (!(await bump({}))) throw changedMeanwhile();
        await addApproval(trx, record.id, body.transition, who.actor.userId!, comment, at);
        await appendEvent(
          trx,
          sourceId,
          record.id,
          'approval',
          who.actor,
          { transition: body.transition, comment, count: decision.count, needed: decision.needed },
          at,
        );
        break;
      }
      case 'move': {
        const live = isLive(decision.to, record.publish_at, record.unpublish_at) ? 1 : 0;
        if (!(await bump({ state: decision.to, state_changed_at: at, live }))) throw changedMeanwhile();
        await clearApprovals(trx, record.id);
        await appendEvent(
          trx,
          sourceId,
          record.id,
          'transition',
          who.actor,
          {
            transition: body.transition,
            from: record.state,
            to: decision.to,
            comment,
            ...(decision.transition.approvals > 1 ? { approvedBy: [...approvedBy, who.actor.userId] } : {}),
          },
          at,
        );
        if (live === 1 || record.live === 1) dataRevision = await rebuildLive(trx, sourceId);
      }
    }
    dto = await dtoOf(trx, sourceId, id);
  });
  await fired(deps, sourceId, dataRevision);
  return dto!;
}

const changedMeanwhile = () => new ApiError('conflict', 'The record was changed meanwhile (another transition won); reload it');
