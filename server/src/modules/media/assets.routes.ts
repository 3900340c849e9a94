import type { Context } from 'koa';
import { sql } from 'kysely';
import { z } from 'zod';
import { roleAtLeast, type SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError, invalidReference, notFound } from '../../platform/http/errors.js';
import { frameBlockers, OutboundError, safeFetch } from '../../platform/http/outbound.js';
import { fetchPolicy } from './limits.js';
import { afterCursor, pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { created, defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { sendFile } from '../../platform/http/send-file.js';
import type { AssetsTable, AssetVariantsTable } from '../../platform/db/schema.js';
import { JobQueue } from '../../platform/jobs/queue.js';
import { storableJson } from '../../platform/db/json.js';
import { fireAssetChange, findAssetUsages } from './hooks.js';
import {
  Asset,
  ASSET_KINDS,
  ASSET_STATES,
  assetView,
  assetViews,
  ensureTags,
  getAsset,
  listVariants,
  newId,
  nowIso,
  tagAssets,
  unknownAssets,
  type WebsiteSettings,
} from './repo.js';
import { PROCESS_JOB } from './service.js';
import { normaliseWebsiteUrl, WEBSITE_THUMBNAIL_JOB } from './website-thumbnail.js';

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

async function mustGet(ctx: Context, id: string): Promise<AssetsTable> {
  const row = await getAsset(ctx.deps.db, id);
  if (!row) throw notFound('Asset');
  return row;
}

async function viewOf(ctx: Context, id: string) {
  return (await assetView(ctx.deps.db, id))!;
}

async function checkFolder(ctx: Context, folderId: string | null | undefined): Promise<void> {
  if (!folderId) return;
  const f = await ctx.deps.db.selectFrom('content_folders').select('id').where('id', '=', folderId).executeTakeFirst();
  if (!f) throw invalidReference('folderId names no folder', { path: ['folderId'], message: 'no such folder' });
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

/** A web address; typed without a scheme (`example.com/menu`) it becomes https://. */
const WebsiteUrl = z
  .string()
  .max(2048)
  .transform(normaliseWebsiteUrl)
  .pipe(z.url({ protocol: /^https?$/, error: 'a web address (http:// or https://; example.com/menu is read as https://example.com/menu)' }).max(2048))
  .describe('http(s) URL; without a scheme https:// is added');

const WebsiteInput = z.object({
  url: WebsiteUrl,
  refreshIntervalSec: z
    .number()
    .int()
    .min(10)
    .max(7 * 86_400)
    .nullable()
    .optional(),
  zoom: z.number().min(0.25).max(5).optional(),
  viewport: z
    .object({ width: z.number().int().min(100).max(7680), height: z.number().int().min(100).max(7680) })
    .nullable()
    .optional(),
  injectionEnabled: z.boolean().optional(),
  css: z.string().max(100_000).nullable().optional(),
  js: z.string().max(100_000).nullable().optional(),
});

const Diagnostics = z
  .object({
    url: z.string(),
    finalUrl: z.string().nullable(),
    reachable: z.boolean(),
    status: z.number().int().nullable(),
    elapsedMs: z.number().int(),
    redirects: z.array(z.object({ url: z.string(), status: z.number().int(), location: z.string().optional() })),
    tls: z.object({ protocol: z.string().nullable(), authorized: z.boolean(), error: z.string().nullable() }).nullable(),
    frameable: z.boolean().nullable(),
    frameBlockers: z.array(z.string()),
    headers: z.object({ xFrameOptions: z.string().nullable(), contentSecurityPolicy: z.string().nullable(), contentType: z.string().nullable() }),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
  })
  .meta({ id: 'WebsiteDiagnostics' });

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
    handler: async (ctx, { query }) => {
      let q = ctx.deps.db.selectFrom('assets').selectAll('assets');
      if (query.kind) q = q.where('kind', '=', query.kind);
      if (query.state) q = q.where('state', '=', query.state);
      const archived = query.archived === 'true' ? 'only' : query.archived === 'false' ? 'exclude' : query.archived;
      if (!query.state && archived === 'exclude') q = q.where('state', '!=', 'archived');
      if (archived === 'only') q = q.where('state', '=', 'archived');
      if (query.folderId === 'none') q = q.where('folder_id', 'is', null);
      else if (query.folderId) q = q.where('folder_id', '=', query.folderId);
      if (query.collectionId) {
        const cid = query.collectionId;
        q = q.where('id', 'in', (eb) => eb.selectFrom('asset_collections').select('asset_id').where('collection_id', '=', cid));
      }
      if (query.tag) {
        const tag = query.tag.toLowerCase();
        q = q.where('id', 'in', (eb) =>
          eb
            .selectFrom('asset_tags')
            .innerJoin('content_tags', 'content_tags.id', 'asset_tags.tag_id')
            .select('asset_tags.asset_id')
            .where(sql<string>`lower(content_tags.name)`, '=', tag),
        );
      }
      if (query.q) q = q.where(sql<boolean>`instr(lower(assets.name), ${query.q.toLowerCase()}) > 0`);
      const rows = await q
        .where(afterCursor('assets.created_at', 'assets.id', 'desc', query.cursor))
        .orderBy('assets.created_at', 'desc')
        .orderBy('assets.id', 'desc')
        .limit(query.limit + 1)
        .execute();
      const page = toPage(rows, query.limit, (r) => r.created_at);
      return ok({ items: await assetViews(ctx.deps.db, page.items), nextCursor: page.nextCursor });
    },
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
      const now = nowIso();
      const changed: string[] = [];
      await ctx.deps.db.transaction().execute(async (trx) => {
        const rows = await trx.selectFrom('assets').select(['id', 'state']).where('id', 'in', ids).execute();
        if (rows.length !== ids.length) throw unknownAssets(body.ids, rows, 'ids');
        for (const r of rows) {
          if (r.state === 'archived') continue;
          await trx
            .updateTable('assets')
            .set({ state: 'archived', state_before_archive: r.state, archived_at: now, updated_at: now })
            .where('id', '=', r.id)
            .execute();
          changed.push(r.id);
        }
      });
      await fireAssetChange(ctx.deps, { change: 'archived', assetIds: changed });
      const rows = await ctx.deps.db.selectFrom('assets').selectAll().where('id', 'in', ids).orderBy('created_at', 'desc').execute();
      return ok({ items: await assetViews(ctx.deps.db, rows) });
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
      const now = nowIso();
      const changed: string[] = [];
      await ctx.deps.db.transaction().execute(async (trx) => {
        const rows = await trx.selectFrom('assets').select(['id', 'state', 'state_before_archive']).where('id', 'in', ids).execute();
        if (rows.length !== ids.length) throw unknownAssets(body.ids, rows, 'ids');
        for (const r of rows) {
          if (r.state !== 'archived') continue;
          await trx
            .updateTable('assets')
            .set({ state: r.state_before_archive ?? 'ready', state_before_archive: null, archived_at: null, updated_at: now })
            .where('id', '=', r.id)
            .execute();
          changed.push(r.id);
        }
      });
      await fireAssetChange(ctx.deps, { change: 'restored', assetIds: changed });
      const rows = await ctx.deps.db.selectFrom('assets').selectAll().where('id', 'in', ids).orderBy('created_at', 'desc').execute();
      return ok({ items: await assetViews(ctx.deps.db, rows) });
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
      await mustGet(ctx, params.id);
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
      await mustGet(ctx, params.id);
      await checkFolder(ctx, body.folderId);
      await ctx.deps.db.transaction().execute(async (trx) => {
        const set: Partial<AssetsTable> = { updated_at: nowIso() };
        if (body.name !== undefined) set.name = body.name;
        if (body.folderId !== undefined) set.folder_id = body.folderId;
        await trx.updateTable('assets').set(set).where('id', '=', params.id).execute();
        if (body.tags) {
          await trx.deleteFrom('asset_tags').where('asset_id', '=', params.id).execute();
          await tagAssets(trx, [params.id], await ensureTags(trx, body.tags));
        }
      });
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
      const asset = await mustGet(ctx, params.id);
      const force = query.force === 'true';
      const role = (auth as SessionPrincipal).role;
      if (force && !roleAtLeast(role, 'admin')) throw new ApiError('forbidden', 'Only admins and owners may delete an asset that is in use');
      const usages = await findAssetUsages(ctx.deps.db, [asset.id]);
      if (usages.length > 0 && !force) {
        const usedBy = [...new Map(usages.map((u) => [`${u.type}:${u.id}`, { type: u.type, id: u.id, name: u.name }])).values()];
        const names = usedBy.slice(0, 5).map((u) => `${u.type} "${u.name}"`);
        throw new ApiError(
          'conflict',
          `"${asset.name}" is used by ${names.join(', ')}${usedBy.length > 5 ? ` and ${usedBy.length - 5} more` : ''}; remove it there first (or force as an admin)`,
          { details: { usedBy, usages } },
        );
      }
      const variants = await listVariants(ctx.deps.db, asset.id);
      await ctx.deps.db.deleteFrom('assets').where('id', '=', asset.id).execute();
      await ctx.media.removeOrphans([asset.sha256, ...variants.map((v) => v.sha256)]);
      await fireAssetChange(ctx.deps, { change: 'deleted', assetIds: [asset.id] });
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
      const asset = await mustGet(ctx, params.id);
      if (asset.state !== 'failed') throw new ApiError('conflict', `Only a failed asset can be retried (this one is ${asset.state})`);
      const job = JobQueue.row(PROCESS_JOB, { assetId: asset.id });
      await ctx.deps.db.transaction().execute(async (trx) => {
        await trx
          .updateTable('assets')
          .set({ state: 'processing', failure_reason: null, progress: 0, updated_at: nowIso() })
          .where('id', '=', asset.id)
          .execute();
        await trx.insertInto('jobs').values(job).execute();
      });
      ctx.media.jobs.kick();
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
      const asset = await mustGet(ctx, params.id);
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
      const asset = await mustGet(ctx, params.id);
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
  defineRoute({
    method: 'POST',
    path: '/api/v1/assets/websites',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Add a website as an asset (shown in a frame by players)',
    description:
      'An address without a scheme gets https:// (`example.com/menu`). Its thumbnail (the page’s preview picture, else a card with its icon and title, fetched through the outbound guard) is made in the background; the asset is ready at once.',
    body: WebsiteInput.extend({
      name: z.string().trim().min(1).max(200).optional(),
      folderId: uuidParam.optional(),
      tags: z.array(z.string().trim().min(1).max(64)).max(50).optional(),
    }),
    responses: { 201: { description: 'The website asset', data: Asset } },
    handler: async (ctx, { body, auth }) => {
      await checkFolder(ctx, body.folderId);
      const website: WebsiteSettings = {
        url: body.url,
        refreshIntervalSec: body.refreshIntervalSec ?? null,
        zoom: body.zoom ?? 1,
        viewport: body.viewport ?? null,
        injectionEnabled: body.injectionEnabled ?? false,
        css: body.css ?? null,
        js: body.js ?? null,
      };
      const id = newId();
      const now = nowIso();
      await ctx.deps.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('assets')
          .values({
            id,
            kind: 'website',
            state: 'ready',
            state_before_archive: null,
            name: body.name ?? new URL(body.url).host,
            sha256: null,
            size_bytes: null,
            content_type: 'text/html',
            original_filename: null,
            width: website.viewport?.width ?? null,
            height: website.viewport?.height ?? null,
            duration_ms: null,
            page_count: null,
            folder_id: body.folderId ?? null,
            failure_reason: null,
            progress: null,
            metadata: '{}',
            website: storableJson(website, 'website'),
            created_by: (auth as SessionPrincipal).userId,
            created_at: now,
            updated_at: now,
            archived_at: null,
          })
          .execute();
        if (body.tags?.length) await tagAssets(trx, [id], await ensureTags(trx, body.tags));
        await trx
          .insertInto('jobs')
          .values(JobQueue.row(WEBSITE_THUMBNAIL_JOB, { assetId: id }, { maxAttempts: 2 }))
          .execute();
      });
      ctx.media.jobs.kick();
      await fireAssetChange(ctx.deps, { change: 'ready', assetIds: [id] });
      return created(await viewOf(ctx, id));
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/assets/{id}/website',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Change a website asset: URL, refresh interval, zoom, viewport, CSS/JS injection',
    params: idParams,
    body: WebsiteInput.partial(),
    responses: { 409: { description: 'conflict: the asset is not a website' }, 200: { description: 'The website asset', data: Asset } },
    handler: async (ctx, { params, body }) => {
      const asset = await mustGet(ctx, params.id);
      if (asset.kind !== 'website' || !asset.website) throw new ApiError('conflict', `This asset is a ${asset.kind}, not a website`);
      const current = JSON.parse(asset.website) as WebsiteSettings;
      const next: WebsiteSettings = {
        url: body.url ?? current.url,
        refreshIntervalSec: body.refreshIntervalSec !== undefined ? body.refreshIntervalSec : current.refreshIntervalSec,
        zoom: body.zoom ?? current.zoom,
        viewport: body.viewport !== undefined ? body.viewport : current.viewport,
        injectionEnabled: body.injectionEnabled ?? current.injectionEnabled,
        css: body.css !== undefined ? body.css : current.css,
        js: body.js !== undefined ? body.js : current.js,
      };
      await ctx.deps.db
        .updateTable('assets')
        .set({ website: storableJson(next, 'website'), width: next.viewport?.width ?? null, height: next.viewport?.height ?? null, updated_at: nowIso() })
        .where('id', '=', asset.id)
        .execute();
      if (next.url !== current.url) await ctx.media.jobs.enqueue(WEBSITE_THUMBNAIL_JOB, { assetId: asset.id }, { maxAttempts: 2 });
      await fireAssetChange(ctx.deps, { change: 'replaced', assetIds: [asset.id] });
      return ok(await viewOf(ctx, asset.id));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/assets/{id}/website/diagnostics',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Fetch the website now: reachability, status, TLS, redirects, and headers that stop it showing in a frame',
    params: idParams,
    responses: { 409: { description: 'conflict: the asset is not a website' }, 200: { description: 'What the server saw', data: Diagnostics } },
    handler: async (ctx, { params }) => {
      const asset = await mustGet(ctx, params.id);
      if (asset.kind !== 'website' || !asset.website) throw new ApiError('conflict', `This asset is a ${asset.kind}, not a website`);
      const { url } = JSON.parse(asset.website) as WebsiteSettings;
      const started = Date.now();
      const policy = await fetchPolicy(ctx.deps);
      try {
        const res = await safeFetch(url, policy, { method: 'GET', timeoutMs: 10_000, maxBytes: 256 * 1024 });
        const blockers = frameBlockers(res.headers);
        const header = (h: string) => {
          const v = res.headers[h];
          return v === undefined ? null : ([] as string[]).concat(v).join(', ');
        };
        return ok({
          url,
          finalUrl: res.url,
          reachable: true,
          status: res.status,
          elapsedMs: Date.now() - started,
          redirects: res.redirects,
          tls: res.tls,
          frameable: blockers.length === 0,
          frameBlockers: blockers,
          headers: { xFrameOptions: header('x-frame-options'), contentSecurityPolicy: header('content-security-policy'), contentType: header('content-type') },
          error: res.status >= 400 ? { code: 'http_status', message: `The site answered ${res.status}` } : null,
        });
      } catch (err) {
        if (!(err instanceof OutboundError)) throw err;
        return ok({
          url,
          finalUrl: null,
          reachable: false,
          status: null,
          elapsedMs: Date.now() - started,
          redirects: err.redirects,
          tls: err.code === 'tls_error' ? { protocol: null, authorized: false, error: err.message } : null,
          frameable: null,
          frameBlockers: [],
          headers: { xFrameOptions: null, contentSecurityPolicy: null, contentType: null },
          error: { code: err.code, message: err.message },
        });
      }
    },
  }),
];

export type { AssetVariantsTable };
