import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import { storableJson } from '../../platform/db/json.js';
import { type Role, roleAtLeast } from '../../platform/http/auth.js';
import { ApiError, forbidden, notFound } from '../../platform/http/errors.js';
import type { Publishable, PublicationSummary } from '../../platform/publications.js';
import { getSettings } from '../system/index.js';
import { approversExcept, type NotificationKind, notify } from './notifications.repo.js';
import { publishableOf } from './publishables.js';
import {
  appendEvent,
  dueSubmissions,
  eventsOf,
  getSubmission,
  insertSubmission,
  lastActor,
  listSubmissions,
  moveSubmission,
  OPEN_STATES,
  openSubmissionsOf,
  setPublication,
  type SubmissionFilter,
  type SubmissionRow,
  type SubmissionState,
  userNames,
} from './submissions.repo.js';

/**
 * Submissions (issue 20, docs/publishing.md): an editor submits an item's draft; a publisher
 * approves it or requests changes, then publishes it now or schedules it. Every step is a
 * guarded state move (moveSubmission) with an event in the audit trail and a notification
 * to the submitter, in one transaction.
 */

export interface Caller {
  userId: string;
  role: Role;
}

/** A scheduled publish is at most this far ahead. */
export const MAX_SCHEDULE_AHEAD_MS = 366 * 24 * 3600_000;

const DELETED = '(deleted)';

async function contentNames(db: Db, rows: SubmissionRow[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const r of rows) {
    const key = `${r.content_type}:${r.content_id}`;
    if (names.has(key)) continue;
    try {
      names.set(key, (await publishableOf(r.content_type).state(db, r.content_id)).name);
    } catch {
      names.set(key, DELETED);
    }
  }
  return names;
}

export async function submissionDtos(db: Db, rows: SubmissionRow[]) {
  const names = await contentNames(db, rows);
  const users = await userNames(
    db,
    rows.map((r) => r.submitted_by),
  );
  return rows.map((r) => ({
    id: r.id,
    type: r.content_type,
    contentId: r.content_id,
    contentName: names.get(`${r.content_type}:${r.content_id}`) ?? DELETED,
    kind: r.kind as 'draft' | 'rollback',
    state: r.state as SubmissionState,
    message: r.message,
    submittedBy: r.submitted_by,
    submittedByName: r.submitted_by ? (users.get(r.submitted_by) ?? null) : null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    draftRevision: r.draft_revision,
    decidedBy: r.decided_by,
    decidedAt: r.decided_at,
    comment: r.comment,
    publishAt: r.publish_at,
    publication: r.publication_id && r.publication_number !== null ? { id: r.publication_id, number: r.publication_number } : null,
  }));
}

export async function submissionDto(db: Db, row: SubmissionRow) {
  return (await submissionDtos(db, [row]))[0]!;
}

export async function submissionDetail(db: Db, id: string) {
  const row = await requireSubmission(db, id);
  const events = await eventsOf(db, id);
  return {
    ...(await submissionDto(db, row)),
    events: events.map((e) => ({ at: e.at, by: e.by, byName: e.byName ?? null, action: e.action, comment: e.comment })),
  };
}

export async function listSubmissionDtos(db: Db, caller: Caller, f: Omit<SubmissionFilter, 'submittedBy'> & { submittedBy?: string | undefined }) {
  const page = await listSubmissions(db, { ...f, submittedBy: f.submittedBy === 'me' ? caller.userId : f.submittedBy });
  return { items: await submissionDtos(db, page.items), nextCursor: page.nextCursor };
}

async function requireSubmission(db: Db, id: string): Promise<SubmissionRow> {
  const row = await getSubmission(db, id);
  if (!row) throw notFound('Submission');
  return row;
}

const wrongState = (row: SubmissionRow, action: string, needed: string) =>
  new ApiError('conflict', `This submission is ${row.state.replace('_', ' ')}: only ${needed} submissions can be ${action}`, {
    details: { state: row.state },
  });

/** Tells the submitter (not when they did it themselves). */
async function tellSubmitter(db: Db, row: SubmissionRow, actor: string | null, kind: NotificationKind, title: string, body: string) {
  if (row.submitted_by && row.submitted_by !== actor) await notify(db, { userId: row.submitted_by, kind, title, body, submissionId: row.id });
}

async function nameOf(db: Db, row: SubmissionRow): Promise<string> {
  return (await contentNames(db, [row])).get(`${row.content_type}:${row.content_id}`) ?? DELETED;
}

/** Cancels the open submissions of the item (a newer one replaces them), with an event each. */
async function supersede(trx: Db, type: string, contentId: string, by: string, newer: string): Promise<void> {
  for (const old of await openSubmissionsOf(trx, type, contentId)) {
    if (await moveSubmission(trx, old.id, old.state as SubmissionState, { state: 'cancelled' })) {
      await appendEvent(trx, old.id, 'cancelled', by, `superseded by ${newer}`);
    }
  }
}

async function create(
  trx: Db,
  p: { type: string; contentId: string; kind: 'draft' | 'rollback'; message: string; snapshot: unknown; revision: number; by: string },
): Promise<SubmissionRow> {
  const t = nowIso();
  const row: SubmissionRow = {
    id: newId(),
    content_type: p.type,
    content_id: p.contentId,
    kind: p.kind,
    state: 'pending',
    message: p.message,
    snapshot: storableJson(p.snapshot, 'The submission'),
    draft_revision: p.revision,
    submitted_by: p.by,
    decided_by: null,
    decided_at: null,
    comment: null,
    publish_at: null,
    publication_id: null,
    publication_number: null,
    created_at: t,
    updated_at: t,
  };
  await supersede(trx, p.type, p.contentId, p.by, row.id);
  await insertSubmission(trx, row);
  await appendEvent(trx, row.id, 'submitted', p.by, p.message || null, t);
  const title = `${p.kind === 'rollback' ? 'Rollback' : 'Submitted'} for approval: ${await nameOf(trx, row)}`;
  for (const userId of await approversExcept(trx, p.by)) {
    await notify(trx, { userId, kind: 'submission.submitted', title, body: p.message || 'No message.', submissionId: row.id });
  }
  return row;
}

/**
 * The item was deleted (platform `forgetContent`, in the deleting transaction): its open and
 * scheduled submissions are withdrawn, with an event each, and their submitters told.
 */
export async function withdrawSubmissionsOf(trx: Db, type: string, contentId: string, name: string): Promise<void> {
  for (const row of await openSubmissionsOf(trx, type, contentId, [...OPEN_STATES, 'scheduled'])) {
    if (!(await moveSubmission(trx, row.id, row.state as SubmissionState, { state: 'cancelled', publish_at: null, updated_at: nowIso() }))) continue;
    await appendEvent(trx, row.id, 'cancelled', null, `the ${type} was deleted`);
    await tellSubmitter(trx, row, null, 'submission.withdrawn', `Withdrawn: ${name}`, `The ${type} "${name}" was deleted, so its submission was withdrawn.`);
  }
}

/** POST /content-submissions/{type}/{id}: the item's draft as it is now, for approval. */
export async function submitDraft(deps: AppDeps, caller: Caller, type: string, contentId: string, message: string | undefined) {
  const adapter = publishableOf(type);
  const row = await deps.db.transaction().execute(async (trx) => {
    const state = await adapter.state(trx, contentId);
    if (!state.unpublishedChanges) {
      throw new ApiError('conflict', `Nothing to submit: "${state.name}" has no unpublished changes (its draft is what screens play)`);
    }
    return create(trx, { type, contentId, kind: 'draft', message: message ?? '', snapshot: state.draft, revision: state.revision, by: caller.userId });
  });
  return submissionDto(deps.db, row);
}

/** A rollback under approvals: a pending submission of kind 'rollback' carrying an older publication's snapshot. */
export async function submitRollback(deps: AppDeps, caller: Caller, adapter: Publishable, contentId: string, snapshot: unknown, message: string) {
  const row = await deps.db.transaction().execute(async (trx) => {
    const state = await adapter.state(trx, contentId);
    return create(trx, { type: adapter.type, contentId, kind: 'rollback', message, snapshot, revision: state.revision, by: caller.userId });
  });
  return submissionDto(deps.db, row);
}

export async function approve(deps: AppDeps, caller: Caller, id: string, comment: string | undefined) {
  const stale = await deps.db.transaction().execute(async (trx) => {
    const row = await requireSubmission(trx, id);
    if (row.state !== 'pending') throw wrongState(row, 'approved', 'pending');
    if (row.submitted_by === caller.userId && !(await getSettings(trx)).approvals.allowSelfApproval) {
      throw forbidden('You submitted this: another publisher must approve it (or an administrator allows self-approval in the settings)');
    }
    const adapter = publishableOf(row.content_type);
    if (row.kind === 'draft') {
      const state = await adapter.state(trx, row.content_id);
      if (state.revision !== row.draft_revision) {
        await moveSubmission(trx, id, 'pending', { state: 'stale' });
        await appendEvent(trx, id, 'stale', caller.userId, `the draft is at revision ${state.revision}, submitted at ${row.draft_revision}`);
        return { now: state.revision, was: row.draft_revision };
      }
    }
    const t = nowIso();
    await moveSubmission(trx, id, 'pending', { state: 'approved', decided_by: caller.userId, decided_at: t, comment: comment ?? null, updated_at: t });
    await appendEvent(trx, id, 'approved', caller.userId, comment ?? null, t);
    await tellSubmitter(trx, row, caller.userId, 'submission.approved', `Approved: ${await nameOf(trx, row)}`, comment ?? 'Your submission was approved.');
    return null;
  });
  if (stale) {
    throw new ApiError(
      'conflict',
      `The draft changed after submission (revision ${stale.was} was submitted, it is at ${stale.now} now): the submission is stale; resubmit it`,
      { details: { state: 'stale', draftRevision: stale.was, currentRevision: stale.now } },
    );
  }
  return submissionDto(deps.db, await requireSubmission(deps.db, id));
}

export async function requestChanges(deps: AppDeps, caller: Caller, id: string, comment: string) {
  await deps.db.transaction().execute(async (trx) => {
    const row = await requireSubmission(trx, id);
    if (row.state !== 'pending') throw wrongState(row, 'sent back for changes', 'pending');
    const t = nowIso();
    await moveSubmission(trx, id, 'pending', { state: 'changes_requested', decided_by: caller.userId, decided_at: t, comment, updated_at: t });
    await appendEvent(trx, id, 'changes_requested', caller.userId, comment, t);
    await tellSubmitter(trx, row, caller.userId, 'submission.changes_requested', `Changes requested: ${await nameOf(trx, row)}`, comment);
  });
  return submissionDto(deps.db, await requireSubmission(deps.db, id));
}

/**
 * Publishes a submission in one transaction: the guarded move (`from` -> published) first, so
 * that of two racing callers one publishes and the other finds nothing to do (answers null),
 * then the adapter's publish. A failure (a 409 from the adapter: what it refers to is gone)
 * rolls that back; the caller records it (publishFailed).
 */
async function publishNow(
  deps: AppDeps,
  row: SubmissionRow,
  from: 'approved' | 'scheduled',
  by: string | null,
  note: string,
): Promise<PublicationSummary | null> {
  const adapter = publishableOf(row.content_type);
  const published = await deps.db.transaction().execute(async (trx) => {
    const t = nowIso();
    if (!(await moveSubmission(trx, row.id, from, { state: 'published', updated_at: t }))) return null;
    const pub = await adapter.publish(trx, row.content_id, JSON.parse(row.snapshot) as unknown, by, note, row.kind === 'rollback' ? 'rollback' : 'submission');
    await setPublication(trx, row.id, pub);
    await appendEvent(trx, row.id, 'published', by, note || null, t);
    await tellSubmitter(trx, row, by, 'submission.published', `Published: ${await nameOf(trx, row)}`, `Publication ${pub.number} is what screens play now.`);
    return pub;
  });
  if (published) await announceSafely(deps, adapter, row.content_id);
  return published;
}

/** Tells screens after a commit; a failure there is logged (the publication is made either way). */
export async function announceSafely(deps: AppDeps, adapter: Publishable, contentId: string): Promise<void> {
  try {
    await adapter.announce(deps, contentId);
  } catch (err) {
    deps.logger.error({ err, type: adapter.type, contentId }, 'could not tell screens of a publication');
  }
}

/** After a failed publish: the event, the notifications (submitter, and who scheduled it), a scheduled one back to approved. */
async function publishFailed(deps: AppDeps, row: SubmissionRow, from: 'approved' | 'scheduled', by: string | null, err: unknown): Promise<void> {
  const reason = err instanceof Error ? err.message : String(err);
  await deps.db.transaction().execute(async (trx) => {
    if (from === 'scheduled' && !(await moveSubmission(trx, row.id, 'scheduled', { state: 'approved', publish_at: null }))) return;
    await appendEvent(trx, row.id, 'publish_failed', by, reason.slice(0, 2000));
    const title = `Publishing failed: ${await nameOf(trx, row)}`;
    await tellSubmitter(trx, row, by, 'submission.publish_failed', title, reason);
    if (from === 'scheduled' && by && by !== row.submitted_by) {
      await notify(trx, { userId: by, kind: 'submission.publish_failed', title, body: reason, submissionId: row.id });
    }
  });
}

export async function publishSubmission(deps: AppDeps, caller: Caller, id: string, note: string | undefined) {
  const row = await requireSubmission(deps.db, id);
  if (row.state !== 'approved') throw wrongState(row, 'published', 'approved');
  let pub: PublicationSummary | null;
  try {
    pub = await publishNow(deps, row, 'approved', caller.userId, note ?? row.message);
  } catch (err) {
    if (err instanceof ApiError && (err.code === 'conflict' || err.code === 'not_found')) await publishFailed(deps, row, 'approved', caller.userId, err);
    throw err;
  }
  if (!pub) throw wrongState((await getSubmission(deps.db, id)) ?? row, 'published', 'approved');
  return submissionDto(deps.db, await requireSubmission(deps.db, id));
}

export async function schedulePublish(deps: AppDeps, caller: Caller, id: string, publishAt: string) {
  const at = Date.parse(publishAt);
  const now = Date.now();
  const issue = (message: string) =>
    new ApiError('validation_failed', `Invalid request body.publishAt: ${message}`, {
      details: { issues: [{ location: 'body', path: ['publishAt'], message, code: 'custom' }] },
    });
  if (at <= now) throw issue('must be in the future');
  if (at > now + MAX_SCHEDULE_AHEAD_MS) throw issue('must be at most a year ahead');
  await deps.db.transaction().execute(async (trx) => {
    const row = await requireSubmission(trx, id);
    if (row.state !== 'approved') throw wrongState(row, 'scheduled', 'approved');
    const iso = nowIso(at);
    await moveSubmission(trx, id, 'approved', { state: 'scheduled', publish_at: iso });
    await appendEvent(trx, id, 'scheduled', caller.userId, iso);
    await tellSubmitter(trx, row, caller.userId, 'submission.scheduled', `Scheduled: ${await nameOf(trx, row)}`, `It will be published at ${iso}.`);
  });
  return submissionDto(deps.db, await requireSubmission(deps.db, id));
}

export async function cancelSchedule(deps: AppDeps, caller: Caller, id: string) {
  await deps.db.transaction().execute(async (trx) => {
    const row = await requireSubmission(trx, id);
    if (row.state !== 'scheduled') throw wrongState(row, 'unscheduled', 'scheduled');
    await moveSubmission(trx, id, 'scheduled', { state: 'approved', publish_at: null });
    await appendEvent(trx, id, 'schedule_cancelled', caller.userId, null);
  });
  return submissionDto(deps.db, await requireSubmission(deps.db, id));
}

/** How often the scheduler looks for due submissions (docs/publishing.md "Scheduling"). */
export const PUBLISH_DUE_TICK_MS = 1_000;

/**
 * The scheduler's tick: publishes scheduled submissions whose time has come. Each publish is
 * guarded by its state move (scheduled -> published in the publish transaction), so racing
 * ticks, or two apps on one database, publish each once; state lives in the database, so a
 * restart picks up what was due meanwhile. Answers how many it published.
 */
export async function publishDue(deps: AppDeps, now = Date.now()): Promise<number> {
  let count = 0;
  for (const row of await dueSubmissions(deps.db, nowIso(now))) {
    if (deps.periodic.isStopping) break;
    const by = await lastActor(deps.db, row.id, 'scheduled');
    try {
      if (await publishNow(deps, row, 'scheduled', by, row.message)) count++;
    } catch (err) {
      deps.logger.warn({ err, submissionId: row.id }, 'a scheduled publish failed');
      await publishFailed(deps, row, 'scheduled', by, err);
    }
  }
  return count;
}

export function callerRoleAtLeast(caller: Caller, role: Role): boolean {
  return roleAtLeast(caller.role, role);
}
