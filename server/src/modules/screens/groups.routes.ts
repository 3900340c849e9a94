import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { created, defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { listGroups } from './groups.repo.js';
import {
  addScreens,
  changeGroup,
  controlDisplays,
  createGroup,
  deleteGroup,
  DisplayAction,
  DisplayMember,
  displayPlan,
  GroupDto,
  groupDtos,
  groupOr404,
  oneGroup,
  parseSpan,
  removeScreen,
  setSpan,
  Span,
  SpanDto,
  spanGeometry,
} from './groups.service.js';

const TAGS = ['Screen groups'];
const IdParams = z.object({ id: uuidParam });

export const groupRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/screen-groups',
    auth: 'session',
    tags: TAGS,
    summary: 'List screen groups',
    query: pageQuery.extend({ q: z.string().max(200).optional() }),
    responses: { 200: { description: 'Groups by name', data: pageOf(GroupDto) } },
    handler: async (ctx, { query }) => {
      const page = toPage(await listGroups(ctx.deps.db, query), query.limit, (r) => r.name);
      return ok({ items: await groupDtos(ctx.deps.db, page.items), nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/screen-groups',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Create a group, optionally with members',
    body: z
      .object({
        name: z.string().trim().min(1).max(200),
        description: z.string().max(2000).nullable().optional(),
        screenIds: z.array(uuidParam).max(1000).optional(),
      })
      .strict(),
    responses: { 201: { description: 'The group', data: GroupDto }, 400: { description: 'validation_failed: a screenId names no screen' } },
    handler: async (ctx, { body }) => {
      const id = await createGroup(ctx.deps, body);
      return created(await oneGroup(ctx.deps.db, id));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/screen-groups/{id}',
    auth: 'session',
    tags: TAGS,
    summary: 'One group with its members',
    params: IdParams,
    responses: { 200: { description: 'The group', data: GroupDto } },
    handler: async (ctx, { params }) => ok(await oneGroup(ctx.deps.db, params.id)),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/screen-groups/{id}',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Rename or describe a group',
    params: IdParams,
    body: z.object({ name: z.string().trim().min(1).max(200).optional(), description: z.string().max(2000).nullable().optional() }).strict(),
    responses: { 200: { description: 'The group', data: GroupDto } },
    handler: async (ctx, { params, body }) => {
      const g = await groupOr404(ctx.deps.db, params.id);
      await changeGroup(ctx.deps, g, body);
      return ok(await oneGroup(ctx.deps.db, g.id));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/screen-groups/{id}',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Delete a group (its screens stay)',
    description:
      'Refused (409 `conflict`) while schedules target the group: `details.usedBy` lists them (`{type, id, name}`); change their targets first. The group’s playlist assignment goes with it; its members play what remains for them.',
    params: IdParams,
    responses: { 204: { description: 'Deleted' }, 409: { description: 'conflict: schedules still target the group; details.usedBy lists them' } },
    handler: async (ctx, { params }) => {
      await deleteGroup(ctx.deps, await groupOr404(ctx.deps.db, params.id));
      return noContent();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/screen-groups/{id}/screens',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Add screens to a group (already-members are fine)',
    params: IdParams,
    body: z.object({ screenIds: z.array(uuidParam).min(1).max(1000) }).strict(),
    responses: {
      200: { description: 'The group', data: GroupDto },
      400: { description: 'validation_failed: a screenId names no screen' },
      404: { description: 'not_found: the group' },
    },
    handler: async (ctx, { params, body }) => {
      const g = await groupOr404(ctx.deps.db, params.id);
      await addScreens(ctx.deps, g, body.screenIds);
      return ok(await oneGroup(ctx.deps.db, g.id));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/screen-groups/{id}/screens/{screenId}',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Remove a screen from a group (and from its span)',
    params: z.object({ id: uuidParam, screenId: uuidParam }),
    responses: { 204: { description: 'Removed' }, 404: { description: 'not_found: group, or the screen is not a member' } },
    handler: async (ctx, { params }) => {
      const g = await groupOr404(ctx.deps.db, params.id);
      await removeScreen(ctx.deps, g, params.screenId);
      return noContent();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/screen-groups/{id}/span',
    auth: 'session',
    tags: TAGS,
    summary: 'The group’s video wall layout (null when not a span)',
    params: IdParams,
    responses: { 200: { description: 'The span with each cell’s viewport, or null', data: SpanDto.nullable() } },
    handler: async (ctx, { params }) => {
      const g = await groupOr404(ctx.deps.db, params.id);
      const span = parseSpan(g.span);
      return ok(span ? spanGeometry(g.id, span) : null);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/screen-groups/{id}/span',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Make the group a video wall: rows × columns, panel size, bezel compensation, each member’s cell',
    description:
      'Rows and columns count from 0 in `cells`. Every cell screen must be a member; one screen per cell, one cell per screen. Members without a cell play normally.',
    params: IdParams,
    body: Span,
    responses: { 200: { description: 'The span', data: SpanDto }, 400: { description: 'validation_failed: cell outside the grid, duplicates, not a member' } },
    handler: async (ctx, { params, body }) => {
      const g = await groupOr404(ctx.deps.db, params.id);
      return ok(await setSpan(ctx.deps, g, body));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/screen-groups/{id}/display-control/preview',
    auth: 'session',
    tags: TAGS,
    summary: 'What turning the group’s displays on or off would do, member by member',
    params: IdParams,
    query: z.object({ action: DisplayAction }),
    responses: { 200: { description: 'The plan', data: z.object({ groupId: z.string(), action: DisplayAction, members: z.array(DisplayMember) }) } },
    handler: async (ctx, { params, query }) => {
      const g = await groupOr404(ctx.deps.db, params.id);
      return ok({ groupId: g.id, action: query.action, members: await displayPlan(ctx.deps.db, g.id, query.action) });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/screen-groups/{id}/display-control',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Turn the group’s displays on or off: queues a display command per member',
    params: IdParams,
    body: z
      .object({
        action: DisplayAction,
        expiresInSec: z
          .number()
          .int()
          .min(10)
          .max(7 * 24 * 3600)
          .optional(),
      })
      .strict(),
    responses: {
      200: {
        description: 'Queued and skipped members',
        data: z.object({
          groupId: z.string(),
          action: DisplayAction,
          queued: z.array(z.object({ screenId: z.string(), commandId: z.string() })),
          skipped: z.array(z.object({ screenId: z.string(), reason: z.string() })),
        }),
      },
    },
    handler: async (ctx, { params, body, auth }) => {
      const g = await groupOr404(ctx.deps.db, params.id);
      const { queued, skipped } = await controlDisplays(ctx.deps, g.id, body, (auth as SessionPrincipal).userId);
      return ok({ groupId: g.id, action: body.action, queued, skipped });
    },
  }),
];
