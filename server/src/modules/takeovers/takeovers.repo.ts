/** The takeovers' queries (migration 0400): rows, targets, audit events. */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../platform/db/database.js';
import type { TakeoversTable } from '../../platform/db/schema/takeovers.js';
import type { WindowTarget } from '../content/index.js';
import { screensOfTargets } from '../screens/index.js';

export const CONTENT_TABLES = { asset: 'assets', playlist: 'playlists', layout: 'layouts', widget: 'widgets' } as const;

export async function contentExists(db: Db, type: keyof typeof CONTENT_TABLES, id: string): Promise<boolean> {
  return Boolean(await db.selectFrom(CONTENT_TABLES[type]).select('id').where('id', '=', id).executeTakeFirst());
}

export async function userLabel(db: Db, userId: string): Promise<string> {
  const user = await db.selectFrom('users').select(['display_name', 'email']).where('id', '=', userId).executeTakeFirst();
  return user?.display_name || user?.email || userId;
}

export async function insertEvent(db: Db, takeoverId: string, action: string, by: { userId: string | null; label: string }, reason: string, at: string) {
  await db
    .insertInto('takeover_events')
    .values({ id: randomUUID(), takeover_id: takeoverId, action, actor_user_id: by.userId, actor_label: by.label, reason, at })
    .execute();
}

/** Inserts a takeover with its targets and its first audit event, in one transaction. */
export async function insertTakeover(
  db: Db,
  row: TakeoversTable,
  targets: readonly { type: string; id: string }[],
  first: { action: string; by: { userId: string | null; label: string } },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('takeovers').values(row).execute();
    await trx
      .insertInto('takeover_targets')
      .values(targets.map((x) => ({ takeover_id: row.id, target_type: x.type, target_id: x.id })))
      .execute();
    await insertEvent(trx, row.id, first.action, first.by, row.reason, row.created_at);
  });
}

/** The screens a takeover reaches now (its targets as stored). */
export async function screensOfTakeover(db: Db, id: string): Promise<string[]> {
  const targets = await db.selectFrom('takeover_targets').select(['target_type as type', 'target_id as id']).where('takeover_id', '=', id).execute();
  return screensOfTargets(db, targets);
}

export async function takeoverRow(db: Db, id: string, kind: string): Promise<TakeoversTable | undefined> {
  return db.selectFrom('takeovers').selectAll().where('id', '=', id).where('kind', '=', kind).executeTakeFirst();
}

export async function eventsOf(db: Db, id: string) {
  return db.selectFrom('takeover_events').selectAll().where('takeover_id', '=', id).orderBy('at').orderBy('id').execute();
}

/** Marks an active takeover over (cancelled, stopped, ended); false when it no longer was active. */
export async function markEnded(db: Db, id: string, state: string, at: string, by: string | null, reason: string): Promise<boolean> {
  const changed = await db
    .updateTable('takeovers')
    .set({ state, ended_at: at, ended_by: by, end_reason: reason, end_announced: 1 })
    .where('id', '=', id)
    .where('state', '=', 'active')
    .executeTakeFirst();
  return Number(changed.numUpdatedRows) > 0;
}

/** Active takeovers whose end passed and was not announced yet. */
export async function dueEnds(db: Db, now: string): Promise<{ id: string; ends_at: string | null }[]> {
  return db
    .selectFrom('takeovers')
    .select(['id', 'ends_at'])
    .where('state', '=', 'active')
    .where('end_announced', '=', 0)
    .where('ends_at', 'is not', null)
    .where('ends_at', '<=', now)
    .execute();
}

/** Claims the announcement of a natural end (once, whatever runs the tick). */
export async function claimEnd(db: Db, id: string): Promise<boolean> {
  const changed = await db.updateTable('takeovers').set({ end_announced: 1 }).where('id', '=', id).where('end_announced', '=', 0).executeTakeFirst();
  return Number(changed.numUpdatedRows) > 0;
}

/** A page of ids, newest first; the cursor is `created_at|id` of the last one. */
export async function listIds(db: Db, kind: string, cursor: string | undefined, limit: number) {
  let q = db.selectFrom('takeovers').select(['id', 'created_at']).where('kind', '=', kind);
  if (cursor) {
    const [at = '', id = ''] = cursor.split('|');
    q = q.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', id)])]));
  }
  return q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
}

/** One query: the active rows reaching any of the targets (or all screens) over [from, to). */
export async function activeRows(db: Db, targets: readonly WindowTarget[], fromIso: string, toIso: string): Promise<TakeoversTable[]> {
  return db
    .selectFrom('takeovers')
    .selectAll()
    .where('state', '=', 'active')
    .where('starts_at', '<', toIso)
    .where((eb) => eb.or([eb('ends_at', 'is', null), eb('ends_at', '>', fromIso)]))
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('takeover_targets as t')
          .select('t.takeover_id')
          .whereRef('t.takeover_id', '=', 'takeovers.id')
          .where((e) => e.or([e('t.target_type', '=', 'all'), ...targets.map((x) => e.and([e('t.target_type', '=', x.type), e('t.target_id', '=', x.id)]))])),
      ),
    )
    .execute();
}

/** Every screen a takeover or override not ended by hand names by its id (content's manifest sharing; a superset: times are not read). */
export async function screensNamedByTakeovers(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom('takeover_targets as t')
    .innerJoin('takeovers as k', 'k.id', 't.takeover_id')
    .select('t.target_id')
    .distinct()
    .where('t.target_type', '=', 'screen')
    .where('k.state', '=', 'active')
    .execute();
  return rows.map((r) => r.target_id);
}
