import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import { afterCursor, toPage } from '../../platform/http/pagination.js';

/**
 * Notifications (issue 20, docs/publishing.md "Notifications"): what happened to people's
 * submissions, kept per user until read. Written in the transaction of the step they tell of.
 */
export const NOTIFICATION_KINDS = [
  'submission.submitted',
  'submission.approved',
  'submission.changes_requested',
  'submission.published',
  'submission.scheduled',
  'submission.publish_failed',
  'submission.withdrawn',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export async function notify(
  db: Db,
  n: { userId: string | null; kind: NotificationKind; title: string; body: string; submissionId: string | null },
): Promise<void> {
  if (!n.userId) return;
  await db
    .insertInto('notifications')
    .values({
      id: newId(),
      user_id: n.userId,
      kind: n.kind,
      title: n.title.slice(0, 300),
      body: n.body.slice(0, 4000),
      submission_id: n.submissionId,
      created_at: nowIso(),
      read_at: null,
    })
    .execute();
}

/** The active users who may decide submissions (publisher or above), but `except`. */
export async function approversExcept(db: Db, except: string | null): Promise<string[]> {
  let q = db.selectFrom('users').select('id').where('role', 'in', ['publisher', 'admin', 'owner']).where('disabled_at', 'is', null);
  if (except) q = q.where('id', '!=', except);
  return (await q.execute()).map((r) => r.id);
}

export async function listNotifications(db: Db, userId: string, q: { unread?: boolean | undefined; cursor?: string | undefined; limit: number }) {
  let query = db.selectFrom('notifications').selectAll().where('user_id', '=', userId);
  if (q.unread) query = query.where('read_at', 'is', null);
  const rows = await query
    .where(afterCursor('created_at', 'id', 'desc', q.cursor))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(q.limit + 1)
    .execute();
  const page = toPage(rows, q.limit, (r) => r.created_at);
  return {
    items: page.items.map((r) => ({
      id: r.id,
      kind: r.kind,
      title: r.title,
      body: r.body,
      submissionId: r.submission_id,
      createdAt: r.created_at,
      readAt: r.read_at,
    })),
    nextCursor: page.nextCursor,
  };
}

/** Marks the caller's notifications read (`ids`, or all of theirs); answers how many changed. */
export async function markRead(db: Db, userId: string, ids: readonly string[] | undefined): Promise<number> {
  if (ids && ids.length === 0) return 0;
  let q = db.updateTable('notifications').set({ read_at: nowIso() }).where('user_id', '=', userId).where('read_at', 'is', null);
  if (ids) q = q.where('id', 'in', ids);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows);
}
