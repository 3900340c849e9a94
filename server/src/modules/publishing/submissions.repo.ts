import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import type { ContentSubmissionsTable } from '../../platform/db/schema.js';
import { afterCursor, toPage } from '../../platform/http/pagination.js';

export const SUBMISSION_STATES = ['pending', 'changes_requested', 'approved', 'scheduled', 'published', 'cancelled', 'stale'] as const;
export type SubmissionState = (typeof SUBMISSION_STATES)[number];
export const SUBMISSION_ACTIONS = [
  'submitted',
  'approved',
  'changes_requested',
  'published',
  'scheduled',
  'schedule_cancelled',
  'publish_failed',
  'cancelled',
  'stale',
] as const;
export type SubmissionAction = (typeof SUBMISSION_ACTIONS)[number];
/** States a newer submission of the same item replaces (docs/publishing.md "Superseded"). */
export const OPEN_STATES: readonly SubmissionState[] = ['pending', 'changes_requested', 'approved'];

export type SubmissionRow = ContentSubmissionsTable;

export async function getSubmission(db: Db, id: string): Promise<SubmissionRow | undefined> {
  return db.selectFrom('content_submissions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertSubmission(db: Db, row: SubmissionRow): Promise<void> {
  await db.insertInto('content_submissions').values(row).execute();
}

/**
 * Moves a submission from `from` to a new state with `changes`, only if it is still in `from`:
 * the guard that makes racing decisions (two publishers, two scheduler ticks, two apps on one
 * database) take effect once. Answers whether it moved.
 */
export async function moveSubmission(
  db: Db,
  id: string,
  from: SubmissionState,
  changes: Partial<Omit<SubmissionRow, 'id' | 'created_at'>> & { state: SubmissionState },
): Promise<boolean> {
  const res = await db
    .updateTable('content_submissions')
    .set({ ...changes, updated_at: changes.updated_at ?? nowIso() })
    .where('id', '=', id)
    .where('state', '=', from)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Records the publication a submission made. */
export async function setPublication(db: Db, id: string, pub: { id: string; number: number }): Promise<void> {
  await db.updateTable('content_submissions').set({ publication_id: pub.id, publication_number: pub.number }).where('id', '=', id).execute();
}

export async function appendEvent(
  db: Db,
  submissionId: string,
  action: SubmissionAction,
  by: string | null,
  comment: string | null,
  at = nowIso(),
): Promise<void> {
  await db.insertInto('content_submission_events').values({ id: newId(), submission_id: submissionId, at, by, action, comment }).execute();
}

/** The open submissions of one item (to supersede), or with `scheduled` those too (the item is gone). */
export async function openSubmissionsOf(db: Db, type: string, contentId: string, states: readonly SubmissionState[] = OPEN_STATES): Promise<SubmissionRow[]> {
  return db
    .selectFrom('content_submissions')
    .selectAll()
    .where('content_type', '=', type)
    .where('content_id', '=', contentId)
    .where('state', 'in', states)
    .execute();
}

export async function eventsOf(db: Db, submissionId: string) {
  return db
    .selectFrom('content_submission_events as e')
    .leftJoin('users as u', 'u.id', 'e.by')
    .select(['e.id', 'e.at', 'e.by', 'u.display_name as byName', 'e.action', 'e.comment'])
    .where('e.submission_id', '=', submissionId)
    .orderBy('e.at')
    .orderBy('e.id')
    .execute();
}

/** Who acted last with `action` on a submission (the one who scheduled it, for the scheduled publish). */
export async function lastActor(db: Db, submissionId: string, action: SubmissionAction): Promise<string | null> {
  const row = await db
    .selectFrom('content_submission_events')
    .select('by')
    .where('submission_id', '=', submissionId)
    .where('action', '=', action)
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
  return row?.by ?? null;
}

export interface SubmissionFilter {
  state?: SubmissionState | undefined;
  type?: string | undefined;
  contentId?: string | undefined;
  submittedBy?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

/** Submissions newest first. */
export async function listSubmissions(db: Db, f: SubmissionFilter) {
  let q = db.selectFrom('content_submissions').selectAll();
  if (f.state) q = q.where('state', '=', f.state);
  if (f.type) q = q.where('content_type', '=', f.type);
  if (f.contentId) q = q.where('content_id', '=', f.contentId);
  if (f.submittedBy) q = q.where('submitted_by', '=', f.submittedBy);
  const rows = await q
    .where(afterCursor('created_at', 'id', 'desc', f.cursor))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(f.limit + 1)
    .execute();
  return toPage(rows, f.limit, (r) => r.created_at);
}

/** Scheduled submissions whose time has come, oldest time first. */
export async function dueSubmissions(db: Db, now: string, limit = 50): Promise<SubmissionRow[]> {
  return db
    .selectFrom('content_submissions')
    .selectAll()
    .where('state', '=', 'scheduled')
    .where('publish_at', '<=', now)
    .orderBy('publish_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

export async function userNames(db: Db, ids: (string | null)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((x): x is string => !!x))];
  if (!wanted.length) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'display_name']).where('id', 'in', wanted).execute();
  return new Map(rows.map((r) => [r.id, r.display_name]));
}
