import { type ExpressionBuilder, sql } from 'kysely';
import { deleteInBatches } from '../../platform/db/batch.js';
import type { Db } from '../../platform/db/database.js';
import type { Database, ScreenCommandsTable } from '../../platform/db/schema.js';
import { nowIso, type ScreenDto } from './screens.repo.js';

/** The newest screenshot each screen sent (one query per 500 screens). */
export async function lastScreenshots(db: Db, screenIds: readonly string[]): Promise<Map<string, NonNullable<ScreenDto['lastScreenshot']>>> {
  const out = new Map<string, NonNullable<ScreenDto['lastScreenshot']>>();
  for (let i = 0; i < screenIds.length; i += 500) {
    const chunk = screenIds.slice(i, i + 500);
    const rows = await db
      .selectFrom('screen_commands')
      .select(['screen_id', 'id', 'completed_at'])
      .where('screen_id', 'in', chunk)
      .where('type', '=', 'screenshot')
      .where('screenshot_sha256', 'is not', null)
      .orderBy('id', 'desc')
      .execute();
    for (const r of rows)
      if (!out.has(r.screen_id))
        out.set(r.screen_id, { commandId: r.id, url: `/api/v1/screens/${r.screen_id}/commands/${r.id}/screenshot`, takenAt: r.completed_at });
  }
  return out;
}

export async function insertCommand(db: Db, row: ScreenCommandsTable): Promise<void> {
  await db.insertInto('screen_commands').values(row).execute();
}

/** Marks commands past their expiry as expired (periodic). */
export async function expireCommands(db: Db, now = Date.now()): Promise<number> {
  const r = await db
    .updateTable('screen_commands')
    .set({ state: 'expired', completed_at: nowIso(now) })
    .where('state', 'in', ['queued', 'delivered'])
    .where('expires_at', '<=', nowIso(now))
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/**
 * A subquery of a select from `screens`: how many of the row's commands are queued or delivered
 * and not expired at `nowText`. The heartbeat's `pendingCommands`, read with what the heartbeat
 * compares with (heartbeat.repo.ts): one statement fewer per heartbeat.
 */
export function pendingCommandCount(eb: ExpressionBuilder<Database, 'screens'>, nowText: string) {
  return eb
    .selectFrom('screen_commands')
    .select((c) => c.fn.countAll<number>().as('n'))
    .whereRef('screen_commands.screen_id', '=', 'screens.id')
    .where('screen_commands.state', 'in', ['queued', 'delivered'])
    .where('screen_commands.expires_at', '>', nowText);
}

/** The command `id` (throws when there is none). */
export function readCommand(db: Db, id: string): Promise<ScreenCommandsTable> {
  return db.selectFrom('screen_commands').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** The command `commandId` if it was sent to `screenId`. */
export function findScreenCommand(db: Db, screenId: string, commandId: string): Promise<ScreenCommandsTable | undefined> {
  return db.selectFrom('screen_commands').selectAll().where('id', '=', commandId).where('screen_id', '=', screenId).executeTakeFirst();
}

/**
 * A page of a screen's commands, newest first (`limit + 1` rows, for toPage). `state`
 * filters on the state as it reads at `nowText`: queued and delivered commands past their
 * expiry read as expired.
 */
export function screenCommandsPage(
  db: Db,
  screenId: string,
  filter: { beforeId?: string; state?: ScreenCommandsTable['state']; nowText: string; limit: number },
): Promise<ScreenCommandsTable[]> {
  let q = db.selectFrom('screen_commands').selectAll().where('screen_id', '=', screenId);
  if (filter.beforeId) q = q.where('id', '<', filter.beforeId);
  if (filter.state) {
    const nowText = filter.nowText;
    if (filter.state === 'expired')
      q = q.where((eb) => eb.or([eb('state', '=', 'expired'), eb.and([eb('state', 'in', ['queued', 'delivered']), eb('expires_at', '<=', nowText)])]));
    else if (['queued', 'delivered'].includes(filter.state)) q = q.where('state', '=', filter.state).where('expires_at', '>', nowText);
    else q = q.where('state', '=', filter.state);
  }
  return q
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .execute();
}

/** A screen's commands not yet acknowledged nor expired at `nowText`, oldest first (`limit + 1` rows, for toPage). */
export function pendingCommandsPage(db: Db, screenId: string, filter: { afterId?: string; nowText: string; limit: number }): Promise<ScreenCommandsTable[]> {
  let q = db
    .selectFrom('screen_commands')
    .selectAll()
    .where('screen_id', '=', screenId)
    .where('state', 'in', ['queued', 'delivered'])
    .where('expires_at', '>', filter.nowText);
  if (filter.afterId) q = q.where('id', '>', filter.afterId);
  return q
    .orderBy('id')
    .limit(filter.limit + 1)
    .execute();
}

/** Queued commands of `ids` become delivered at `nowText`. */
export async function markDelivered(db: Db, ids: readonly string[], nowText: string): Promise<void> {
  await db
    .updateTable('screen_commands')
    .set({ state: 'delivered', delivered_at: nowText })
    .where('id', 'in', [...ids])
    .where('state', '=', 'queued')
    .execute();
}

/** A queued or delivered command becomes acknowledged at `nowText` (no change in any other state). */
export async function markAcknowledged(db: Db, row: ScreenCommandsTable, nowText: string): Promise<void> {
  await db
    .updateTable('screen_commands')
    .set({ state: 'acknowledged', acknowledged_at: nowText, delivered_at: row.delivered_at ?? nowText })
    .where('id', '=', row.id)
    .where('state', 'in', ['queued', 'delivered'])
    .execute();
}

/**
 * Writes a command's outcome while it is still open at `nowText` (acknowledged, or queued
 * or delivered and not expired). Answers whether it wrote.
 */
export async function recordOutcome(
  db: Db,
  row: ScreenCommandsTable,
  outcome: Pick<ScreenCommandsTable, 'result' | 'screenshot_sha256' | 'screenshot_type'> & { state: 'succeeded' | 'failed' },
  nowText: string,
): Promise<boolean> {
  const updated = await db
    .updateTable('screen_commands')
    .set({
      state: outcome.state,
      completed_at: nowText,
      acknowledged_at: row.acknowledged_at ?? nowText,
      delivered_at: row.delivered_at ?? nowText,
      result: outcome.result,
      screenshot_sha256: outcome.screenshot_sha256,
      screenshot_type: outcome.screenshot_type,
    })
    .where('id', '=', row.id)
    .where((eb) => eb.or([eb('state', '=', 'acknowledged'), eb.and([eb('state', 'in', ['queued', 'delivered']), eb('expires_at', '>', nowText)])]))
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

/** Deletes screenshot commands completed before `before`, in batches; answers how many. */
export function pruneScreenshotCommands(db: Db, before: string): Promise<number> {
  return deleteInBatches(
    db,
    (limit) =>
      sql`delete from screen_commands where id in (select id from screen_commands where screenshot_sha256 is not null and completed_at < ${before} limit ${limit})`,
  );
}

/** The screenshot files (SHA-256 names) commands still name. */
export async function screenshotsInUse(db: Db): Promise<Set<string | null>> {
  return new Set(
    (await db.selectFrom('screen_commands').select('screenshot_sha256').where('screenshot_sha256', 'is not', null).execute()).map((c) => c.screenshot_sha256),
  );
}

/** Whether a command names the screenshot file `sha256`. */
export async function screenshotNamed(db: Db, sha256: string): Promise<boolean> {
  return (await db.selectFrom('screen_commands').select('id').where('screenshot_sha256', '=', sha256).executeTakeFirst()) !== undefined;
}
