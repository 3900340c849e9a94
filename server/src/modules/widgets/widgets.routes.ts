import type { Context } from 'koa';
import { z } from 'zod';
import type { DevicePrincipal, SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import { readBodyLimited } from '../../platform/http/receive-file.js';
import { pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { etagOf, revisionCheck } from '../../platform/http/revision.js';
import { created, defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { etagMatches } from '../../platform/http/send-file.js';
import { screenMayDownloadWidget } from './hooks.js';
import { DEFAULT_PREVIEW, MAX_PREVIEW_UPLOAD_BYTES, PREVIEW_UPLOAD_TYPES, previewEtag, previewPng, storeUploadedPreview } from './preview.js';
import { bundleById, bundleBytes, currentBundles, listWidgetRows } from './widgets.repo.js';
import { CompilePreviewDto, TAGS, WidgetBody, WidgetDto, WidgetPatch, WidgetTypeDto } from './widgets.schemas.js';
import { compileUnsaved, validateWidget } from './widgets.service.js';
import { createWidget, currentWidgetPublication, deleteWidget, dtoOf, duplicateWidget, patchWidget, widgetDto } from './widgets.edits.js';
import { widgetTypeList } from './types.js';

const IdParams = z.object({ id: uuidParam });

const withEtag = { headers: { ETag: { description: 'The widget’s revision; send it back in If-Match' } } };
const userOf = (auth: unknown) => (auth as SessionPrincipal).userId ?? null;
const noAccess = { description: 'forbidden: the caller may not read the data source the widget is bound to' };
const invalidBody = {
  description:
    'validation_failed: a field is wrong (details.issues name it), the binding names an unknown source (code invalid_reference) or a view that does not fit it, or the template does not compile (details.errors: [{message, line, column}]); nothing is stored',
};

async function reply(ctx: Context, id: string, status: 200 | 201 = 200) {
  const dto = await widgetDto(ctx.deps.db, id);
  return (status === 201 ? created : ok)(dto, etagOf(dto.revision));
}

export const widgetRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/widgets',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'List widgets by name',
    query: pageQuery.extend({ q: z.string().max(200).optional(), type: z.string().max(40).optional() }),
    responses: { 200: { description: 'Widgets', data: pageOf(WidgetDto) } },
    handler: async (ctx, { query }) => {
      const rows = await listWidgetRows(ctx.deps.db, query);
      const page = toPage(rows, query.limit, (r) => r.name);
      const bundles = await currentBundles(
        ctx.deps.db,
        page.items.map((r) => r.id),
      );
      const items = [];
      for (const r of page.items) items.push(dtoOf(r, bundles.get(r.id), r.published_at ? await currentWidgetPublication(ctx.deps.db, r.id) : null));
      return ok({ items, nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/widgets',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Create a widget (compiled at once; a template error is 400 with its line and column, nothing stored)',
    body: WidgetBody,
    responses: { 201: { description: 'The widget, with its first bundle', data: WidgetDto, ...withEtag }, 400: invalidBody, 403: noAccess },
    handler: async (ctx, { body, auth }) => reply(ctx, await createWidget(ctx.deps, body, auth), 201),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/widgets/compile-preview',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Compile an unsaved widget with its live data (the bound view’s rows, or none): the bundle document and the template’s errors',
    description: 'Answers 200 whether the template compiles or not: `errors` lists what failed (with line and column), `html` is then empty.',
    body: WidgetBody,
    responses: { 200: { description: 'The bundle document and errors', data: CompilePreviewDto }, 400: invalidBody, 403: noAccess },
    handler: async (ctx, { body, auth }) => {
      const valid = await validateWidget(ctx.deps.db, body, auth);
      const compiled = await compileUnsaved(ctx.deps, valid);
      return ok(compiled.ok ? { html: compiled.html, errors: [] } : { html: '', errors: compiled.errors });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/widget-types',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'The widget types with their settings as JSON Schema',
    responses: { 200: { description: 'The types', data: z.object({ types: z.array(WidgetTypeDto) }) } },
    handler: () => ok({ types: widgetTypeList() }),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/widgets/{id}',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'A widget, its current bundle and the last build’s errors',
    params: IdParams,
    responses: { 200: { description: 'The widget', data: WidgetDto, ...withEtag } },
    handler: async (ctx, { params }) => reply(ctx, params.id),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/widgets/{id}',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Change a widget (name, settings, template, binding); its bundle is built again',
    description:
      'Send `If-Match: <revision>` to refuse the change (412) when someone else changed the widget meanwhile. A template error is 400 with its line and column; nothing is stored. With approvals on the change goes to the draft (GET answers it) and the bundle screens play stays until a submission of it is published.',
    params: IdParams,
    body: WidgetPatch,
    ifMatch: true,
    responses: { 200: { description: 'The widget', data: WidgetDto, ...withEtag }, 400: invalidBody, 403: noAccess },
    handler: async (ctx, { params, body, auth }) => {
      await patchWidget(ctx.deps, params.id, body, revisionCheck(ctx), auth);
      return reply(ctx, params.id);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/widgets/{id}',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Delete a widget nothing uses',
    description: 'Answers 409 naming the playlists and layouts that still use it (`details.usedBy`).',
    params: IdParams,
    ifMatch: true,
    responses: {
      204: { description: 'Deleted' },
      403: { description: 'forbidden: approvals are on and an editor deletes a widget screens may play (publisher role needed)' },
      409: { description: 'conflict: in use; details.usedBy lists the users ({type, id, name})' },
    },
    handler: async (ctx, { params, auth }) => {
      await deleteWidget(ctx.deps, params.id, revisionCheck(ctx), auth);
      return noContent();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/widgets/{id}/duplicate',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Copy a widget (settings, template, binding) as "<name> (copy)"',
    params: IdParams,
    responses: { 201: { description: 'The copy', data: WidgetDto, ...withEtag }, 403: noAccess },
    handler: async (ctx, { params, auth }) => reply(ctx, await duplicateWidget(ctx.deps, params.id, auth), 201),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/widgets/{id}/preview-image',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'A PNG of the widget: the uploaded preview, else drawn by headless Chromium on the server, else a placeholder saying why not',
    description:
      'An uploaded preview is answered until the widget’s template, settings or binding change. Drawn previews are `width`×`height` (default 1280×720) and cached per bundle. `X-Preview-Source` says which: uploaded, chromium or placeholder.',
    params: IdParams,
    query: z.object({
      width: z.coerce.number().int().min(16).max(3840).default(DEFAULT_PREVIEW.width),
      height: z.coerce.number().int().min(16).max(3840).default(DEFAULT_PREVIEW.height),
    }),
    responses: {
      200: {
        description: 'The PNG',
        content: { 'image/png': {} },
        headers: { 'X-Preview-Source': { description: 'uploaded, chromium or placeholder' }, ETag: { description: 'Of the image' } },
      },
    },
    handler: async (ctx, { params, query }) => {
      const { png, kind } = await previewPng(ctx.deps, params.id, query);
      ctx.set('X-Preview-Source', kind);
      ctx.set('ETag', previewEtag(png));
      ctx.set('Cache-Control', 'private, no-cache');
      ctx.type = 'image/png';
      ctx.body = png;
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/widgets/{id}/preview-image',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: `Replace the preview with an uploaded image (PNG, JPEG or WebP, at most ${MAX_PREVIEW_UPLOAD_BYTES / 1024 / 1024} MiB)`,
    description:
      'The body is the image itself; its type is sniffed from the bytes. It is stored as PNG and answered by GET until the widget’s template, settings or binding change.',
    params: IdParams,
    rawBody: { contentTypes: PREVIEW_UPLOAD_TYPES },
    responses: {
      200: { description: 'The widget', data: WidgetDto, ...withEtag },
      400: { description: 'validation_failed: the body is empty or not an image this server reads' },
      413: { description: 'payload_too_large: over 5 MiB' },
      415: { description: 'unsupported_media_type: not a PNG, JPEG or WebP (by its bytes or its Content-Type)' },
    },
    handler: async (ctx, { params, auth }) => {
      await widgetDto(ctx.deps.db, params.id);
      if (!PREVIEW_UPLOAD_TYPES.includes(ctx.request.type))
        throw new ApiError('unsupported_media_type', 'Send the image as image/png, image/jpeg or image/webp');
      const bytes = await readBodyLimited(ctx, MAX_PREVIEW_UPLOAD_BYTES);
      await storeUploadedPreview(ctx.deps, params.id, bytes, userOf(auth));
      return reply(ctx, params.id);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/player/widget-bundles/{bundleId}',
    auth: 'device',
    deviceIdOnly: true,
    tags: ['Player'],
    summary: 'Download a widget bundle the screen’s manifest lists (`widgets[].url`); ETag = its sha256, 304',
    description: 'The self-contained HTML document (docs/widgets.md "Bundle format"). 404 for a bundle of a widget the screen’s current manifest does not use.',
    params: z.object({ bundleId: uuidParam }),
    responses: {
      200: { description: 'The document', content: { 'text/html': {} }, headers: { ETag: { description: 'The sha256, quoted' } } },
      304: { description: 'Not modified' },
    },
    handler: async (ctx, { params, auth }) => {
      const row = await bundleById(ctx.deps.db, params.bundleId);
      if (!row || !(await screenMayDownloadWidget(ctx.deps, (auth as DevicePrincipal).screenId, row.widget_id)))
        throw new ApiError('not_found', 'No such widget bundle for this screen');
      const bytes = await bundleBytes(ctx.deps.db, row.sha256);
      if (!bytes) throw new ApiError('not_found', 'No such widget bundle for this screen');
      const etag = `"${row.sha256}"`;
      ctx.set('ETag', etag);
      // A version never changes under its id.
      ctx.set('Cache-Control', 'private, max-age=31536000, immutable');
      if (etagMatches(ctx.get('if-none-match'), etag)) {
        ctx.status = 304;
        return;
      }
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = bytes;
    },
  }),
];
