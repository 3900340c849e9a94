import type { Context } from 'koa';
import { sql } from 'kysely';
import { z } from 'zod';
import { ApiError, invalidReference, notFound, unknownIdsIn } from '../../platform/http/errors.js';
import { afterCursor, pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { created, defineRoute, noContent, ok, uuidParam, uuidParam as uuidLower } from '../../platform/http/route.js';
import type { ContentCollectionsTable, ContentFoldersTable, ContentTagsTable } from '../../platform/db/schema.js';
import { fireAssetChange } from './hooks.js';
import { Asset, assetViews, ensureTags, newId, nowIso, tagAssets, unknownAssets, type DbOrTrx } from './repo.js';

const TAGS = ['Content organisation'];

const Folder = z
  .object({
    id: z.string(),
    name: z.string(),
    parentId: z.string().nullable(),
    path: z.array(z.string()),
    assetCount: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'ContentFolder' });
const Collection = z
  .object({ id: z.string(), name: z.string(), description: z.string().nullable(), assetCount: z.number().int(), createdAt: z.string(), updatedAt: z.string() })
  .meta({ id: 'ContentCollection' });
const Tag = z
  .object({ id: z.string(), name: z.string(), color: z.string().nullable(), assetCount: z.number().int(), createdAt: z.string() })
  .meta({ id: 'ContentTag' });

const folderName = z
  .string()
  .trim()
  .min(1)
  .max(120)
  .refine((s) => !/[\u0000-\u001f/\\]/.test(s), 'no slashes or control characters');

async function folderViews(db: DbOrTrx, rows: readonly ContentFoldersTable[]) {
  const all = await db.selectFrom('content_folders').select(['id', 'name', 'parent_id']).execute();
  const byId = new Map(all.map((f) => [f.id, f]));
  const counts = new Map(
    (
      await db
        .selectFrom('assets')
        .select(['folder_id', (eb) => eb.fn.countAll<number>().as('n')])
        .where('state', '!=', 'archived')
        .where('folder_id', 'is not', null)
        .groupBy('folder_id')
        .execute()
    ).map((r) => [r.folder_id, Number(r.n)]),
  );
  return rows.map((f) => {
    const path: string[] = [];
    let cur = f.parent_id ? byId.get(f.parent_id) : undefined;
    for (let i = 0; cur && i < 64; i++) {
      path.unshift(cur.name);
      cur = cur.parent_id ? byId.get(cur.parent_id) : undefined;
    }
    return { id: f.id, name: f.name, parentId: f.parent_id, path, assetCount: counts.get(f.id) ?? 0, createdAt: f.created_at, updatedAt: f.updated_at };
  });
}

async function collectionView(db: DbOrTrx, rows: readonly ContentCollectionsTable[]) {
  const counts = new Map(
    (
      await db
        .selectFrom('asset_collections')
        .select(['collection_id', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('collection_id')
        .execute()
    ).map((r) => [r.collection_id, Number(r.n)]),
  );
  return rows.map((c) => ({
    id: c.id,
    name: c.name,
    description: c.description,
    assetCount: counts.get(c.id) ?? 0,
    createdAt: c.created_at,
    updatedAt: c.updated_at,
  }));
}

async function tagView(db: DbOrTrx, rows: readonly ContentTagsTable[]) {
  const counts = new Map(
    (
      await db
        .selectFrom('asset_tags')
        .select(['tag_id', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('tag_id')
        .execute()
    ).map((r) => [r.tag_id, Number(r.n)]),
  );
  return rows.map((t) => ({ id: t.id, name: t.name, color: t.color, assetCount: counts.get(t.id) ?? 0, createdAt: t.created_at }));
}

/**
 * The folder `id` names: a path id that names nothing is 404; a body field (`field`, e.g.
 * parentId) that names nothing is the client's invalid input, 400 naming that field.
 */
async function mustFolder(ctx: Context, id: string, field: string | null) {
  const f = await ctx.deps.db.selectFrom('content_folders').selectAll().where('id', '=', id).executeTakeFirst();
  if (!f) {
    if (field === null) throw notFound('Folder');
    throw invalidReference(`${field} names no folder`, { path: [field], message: 'no such folder' });
  }
  return f;
}

/** True when `candidate` is `folderId` or one of its descendants (moving there would make a cycle). */
async function isWithin(db: DbOrTrx, candidate: string, folderId: string): Promise<boolean> {
  let cur: string | null = candidate;
  for (let i = 0; cur && i < 256; i++) {
    if (cur === folderId) return true;
    const row: { parent_id: string | null } | undefined = await db.selectFrom('content_folders').select('parent_id').where('id', '=', cur).executeTakeFirst();
    cur = row?.parent_id ?? null;
  }
  return false;
}

export const organizeRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/content-folders',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'List folders by name (all, or the children of `parentId`; `none` for the top level)',
    query: pageQuery.extend({ parentId: z.union([uuidLower, z.literal('none')]).optional() }),
    responses: { 200: { description: 'Folders', data: pageOf(Folder) } },
    handler: async (ctx, { query }) => {
      let q = ctx.deps.db.selectFrom('content_folders').selectAll();
      if (query.parentId === 'none') q = q.where('parent_id', 'is', null);
      else if (query.parentId) q = q.where('parent_id', '=', query.parentId);
      const rows = await q
        .where(afterCursor('name', 'id', 'asc', query.cursor))
        .orderBy('name')
        .orderBy('id')
        .limit(query.limit + 1)
        .execute();
      const page = toPage(rows, query.limit, (r) => r.name);
      return ok({ items: await folderViews(ctx.deps.db, page.items), nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/content-folders',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Make a folder (optionally inside another)',
    body: z.object({ name: folderName, parentId: uuidLower.nullable().optional() }),
    responses: { 409: { description: 'conflict: a folder of that name exists there' }, 201: { description: 'The folder', data: Folder } },
    handler: async (ctx, { body }) => {
      if (body.parentId) await mustFolder(ctx, body.parentId, 'parentId');
      const now = nowIso();
      const row: ContentFoldersTable = { id: newId(), name: body.name, parent_id: body.parentId ?? null, created_at: now, updated_at: now };
      // A taken name (case-insensitive, per parent) is refused by the unique index: 409 (platform/db/constraints.ts).
      await ctx.deps.db.insertInto('content_folders').values(row).execute();
      return created((await folderViews(ctx.deps.db, [row]))[0]);
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/content-folders/{id}',
    auth: 'session',
    minRole: 'editor',
    extension: true,
    tags: TAGS,
    summary: 'Rename a folder or move it (parentId; null for the top level)',
    params: z.object({ id: uuidParam }),
    body: z.object({ name: folderName.optional(), parentId: uuidLower.nullable().optional() }),
    responses: {
      409: { description: 'conflict: a folder of that name exists there, or the move would put a folder inside itself' },
      200: { description: 'The folder', data: Folder },
    },
    handler: async (ctx, { params, body }) => {
      const folder = await mustFolder(ctx, params.id, null);
      if (body.parentId) {
        await mustFolder(ctx, body.parentId, 'parentId');
        if (await isWithin(ctx.deps.db, body.parentId, folder.id)) throw new ApiError('conflict', 'A folder cannot move into itself or one of its subfolders');
      }
      await ctx.deps.db
        .updateTable('content_folders')
        .set({ name: body.name ?? folder.name, parent_id: body.parentId !== undefined ? body.parentId : folder.parent_id, updated_at: nowIso() })
        .where('id', '=', folder.id)
        .execute();
      const row = await mustFolder(ctx, folder.id, null);
      return ok((await folderViews(ctx.deps.db, [row]))[0]);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/content-folders/{id}',
    auth: 'session',
    minRole: 'editor',
    extension: true,
    tags: TAGS,
    summary: 'Delete an empty folder (no subfolders, no assets)',
    params: z.object({ id: uuidParam }),
    responses: { 409: { description: 'conflict: the folder is not empty' }, 204: { description: 'Deleted' } },
    handler: async (ctx, { params }) => {
      const folder = await mustFolder(ctx, params.id, null);
      const db = ctx.deps.db;
      const child = await db.selectFrom('content_folders').select('id').where('parent_id', '=', folder.id).executeTakeFirst();
      const asset = await db.selectFrom('assets').select('id').where('folder_id', '=', folder.id).executeTakeFirst();
      if (child || asset) throw new ApiError('conflict', 'The folder is not empty; move or delete what it holds first');
      await db.deleteFrom('content_folders').where('id', '=', folder.id).execute();
      return noContent();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/content-collections',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'List collections by name',
    query: pageQuery,
    responses: { 200: { description: 'Collections', data: pageOf(Collection) } },
    handler: async (ctx, { query }) => {
      const rows = await ctx.deps.db
        .selectFrom('content_collections')
        .selectAll()
        .where(afterCursor('name', 'id', 'asc', query.cursor))
        .orderBy('name')
        .orderBy('id')
        .limit(query.limit + 1)
        .execute();
      const page = toPage(rows, query.limit, (r) => r.name);
      return ok({ items: await collectionView(ctx.deps.db, page.items), nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/content-collections',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Make a collection (a hand-picked set of assets, across folders)',
    body: z.object({ name: z.string().trim().min(1).max(120), description: z.string().trim().max(2000).nullable().optional() }),
    responses: { 409: { description: 'conflict: a collection of that name exists' }, 201: { description: 'The collection', data: Collection } },
    handler: async (ctx, { body }) => {
      const now = nowIso();
      const row: ContentCollectionsTable = { id: newId(), name: body.name, description: body.description ?? null, created_at: now, updated_at: now };
      await ctx.deps.db.insertInto('content_collections').values(row).execute();
      return created((await collectionView(ctx.deps.db, [row]))[0]);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/content-tags',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'List tags by name (`q`: name contains)',
    query: pageQuery.extend({ q: z.string().trim().max(64).optional() }),
    responses: { 200: { description: 'Tags', data: pageOf(Tag) } },
    handler: async (ctx, { query }) => {
      let q = ctx.deps.db.selectFrom('content_tags').selectAll();
      if (query.q) q = q.where(sql<boolean>`instr(lower(name), ${query.q.toLowerCase()}) > 0`);
      const rows = await q
        .where(afterCursor('name', 'id', 'asc', query.cursor))
        .orderBy('name')
        .orderBy('id')
        .limit(query.limit + 1)
        .execute();
      const page = toPage(rows, query.limit, (r) => r.name);
      return ok({ items: await tagView(ctx.deps.db, page.items), nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/content-tags',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Make a tag',
    body: z.object({
      name: z.string().trim().min(1).max(64),
      color: z
        .string()
        .regex(/^#[0-9a-fA-F]{6}$/)
        .nullable()
        .optional(),
    }),
    responses: { 409: { description: 'conflict: a tag of that name exists' }, 201: { description: 'The tag', data: Tag } },
    handler: async (ctx, { body }) => {
      const row: ContentTagsTable = { id: newId(), name: body.name, color: body.color ?? null, created_at: nowIso() };
      await ctx.deps.db.insertInto('content_tags').values(row).execute();
      return created((await tagView(ctx.deps.db, [row]))[0]);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/assets/bulk-organize',
    auth: 'session',
    minRole: 'editor',
    tags: ['Assets'],
    summary: 'Move, tag, untag, add to or remove from collections, many assets at once, all or nothing',
    body: z
      .object({
        assetIds: z.array(uuidLower).min(1).max(500),
        moveTo: z.object({ folderId: uuidLower.nullable() }).optional(),
        addTags: z.array(z.string().trim().min(1).max(64)).max(50).optional(),
        removeTags: z.array(z.string().trim().min(1).max(64)).max(50).optional(),
        addToCollections: z.array(uuidLower).max(50).optional(),
        removeFromCollections: z.array(uuidLower).max(50).optional(),
      })
      .refine(
        (b) => b.moveTo || b.addTags?.length || b.removeTags?.length || b.addToCollections?.length || b.removeFromCollections?.length,
        'name at least one operation',
      ),
    responses: {
      400: { description: 'validation_failed: an assetId, the folder or a collection names nothing' },
      200: { description: 'The assets after the change', data: z.object({ items: z.array(Asset) }) },
    },
    handler: async (ctx, { body }) => {
      const ids = [...new Set(body.assetIds)];
      const db = ctx.deps.db;
      await db.transaction().execute(async (trx) => {
        const found = await trx.selectFrom('assets').select('id').where('id', 'in', ids).execute();
        if (found.length !== ids.length) throw unknownAssets(body.assetIds, found, 'assetIds');
        const now = nowIso();
        if (body.moveTo) {
          const folderId = body.moveTo.folderId;
          if (folderId && !(await trx.selectFrom('content_folders').select('id').where('id', '=', folderId).executeTakeFirst())) {
            throw invalidReference('moveTo.folderId names no folder', { path: ['moveTo', 'folderId'], message: 'no such folder' });
          }
          await trx.updateTable('assets').set({ folder_id: folderId, updated_at: now }).where('id', 'in', ids).execute();
        }
        if (body.addTags?.length) await tagAssets(trx, ids, await ensureTags(trx, body.addTags));
        if (body.removeTags?.length) {
          const lower = body.removeTags.map((t) => t.toLowerCase());
          const tagIds = (await trx.selectFrom('content_tags').select('id').where(sql<string>`lower(name)`, 'in', lower).execute()).map((t) => t.id);
          if (tagIds.length) await trx.deleteFrom('asset_tags').where('asset_id', 'in', ids).where('tag_id', 'in', tagIds).execute();
        }
        for (const list of [body.addToCollections, body.removeFromCollections]) {
          if (!list?.length) continue;
          const existing = new Set((await trx.selectFrom('content_collections').select('id').where('id', 'in', list).execute()).map((r) => r.id));
          const refs = unknownIdsIn(list === body.addToCollections ? 'addToCollections' : 'removeFromCollections', list, existing, 'no such collection');
          if (refs.length) throw invalidReference('A collection does not exist', refs);
        }
        for (const cid of body.addToCollections ?? []) {
          for (const aid of ids)
            await trx
              .insertInto('asset_collections')
              .values({ asset_id: aid, collection_id: cid, added_at: now })
              .onConflict((oc) => oc.doNothing())
              .execute();
        }
        if (body.removeFromCollections?.length)
          await trx.deleteFrom('asset_collections').where('asset_id', 'in', ids).where('collection_id', 'in', body.removeFromCollections).execute();
        await trx.updateTable('assets').set({ updated_at: now }).where('id', 'in', ids).execute();
      });
      await fireAssetChange(ctx.deps, { change: 'updated', assetIds: ids });
      const rows = await db.selectFrom('assets').selectAll().where('id', 'in', ids).orderBy('created_at', 'desc').execute();
      return ok({ items: await assetViews(db, rows) });
    },
  }),
];
