import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { assign, groupAssignment, groupOr404, screenAssignment, screenOr404 } from './assignments.service.js';

const TAGS = ['Playlist assignments'];
const IdParams = z.object({ id: uuidParam });
const Body = z.object({ playlistId: uuidParam });

const Assigned = z.object({ playlistId: z.string(), playlistName: z.string(), updatedAt: z.string() });
const ScreenAssignmentDto = z
  .object({
    screenId: z.string(),
    playlistId: z.string().nullable(),
    playlistName: z.string().nullable(),
    updatedAt: z.string().nullable(),
    inherited: Assigned.extend({ groupId: z.string() })
      .nullable()
      .describe('the group assignment that plays when the screen has none of its own (most recently assigned group first)'),
  })
  .meta({ id: 'ScreenPlaylistAssignment' });
const GroupAssignmentState = z
  .object({ groupId: z.string(), playlistId: z.string().nullable(), playlistName: z.string().nullable(), updatedAt: z.string().nullable() })
  .meta({ id: 'GroupPlaylistAssignmentState' });
const GroupAssignmentDto = z
  .object({ groupId: z.string(), playlistId: z.string(), playlistName: z.string(), updatedAt: z.string() })
  .meta({ id: 'GroupPlaylistAssignment' });

export const assignmentRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/screens/{id}/playlist-assignment',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'The playlist a screen plays when no schedule applies (its own, or the one it inherits from a group)',
    params: IdParams,
    responses: { 200: { description: 'The assignment', data: ScreenAssignmentDto } },
    handler: async (ctx, { params }) => ok(await screenAssignment(ctx.deps.db, params.id)),
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/screens/{id}/playlist-assignment',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Assign the screen’s default playlist',
    params: IdParams,
    body: Body,
    responses: { 400: { description: 'validation_failed: the playlist does not exist' }, 200: { description: 'The assignment', data: ScreenAssignmentDto } },
    handler: async (ctx, { params, body, auth }) => {
      await screenOr404(ctx.deps.db, params.id);
      await assign(ctx.deps, 'screen', params.id, body.playlistId, (auth as SessionPrincipal).userId);
      return ok(await screenAssignment(ctx.deps.db, params.id));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/screens/{id}/playlist-assignment',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Remove the screen’s own assignment (its group’s applies again)',
    params: IdParams,
    responses: { 204: { description: 'Removed' } },
    handler: async (ctx, { params, auth }) => {
      await screenOr404(ctx.deps.db, params.id);
      await assign(ctx.deps, 'screen', params.id, null, (auth as SessionPrincipal).userId);
      return noContent();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/screen-groups/{id}/playlist-assignment',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'The playlist a group’s members play when no schedule applies and they have none of their own',
    description: 'Extension: the console’s group page reads it. `playlistId` is null when the group has no assignment.',
    extension: true,
    params: IdParams,
    responses: { 200: { description: 'The assignment (fields null when none)', data: GroupAssignmentState } },
    handler: async (ctx, { params }) => {
      await groupOr404(ctx.deps.db, params.id);
      return ok(await groupAssignment(ctx.deps.db, params.id));
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/screen-groups/{id}/playlist-assignment',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Assign a group’s default playlist (for members without their own)',
    params: IdParams,
    body: Body,
    responses: { 200: { description: 'The assignment', data: GroupAssignmentDto } },
    handler: async (ctx, { params, body, auth }) => {
      await groupOr404(ctx.deps.db, params.id);
      await assign(ctx.deps, 'group', params.id, body.playlistId, (auth as SessionPrincipal).userId);
      const a = await groupAssignment(ctx.deps.db, params.id);
      return ok({ ...a, playlistId: a.playlistId!, playlistName: a.playlistName!, updatedAt: a.updatedAt! });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/screen-groups/{id}/playlist-assignment',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Remove a group’s assignment',
    params: IdParams,
    responses: { 204: { description: 'Removed' } },
    handler: async (ctx, { params, auth }) => {
      await groupOr404(ctx.deps.db, params.id);
      await assign(ctx.deps, 'group', params.id, null, (auth as SessionPrincipal).userId);
      return noContent();
    },
  }),
];
