import type { Context } from 'koa';
import { DateTime } from 'luxon';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import type { SchedulesTable } from '../../platform/db/schema.js';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError, invalidReference, notFound } from '../../platform/http/errors.js';
import { afterCursor, pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { pacer } from '../../platform/pace.js';
import { created, defineRoute, noContent, ok, uuidParam, uuidParam as Uuid } from '../../platform/http/route.js';
import { checkSeries, isValidTimeZone, occurrences, parseRrule, RruleError } from '../schedules/index.js';
import { contentChanged } from './changes.js';
import { checkRevision, etagOf, Instant, notYet, now } from './common.js';
import { defaultTimeZone, existingTargets, groupExists, groupZone, missingTargets, screenContext, screensOf, zonesOf, type Targets } from './screen-context.js';
import { resolveSubject, scheduleInput, type Skipped } from './resolve.js';

const TAGS = ['Schedules'];
const IdParams = z.object({ id: uuidParam });
const MAX_PREVIEW_MS = 62 * 86_400_000;
/**
 * A preview answers at most this many segments: a month of the densest rule allowed (48
 * occurrences a day, each with the source below it between) fits; 62 days of it make 6 000.
 */
const MAX_PREVIEW_SEGMENTS = 3000;

function invalid(path: string, message: string): ApiError {
  return new ApiError('validation_failed', message, { details: { issues: [{ location: 'body', path: [path], message, code: 'invalid' }] } });
}

/** An instant with an offset, or a local date-time (no offset) read in the schedule's zone. */
const When = z
  .union([z.iso.datetime({ offset: true }), z.iso.datetime({ local: true })])
  .describe('ISO-8601 instant, or a local date-time without offset read in the schedule’s time zone');

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

const ContentInput = z
  .object({ playlistId: Uuid.optional(), layoutId: Uuid.optional(), campaignId: Uuid.optional() })
  .refine((c) => [c.playlistId, c.layoutId, c.campaignId].filter(Boolean).length === 1, { message: 'give exactly one of playlistId, layoutId, campaignId' });
const TargetsInput = z.object({
  screenIds: z.array(Uuid).max(1000).default([]),
  groupIds: z.array(Uuid).max(1000).default([]),
  locationIds: z.array(Uuid).max(1000).default([]),
});

const ScheduleFields = {
  name: z.string().trim().min(1).max(200),
  content: ContentInput,
  targets: TargetsInput,
  startsAt: When,
  endsAt: When.nullable().optional(),
  rrule: z.string().trim().max(1000).nullable().optional().describe('RFC 5545 RRULE text (no DTSTART): repeats the startsAt..endsAt window'),
  timeZone: z
    .string()
    .max(100)
    .nullable()
    .optional()
    .describe('IANA zone; omitted: each screen’s own (its location’s) zone, so 09:00 means 09:00 where the screen is'),
  priority: z.number().int().min(-1000).max(1000).default(0),
  enabled: z.boolean().default(true),
};

const ScheduleDto = z
  .object({
    id: z.string(),
    name: z.string(),
    content: z.object({ type: z.enum(['playlist', 'layout', 'campaign']), id: z.string(), name: z.string().nullable() }),
    targets: z.object({ screenIds: z.array(z.string()), groupIds: z.array(z.string()), locationIds: z.array(z.string()) }),
    startsAt: z.string(),
    endsAt: z.string().nullable(),
    rrule: z.string().nullable(),
    timeZone: z.string(),
    followsScreenTimeZone: z.boolean(),
    priority: z.number(),
    enabled: z.boolean(),
    revision: z.number().int().describe('bumped by every change; send it back in If-Match'),
    nextOccurrence: z.object({ startsAt: z.string(), endsAt: z.string().nullable() }).nullable().describe('in the schedule’s own zone, within a year'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Schedule' });

async function targetsOf(db: Db, id: string): Promise<Targets> {
  const rows = await db.selectFrom('schedule_targets').selectAll().where('schedule_id', '=', id).orderBy('target_id').execute();
  return existingTargets(db, {
    screenIds: rows.filter((r) => r.target_type === 'screen').map((r) => r.target_id),
    groupIds: rows.filter((r) => r.target_type === 'group').map((r) => r.target_id),
    locationIds: rows.filter((r) => r.target_type === 'location').map((r) => r.target_id),
  });
}

async function contentName(db: Db, row: SchedulesTable): Promise<string | null> {
  if (row.playlist_id) return (await db.selectFrom('playlists').select('name').where('id', '=', row.playlist_id).executeTakeFirst())?.name ?? null;
  if (row.layout_id) return (await db.selectFrom('layouts').select('name').where('id', '=', row.layout_id).executeTakeFirst())?.name ?? null;
  return null;
}

async function toDto(db: Db, row: SchedulesTable) {
  const t = Date.now();
  const next = row.enabled
    ? occurrences({ ...scheduleInput({ ...row, follow_screen_zone: 0 }, row.time_zone), enabled: true }, t, t + 366 * 86_400_000, { limit: 1 })[0]
    : undefined;
  return {
    id: row.id,
    name: row.name,
    content: { type: row.content_type, id: (row.playlist_id ?? row.layout_id ?? row.campaign_id)!, name: await contentName(db, row) },
    targets: await targetsOf(db, row.id),
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
  };
}

async function getRow(db: Db, id: string): Promise<SchedulesTable> {
  const row = await db.selectFrom('schedules').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Schedule');
  return row;
}

/** The schedule as the client sees it, with its revision as the ETag. */
async function reply(db: Db, id: string, status: 200 | 201 = 200) {
  const dto = await toDto(db, await getRow(db, id));
  return (status === 201 ? created : ok)(dto, etagOf(dto.revision));
}

/**
 * Writes a change of `row` only while its revision is still the one read (and If-Match
 * named, when sent): a change that lost a race with another is 412, never a silent overwrite.
 */
async function updateAtRevision(ctx: Context, trx: Db, row: SchedulesTable, set: Partial<SchedulesTable>): Promise<void> {
  const res = await trx
    .updateTable('schedules')
    .set({ ...set, revision: row.revision + 1, updated_at: now() })
    .where('id', '=', row.id)
    .where('revision', '=', row.revision)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) {
    throw lostRace(ctx, 'Reload and apply your change again.');
  }
}

/** A change that read a revision another change has since replaced: 412 when If-Match was sent, else 409. */
function lostRace(ctx: Context, what: string): ApiError {
  return new ApiError('version_conflict', `This schedule was changed meanwhile. ${what}`, { status: ctx.get('if-match') ? 412 : 409 });
}

const ifMatchHeader = { headers: { ETag: { description: 'The schedule’s revision; send it back in If-Match' } } };
const staleResponse = {
  409: { description: 'version_conflict: another change won while this one was made (no If-Match sent)' },
  412: { description: 'version_conflict: If-Match named a stale revision, or another change won' },
};

export interface ScheduleInput {
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
export async function prepare(db: Db, input: ScheduleInput) {
  if (input.content.campaignId) throw notYet('campaigns', 'content.campaignId');
  if (input.timeZone && !isValidTimeZone(input.timeZone)) throw invalid('timeZone', `${input.timeZone} is not an IANA time zone`);
  if (input.content.playlistId && !(await db.selectFrom('playlists').select('id').where('id', '=', input.content.playlistId).executeTakeFirst()))
    throw invalidReference(`No playlist ${input.content.playlistId}`, { path: ['content', 'playlistId'], message: 'no such playlist' });
  if (input.content.layoutId && !(await db.selectFrom('layouts').select('id').where('id', '=', input.content.layoutId).executeTakeFirst()))
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
      content_type: (input.content.playlistId ? 'playlist' : 'layout') as 'playlist' | 'layout',
      playlist_id: input.content.playlistId ?? null,
      layout_id: input.content.layoutId ?? null,
      campaign_id: null,
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

export async function writeTargets(db: Db, id: string, targets: Targets) {
  await db.deleteFrom('schedule_targets').where('schedule_id', '=', id).execute();
  const rows = [
    ...targets.screenIds.map((t) => ({ schedule_id: id, target_type: 'screen' as const, target_id: t })),
    ...targets.groupIds.map((t) => ({ schedule_id: id, target_type: 'group' as const, target_id: t })),
    ...targets.locationIds.map((t) => ({ schedule_id: id, target_type: 'location' as const, target_id: t })),
  ];
  if (rows.length) await db.insertInto('schedule_targets').values(rows).execute();
}

/** Bumps the screens a schedule reached before and reaches now. */
async function scheduleChanged(ctx: Context, id: string, before: Targets | null, after: Targets | null) {
  const screens = new Set<string>();
  for (const t of [before, after]) if (t) for (const s of await screensOf(ctx.deps.db, t)) screens.add(s);
  await contentChanged(ctx.deps, [{ kind: 'schedule', id }], [...screens]);
}

const toggle = (enabled: boolean) =>
  defineRoute({
    method: 'POST',
    path: `/api/v1/schedules/{id}/${enabled ? 'enable' : 'disable'}`,
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: enabled ? 'Turn a schedule on' : 'Turn a schedule off (kept, plays nothing)',
    params: IdParams,
    ifMatch: true,
    responses: { 200: { description: 'The schedule', data: ScheduleDto, ...ifMatchHeader }, ...staleResponse },
    handler: async (ctx, { params }) => {
      const row = await getRow(ctx.deps.db, params.id);
      checkRevision(ctx, row.revision);
      if ((row.enabled === 1) !== enabled) {
        await updateAtRevision(ctx, ctx.deps.db, row, { enabled: enabled ? 1 : 0 });
        const targets = await targetsOf(ctx.deps.db, row.id);
        await scheduleChanged(ctx, row.id, targets, targets);
      }
      return reply(ctx.deps.db, row.id);
    },
  });

const PreviewSegment = z.object({
  startsAt: z.string(),
  endsAt: z.string(),
  source: z.object({
    type: z.enum(['takeover', 'override', 'alert', 'schedule', 'assignment', 'group-assignment', 'idle']),
    id: z.string().nullable(),
    name: z.string().nullable(),
  }),
  content: z.object({ type: z.string(), id: z.string(), name: z.string().nullable() }).nullable(),
  reason: z.string(),
  outranked: z.array(z.object({ id: z.string(), name: z.string(), priority: z.number() })),
  skipped: z
    .array(
      z.object({
        type: z.enum(['schedule', 'assignment', 'group-assignment']),
        id: z.string(),
        name: z.string().nullable(),
        priority: z.number().nullable(),
        reason: z.enum(['layout_unpublished', 'playlist_empty']),
        content: z.object({ type: z.enum(['playlist', 'layout']), id: z.string(), name: z.string().nullable() }),
      }),
    )
    .describe('stronger sources passed over here because they had nothing to play: a layout never published, a playlist with nothing playable'),
});

const quoted = (name: string | null | undefined) => (name ? `"${name}"` : '(deleted)');

/** A sentence for one source passed over. */
function skippedSentence(s: Skipped, contentName: string | null, subject: 'screen' | 'group'): string {
  if (s.type === 'schedule') {
    return s.reason === 'layout_unpublished'
      ? `schedule ${quoted(s.name)} (priority ${s.priority}) is skipped because its layout ${quoted(contentName)} has never been published`
      : `schedule ${quoted(s.name)} (priority ${s.priority}) is skipped because its playlist ${quoted(contentName)} has nothing to play here`;
  }
  if (s.type === 'assignment') return `the screen’s own playlist assignment ${quoted(contentName)} has nothing to play here`;
  return `${subject === 'group' ? 'the group’s' : `group ${quoted(s.name)}’s`} playlist assignment ${quoted(contentName)} has nothing to play here`;
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

export const scheduleRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/schedules',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'List schedules by name',
    query: pageQuery.extend({
      screenId: Uuid.optional().describe('schedules that name this screen directly'),
      groupId: Uuid.optional(),
      locationId: Uuid.optional(),
      playlistId: Uuid.optional(),
      layoutId: Uuid.optional(),
      enabled: z.enum(['true', 'false']).optional(),
    }),
    responses: { 200: { description: 'Schedules', data: pageOf(ScheduleDto) } },
    handler: async (ctx, { query }) => {
      let q = ctx.deps.db
        .selectFrom('schedules')
        .selectAll('schedules')
        .where(afterCursor('name', 'id', 'asc', query.cursor));
      const target = query.screenId
        ? ['screen', query.screenId]
        : query.groupId
          ? ['group', query.groupId]
          : query.locationId
            ? ['location', query.locationId]
            : null;
      if (target) {
        q = q.where((eb) =>
          eb.exists(
            eb
              .selectFrom('schedule_targets as t')
              .select('t.schedule_id')
              .whereRef('t.schedule_id', '=', 'schedules.id')
              .where('t.target_type', '=', target[0] as 'screen')
              .where('t.target_id', '=', target[1]!),
          ),
        );
      }
      if (query.playlistId) q = q.where('playlist_id', '=', query.playlistId);
      if (query.layoutId) q = q.where('layout_id', '=', query.layoutId);
      if (query.enabled) q = q.where('enabled', '=', query.enabled === 'true' ? 1 : 0);
      const rows = await q
        .orderBy('name')
        .orderBy('id')
        .limit(query.limit + 1)
        .execute();
      const page = toPage(rows, query.limit, (r) => r.name);
      const items = [];
      const pace = pacer();
      for (const r of page.items) {
        await pace();
        items.push(await toDto(ctx.deps.db, r));
      }
      return ok({ items, nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/schedules',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Schedule a playlist or layout on screens, groups or locations',
    description:
      'Conflicts: the higher `priority` wins; on equal priority the most recently changed schedule wins. With `rrule` the first occurrence is startsAt..endsAt and repeats at the same local wall-clock time (DST-safe). Campaigns answer 400 until they exist.',
    body: z.object(ScheduleFields),
    responses: { 201: { description: 'The schedule', data: ScheduleDto, ...ifMatchHeader } },
    handler: async (ctx, { body, auth }) => {
      const db = ctx.deps.db;
      const { row, targets } = await prepare(db, body);
      const id = uuidv7();
      const t = now();
      await db.transaction().execute(async (trx) => {
        await assertTargets(trx, targets);
        await trx
          .insertInto('schedules')
          .values({ id, ...row, revision: 1, created_by: (auth as SessionPrincipal).userId, created_at: t, updated_at: t })
          .execute();
        await writeTargets(trx, id, targets);
      });
      await scheduleChanged(ctx, id, null, targets);
      return reply(db, id, 201);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/schedules/preview',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'What plays on a screen (or for a group) between two instants, and why',
    description:
      'At most 62 days and 3000 segments (past that, the timeline stops early with a `preview_truncated` warning). Each segment names its source (schedule, or the screen or group of an assignment; idle), its content, a sentence saying why, the schedules it outranked and the stronger sources passed over because they had nothing to play (`skipped`).',
    body: z
      .object({ screenId: Uuid.optional(), groupId: Uuid.optional(), from: Instant, to: Instant })
      .refine((b) => Boolean(b.screenId) !== Boolean(b.groupId), { message: 'give screenId or groupId', path: ['screenId'] }),
    responses: {
      400: { description: 'validation_failed: screenId or groupId names nothing, or the window is wrong' },
      200: {
        description: 'The timeline',
        data: z.object({
          timeZone: z.string(),
          from: z.string(),
          to: z.string(),
          timeline: z.array(PreviewSegment),
          warnings: z.array(z.object({ code: z.string(), message: z.string() }).passthrough()),
        }),
      },
    },
    handler: async (ctx, { body }) => {
      const db = ctx.deps.db;
      const from = Date.parse(body.from);
      const to = Date.parse(body.to);
      if (to <= from) throw invalid('to', 'to must be after from');
      if (to - from > MAX_PREVIEW_MS) throw invalid('to', 'A preview covers at most 62 days');
      let resolution;
      if (body.screenId) {
        const screen = await screenContext(db, body.screenId);
        if (!screen) throw invalidReference(`No screen ${body.screenId}`, { path: ['screenId'], message: 'no such screen' });
        resolution = await resolveSubject(db, { kind: 'screen', screen }, from, to, { explain: true, maxSegments: MAX_PREVIEW_SEGMENTS });
      } else {
        const group = await groupExists(db, body.groupId!);
        if (!group) throw invalidReference(`No group ${body.groupId}`, { path: ['groupId'], message: 'no such group' });
        resolution = await resolveSubject(db, { kind: 'group', groupId: group.id, timeZone: await groupZone(db, group.id) }, from, to, {
          explain: true,
          maxSegments: MAX_PREVIEW_SEGMENTS,
        });
      }
      const playlistIds = new Set<string>();
      const layoutIds = new Set<string>();
      for (const s of resolution.segments) {
        for (const c of [s.content, ...s.skipped.map((k) => k.content)]) {
          if (c?.type === 'playlist') playlistIds.add(c.id);
          if (c?.type === 'layout') layoutIds.add(c.id);
        }
      }
      const names = new Map<string, string>();
      if (playlistIds.size)
        for (const r of await db
          .selectFrom('playlists')
          .select(['id', 'name'])
          .where('id', 'in', [...playlistIds])
          .execute())
          names.set(r.id, r.name);
      if (layoutIds.size)
        for (const r of await db
          .selectFrom('layouts')
          .select(['id', 'name'])
          .where('id', 'in', [...layoutIds])
          .execute())
          names.set(r.id, r.name);
      const subject = body.groupId ? 'group' : 'screen';
      const pace = pacer();
      const timeline = [];
      for (const s of resolution.segments) {
        await pace();
        const schedule = s.source.type === 'schedule' && s.source.id ? resolution.schedules.get(s.source.id) : undefined;
        const contentName = s.content ? (names.get(s.content.id) ?? null) : null;
        const passedOver = s.skipped.map((k) => skippedSentence(k, names.get(k.content.id) ?? null, subject));
        let reason: string;
        if (schedule) {
          reason = `Schedule "${schedule.name}" (priority ${schedule.priority}) applies`;
          if (s.outranked.length) {
            const lost = s.outranked.map((o) => `"${o.name}" (priority ${o.priority}${o.priority === schedule.priority ? ', changed earlier' : ''})`);
            reason += ` and beats ${lost.join(', ')}`;
          }
          if (passedOver.length) reason += `; ${passedOver.join('; ')}`;
        } else {
          let plays: string;
          if (s.source.type === 'assignment') plays = `the screen’s own playlist assignment ${quoted(contentName)} plays`;
          else if (s.source.type === 'group-assignment') {
            plays =
              subject === 'group'
                ? `the group’s playlist assignment ${quoted(contentName)} plays`
                : `group ${quoted(s.sourceName)}’s playlist assignment ${quoted(contentName)} plays`;
            if (subject === 'screen' && !s.skipped.some((k) => k.type === 'assignment')) plays = `the screen has no assignment of its own: ${plays}`;
          } else plays = 'the idle slide shows';
          const why =
            s.source.type === 'idle' && !passedOver.length
              ? 'Nothing is scheduled or assigned'
              : s.skipped.some((k) => k.type === 'schedule')
                ? ''
                : 'No schedule applies';
          reason = [why, ...passedOver].filter(Boolean).join('; ');
          reason = `${capitalised(reason)}: ${plays}`;
        }
        timeline.push({
          startsAt: s.startsAt,
          endsAt: s.endsAt,
          source: { type: s.source.type, id: s.source.id, name: s.sourceName },
          content: s.content ? { type: s.content.type, id: s.content.id, name: contentName } : null,
          reason,
          outranked: s.outranked,
          skipped: s.skipped.map((k) => ({ ...k, content: { ...k.content, name: names.get(k.content.id) ?? null } })),
        });
      }
      const warnings = [...resolution.warnings];
      if (resolution.truncatedAt)
        warnings.push({
          code: 'preview_truncated',
          message: `The preview stops at ${resolution.truncatedAt}: it answers at most ${MAX_PREVIEW_SEGMENTS} segments; ask for a shorter span to see the rest`,
        });
      return ok({ timeZone: resolution.timeZone, from: body.from, to: body.to, timeline, warnings });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/schedules/{id}',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'A schedule',
    params: IdParams,
    responses: { 200: { description: 'The schedule', data: ScheduleDto, ...ifMatchHeader } },
    handler: async (ctx, { params }) => reply(ctx.deps.db, params.id),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/schedules/{id}',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Change a schedule (any field; `targets` replaces the targets)',
    description: 'Send `If-Match: <revision>` to refuse the change (412) when someone else changed the schedule meanwhile.',
    params: IdParams,
    // No defaults here: zod applies `.default()` inside `.partial()`, so a PATCH without
    // `priority` or `enabled` would reset them to 0 and true (a paused schedule resumed).
    body: z.object({ ...ScheduleFields, priority: z.number().int().min(-1000).max(1000), enabled: z.boolean() }).partial(),
    ifMatch: true,
    responses: { 200: { description: 'The schedule', data: ScheduleDto, ...ifMatchHeader }, ...staleResponse },
    handler: async (ctx, { params, body }) => {
      const db = ctx.deps.db;
      const row = await getRow(db, params.id);
      checkRevision(ctx, row.revision);
      const before = await targetsOf(db, row.id);
      const merged: ScheduleInput = {
        name: body.name ?? row.name,
        content: body.content ?? { playlistId: row.playlist_id ?? undefined, layoutId: row.layout_id ?? undefined },
        targets: body.targets ?? before,
        // Times the body leaves alone keep their wall-clock meaning if the zone changes.
        startsAt: body.startsAt ?? { stored: row.starts_at, zone: row.time_zone },
        endsAt: body.endsAt !== undefined ? body.endsAt : row.ends_at ? { stored: row.ends_at, zone: row.time_zone } : null,
        rrule: body.rrule !== undefined ? body.rrule : row.rrule,
        timeZone: body.timeZone !== undefined ? body.timeZone : row.follow_screen_zone ? null : row.time_zone,
        priority: body.priority ?? row.priority,
        enabled: body.enabled ?? row.enabled === 1,
      };
      const { row: next, targets } = await prepare(db, merged);
      await db.transaction().execute(async (trx) => {
        await assertTargets(trx, targets);
        await updateAtRevision(ctx, trx, row, next);
        await writeTargets(trx, row.id, targets);
      });
      await scheduleChanged(ctx, row.id, before, targets);
      return reply(db, row.id);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/schedules/{id}',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Delete a schedule',
    params: IdParams,
    ifMatch: true,
    responses: { 204: { description: 'Deleted' }, ...staleResponse },
    handler: async (ctx, { params }) => {
      const row = await getRow(ctx.deps.db, params.id);
      checkRevision(ctx, row.revision);
      const before = await targetsOf(ctx.deps.db, row.id);
      const res = await ctx.deps.db.deleteFrom('schedules').where('id', '=', row.id).where('revision', '=', row.revision).executeTakeFirst();
      if (Number(res.numDeletedRows) !== 1) throw lostRace(ctx, 'Reload and decide again.');
      await scheduleChanged(ctx, row.id, before, null);
      return noContent();
    },
  }),
  toggle(true),
  toggle(false),
];
