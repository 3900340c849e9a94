import type { Context } from 'koa';
import { z } from 'zod';
import type { AssetsTable } from '../../platform/db/schema.js';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import { pageOf, pageQuery } from '../../platform/http/pagination.js';
import { defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { sendFile } from '../../platform/http/send-file.js';
import { deleteAsset, retryAsset } from './assets.service.js';
import { fireAssetChange } from './hooks.js';
import { checkFolderRef } from './organize.repo.js';
import { archiveAssets, assetPage, assetView, assetViewsOf, mustGetAsset, listVariants, restoreAssets, updateAsset } from './media.repo.js';
import { Asset, ASSET_KINDS, ASSET_STATES } from './media.schemas.js';

const TAGS = ['Assets'];
const idParams = z.object({ id: uuidParam });
const idList = z.array(uuidParam).min(1).max(500);

/** Types shown inline to people; anything else downloads as an attachment. */
const INLINE_SAFE = new Set([
  'image/jpeg',
  'image/png',
  'image/gif',
  'image/webp',
  'image/avif',
  'video/mp4',
  'video/webm',
  'audio/mpeg',
  'audio/mp4',
  'audio/aac',
  'audio/ogg',
  'audio/wav',
  'audio/flac',
]);
/** Served to people: SVG (and anything active) can run nothing and load nothing. */
export const MEDIA_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; media-src 'self'; sandbox";

async function viewOf(ctx: Context, id: string) {
  return (await assetView(ctx.deps.db, id))!;
}

async function serveVariant(
  ctx: Context,
  asset: AssetsTable,
  v: { sha256: string; content_type: string },
  disposition: 'inline' | 'attachment',
  cacheControl: string,
) {
  const inline = disposition === 'inline' && INLINE_SAFE.has(v.content_type);
  const ext =
    v.content_type
      .split('/')[1]
      ?.replace(/^svg\+xml$/, 'svg')
      .replace(/^mpeg$/, 'mp3') ?? 'bin';
  const base = asset.name.replace(/\.[A-Za-z0-9]{1,5}$/, '');
  await sendFile(ctx, {
    path: ctx.media.store.pathOf(v.sha256),
    contentType: v.content_type,
    etag: v.sha256,
    disposition: { type: inline ? 'inline' : 'attachment', filename: `${base}.${ext}` },
    cacheControl,
    csp: MEDIA_CSP,
  });
}

const listQuery = pageQuery.extend({
  kind: z.enum(ASSET_KINDS).optional(),
  state: z.enum(ASSET_STATES).optional(),
  folderId: z.union([uuidParam, z.literal('none')]).optional(),
  collectionId: uuidParam.optional(),
  tag: z.string().trim().min(1).max(64).optional(),
  q: z.string().trim().max(200).optional(),
  archived: z.enum(['exclude', 'include', 'only', 'true', 'false']).default('exclude'),
});

const bulkResult = z.object({ items: z.array(Asset) });

export const assetRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/assets',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'List assets, newest first, with filters',
    description:
      'Filters: kind, state, folderId (a folder, or `none` for the root), collectionId, tag (name), q (name contains, case-insensitive), archived (`exclude` default, `include`, `only`).',
    query: listQuery,
    responses: { 200: { description: 'A page of assets', data: pageOf(Asset) } },
    handler: async (ctx, { query }) => ok(await assetPage(ctx.deps.db, query)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/assets/archive',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Archive assets (bulk): hidden from the library and from new content',
    body: z.object({ ids: idList }),
    responses: { 400: { description: 'validation_failed: an id names no asset' }, 200: { description: 'The archived assets', data: bulkResult } },
    handler: async (ctx, { body }) => {
      const ids = [...new Set(body.ids)];
      const changed = await archiveAssets(ctx.deps.db, ids, body.ids);
      await fireAssetChange(ctx.deps, { change: 'archived', assetIds: changed });
      return ok({ items: await assetViewsOf(ctx.deps.db, ids) });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/assets/restore',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Restore archived assets (bulk) to the state they had',
    body: z.object({ ids: idList }),
    responses: { 400: { description: 'validation_failed: an id names no asset' }, 200: { description: 'The restored assets', data: bulkResult } },
    handler: async (ctx, { body }) => {
      const ids = [...new Set(body.ids)];
      const changed = await restoreAssets(ctx.deps.db, ids, body.ids);
      await fireAssetChange(ctx.deps, { change: 'restored', assetIds: changed });
      return ok({ items: await assetViewsOf(ctx.deps.db, ids) });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/assets/{id}',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'One asset with its variants',
    params: idParams,
    responses: { 200: { description: 'The asset', data: Asset } },
    handler: async (ctx, { params }) => {
      await mustGetAsset(ctx.deps.db, params.id);
      return ok(await viewOf(ctx, params.id));
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/assets/{id}',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Rename, move to a folder, or replace the tags of an asset',
    params: idParams,
    body: z.object({
      name: z.string().trim().min(1).max(200).optional(),
      folderId: uuidParam.nullable().optional(),
      tags: z.array(z.string().trim().min(1).max(64)).max(50).optional(),
    }),
    responses: { 200: { description: 'The asset', data: Asset } },
    handler: async (ctx, { params, body }) => {
      await mustGetAsset(ctx.deps.db, params.id);
      await checkFolderRef(ctx.deps.db, body.folderId);
      await updateAsset(ctx.deps.db, params.id, body);
      await fireAssetChange(ctx.deps, { change: 'updated', assetIds: [params.id] });
      return ok(await viewOf(ctx, params.id));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/assets/{id}',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Delete an asset; refused (409, listing where) while playlists or layouts use it',
    description: '`?force=true` deletes an asset in use; only admins and owners may force. Media files go when nothing references their sha256.',
    params: idParams,
    query: z.object({ force: z.enum(['true', 'false']).default('false') }),
    responses: {
      204: { description: 'Deleted' },
      403: { description: 'forbidden: only admins and owners may force' },
      409: { description: 'conflict: in use; details.usedBy lists what uses it ({type, id, name}), details.usages the same per asset' },
    },
    handler: async (ctx, { params, query, auth }) => {
      const asset = await mustGetAsset(ctx.deps.db, params.id);
      await deleteAsset(ctx.media, asset, { force: query.force === 'true', role: (auth as SessionPrincipal).role });
      return noContent();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/assets/{id}/retry',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Process a failed asset again',
    params: idParams,
    responses: { 409: { description: 'conflict: the asset has not failed' }, 200: { description: 'The asset, processing again', data: Asset } },
    handler: async (ctx, { params }) => {
      const asset = await mustGetAsset(ctx.deps.db, params.id);
      await retryAsset(ctx.media, asset);
      return ok(await viewOf(ctx, asset.id));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/assets/{id}/thumbnail',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'The asset’s thumbnail (WebP, at most 400 px); Range, ETag, 304',
    params: idParams,
    responses: {
      416: { description: 'range_not_satisfiable: Content-Range gives the length' },
      200: { description: 'The thumbnail', content: { 'image/webp': {} } },
      206: { description: 'Part of it', content: { 'image/webp': {} } },
      304: { description: 'Not modified' },
    },
    handler: async (ctx, { params }) => {
      const asset = await mustGetAsset(ctx.deps.db, params.id);
      const v = (await listVariants(ctx.deps.db, asset.id)).find((x) => x.purpose === 'thumbnail');
      if (!v) throw new ApiError('not_found', asset.state === 'processing' ? 'The thumbnail is not ready yet' : 'This asset has no thumbnail');
      await serveVariant(ctx, asset, v, 'inline', 'private, no-cache');
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/assets/{id}/preview',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'The asset for people to look at: Range, If-Range, ETag (sha256), 304; SVG under a restrictive CSP',
    params: idParams,
    responses: {
      416: { description: 'range_not_satisfiable: Content-Range gives the length' },
      200: {
        description: 'The media: the preview variant, the player variant (video, audio, PDF page) or the original',
        content: { 'image/*': {}, 'video/*': {}, 'audio/*': {}, 'application/pdf': {} },
      },
      206: { description: 'Part of it', content: { 'image/*': {}, 'video/*': {}, 'audio/*': {}, 'application/pdf': {} } },
      304: { description: 'Not modified' },
    },
    handler: async (ctx, { params }) => {
      const asset = await mustGetAsset(ctx.deps.db, params.id);
      if (!asset.sha256 || !asset.content_type) throw new ApiError('not_found', 'This asset has no file to preview');
      const variants = await listVariants(ctx.deps.db, asset.id);
      const pick: { sha256: string; content_type: string } = variants.find((v) => v.purpose === 'preview') ??
        (asset.kind === 'video' || asset.kind === 'audio' ? variants.find((v) => v.purpose === 'player') : undefined) ??
        (asset.kind === 'pdf' ? variants.find((v) => v.purpose === 'player' && v.page === 1) : undefined) ?? {
          sha256: asset.sha256,
          content_type: asset.content_type,
        };
      await serveVariant(ctx, asset, pick, 'inline', 'private, no-cache');
    },
  }),
];
