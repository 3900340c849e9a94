import type { Context } from 'koa';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { pacer } from '../../platform/pace.js';
import { checkRevision, etagOf } from '../../platform/http/revision.js';
import { created, defineRoute, noContent, ok, uuidParam, uuidParam as Uuid } from '../../platform/http/route.js';
import { getScheduleRow, listScheduleRows } from './schedules.repo.js';
import { createSchedule, deleteSchedule, scheduleDto, setScheduleEnabled, updateSchedule } from './schedules.service.js';

const TAGS = ['Schedules'];
const IdParams = z.object({ id: uuidParam });

/** An instant with an offset, or a local date-time (no offset) read in the schedule's zone. */
const When = z
  .union([z.iso.datetime({ offset: true }), z.iso.datetime({ local: true })])
  .describe('ISO-8601 instant, or a local date-time without offset read in the schedule’s time zone');

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
    publication: z
      .object({ id: z.string(), number: z.number().int(), publishedAt: z.string(), publishedBy: z.string().nullable() })
      .nullable()
      .describe('The publication screens play; null: never published (approvals on), nothing plays it'),
    unpublishedChanges: z.boolean().describe('The fields above (the draft) differ from the publication, or it was never published'),
  })
  .meta({ id: 'Schedule' });

const actorOf = (auth: unknown) => {
  const p = auth as SessionPrincipal;
  return { userId: p.userId, role: p.role };
};

const writerForbidden = {
  403: {
    description:
      'forbidden: approvals are off and the caller is an editor (a change would reach screens at once: publisher role needed), or approvals are on and an editor deletes a schedule screens play',
  },
};

/** The schedule as the client sees it, with its revision as the ETag. */
async function reply(db: Db, id: string, status: 200 | 201 = 200) {
  const dto = await scheduleDto(db, await getScheduleRow(db, id));
  return (status === 201 ? created : ok)(dto, etagOf(dto.revision));
}

/** Whether the request named a revision: a change that lost a race is then 412, else 409. */
const ifMatchSent = (ctx: Context) => Boolean(ctx.get('if-match'));

const ifMatchHeader = { headers: { ETag: { description: 'The schedule’s revision; send it back in If-Match' } } };
const staleResponse = {
  409: { description: 'version_conflict: another change won while this one was made (no If-Match sent)' },
  412: { description: 'version_conflict: If-Match named a stale revision, or another change won' },
};

const toggle = (enabled: boolean) =>
  defineRoute({
    method: 'POST',
    path: `/api/v1/schedules/{id}/${enabled ? 'enable' : 'disable'}`,
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: enabled ? 'Turn a schedule on' : 'Turn a schedule off (kept, plays nothing)',
    params: IdParams,
    ifMatch: true,
    responses: { 200: { description: 'The schedule', data: ScheduleDto, ...ifMatchHeader }, ...staleResponse, ...writerForbidden },
    handler: async (ctx, { params, auth }) => {
      const row = await getScheduleRow(ctx.deps.db, params.id);
      checkRevision(ctx, row.revision);
      await setScheduleEnabled(ctx.deps, row, enabled, ifMatchSent(ctx), actorOf(auth));
      return reply(ctx.deps.db, row.id);
    },
  });

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
      const target = query.screenId
        ? (['screen', query.screenId] as const)
        : query.groupId
          ? (['group', query.groupId] as const)
          : query.locationId
            ? (['location', query.locationId] as const)
            : null;
      const rows = await listScheduleRows(ctx.deps.db, {
        cursor: query.cursor,
        limit: query.limit,
        target,
        playlistId: query.playlistId,
        layoutId: query.layoutId,
        enabled: query.enabled ? query.enabled === 'true' : undefined,
      });
      const page = toPage(rows, query.limit, (r) => r.name);
      const items = [];
      const pace = pacer();
      for (const r of page.items) {
        await pace();
        items.push(await scheduleDto(ctx.deps.db, r));
      }
      return ok({ items, nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/schedules',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Schedule a playlist, layout or campaign on screens, groups or locations',
    description:
      'Conflicts: the higher `priority` wins; on equal priority the most recently changed schedule wins. With `rrule` the first occurrence is startsAt..endsAt and repeats at the same local wall-clock time (DST-safe). A campaign (`content.campaignId`) plays its released `show`; until it is released the schedule falls through.',
    body: z.object(ScheduleFields),
    responses: { 201: { description: 'The schedule', data: ScheduleDto, ...ifMatchHeader }, ...writerForbidden },
    handler: async (ctx, { body, auth }) => {
      const id = await createSchedule(ctx.deps, body, actorOf(auth));
      return reply(ctx.deps.db, id, 201);
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
    minRole: 'editor',
    tags: TAGS,
    summary: 'Change a schedule (any field; `targets` replaces the targets)',
    description:
      'Send `If-Match: <revision>` to refuse the change (412) when someone else changed the schedule meanwhile. With approvals on the change goes to the draft (GET answers it); screens keep playing the publication until a submission of it is published.',
    params: IdParams,
    // No defaults here: zod applies `.default()` inside `.partial()`, so a PATCH without
    // `priority` or `enabled` would reset them to 0 and true (a paused schedule resumed).
    body: z.object({ ...ScheduleFields, priority: z.number().int().min(-1000).max(1000), enabled: z.boolean() }).partial(),
    ifMatch: true,
    responses: { 200: { description: 'The schedule', data: ScheduleDto, ...ifMatchHeader }, ...staleResponse, ...writerForbidden },
    handler: async (ctx, { params, body, auth }) => {
      const row = await getScheduleRow(ctx.deps.db, params.id);
      checkRevision(ctx, row.revision);
      await updateSchedule(ctx.deps, row, body, ifMatchSent(ctx), actorOf(auth));
      return reply(ctx.deps.db, row.id);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/schedules/{id}',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Delete a schedule',
    params: IdParams,
    ifMatch: true,
    responses: { 204: { description: 'Deleted' }, ...staleResponse, ...writerForbidden },
    handler: async (ctx, { params, auth }) => {
      const row = await getScheduleRow(ctx.deps.db, params.id);
      checkRevision(ctx, row.revision);
      await deleteSchedule(ctx.deps, row, ifMatchSent(ctx), actorOf(auth));
      return noContent();
    },
  }),
  toggle(true),
  toggle(false),
];
