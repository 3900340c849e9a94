import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import { readBodyLimited } from '../../platform/http/receive-file.js';
import { pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { created, defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { etagOf, revisionCheck } from './common.js';
import {
  getLayoutRow,
  LayoutContentSchema,
  layoutDto,
  LayoutDto,
  LayoutRevisionDto,
  LayoutSummaryDto,
  listLayoutRows,
  listRevisionRows,
  publishedRevision,
  toLayoutSummary,
  toRevisionDto,
} from './layouts.repo.js';
import {
  createLayout,
  deleteLayout,
  describeLayout,
  duplicateLayout,
  previewImage,
  publishLayout,
  replaceDraft,
  restoreRevision,
  storeUploadedPreview,
} from './layouts.service.js';

const TAGS = ['Layouts'];
const IdParams = z.object({ id: uuidParam });
const etagHeader = { headers: { ETag: { description: 'The layout’s edit revision; send it back in If-Match' } } };
const stale = { 412: { description: 'version_conflict: If-Match named a stale revision' } };
export const MAX_PREVIEW_BYTES = 10 * 1024 * 1024;

async function reply(ctx: Context, id: string, status: 200 | 201 = 200) {
  const dto = await layoutDto(ctx.deps.db, id);
  return (status === 201 ? created : ok)(dto, etagOf(dto.revision));
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
      const rows = await listLayoutRows(ctx.deps.db, query);
      const page = toPage(rows, query.limit, (r) => r.name);
      return ok({ items: page.items.map((r) => toLayoutSummary(r, r.published)), nextCursor: page.nextCursor });
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
      const id = await createLayout(ctx.deps.db, body, (auth as SessionPrincipal).userId);
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
      await describeLayout(ctx.deps, params.id, body, revisionCheck(ctx));
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
    responses: {
      204: { description: 'Deleted' },
      403: { description: 'forbidden: approvals are on and the layout is published; deleting it needs the publisher role or above' },
      409: { description: 'conflict: in use' },
      ...stale,
    },
    handler: async (ctx, { params, auth }) => {
      await deleteLayout(ctx.deps, params.id, revisionCheck(ctx), (auth as SessionPrincipal).role);
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
      await replaceDraft(ctx.deps.db, params.id, body, revisionCheck(ctx));
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
    responses: {
      200: { description: 'The layout, now published', data: LayoutDto, ...etagHeader },
      409: { description: 'conflict: approvals are required (submit it for approval instead), or the draft refers to what no longer exists' },
      ...stale,
    },
    handler: async (ctx, { params, body, auth }) => {
      await publishLayout(ctx.deps, params.id, body.note, (auth as SessionPrincipal).userId, revisionCheck(ctx));
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
      const id = await duplicateLayout(ctx.deps.db, params.id, body.name, (auth as SessionPrincipal).userId);
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
      const rows = await listRevisionRows(ctx.deps.db, params.id, query.cursor, query.limit);
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
      await restoreRevision(ctx.deps.db, params.id, params.revisionId, revisionCheck(ctx));
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
      const image = await previewImage(ctx.deps, params.id, query.source);
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
      const bytes = await readBodyLimited(ctx, MAX_PREVIEW_BYTES);
      const updated = await storeUploadedPreview(ctx.deps, row, bytes);
      return ok(toLayoutSummary(updated, await publishedRevision(ctx.deps.db, updated)));
    },
  }),
];
