/**
 * Schedules: checking and normalising what a client sends (targets, zone, instants, RRULE),
 * the schedule as the client sees it, and the changes, each followed by the schedule
 * change hooks once committed (content registers one that bumps the screens' manifests).
 */
import { DateTime } from 'luxon';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import { ApiError, forbidden, invalidField as invalid, invalidReference } from '../../platform/http/errors.js';
import { roleAtLeast, type Role } from '../../platform/http/auth.js';
import { forgetContent, insertPublication, listPublications, type PublicationSummary, publisherNeededToDelete } from '../../platform/publications.js';
import { approvalsRequired } from '../system/index.js';
import { registerTargetReferences } from '../screens/index.js';
import { defaultTimeZone, missingTargets, screensOf, zonesOf, type Targets } from './fleet-context.js';
import { checkSeries, inZone, isValidTimeZone, occurrences, parseRrule, type ScheduleInput } from './recurrence.js';
import { RruleError } from './rrule-check.js';
import {
  campaignExists,
  contentName,
  deleteAtRevision,
  effectiveSchedule,
  scheduleExists,
  snapshotOf,
  type ScheduleFields,
  insertSchedule,
  layoutExists,
  playlistExists,
  schedulesNaming,
  targetsOf,
  updateAtRevision,
  writeTargets,
  type ScheduleRow,
} from './schedules.repo.js';

function toInstant(value: string, zone: string, field: string): string {
  if (/([zZ]|[+-]\d{2}:?\d{2})$/.test(value)) return new Date(value).toISOString();
  const local = DateTime.fromISO(value, { zone });
  if (!local.isValid) throw invalid(field, `${field} is not a valid date-time`);
  return local.toUTC().toISO()!;
}

/**
 * A time kept from the stored schedule (a PATCH that does not change it): the instant as
 * stored and the zone it was entered in. The schedule's meaning is its wall-clock time in
 * that zone, so when the zone changes (new targets, a location moved, a new `timeZone`)
 * the same local time is read in the new zone: "09:00" stays 09:00.
 */
export interface KeptTime {
  stored: string;
  zone: string;
}

function whenOf(value: string | KeptTime, zone: string, field: string): string {
  if (typeof value === 'string') return toInstant(value, zone, field);
  if (value.zone === zone) return value.stored;
  const local = DateTime.fromISO(value.stored, { zone: value.zone }).toFormat("yyyy-MM-dd'T'HH:mm:ss.SSS");
  return toInstant(local, zone, field);
}

/** A schedule as a client (or the demo) gives it: times are instants, or local times read in the schedule's zone. */
export interface ScheduleDraft {
  name: string;
  content: { playlistId?: string; layoutId?: string; campaignId?: string };
  targets: Targets;
  startsAt: string | KeptTime;
  endsAt?: string | KeptTime | null;
  rrule?: string | null;
  timeZone?: string | null;
  priority: number;
  enabled: boolean;
}

/** What a PATCH sends: any field of a draft, times as sent. */
export interface SchedulePatch {
  name?: string | undefined;
  content?: ScheduleDraft['content'] | undefined;
  targets?: Targets | undefined;
  startsAt?: string | undefined;
  endsAt?: string | null | undefined;
  rrule?: string | null | undefined;
  timeZone?: string | null | undefined;
  priority?: number | undefined;
  enabled?: boolean | undefined;
}

/**
 * Every target exists. Checked again in the transaction that writes them: a screen, group or
 * location is deleted only while no schedule targets it (in its own transaction), so
 * between the two one of them is refused and no schedule is left naming what is gone.
 */
async function assertTargets(db: Db, targets: Targets): Promise<void> {
  const missing = await missingTargets(db, targets);
  if (missing.length) {
    const gone = new Set(missing);
    const refs = (['screen', 'group', 'location'] as const).flatMap((kind) =>
      targets[`${kind}Ids`].flatMap((id, i) => (gone.has(`${kind} ${id}`) ? [{ path: ['targets', `${kind}Ids`, i], message: `no such ${kind}` }] : [])),
    );
    throw invalidReference(`Unknown targets: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? '...' : ''}`, refs);
  }
}

/** Checks references, resolves the zone and instants, normalises the RRULE: the row's fields. */
export async function prepare(db: Db, input: ScheduleDraft) {
  if (input.content.campaignId && !(await campaignExists(db, input.content.campaignId)))
    throw invalidReference(`No campaign ${input.content.campaignId}`, { path: ['content', 'campaignId'], message: 'no such campaign' });
  if (input.timeZone && !isValidTimeZone(input.timeZone)) throw invalid('timeZone', `${input.timeZone} is not an IANA time zone`);
  if (input.content.playlistId && !(await playlistExists(db, input.content.playlistId)))
    throw invalidReference(`No playlist ${input.content.playlistId}`, { path: ['content', 'playlistId'], message: 'no such playlist' });
  if (input.content.layoutId && !(await layoutExists(db, input.content.layoutId)))
    throw invalidReference(`No layout ${input.content.layoutId}`, { path: ['content', 'layoutId'], message: 'no such layout' });
  const targets: Targets = {
    screenIds: [...new Set(input.targets.screenIds)],
    groupIds: [...new Set(input.targets.groupIds)],
    locationIds: [...new Set(input.targets.locationIds)],
  };
  if (targets.screenIds.length + targets.groupIds.length + targets.locationIds.length === 0)
    throw invalid('targets', 'Name at least one screen, group or location');
  // As given, so the issues point at the body's own indexes.
  await assertTargets(db, input.targets);
  let zone: string;
  if (input.timeZone) {
    zone = input.timeZone;
  } else {
    const zones = await zonesOf(db, targets);
    zone = zones.length === 1 ? zones[0]! : await defaultTimeZone(db);
  }
  const startsAt = whenOf(input.startsAt, zone, 'startsAt');
  const endsAt = input.endsAt ? whenOf(input.endsAt, zone, 'endsAt') : null;
  if (endsAt && Date.parse(endsAt) <= Date.parse(startsAt)) throw invalid('endsAt', 'endsAt must be after startsAt');
  let rrule: string | null = null;
  if (input.rrule) {
    try {
      rrule = parseRrule(input.rrule);
    } catch (err) {
      throw invalid('rrule', `Not a valid RRULE: ${(err as Error).message}`);
    }
    if (!endsAt) throw invalid('endsAt', 'A recurring schedule needs endsAt: the end of its first occurrence (each occurrence lasts as long)');
    // The series as a whole: bounded and occurring at all (docs/content.md, "Recurrence limits").
    try {
      checkSeries({ startsAt, endsAt, rrule, timeZone: zone });
    } catch (err) {
      if (!(err instanceof RruleError)) throw err;
      if (err.part === 'startsAt' || err.part === 'endsAt') throw invalid(err.part, err.message);
      throw invalid('rrule', `Not a valid RRULE: ${err.message}`);
    }
  }
  return {
    targets,
    row: {
      name: input.name,
      content_type: (input.content.playlistId ? 'playlist' : input.content.campaignId ? 'campaign' : 'layout') as 'playlist' | 'layout' | 'campaign',
      playlist_id: input.content.playlistId ?? null,
      layout_id: input.content.layoutId ?? null,
      campaign_id: input.content.campaignId ?? null,
      starts_at: startsAt,
      ends_at: endsAt,
      rrule,
      time_zone: zone,
      follow_screen_zone: input.timeZone ? 0 : 1,
      priority: input.priority,
      enabled: input.enabled ? 1 : 0,
    },
  };
}

/** A schedule row as the engine's input, on the wall clock of `zone` when it follows the screen's zone. */
export function scheduleInput(row: ScheduleRow, zone: string): ScheduleInput {
  const input: ScheduleInput = {
    id: row.id,
    content: { type: row.content_type, id: (row.playlist_id ?? row.layout_id ?? row.campaign_id)! },
    startsAt: row.starts_at,
    endsAt: row.ends_at,
    rrule: row.rrule,
    timeZone: row.time_zone,
    priority: row.priority,
    enabled: row.enabled === 1,
    updatedAt: row.updated_at,
  };
  return row.follow_screen_zone === 1 ? inZone(input, zone) : input;
}

/** The latest publication of a schedule (what screens play when it is published), or null. */
export async function currentPublication(db: Db, id: string): Promise<PublicationSummary | null> {
  return (await listPublications(db, 'schedule', id, { limit: 1 })).items[0] ?? null;
}

/**
 * The schedule as the client sees it (the route's ScheduleDto): its draft when it has one
 * (what the editor edits), with the publication screens play and whether they differ.
 */
export async function scheduleDto(db: Db, stored: ScheduleRow) {
  const { row, targets } = await effectiveSchedule(db, stored);
  const t = Date.now();
  const next = row.enabled
    ? occurrences({ ...scheduleInput({ ...row, follow_screen_zone: 0 }, row.time_zone), enabled: true }, t, t + 366 * 86_400_000, { limit: 1 })[0]
    : undefined;
  const publication = stored.published_at ? await currentPublication(db, stored.id) : null;
  return {
    id: row.id,
    name: row.name,
    content: { type: row.content_type, id: (row.playlist_id ?? row.layout_id ?? row.campaign_id)!, name: await contentName(db, row) },
    targets,
    startsAt: row.starts_at,
    endsAt: row.ends_at,
    rrule: row.rrule,
    timeZone: row.time_zone,
    followsScreenTimeZone: row.follow_screen_zone === 1,
    priority: row.priority,
    enabled: row.enabled === 1,
    revision: row.revision,
    nextOccurrence: next ? { startsAt: new Date(next.start).toISOString(), endsAt: Number.isFinite(next.end) ? new Date(next.end).toISOString() : null } : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    publication: publication
      ? { id: publication.id, number: publication.number, publishedAt: publication.publishedAt, publishedBy: publication.publishedBy }
      : null,
    unpublishedChanges: stored.published_at === null || stored.draft !== null,
  };
}

/** Who changes a schedule: with approvals off a change goes live at once, which takes the publisher role (as before issue 20). */
export interface Actor {
  userId: string;
  role: Role;
}

/** Approvals off: every change reaches screens at once, so it needs a publisher (editors edit drafts while approvals are on). */
async function requireWriter(db: Db, actor: Actor): Promise<boolean> {
  const approvals = await approvalsRequired(db);
  if (!approvals && !roleAtLeast(actor.role, 'publisher'))
    throw forbidden('Approvals are off, so a schedule change reaches screens at once: that needs the publisher role or a stronger one');
  return approvals;
}

/** Records the live row (and its targets) as the schedule's next publication, in the caller's transaction. */
function recordPublication(trx: Db, id: string, fields: ScheduleFields, targets: Targets, by: string | null) {
  return insertPublication(trx, { type: 'schedule', contentId: id, snapshot: snapshotOf(fields, targets), note: '', source: 'edit', by });
}

/** A change that read a revision another change has since replaced: 412 when If-Match was sent, else 409. */
function lostRace(ifMatchSent: boolean, what: string): ApiError {
  return new ApiError('version_conflict', `This schedule was changed meanwhile. ${what}`, { status: ifMatchSent ? 412 : 409 });
}

/**
 * Called after a schedule was created, changed or deleted and the change committed, with
 * the screens it reached before or reaches now. Errors are logged, never thrown back.
 */
export type ScheduleChangeHook = (deps: AppDeps, scheduleId: string, screenIds: readonly string[]) => Promise<void> | void;

const CHANGE_HOOKS = new ScopeKey('schedules.change-hooks', () => new Set<ScheduleChangeHook>());

export function addScheduleChangeHook(deps: AppDeps, hook: ScheduleChangeHook): () => void {
  const hooks = deps.scope.get(CHANGE_HOOKS);
  hooks.add(hook);
  return () => hooks.delete(hook);
}

/** Tells the hooks about the screens a schedule reached before and reaches now. */
async function scheduleChanged(deps: AppDeps, id: string, before: Targets | null, after: Targets | null): Promise<void> {
  const screens = new Set<string>();
  for (const t of [before, after]) if (t) for (const s of await screensOf(deps.db, t)) screens.add(s);
  for (const hook of deps.scope.get(CHANGE_HOOKS)) {
    try {
      await hook(deps, id, [...screens]);
    } catch (err) {
      deps.logger.error({ err, scheduleId: id }, 'schedule change hook failed');
    }
  }
}

/**
 * Creates a schedule (its row and targets in one transaction); answers its id. Approvals off:
 * published at once (publication 1). Approvals on: unpublished (nothing plays it), the body
 * its draft, until a publisher publishes a submission of it.
 */
export async function createSchedule(deps: AppDeps, draft: ScheduleDraft, actor: Actor): Promise<string> {
  const db = deps.db;
  const approvals = await requireWriter(db, actor);
  const { row, targets } = await prepare(db, draft);
  const id = newId();
  const t = nowIso();
  await db.transaction().execute(async (trx) => {
    await assertTargets(trx, targets);
    await insertSchedule(
      trx,
      id,
      { ...row, draft: approvals ? JSON.stringify(snapshotOf(row, targets)) : null, published_at: approvals ? null : t },
      actor.userId,
      t,
    );
    await writeTargets(trx, id, targets);
    if (!approvals) await recordPublication(trx, id, row, targets, actor.userId);
  });
  if (!approvals) await scheduleChanged(deps, id, null, targets);
  return id;
}

/**
 * Applies a PATCH to `row` (read, and checked against If-Match, by the caller): what the
 * body leaves alone stays, times keeping their wall-clock meaning if the zone changes.
 * Written only while `row`'s revision is still current (else 412 or 409).
 */
export async function updateSchedule(deps: AppDeps, stored: ScheduleRow, patch: SchedulePatch, ifMatchSent: boolean, actor: Actor): Promise<void> {
  const db = deps.db;
  const approvals = await requireWriter(db, actor);
  // The draft when there is one: what the client read and changes.
  const { row, targets: before } = await effectiveSchedule(db, stored);
  const merged: ScheduleDraft = {
    name: patch.name ?? row.name,
    content: patch.content ?? { playlistId: row.playlist_id ?? undefined, layoutId: row.layout_id ?? undefined, campaignId: row.campaign_id ?? undefined },
    targets: patch.targets ?? before,
    // Times the body leaves alone keep their wall-clock meaning if the zone changes.
    startsAt: patch.startsAt ?? { stored: row.starts_at, zone: row.time_zone },
    endsAt: patch.endsAt !== undefined ? patch.endsAt : row.ends_at ? { stored: row.ends_at, zone: row.time_zone } : null,
    rrule: patch.rrule !== undefined ? patch.rrule : row.rrule,
    timeZone: patch.timeZone !== undefined ? patch.timeZone : row.follow_screen_zone ? null : row.time_zone,
    priority: patch.priority ?? row.priority,
    enabled: patch.enabled ?? row.enabled === 1,
  };
  const { row: next, targets } = await prepare(db, merged);
  if (approvals) {
    // The draft only: the live row and its targets stay what screens play.
    if (!(await updateAtRevision(db, stored, { draft: JSON.stringify(snapshotOf(next, targets)) })))
      throw lostRace(ifMatchSent, 'Reload and apply your change again.');
    return;
  }
  const live = await targetsOf(db, stored.id);
  await db.transaction().execute(async (trx) => {
    await assertTargets(trx, targets);
    if (!(await updateAtRevision(trx, stored, { ...next, draft: null, published_at: nowIso() })))
      throw lostRace(ifMatchSent, 'Reload and apply your change again.');
    await writeTargets(trx, stored.id, targets);
    await recordPublication(trx, stored.id, next, targets, actor.userId);
  });
  await scheduleChanged(deps, stored.id, live, targets);
}

/** Turns a schedule on or off (nothing when it already is), while `row`'s revision is current. */
export async function setScheduleEnabled(deps: AppDeps, row: ScheduleRow, enabled: boolean, ifMatchSent: boolean, actor: Actor): Promise<void> {
  const approvals = await requireWriter(deps.db, actor);
  if (approvals || row.draft !== null) return updateSchedule(deps, row, { enabled }, ifMatchSent, actor);
  if ((row.enabled === 1) === enabled) return;
  const targets = await targetsOf(deps.db, row.id);
  await deps.db.transaction().execute(async (trx) => {
    if (!(await updateAtRevision(trx, row, { enabled: enabled ? 1 : 0, published_at: nowIso() })))
      throw lostRace(ifMatchSent, 'Reload and apply your change again.');
    await recordPublication(trx, row.id, { ...row, enabled: enabled ? 1 : 0 }, targets, actor.userId);
  });
  await scheduleChanged(deps, row.id, targets, targets);
}

/**
 * Deletes a schedule (and its publications) while `row`'s revision is current. With
 * approvals on, deleting one screens play takes a publisher; editors delete unpublished ones.
 */
export async function deleteSchedule(deps: AppDeps, row: ScheduleRow, ifMatchSent: boolean, actor: Actor): Promise<void> {
  const approvals = await requireWriter(deps.db, actor);
  if (approvals && row.published_at !== null && !roleAtLeast(actor.role, 'publisher')) throw publisherNeededToDelete(`Schedule "${row.name}"`);
  const before = await targetsOf(deps.db, row.id);
  await deps.db.transaction().execute(async (trx) => {
    if (!(await deleteAtRevision(trx, row))) throw lostRace(ifMatchSent, 'Reload and decide again.');
    await forgetContent(deps, trx, 'schedule', row.id, row.name);
  });
  await scheduleChanged(deps, row.id, before, null);
}

/** Tells the hooks (content bumps the screens' manifests) that a schedule was published: after the commit. */
export async function announceSchedule(deps: AppDeps, id: string): Promise<void> {
  await scheduleChanged(deps, id, null, (await scheduleExists(deps.db, id)) ? await targetsOf(deps.db, id) : null);
}

/**
 * A screen, group or location that schedules target is not deleted (409 names them): a venue
 * admin decides what those schedules should play on instead (the screens module's seam).
 */
export function registerScheduleTargetReferences(deps: AppDeps): void {
  registerTargetReferences(deps, 'schedules', {
    async usages(db, kind, id) {
      return (await schedulesNaming(db, kind, id)).map((r) => ({ type: 'schedule', id: r.id, name: r.name }));
    },
    async forget() {},
  });
}
