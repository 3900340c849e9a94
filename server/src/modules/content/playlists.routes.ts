import type { Context } from 'koa';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError, invalidReference, notFound } from '../../platform/http/errors.js';
import { afterCursor, pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { created, defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import type { Db } from '../../platform/db/database.js';
import { storableJson } from '../../platform/db/json.js';
import { contentChanged } from './changes.js';
import { checkRevision, etagOf, inUse, notYet, now } from './common.js';
import {
  assertNestable,
  assertNoNestedDuration,
  assertValidity,
  getPlaylistRow,
  ItemDto,
  itemChanges,
  ItemFields,
  itemDtos,
  itemsOf,
  MAX_ITEMS_PER_PLAYLIST,
  newItemRow,
  NewItemSchema,
  playlistDto,
  PlaylistDto,
  PlaylistSummaryDto,
  playlistUsage,
  renumber,
  TagRuleSchema,
  toSummary,
  touchPlaylist,
  type NewItem,
  type PlaylistRow,
} from './playlists.repo.js';
import { assetInfos } from './refs.js';

const TAGS = ['Playlists'];
const IdParams = z.object({ id: uuidParam });
const ItemParams = z.object({ id: uuidParam, itemId: uuidParam });
const ifMatchHeader = { headers: { ETag: { description: 'The playlist’s revision; send it back in If-Match' } } };
const conflictResponses = {
  409: { description: 'conflict: a nested playlist would make a cycle, or the thing is in use' },
  412: { description: 'version_conflict: If-Match named a stale revision' },
};

/** 400 naming the field: an id in the body that names nothing (or nothing usable) is invalid input. */
function badRef(field: string, message: string): ApiError {
  return invalidReference(message, { path: [field], message });
}

/** Checks what a new item points at: exactly one existing asset or playlist. */
async function checkNewItem(db: Db, playlistId: string, item: NewItem, field = 'item'): Promise<void> {
  const refs = [item.assetId, item.widgetId, item.playlistId].filter((x) => x !== undefined);
  if (refs.length !== 1) throw badRef(field, 'An item shows exactly one of assetId, widgetId or playlistId');
  if (item.widgetId) throw notYet('widgets', 'widgetId');
  if (item.assetId) {
    const asset = (await assetInfos(db, [item.assetId])).get(item.assetId);
    if (!asset) throw badRef('assetId', `No asset ${item.assetId}`);
    if (asset.state === 'archived') throw badRef('assetId', `Asset "${asset.name}" is archived; restore it before using it`);
  }
  if (item.playlistId) {
    if (item.durationMs != null) assertNoNestedDuration(['new item'], 'durationMs');
    const child = await db.selectFrom('playlists').select('id').where('id', '=', item.playlistId).executeTakeFirst();
    if (!child) throw badRef('playlistId', `No playlist ${item.playlistId}`);
    await assertNestable(db, playlistId, item.playlistId);
  }
  assertValidity(item.validFrom ?? null, item.validUntil ?? null);
}

/**
 * Runs a change of playlist `id` in one transaction that first reads the playlist and
 * checks If-Match against it, so a concurrent change cannot slip between the check and
 * the write (the connection is held for the whole transaction, and `touchPlaylist` only
 * bumps the revision it read). 412 or any error rolls everything back.
 */
function change<T>(ctx: Context, id: string, fn: (trx: Db, row: PlaylistRow) => Promise<T>): Promise<T> {
  return ctx.deps.db.transaction().execute(async (trx) => {
    const row = await getPlaylistRow(trx, id);
    checkRevision(ctx, row.revision);
    return fn(trx, row);
  });
}

async function changed(ctx: Context, id: string) {
  await contentChanged(ctx.deps, [{ kind: 'playlist', id }]);
}

async function reply(ctx: Context, id: string, status: 200 | 201 = 200) {
  const dto = await playlistDto(ctx.deps.db, id);
  return (status === 201 ? created : ok)(dto, etagOf(dto.revision));
}

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
      let q = ctx.deps.db
        .selectFrom('playlists')
        .selectAll('playlists')
        .select((eb) =>
          eb.selectFrom('playlist_items').select(eb.fn.countAll<number>().as('n')).whereRef('playlist_items.playlist_id', '=', 'playlists.id').as('item_count'),
        )
        .where(afterCursor('name', 'id', 'asc', query.cursor));
      if (query.q) q = q.where((eb) => eb(eb.fn('instr', [eb.fn('lower', ['name']), eb.val(query.q!.toLowerCase())]), '>', 0));
      const rows = await q
        .orderBy('name')
        .orderBy('id')
        .limit(query.limit + 1)
        .execute();
      const page = toPage(rows, query.limit, (r) => r.name);
      return ok({ items: page.items.map((r) => toSummary(r, Number(r.item_count ?? 0))), nextCursor: page.nextCursor });
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
      const db = ctx.deps.db;
      const id = uuidv7();
      const items = body.items ?? [];
      for (const [i, item] of items.entries()) {
        if (item.playlistId) throw badRef(`items.${i}.playlistId`, 'Add nested playlists after creating the playlist');
        await checkNewItem(db, id, item, `items.${i}`);
      }
      const t = now();
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('playlists')
          .values({
            id,
            name: body.name,
            description: body.description ?? '',
            revision: 1,
            tag_rule: body.tagRule?.tags.length ? storableJson(body.tagRule, 'tagRule') : null,
            created_by: (auth as SessionPrincipal).userId,
            created_at: t,
            updated_at: t,
          })
          .execute();
        if (items.length)
          await trx
            .insertInto('playlist_items')
            .values(items.map((item, i) => newItemRow(id, item, i)))
            .execute();
      });
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
    handler: async (ctx, { params, body }) => {
      await change(ctx, params.id, async (trx, row) => {
        const set: { name?: string; description?: string } = {};
        if (body.name !== undefined) set.name = body.name;
        if (body.description !== undefined) set.description = body.description;
        if (Object.keys(set).length) await trx.updateTable('playlists').set(set).where('id', '=', params.id).execute();
        await touchPlaylist(trx, params.id, row.revision);
      });
      await changed(ctx, params.id);
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
    description: 'Answers 409 naming the playlists, layouts, schedules and assignments that still use it (`details.usedBy`).',
    params: IdParams,
    ifMatch: true,
    responses: {
      204: { description: 'Deleted' },
      409: { description: 'conflict: in use; details.usedBy lists the users ({type, id, name})' },
      412: conflictResponses[412],
    },
    handler: async (ctx, { params }) => {
      await change(ctx, params.id, async (trx, row) => {
        const users = await playlistUsage(trx, params.id);
        if (users.length) throw inUse(`Playlist "${row.name}"`, users);
        // What is left are assignments of screens or groups deleted since.
        await trx.deleteFrom('playlist_assignments').where('playlist_id', '=', params.id).execute();
        await trx.deleteFrom('playlists').where('id', '=', params.id).where('revision', '=', row.revision).execute();
      });
      await changed(ctx, params.id);
      return noContent();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/playlists/{id}/items',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Add an item (an asset, a nested playlist; widgets later)',
    description:
      'Nesting a playlist that contains this one (directly or through others) is 409. Without `durationMs` a video or audio plays its own length, a website 30 s, anything else 10 s. An item nesting a playlist takes no `durationMs` (400): it plays the nested items for their own durations; its `transition` leads into the first of them.',
    params: IdParams,
    body: NewItemSchema,
    ifMatch: true,
    responses: { 201: { description: 'The item; ETag is the playlist’s new revision', data: ItemDto, ...ifMatchHeader }, ...conflictResponses },
    handler: async (ctx, { params, body }) => {
      const db = ctx.deps.db;
      const { row, position, revision } = await change(ctx, params.id, async (trx, playlist) => {
        // Checked in the write's transaction: a concurrent nesting cannot close a cycle.
        await checkNewItem(trx, params.id, body);
        const existing = await itemsOf(trx, params.id);
        if (existing.length >= MAX_ITEMS_PER_PLAYLIST) throw new ApiError('conflict', `A playlist holds at most ${MAX_ITEMS_PER_PLAYLIST} items`);
        const position = Math.min(body.position ?? existing.length, existing.length);
        const row = newItemRow(params.id, body, position);
        await trx.insertInto('playlist_items').values(row).execute();
        const order = existing.map((r) => r.id);
        order.splice(position, 0, row.id);
        await renumber(trx, order);
        return { row, position, revision: await touchPlaylist(trx, params.id, playlist.revision) };
      });
      await changed(ctx, params.id);
      const [dto] = await itemDtos(db, [{ ...row }]);
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
    handler: async (ctx, { params, body }) => {
      await change(ctx, params.id, async (trx, playlist) => {
        const have = (await itemsOf(trx, params.id)).map((r) => r.id);
        const given = new Set(body.itemIds);
        const missing = have.filter((id) => !given.has(id));
        const unknown = body.itemIds.filter((id) => !have.includes(id));
        if (given.size !== body.itemIds.length || missing.length || unknown.length) {
          throw new ApiError('validation_failed', 'itemIds must list every item of the playlist exactly once', {
            details: {
              missing,
              unknown,
              issues: [{ location: 'body', path: ['itemIds'], message: 'not a permutation of the playlist’s items', code: 'invalid_order' }],
            },
          });
        }
        await renumber(trx, body.itemIds);
        await touchPlaylist(trx, params.id, playlist.revision);
      });
      await changed(ctx, params.id);
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
    handler: async (ctx, { params, body }) => {
      await change(ctx, params.id, async (trx, playlist) => {
        const rows = await itemsOf(trx, params.id);
        const byId = new Map(rows.map((r) => [r.id, r]));
        const named = [...(body.itemIds ?? []), ...(body.items ?? []).map((i) => i.id), ...(body.delete ?? [])];
        const unknown = [...new Set(named.filter((id) => !byId.has(id)))];
        if (unknown.length) {
          throw new ApiError('validation_failed', `${unknown.length} item id(s) are not in this playlist`, {
            details: { unknown, issues: [{ location: 'body', path: ['items'], message: 'unknown item ids', code: 'invalid_reference' }] },
          });
        }
        // Apply in memory first to check every result before writing anything.
        const changes = new Map<string, ReturnType<typeof itemChanges>>();
        for (const id of body.itemIds ?? []) changes.set(id, { ...itemChanges(body.set ?? {}) });
        for (const { id, ...patch } of body.items ?? []) changes.set(id, { ...(changes.get(id) ?? {}), ...itemChanges(patch) });
        const deleted = new Set(body.delete ?? []);
        const live = [...changes].filter(([id]) => !deleted.has(id));
        assertNoNestedDuration(live.filter(([id, set]) => byId.get(id)!.child_playlist_id && set.duration_ms != null).map(([id]) => id));
        for (const [id, set] of live) {
          const row = { ...byId.get(id)!, ...set };
          assertValidity(row.valid_from, row.valid_until);
        }
        const t = now();
        for (const [id, set] of changes) {
          if (deleted.has(id) || Object.keys(set).length === 0) continue;
          await trx
            .updateTable('playlist_items')
            .set({ ...set, updated_at: t })
            .where('id', '=', id)
            .execute();
        }
        if (deleted.size) {
          await trx
            .deleteFrom('playlist_items')
            .where('id', 'in', [...deleted])
            .execute();
          await renumber(
            trx,
            rows.filter((r) => !deleted.has(r.id)).map((r) => r.id),
          );
        }
        await touchPlaylist(trx, params.id, playlist.revision);
      });
      await changed(ctx, params.id);
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
    handler: async (ctx, { params, body }) => {
      const tags = [...new Set(body.tags)];
      await change(ctx, params.id, async (trx, playlist) => {
        await trx
          .updateTable('playlists')
          .set({ tag_rule: tags.length ? storableJson({ ...body, tags }, 'The tag rule') : null })
          .where('id', '=', params.id)
          .execute();
        await touchPlaylist(trx, params.id, playlist.revision);
      });
      await changed(ctx, params.id);
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
    handler: async (ctx, { params, body }) => {
      const db = ctx.deps.db;
      const { next, revision } = await change(ctx, params.id, async (trx, playlist) => {
        const row = await trx.selectFrom('playlist_items').selectAll().where('id', '=', params.itemId).where('playlist_id', '=', params.id).executeTakeFirst();
        if (!row) throw notFound('Item');
        const set = itemChanges(body);
        if (row.child_playlist_id && set.duration_ms != null) assertNoNestedDuration([row.id]);
        const next = { ...row, ...set, updated_at: now() };
        assertValidity(next.valid_from, next.valid_until);
        await trx
          .updateTable('playlist_items')
          .set({ ...set, updated_at: next.updated_at })
          .where('id', '=', row.id)
          .execute();
        return { next, revision: await touchPlaylist(trx, params.id, playlist.revision) };
      });
      await changed(ctx, params.id);
      const [dto] = await itemDtos(db, [next]);
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
    handler: async (ctx, { params }) => {
      const revision = await change(ctx, params.id, async (trx, playlist) => {
        const rows = await itemsOf(trx, params.id);
        if (!rows.some((r) => r.id === params.itemId)) throw notFound('Item');
        await trx.deleteFrom('playlist_items').where('id', '=', params.itemId).execute();
        await renumber(
          trx,
          rows.filter((r) => r.id !== params.itemId).map((r) => r.id),
        );
        return touchPlaylist(trx, params.id, playlist.revision);
      });
      await changed(ctx, params.id);
      return noContent(etagOf(revision));
    },
  }),
];
