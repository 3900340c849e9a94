import type { Context } from 'koa';
import { z } from 'zod';
import { newId, nowIso } from '../../platform/db/ids.js';
import type { ContentCollectionsTable, ContentFoldersTable, ContentTagsTable } from '../../platform/db/schema.js';
import { ApiError, invalidReference, notFound } from '../../platform/http/errors.js';
import { pageOf, pageQuery } from '../../platform/http/pagination.js';
import { created, defineRoute, noContent, ok, uuidParam, uuidParam as uuidLower } from '../../platform/http/route.js';
import { fireAssetChange } from './hooks.js';
import {
  collectionPage,
  collectionViews,
  deleteFolder,
  findFolder,
  folderHoldsAnything,
  folderPage,
  folderViews,
  insertCollection,
  insertFolder,
  insertTag,
  isWithin,
  organizeAssets,
  tagPage,
  tagViews,
  updateFolder,
} from './organize.repo.js';
import { assetViewsOf } from './media.repo.js';
import { Asset } from './media.schemas.js';

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

/**
 * The folder `id` names: a path id that names nothing is 404; a body field (`field`, e.g.
 * parentId) that names nothing is the client's invalid input, 400 naming that field.
 */
async function mustFolder(ctx: Context, id: string, field: string | null) {
  const f = await findFolder(ctx.deps.db, id);
  if (!f) {
    if (field === null) throw notFound('Folder');
    throw invalidReference(`${field} names no folder`, { path: [field], message: 'no such folder' });
  }
  return f;
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
    handler: async (ctx, { query }) => ok(await folderPage(ctx.deps.db, query)),
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
      await insertFolder(ctx.deps.db, row);
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
      await updateFolder(ctx.deps.db, folder.id, {
        name: body.name ?? folder.name,
        parent_id: body.parentId !== undefined ? body.parentId : folder.parent_id,
        updated_at: nowIso(),
      });
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
      if (await folderHoldsAnything(ctx.deps.db, folder.id)) throw new ApiError('conflict', 'The folder is not empty; move or delete what it holds first');
      await deleteFolder(ctx.deps.db, folder.id);
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
    handler: async (ctx, { query }) => ok(await collectionPage(ctx.deps.db, query)),
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
      await insertCollection(ctx.deps.db, row);
      return created((await collectionViews(ctx.deps.db, [row]))[0]);
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
    handler: async (ctx, { query }) => ok(await tagPage(ctx.deps.db, query)),
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
      await insertTag(ctx.deps.db, row);
      return created((await tagViews(ctx.deps.db, [row]))[0]);
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
      await organizeAssets(ctx.deps.db, ids, body.assetIds, body);
      await fireAssetChange(ctx.deps, { change: 'updated', assetIds: ids });
      return ok({ items: await assetViewsOf(ctx.deps.db, ids) });
    },
  }),
];
