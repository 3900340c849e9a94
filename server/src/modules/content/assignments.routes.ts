import type { Context } from 'koa';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { invalidReference, notFound } from '../../platform/http/errors.js';
import { defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { contentChanged } from './changes.js';
import { now } from './common.js';
import { groupExists, screenContext, screensOf } from './screen-context.js';

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

async function assignment(db: Db, type: 'screen' | 'group', ids: readonly string[]) {
  if (ids.length === 0) return undefined;
  return db
    .selectFrom('playlist_assignments as a')
    .innerJoin('playlists as p', 'p.id', 'a.playlist_id')
    .select(['a.target_id', 'a.playlist_id', 'p.name', 'a.updated_at'])
    .where('a.target_type', '=', type)
    .where('a.target_id', 'in', ids)
    .orderBy('a.updated_at', 'desc')
    .orderBy('a.target_id')
    .executeTakeFirst();
}

async function screenDto(db: Db, screenId: string) {
  const screen = await screenContext(db, screenId);
  if (!screen) throw notFound('Screen');
  const own = await assignment(db, 'screen', [screenId]);
  const group = await assignment(db, 'group', screen.groupIds);
  return {
    screenId,
    playlistId: own?.playlist_id ?? null,
    playlistName: own?.name ?? null,
    updatedAt: own?.updated_at ?? null,
    inherited: group ? { groupId: group.target_id, playlistId: group.playlist_id, playlistName: group.name, updatedAt: group.updated_at } : null,
  };
}

async function assign(ctx: Context, type: 'screen' | 'group', targetId: string, playlistId: string | null, userId: string) {
  const db = ctx.deps.db;
  if (playlistId === null) {
    await db.deleteFrom('playlist_assignments').where('target_type', '=', type).where('target_id', '=', targetId).execute();
  } else {
    if (!(await db.selectFrom('playlists').select('id').where('id', '=', playlistId).executeTakeFirst())) {
      throw invalidReference(`No playlist ${playlistId}`, { path: ['playlistId'], message: 'no such playlist' });
    }
    await db
      .insertInto('playlist_assignments')
      .values({ target_type: type, target_id: targetId, playlist_id: playlistId, updated_by: userId, updated_at: now() })
      .onConflict((oc) => oc.columns(['target_type', 'target_id']).doUpdateSet({ playlist_id: playlistId, updated_by: userId, updated_at: now() }))
      .execute();
  }
  const screens = await screensOf(
    db,
    type === 'screen' ? { screenIds: [targetId], groupIds: [], locationIds: [] } : { screenIds: [], groupIds: [targetId], locationIds: [] },
  );
  await contentChanged(ctx.deps, [{ kind: 'assignment', id: targetId }], screens);
}

async function groupOr404(db: Db, id: string) {
  const group = await groupExists(db, id);
  if (!group) throw notFound('Group');
  return group;
}

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
    handler: async (ctx, { params }) => ok(await screenDto(ctx.deps.db, params.id)),
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
      if (!(await screenContext(ctx.deps.db, params.id))) throw notFound('Screen');
      await assign(ctx, 'screen', params.id, body.playlistId, (auth as SessionPrincipal).userId);
      return ok(await screenDto(ctx.deps.db, params.id));
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
      if (!(await screenContext(ctx.deps.db, params.id))) throw notFound('Screen');
      await assign(ctx, 'screen', params.id, null, (auth as SessionPrincipal).userId);
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
      const a = await assignment(ctx.deps.db, 'group', [params.id]);
      return ok({ groupId: params.id, playlistId: a?.playlist_id ?? null, playlistName: a?.name ?? null, updatedAt: a?.updated_at ?? null });
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
      await assign(ctx, 'group', params.id, body.playlistId, (auth as SessionPrincipal).userId);
      const a = (await assignment(ctx.deps.db, 'group', [params.id]))!;
      return ok({ groupId: params.id, playlistId: a.playlist_id, playlistName: a.name, updatedAt: a.updated_at });
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
      await assign(ctx, 'group', params.id, null, (auth as SessionPrincipal).userId);
      return noContent();
    },
  }),
];
