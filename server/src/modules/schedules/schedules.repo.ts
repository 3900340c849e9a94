/**
 * The schedules and schedule_targets tables: plain functions taking `db` or a transaction.
 * Content's resolver, usage checks and now-showing read schedules through these (index.ts).
 */
import type { Db } from '../../platform/db/database.js';
import type { SchedulesTable } from '../../platform/db/schema.js';
import { afterCursor } from '../../platform/http/pagination.js';
import { notFound } from '../../platform/http/errors.js';
import { nowIso } from '../../platform/db/ids.js';
import { existingTargets, missingTargets, type Targets } from './fleet-context.js';

export type ScheduleRow = SchedulesTable;
export type TargetKind = 'screen' | 'group' | 'location';

export async function getScheduleRow(db: Db, id: string): Promise<ScheduleRow> {
  const row = await db.selectFrom('schedules').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Schedule');
  return row;
}

export async function scheduleExists(db: Db, id: string): Promise<boolean> {
  return Boolean(await db.selectFrom('schedules').select('id').where('id', '=', id).executeTakeFirst());
}

/** A schedule's targets that still exist (a group or location deleted later simply drops out). */
export async function targetsOf(db: Db, id: string): Promise<Targets> {
  const rows = await db.selectFrom('schedule_targets').selectAll().where('schedule_id', '=', id).orderBy('target_id').execute();
  return existingTargets(db, {
    screenIds: rows.filter((r) => r.target_type === 'screen').map((r) => r.target_id),
    groupIds: rows.filter((r) => r.target_type === 'group').map((r) => r.target_id),
    locationIds: rows.filter((r) => r.target_type === 'location').map((r) => r.target_id),
  });
}

/** Replaces a schedule's targets. */
export async function writeTargets(db: Db, id: string, targets: Targets) {
  await db.deleteFrom('schedule_targets').where('schedule_id', '=', id).execute();
  const rows = [
    ...targets.screenIds.map((t) => ({ schedule_id: id, target_type: 'screen' as const, target_id: t })),
    ...targets.groupIds.map((t) => ({ schedule_id: id, target_type: 'group' as const, target_id: t })),
    ...targets.locationIds.map((t) => ({ schedule_id: id, target_type: 'location' as const, target_id: t })),
  ];
  if (rows.length) await db.insertInto('schedule_targets').values(rows).execute();
}

/** The name of what a schedule shows (null for content deleted since). */
export async function contentName(db: Db, row: ScheduleRow): Promise<string | null> {
  if (row.playlist_id) return (await db.selectFrom('playlists').select('name').where('id', '=', row.playlist_id).executeTakeFirst())?.name ?? null;
  if (row.layout_id) return (await db.selectFrom('layouts').select('name').where('id', '=', row.layout_id).executeTakeFirst())?.name ?? null;
  if (row.campaign_id) return (await db.selectFrom('campaigns').select('name').where('id', '=', row.campaign_id).executeTakeFirst())?.name ?? null;
  return null;
}

export async function campaignExists(db: Db, id: string): Promise<boolean> {
  return Boolean(await db.selectFrom('campaigns').select('id').where('id', '=', id).executeTakeFirst());
}

export async function playlistExists(db: Db, id: string): Promise<boolean> {
  return Boolean(await db.selectFrom('playlists').select('id').where('id', '=', id).executeTakeFirst());
}

export async function layoutExists(db: Db, id: string): Promise<boolean> {
  return Boolean(await db.selectFrom('layouts').select('id').where('id', '=', id).executeTakeFirst());
}

export interface ScheduleListQuery {
  cursor?: string | undefined;
  limit: number;
  /** Schedules naming this screen, group or location directly. */
  target: readonly [TargetKind, string] | null;
  playlistId?: string | undefined;
  layoutId?: string | undefined;
  enabled?: boolean | undefined;
}

/** One page of schedules by name (limit + 1 rows: the extra one says there is a next page). */
export async function listScheduleRows(db: Db, query: ScheduleListQuery): Promise<ScheduleRow[]> {
  let q = db
    .selectFrom('schedules')
    .selectAll('schedules')
    .where(afterCursor('name', 'id', 'asc', query.cursor));
  const target = query.target;
  if (target) {
    q = q.where((eb) =>
      eb.exists(
        eb
          .selectFrom('schedule_targets as t')
          .select('t.schedule_id')
          .whereRef('t.schedule_id', '=', 'schedules.id')
          .where('t.target_type', '=', target[0])
          .where('t.target_id', '=', target[1]),
      ),
    );
  }
  if (query.playlistId) q = q.where('playlist_id', '=', query.playlistId);
  if (query.layoutId) q = q.where('layout_id', '=', query.layoutId);
  if (query.enabled !== undefined) q = q.where('enabled', '=', query.enabled ? 1 : 0);
  return q
    .orderBy('name')
    .orderBy('id')
    .limit(query.limit + 1)
    .execute();
}

export type NewScheduleRow = Omit<ScheduleRow, 'id' | 'revision' | 'created_by' | 'created_at' | 'updated_at'>;

/**
 * A schedule as a publication (and a draft) keeps it (issue 20): its API fields with the
 * stored instants and zone, so publishing it writes exactly these back.
 */
export interface ScheduleSnapshot {
  name: string;
  content: { type: 'playlist' | 'layout' | 'campaign'; id: string };
  targets: Targets;
  startsAt: string;
  endsAt: string | null;
  rrule: string | null;
  timeZone: string;
  followScreenZone: boolean;
  priority: number;
  enabled: boolean;
}

/** The row's fields a snapshot sets. */
export type ScheduleFields = Pick<
  ScheduleRow,
  | 'name'
  | 'content_type'
  | 'playlist_id'
  | 'layout_id'
  | 'campaign_id'
  | 'starts_at'
  | 'ends_at'
  | 'rrule'
  | 'time_zone'
  | 'follow_screen_zone'
  | 'priority'
  | 'enabled'
>;

export function snapshotOf(row: ScheduleFields, targets: Targets): ScheduleSnapshot {
  return {
    name: row.name,
    content: { type: row.content_type, id: (row.playlist_id ?? row.layout_id ?? row.campaign_id)! },
    targets: { screenIds: [...targets.screenIds], groupIds: [...targets.groupIds], locationIds: [...targets.locationIds] },
    startsAt: row.starts_at,
    endsAt: row.ends_at,
    rrule: row.rrule,
    timeZone: row.time_zone,
    followScreenZone: row.follow_screen_zone === 1,
    priority: row.priority,
    enabled: row.enabled === 1,
  };
}

export function fieldsOf(s: ScheduleSnapshot): ScheduleFields {
  return {
    name: s.name,
    content_type: s.content.type,
    playlist_id: s.content.type === 'playlist' ? s.content.id : null,
    layout_id: s.content.type === 'layout' ? s.content.id : null,
    campaign_id: s.content.type === 'campaign' ? s.content.id : null,
    starts_at: s.startsAt,
    ends_at: s.endsAt,
    rrule: s.rrule,
    time_zone: s.timeZone,
    follow_screen_zone: s.followScreenZone ? 1 : 0,
    priority: s.priority,
    enabled: s.enabled ? 1 : 0,
  };
}

export const draftOf = (row: ScheduleRow): ScheduleSnapshot | null => (row.draft ? (JSON.parse(row.draft) as ScheduleSnapshot) : null);

/** What the editor sees and edits: the row with its draft applied (and the draft's targets), else the row and its targets. */
export async function effectiveSchedule(db: Db, row: ScheduleRow): Promise<{ row: ScheduleRow; targets: Targets }> {
  const draft = draftOf(row);
  if (!draft) return { row, targets: await targetsOf(db, row.id) };
  return { row: { ...row, ...fieldsOf(draft) }, targets: draft.targets };
}

/** What a snapshot refers to that no longer exists ("playlist <id>", "screen <id>"...). */
export async function missingOf(db: Db, s: ScheduleSnapshot): Promise<string[]> {
  const missing: string[] = [];
  if (s.content.type === 'playlist' && !(await playlistExists(db, s.content.id))) missing.push(`playlist ${s.content.id}`);
  if (s.content.type === 'layout' && !(await layoutExists(db, s.content.id))) missing.push(`layout ${s.content.id}`);
  if (s.content.type === 'campaign' && !(await campaignExists(db, s.content.id))) missing.push(`campaign ${s.content.id}`);
  missing.push(...(await missingTargets(db, s.targets)));
  return missing;
}

export async function insertSchedule(db: Db, id: string, row: NewScheduleRow, createdBy: string | null, at: string): Promise<void> {
  await db
    .insertInto('schedules')
    .values({ id, ...row, revision: 1, created_by: createdBy, created_at: at, updated_at: at })
    .execute();
}

/** Writes `set` and the next revision only while `row.revision` is current: false when another change won. */
export async function updateAtRevision(db: Db, row: ScheduleRow, set: Partial<ScheduleRow>): Promise<boolean> {
  const res = await db
    .updateTable('schedules')
    .set({ ...set, revision: row.revision + 1, updated_at: nowIso() })
    .where('id', '=', row.id)
    .where('revision', '=', row.revision)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Deletes the schedule (its targets cascade) only while `row.revision` is current: false when another change won. */
export async function deleteAtRevision(db: Db, row: ScheduleRow): Promise<boolean> {
  const res = await db.deleteFrom('schedules').where('id', '=', row.id).where('revision', '=', row.revision).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/** The enabled schedules that name any of `targets` (a screen, its groups, its location), by id. */
export async function enabledSchedulesTargeting(db: Db, targets: readonly { type: TargetKind; id: string }[]): Promise<ScheduleRow[]> {
  return (
    db
      .selectFrom('schedules')
      .selectAll('schedules')
      .where('enabled', '=', 1)
      // Never published (approvals on): nothing plays it until a publisher publishes it.
      .where('published_at', 'is not', null)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('schedule_targets as t')
            .select('t.schedule_id')
            .whereRef('t.schedule_id', '=', 'schedules.id')
            .where((eb2) => eb2.or(targets.map((t) => eb2.and([eb2('t.target_type', '=', t.type), eb2('t.target_id', '=', t.id)])))),
        ),
      )
      .orderBy('id')
      .execute()
  );
}

/** The schedules that name a screen, group or location, by name (what blocks deleting it). */
export async function schedulesNaming(db: Db, kind: TargetKind, id: string): Promise<{ id: string; name: string }[]> {
  return db
    .selectFrom('schedule_targets as t')
    .innerJoin('schedules as s', 's.id', 't.schedule_id')
    .select(['s.id', 's.name'])
    .where('t.target_type', '=', kind)
    .where('t.target_id', '=', id)
    .orderBy('s.name')
    .execute();
}

/** The schedules that show a playlist or a layout (what blocks deleting it). */
export async function schedulesShowing(db: Db, content: 'playlist' | 'layout', id: string): Promise<{ id: string; name: string }[]> {
  return db
    .selectFrom('schedules')
    .select(['id', 'name'])
    .where(content === 'playlist' ? 'playlist_id' : 'layout_id', '=', id)
    .execute();
}

/** For each of `screenIds`, the schedules that name it directly, by schedule id. */
export async function schedulesNamingScreens(db: Db, screenIds: readonly string[]): Promise<{ screenId: string; scheduleId: string }[]> {
  const rows = await db
    .selectFrom('schedule_targets')
    .select(['target_id', 'schedule_id'])
    .where('target_type', '=', 'screen')
    .where('target_id', 'in', [...screenIds])
    .orderBy('schedule_id')
    .execute();
  return rows.map((r) => ({ screenId: r.target_id, scheduleId: r.schedule_id }));
}
