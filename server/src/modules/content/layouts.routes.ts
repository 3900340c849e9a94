import { createHash } from 'node:crypto';
import { mkdirSync, openSync, fsyncSync, closeSync, writeSync, renameSync, readFileSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Context } from 'koa';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { afterCursor, pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { created, defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { composeLayoutPreview, normalizePreviewImage, type PreviewZone } from '../../platform/media/compose.js';
import { contentChanged } from './changes.js';
import { checkRevision, etagOf, inUse, now } from './common.js';
import {
  assertRefs,
  contentOf,
  getLayoutRow,
  LayoutContentSchema,
  layoutDto,
  LayoutDto,
  LayoutRevisionDto,
  LayoutSummaryDto,
  missingRefs,
  normalizeContent,
  publishedRevision,
  toLayoutSummary,
  toRevisionDto,
  type LayoutContent,
  type LayoutRow,
} from './layouts.repo.js';
import type { Db } from '../../platform/db/database.js';
import { storableJson } from '../../platform/db/json.js';
import { thumbnailFor } from './thumbnails.js';
import { schedulesShowing } from '../schedules/index.js';

const TAGS = ['Layouts'];
const IdParams = z.object({ id: uuidParam });
const etagHeader = { headers: { ETag: { description: 'The layout’s edit revision; send it back in If-Match' } } };
const stale = { 412: { description: 'version_conflict: If-Match named a stale revision' } };
export const MAX_PREVIEW_BYTES = 10 * 1024 * 1024;

/**
 * Runs a change of layout `id` in one transaction that reads the layout and checks
 * If-Match first, so nothing can change it between the check and the write.
 */
function change<T>(ctx: Context, id: string, fn: (trx: Db, row: LayoutRow) => Promise<T>): Promise<T> {
  return ctx.deps.db.transaction().execute(async (trx) => {
    const row = await getLayoutRow(trx, id);
    checkRevision(ctx, row.revision);
    return fn(trx, row);
  });
}

/**
 * Sets `fields` and the next edit revision, only while `row.revision` is still current
 * (412 otherwise). Call inside `change`.
 */
async function bump(trx: Db, row: LayoutRow, fields: Partial<Omit<LayoutRow, 'id' | 'revision'>>): Promise<void> {
  const done = await trx
    .updateTable('layouts')
    .set({ ...fields, revision: row.revision + 1, updated_at: fields.updated_at ?? now() })
    .where('id', '=', row.id)
    .where('revision', '=', row.revision)
    .executeTakeFirst();
  if (Number(done.numUpdatedRows) !== 1) {
    const current = await trx.selectFrom('layouts').select('revision').where('id', '=', row.id).executeTakeFirst();
    if (!current) throw notFound('Layout');
    throw new ApiError('version_conflict', `This was changed meanwhile: revision ${current.revision} is current. Reload and apply your change again.`, {
      details: { currentRevision: current.revision },
    });
  }
}

async function reply(ctx: Context, id: string, status: 200 | 201 = 200) {
  const dto = await layoutDto(ctx.deps.db, id);
  return (status === 201 ? created : ok)(dto, etagOf(dto.revision));
}

const previewDir = (ctx: Context) => path.join(ctx.deps.config.dataDir, 'layout-previews');
const previewFile = (ctx: Context, id: string) => path.join(previewDir(ctx), `${id}.png`);

/** Written to a temp file, fsynced, renamed: a crash leaves the old file or the new one. */
function writeDurably(file: string, data: Buffer): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

async function readLimited(ctx: Context, limit: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw new ApiError('payload_too_large', `The image is larger than ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new ApiError('payload_too_large', `The image is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function renderPreview(ctx: Context, content: LayoutContent): Promise<Buffer> {
  const zones: PreviewZone[] = [];
  for (const z of content.zones) {
    zones.push({
      x: z.x,
      y: z.y,
      width: z.width,
      height: z.height,
      zIndex: z.zIndex,
      name: z.name || (z.content ? z.content.type : 'empty zone'),
      fit: z.fit,
      image: await thumbnailFor(ctx.deps, z.content),
    });
  }
  const backgroundImage = content.background.assetId
    ? await thumbnailFor(ctx.deps, { type: 'asset', assetId: content.background.assetId, durationMs: null })
    : null;
  return composeLayoutPreview({ width: content.width, height: content.height, background: content.background.color, backgroundImage, zones });
}

export const layoutRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/layouts',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'List layouts by name',
    query: pageQuery.extend({ q: z.string().max(200).optional() }),
    responses: { 200: { description: 'Layouts (without content)', data: pageOf(LayoutSummaryDto) } },
    handler: async (ctx, { query }) => {
      let q = ctx.deps.db
        .selectFrom('layouts')
        .leftJoin('layout_revisions as r', 'r.id', 'layouts.published_revision_id')
        .selectAll('layouts')
        .select([
          'r.id as r_id',
          'r.number as r_number',
          'r.content as r_content',
          'r.layout_id as r_layout_id',
          'r.note as r_note',
          'r.created_by as r_created_by',
          'r.created_at as r_created_at',
        ])
        .where(afterCursor('layouts.name', 'layouts.id', 'asc', query.cursor));
      if (query.q) q = q.where((eb) => eb(eb.fn('instr', [eb.fn('lower', ['layouts.name']), eb.val(query.q!.toLowerCase())]), '>', 0));
      const rows = await q
        .orderBy('layouts.name')
        .orderBy('layouts.id')
        .limit(query.limit + 1)
        .execute();
      const page = toPage(rows, query.limit, (r) => r.name);
      return ok({
        items: page.items.map((r) =>
          toLayoutSummary(
            r,
            r.r_id
              ? {
                  id: r.r_id,
                  number: r.r_number!,
                  content: r.r_content!,
                  layout_id: r.r_layout_id!,
                  note: r.r_note!,
                  created_by: r.r_created_by,
                  created_at: r.r_created_at!,
                }
              : undefined,
          ),
        ),
        nextCursor: page.nextCursor,
      });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/layouts',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Create a layout (its first draft)',
    body: LayoutContentSchema.extend({ name: z.string().trim().min(1).max(200), description: z.string().max(2000).optional() }),
    responses: { 201: { description: 'The layout', data: LayoutDto, ...etagHeader } },
    handler: async (ctx, { body, auth }) => {
      const { name, description, ...input } = body;
      const content = normalizeContent(input);
      await assertRefs(ctx.deps.db, content);
      const id = uuidv7();
      const t = now();
      await ctx.deps.db
        .insertInto('layouts')
        .values({
          id,
          name,
          description: description ?? '',
          revision: 1,
          draft: storableJson(content, 'The layout'),
          published_revision_id: null,
          published_at: null,
          preview_sha256: null,
          preview_content_type: null,
          preview_updated_at: null,
          created_by: (auth as SessionPrincipal).userId,
          created_at: t,
          updated_at: t,
        })
        .execute();
      return reply(ctx, id, 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/layouts/{id}',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'A layout with its draft and its published content',
    params: IdParams,
    responses: { 200: { description: 'The layout', data: LayoutDto, ...etagHeader } },
    handler: async (ctx, { params }) => reply(ctx, params.id),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/layouts/{id}',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Rename or describe a layout',
    params: IdParams,
    body: z.object({ name: z.string().trim().min(1).max(200).optional(), description: z.string().max(2000).optional() }),
    ifMatch: true,
    responses: { 200: { description: 'The layout', data: LayoutDto, ...etagHeader }, ...stale },
    handler: async (ctx, { params, body }) => {
      const row = await change(ctx, params.id, async (trx, row) => {
        await bump(trx, row, { name: body.name ?? row.name, description: body.description ?? row.description });
        return row;
      });
      if (body.name !== undefined && body.name !== row.name) await contentChanged(ctx.deps, [{ kind: 'layout', id: params.id }]); // the manifest names it
      return reply(ctx, params.id);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/layouts/{id}',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Delete a layout nothing schedules, with its revisions',
    description: 'Answers 409 naming the schedules that still use it (`details.usedBy`).',
    params: IdParams,
    ifMatch: true,
    responses: { 204: { description: 'Deleted' }, 409: { description: 'conflict: in use' }, ...stale },
    handler: async (ctx, { params }) => {
      await change(ctx, params.id, async (trx, row) => {
        const schedules = await schedulesShowing(trx, 'layout', params.id);
        if (schedules.length)
          throw inUse(
            `Layout "${row.name}"`,
            schedules.map((s) => ({ type: 'schedule' as const, id: s.id, name: s.name })),
          );
        await trx.deleteFrom('layouts').where('id', '=', params.id).where('revision', '=', row.revision).execute();
      });
      rmSync(previewFile(ctx, params.id), { force: true });
      await contentChanged(ctx.deps, [{ kind: 'layout', id: params.id }]);
      return noContent();
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/layouts/{id}/draft',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Replace the draft (screens keep the published revision until the next publish)',
    params: IdParams,
    body: LayoutContentSchema,
    ifMatch: true,
    responses: { 200: { description: 'The layout', data: LayoutDto, ...etagHeader }, ...stale },
    handler: async (ctx, { params, body }) => {
      const content = normalizeContent(body);
      await change(ctx, params.id, async (trx, row) => {
        await assertRefs(trx, content);
        await bump(trx, row, { draft: storableJson(content, 'The layout') });
      });
      return reply(ctx, params.id);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/layouts/{id}/publish',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Publish the draft as a new immutable revision; screens showing the layout get it',
    params: IdParams,
    body: z.object({ note: z.string().max(500).optional() }),
    ifMatch: true,
    responses: { 200: { description: 'The layout, now published', data: LayoutDto, ...etagHeader }, ...stale },
    handler: async (ctx, { params, body, auth }) => {
      const t = now();
      // The draft published is the one read in this transaction, after the If-Match check.
      await change(ctx, params.id, async (trx, row) => {
        await assertRefs(trx, contentOf(row.draft));
        const last = await trx
          .selectFrom('layout_revisions')
          .select((eb) => eb.fn.max<number>('number').as('n'))
          .where('layout_id', '=', params.id)
          .executeTakeFirst();
        const revisionId = uuidv7();
        await trx
          .insertInto('layout_revisions')
          .values({
            id: revisionId,
            layout_id: params.id,
            number: Number(last?.n ?? 0) + 1,
            content: row.draft,
            note: body.note ?? '',
            created_by: (auth as SessionPrincipal).userId,
            created_at: t,
          })
          .execute();
        await bump(trx, row, { published_revision_id: revisionId, published_at: t, updated_at: t });
      });
      await contentChanged(ctx.deps, [{ kind: 'layout', id: params.id }]);
      return reply(ctx, params.id);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/layouts/{id}/duplicate',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Copy a layout’s draft into a new, unpublished layout',
    params: IdParams,
    body: z.object({ name: z.string().trim().min(1).max(200).optional() }),
    responses: { 201: { description: 'The copy', data: LayoutDto, ...etagHeader } },
    handler: async (ctx, { params, body, auth }) => {
      const row = await getLayoutRow(ctx.deps.db, params.id);
      const id = uuidv7();
      const t = now();
      await ctx.deps.db
        .insertInto('layouts')
        .values({
          id,
          name: body.name ?? `${row.name} (copy)`.slice(0, 200),
          description: row.description,
          revision: 1,
          draft: row.draft,
          published_revision_id: null,
          published_at: null,
          preview_sha256: null,
          preview_content_type: null,
          preview_updated_at: null,
          created_by: (auth as SessionPrincipal).userId,
          created_at: t,
          updated_at: t,
        })
        .execute();
      return reply(ctx, id, 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/layouts/{id}/revisions',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'Published revisions, newest first',
    params: IdParams,
    query: pageQuery,
    responses: { 200: { description: 'Revisions', data: pageOf(LayoutRevisionDto) } },
    handler: async (ctx, { params, query }) => {
      const row = await getLayoutRow(ctx.deps.db, params.id);
      const rows = await ctx.deps.db
        .selectFrom('layout_revisions')
        .selectAll()
        .where('layout_id', '=', params.id)
        .where(afterCursor('number', 'id', 'desc', query.cursor))
        .orderBy('number', 'desc')
        .orderBy('id', 'desc')
        .limit(query.limit + 1)
        .execute();
      const page = toPage(rows, query.limit, (r) => r.number);
      return ok({ items: page.items.map((r) => toRevisionDto(r, row.published_revision_id)), nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/layouts/{id}/revisions/{revisionId}/restore',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Bring a published revision back as the draft (publish it to put it on screens)',
    description: 'Answers 409 naming what the revision refers to that no longer exists.',
    params: z.object({ id: uuidParam, revisionId: uuidParam }),
    ifMatch: true,
    responses: {
      200: { description: 'The layout', data: LayoutDto, ...etagHeader },
      409: { description: 'conflict: the revision refers to deleted content' },
      ...stale,
    },
    handler: async (ctx, { params }) => {
      await change(ctx, params.id, async (trx, row) => {
        const rev = await trx
          .selectFrom('layout_revisions')
          .selectAll()
          .where('id', '=', params.revisionId)
          .where('layout_id', '=', params.id)
          .executeTakeFirst();
        if (!rev) throw notFound('Revision');
        const missing = await missingRefs(trx, contentOf(rev.content));
        if (missing.length)
          throw new ApiError('conflict', `Revision ${rev.number} refers to what no longer exists: ${missing.join(', ')}`, { details: { missing } });
        await bump(trx, row, { draft: rev.content });
      });
      return reply(ctx, params.id);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/layouts/{id}/preview-image',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'A PNG preview of the layout',
    description:
      '`source=auto` (default): the uploaded preview if there is one, else a rendering of the published revision, else of the draft. `draft` / `published` render that content from the zones’ thumbnails; `uploaded` answers 404 when none was uploaded.',
    params: IdParams,
    query: z.object({ source: z.enum(['auto', 'draft', 'published', 'uploaded']).default('auto') }),
    responses: {
      304: { description: 'Not modified: If-None-Match names the current image' },
      200: { description: 'The image', content: { 'image/png': {} }, headers: { ETag: { description: 'sha256 of the image' } } },
    },
    handler: async (ctx, { params, query }) => {
      const row = await getLayoutRow(ctx.deps.db, params.id);
      let image: Buffer | null = null;
      if ((query.source === 'auto' || query.source === 'uploaded') && row.preview_sha256 && existsSync(previewFile(ctx, row.id))) {
        image = readFileSync(previewFile(ctx, row.id));
      } else if (query.source === 'uploaded') {
        throw notFound('Uploaded preview');
      } else {
        const published = query.source === 'draft' ? undefined : await publishedRevision(ctx.deps.db, row);
        if (query.source === 'published' && !published) throw notFound('Published revision');
        image = await renderPreview(ctx, contentOf(published ? published.content : row.draft));
      }
      const etag = `"${createHash('sha256').update(image).digest('hex')}"`;
      ctx.set('ETag', etag);
      ctx.set('Cache-Control', 'private, no-cache');
      if (ctx.get('if-none-match') === etag) {
        ctx.status = 304;
        return;
      }
      ctx.type = 'image/png';
      ctx.body = image;
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/layouts/{id}/preview-image',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Replace the preview with an uploaded image (PNG, JPEG or WebP, at most 10 MiB)',
    description: 'The body is the image itself. It is checked, stored as PNG (at most 4096 px a side) and served by GET from then on.',
    params: IdParams,
    rawBody: { contentTypes: ['image/png', 'image/jpeg', 'image/webp'] },
    responses: {
      400: { description: 'validation_failed: the body is empty or not an image this server reads' },
      200: { description: 'The layout', data: LayoutSummaryDto },
      413: { description: 'payload_too_large' },
      415: { description: 'unsupported_media_type' },
    },
    handler: async (ctx, { params }) => {
      const row = await getLayoutRow(ctx.deps.db, params.id);
      if (!['image/png', 'image/jpeg', 'image/webp'].includes(ctx.request.type))
        throw new ApiError('unsupported_media_type', 'Send the image as image/png, image/jpeg or image/webp');
      const bytes = await readLimited(ctx, MAX_PREVIEW_BYTES);
      if (bytes.length === 0) throw new ApiError('validation_failed', 'The body is empty: send the image');
      let normalized;
      try {
        normalized = await normalizePreviewImage(bytes);
      } catch {
        throw new ApiError('validation_failed', 'The body is not an image this server can read');
      }
      writeDurably(previewFile(ctx, row.id), normalized.data);
      const t = now();
      await ctx.deps.db
        .updateTable('layouts')
        .set({
          preview_sha256: createHash('sha256').update(normalized.data).digest('hex'),
          preview_content_type: normalized.contentType,
          preview_updated_at: t,
        })
        .where('id', '=', row.id)
        .execute();
      const updated = await getLayoutRow(ctx.deps.db, row.id);
      return ok(toLayoutSummary(updated, await publishedRevision(ctx.deps.db, updated)));
    },
  }),
];
