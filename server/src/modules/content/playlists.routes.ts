import type { Context } from 'koa';
import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { created, defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { etagOf, revisionCheck } from './common.js';
import { publicationStateOf } from './playlists.publishable.js';
import { itemDtos, listPlaylistRows, playlistDto, toSummary } from './playlists.repo.js';
import { ItemDto, ItemFields, MAX_ITEMS_PER_PLAYLIST, NewItemSchema, PlaylistDto, PlaylistSummaryDto, TagRuleSchema } from './playlists.schemas.js';
import {
  addItem,
  bulkEditItems,
  createPlaylist,
  deletePlaylist,
  describePlaylist,
  patchItem,
  removeItem,
  reorderItems,
  setTagRule,
} from './playlists.service.js';

const TAGS = ['Playlists'];
const IdParams = z.object({ id: uuidParam });
const ItemParams = z.object({ id: uuidParam, itemId: uuidParam });
const ifMatchHeader = { headers: { ETag: { description: 'The playlist’s revision; send it back in If-Match' } } };
const conflictResponses = {
  409: { description: 'conflict: a nested playlist would make a cycle, or the thing is in use' },
  412: { description: 'version_conflict: If-Match named a stale revision' },
};

async function reply(ctx: Context, id: string, status: 200 | 201 = 200) {
  const dto = { ...(await playlistDto(ctx.deps.db, id)), ...(await publicationStateOf(ctx.deps.db, id)) };
  return (status === 201 ? created : ok)(dto, etagOf(dto.revision));
}

/** The signed-in user (every playlist route is a session route). */
const userOf = (auth: unknown) => (auth as SessionPrincipal).userId;

export const playlistRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/playlists',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'List playlists by name',
    query: pageQuery.extend({ q: z.string().max(200).optional() }),
    responses: { 200: { description: 'Playlists (without their items)', data: pageOf(PlaylistSummaryDto) } },
    handler: async (ctx, { query }) => {
      const rows = await listPlaylistRows(ctx.deps.db, query);
      const page = toPage(rows, query.limit, (r) => r.name);
      const items = [];
      for (const r of page.items) items.push({ ...toSummary(r, Number(r.item_count ?? 0)), ...(await publicationStateOf(ctx.deps.db, r.id)) });
      return ok({ items, nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/playlists',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Create a playlist, optionally with items',
    body: z.object({
      name: z.string().trim().min(1).max(200),
      description: z.string().max(2000).optional(),
      items: z.array(NewItemSchema).max(MAX_ITEMS_PER_PLAYLIST).optional(),
      tagRule: TagRuleSchema.nullable().optional(),
    }),
    responses: { 201: { description: 'The playlist', data: PlaylistDto, ...ifMatchHeader }, 409: conflictResponses[409] },
    handler: async (ctx, { body, auth }) => {
      const id = await createPlaylist(ctx.deps.db, body, (auth as SessionPrincipal).userId);
      return reply(ctx, id, 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/playlists/{id}',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'A playlist with its items',
    params: IdParams,
    responses: { 200: { description: 'The playlist', data: PlaylistDto, ...ifMatchHeader } },
    handler: async (ctx, { params }) => reply(ctx, params.id),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/playlists/{id}',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Rename or describe a playlist',
    description: 'Send `If-Match: <revision>` to refuse the change (412) when someone else changed the playlist meanwhile.',
    params: IdParams,
    body: z.object({ name: z.string().trim().min(1).max(200).optional(), description: z.string().max(2000).optional() }),
    ifMatch: true,
    responses: { 200: { description: 'The playlist', data: PlaylistDto, ...ifMatchHeader }, 412: conflictResponses[412] },
    handler: async (ctx, { params, body, auth }) => {
      await describePlaylist(ctx.deps, params.id, body, revisionCheck(ctx), userOf(auth));
      return reply(ctx, params.id);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/playlists/{id}',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Delete a playlist that nothing uses',
    description:
      'Answers 409 naming the playlists, layouts, schedules and assignments that still use it (`details.usedBy`). While approvals are required, deleting a published playlist needs the publisher role (403 for an editor).',
    params: IdParams,
    ifMatch: true,
    responses: {
      204: { description: 'Deleted' },
      403: { description: 'forbidden: approvals are on and the playlist is published; deleting it needs the publisher role or above' },
      409: { description: 'conflict: in use; details.usedBy lists the users ({type, id, name})' },
      412: conflictResponses[412],
    },
    handler: async (ctx, { params, auth }) => {
      await deletePlaylist(ctx.deps, params.id, revisionCheck(ctx), (auth as SessionPrincipal).role);
      return noContent();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/playlists/{id}/items',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Add an item (an asset, a widget or a nested playlist)',
    description:
      'Nesting a playlist that contains this one (directly or through others) is 409. Without `durationMs` a video or audio plays its own length, a website 30 s, anything else 10 s. An item nesting a playlist takes no `durationMs` (400): it plays the nested items for their own durations; its `transition` leads into the first of them.',
    params: IdParams,
    body: NewItemSchema,
    ifMatch: true,
    responses: { 201: { description: 'The item; ETag is the playlist’s new revision', data: ItemDto, ...ifMatchHeader }, ...conflictResponses },
    handler: async (ctx, { params, body, auth }) => {
      const { row, position, revision } = await addItem(ctx.deps, params.id, body, revisionCheck(ctx), userOf(auth));
      const [dto] = await itemDtos(ctx.deps.db, [{ ...row }]);
      return created({ ...dto!, position }, etagOf(revision));
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/playlists/{id}/items/order',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Reorder the items',
    description: '`itemIds` lists every item of the playlist once, in the new order.',
    params: IdParams,
    body: z.object({ itemIds: z.array(uuidParam).max(MAX_ITEMS_PER_PLAYLIST) }),
    ifMatch: true,
    responses: { 200: { description: 'The playlist', data: PlaylistDto, ...ifMatchHeader }, 412: conflictResponses[412] },
    handler: async (ctx, { params, body, auth }) => {
      await reorderItems(ctx.deps, params.id, body.itemIds, revisionCheck(ctx), userOf(auth));
      return reply(ctx, params.id);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/playlists/{id}/items/bulk',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Edit many items at once',
    description:
      'In one transaction: `set` applies the same fields to every item in `itemIds`; `items` patches items one by one (`{id, ...fields}`); `delete` removes items. An unknown item id refuses the whole request.',
    params: IdParams,
    body: z
      .object({
        itemIds: z.array(uuidParam).max(MAX_ITEMS_PER_PLAYLIST).optional(),
        set: ItemFields.optional(),
        items: z
          .array(ItemFields.extend({ id: uuidParam }))
          .max(MAX_ITEMS_PER_PLAYLIST)
          .optional(),
        delete: z.array(uuidParam).max(MAX_ITEMS_PER_PLAYLIST).optional(),
      })
      .refine((b) => (b.set === undefined) === (b.itemIds === undefined), { message: '`set` and `itemIds` go together', path: ['set'] }),
    ifMatch: true,
    responses: { 200: { description: 'The playlist', data: PlaylistDto, ...ifMatchHeader }, 412: conflictResponses[412] },
    handler: async (ctx, { params, body, auth }) => {
      await bulkEditItems(ctx.deps, params.id, body, revisionCheck(ctx), userOf(auth));
      return reply(ctx, params.id);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/playlists/{id}/tag-rule',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Make a smart playlist: ready assets carrying tags, in a rule’s order',
    description:
      'After the playlist’s own items, the playlist plays every ready asset that carries any (or all) of `tags`, ordered by `order`, at most `limit`, each for `durationMs` (null: a video’s length, 30 s for a website, else 10 s). The set follows the assets as they are tagged, become ready or are archived. An empty `tags` list turns the rule off.',
    params: IdParams,
    body: TagRuleSchema,
    ifMatch: true,
    responses: { 200: { description: 'The playlist', data: PlaylistDto, ...ifMatchHeader }, 412: conflictResponses[412] },
    handler: async (ctx, { params, body, auth }) => {
      await setTagRule(ctx.deps, params.id, body, revisionCheck(ctx), userOf(auth));
      return reply(ctx, params.id);
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/playlists/{id}/items/{itemId}',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Change an item’s duration, transition, validity window, day-parts or enabled state',
    params: ItemParams,
    body: ItemFields,
    ifMatch: true,
    responses: { 200: { description: 'The item; ETag is the playlist’s new revision', data: ItemDto, ...ifMatchHeader }, 412: conflictResponses[412] },
    handler: async (ctx, { params, body, auth }) => {
      const { next, revision } = await patchItem(ctx.deps, params.id, params.itemId, body, revisionCheck(ctx), userOf(auth));
      const [dto] = await itemDtos(ctx.deps.db, [next]);
      return ok(dto, etagOf(revision));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/playlists/{id}/items/{itemId}',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Remove an item',
    params: ItemParams,
    ifMatch: true,
    responses: { 204: { description: 'Removed; ETag is the playlist’s new revision', ...ifMatchHeader }, 412: conflictResponses[412] },
    handler: async (ctx, { params, auth }) => {
      const revision = await removeItem(ctx.deps, params.id, params.itemId, revisionCheck(ctx), userOf(auth));
      return noContent(etagOf(revision));
    },
  }),
];
