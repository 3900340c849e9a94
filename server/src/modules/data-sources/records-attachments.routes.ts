import { created, defineRoute, noContent } from '../../platform/http/route.js';
import { envOf } from './data-sources.service.js';
import {
  ATTACHMENT_TYPES,
  AttachmentDto,
  AttachmentParams,
  MAX_ATTACHMENT_BYTES,
  MAX_ATTACHMENTS_PER_RECORD,
  RECORD_TAGS,
  RecordParams,
} from './records-attachments.schemas.js';
import { addAttachment, removeAttachment, serveAttachment } from './records-attachments.service.js';
import { recordCommentRoutes } from './records-comments.js';

const MIB = MAX_ATTACHMENT_BYTES / 1024 / 1024;

/** Attachments of records (issue 18, docs/data-sources.md "Comments and attachments"). */
export const recordAttachmentRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/data-sources/{id}/records/{recordId}/attachments',
    auth: 'session',
    minRole: 'viewer',
    tags: RECORD_TAGS,
    summary: `Attach a file to a record (a PNG, JPEG, WebP or GIF image, or a PDF; at most ${MIB} MiB)`,
    description:
      `Needs editor access to the source. One file per request: \`multipart/form-data\` with the file in the field \`file\`, or the bytes as the body ` +
      '(any of the listed types; the file name from `Content-Disposition: attachment; filename=...` or `?name=`). ' +
      `The body is streamed to disk, never held in memory; the type is decided from the bytes, never from the declared type or the name (SVG is refused: it can carry script). ` +
      `At most ${MAX_ATTACHMENTS_PER_RECORD} attachments per record. Integration tokens cannot attach files.`,
    params: RecordParams,
    rawBody: { contentTypes: ['multipart/form-data', ...ATTACHMENT_TYPES, 'application/octet-stream'] },
    responses: {
      201: { description: 'The attachment', data: AttachmentDto },
      400: { description: 'validation_failed: an empty file, no file in the field `file`, a malformed multipart body, or one that ended early' },
      403: { description: 'forbidden: the caller’s access to this source is below editor' },
      404: { description: 'not_found: no such source, or no such record in it' },
      409: { description: `conflict: the record already has ${MAX_ATTACHMENTS_PER_RECORD} attachments` },
      413: { description: `payload_too_large: the file is over ${MIB} MiB; nothing was kept` },
      415: { description: 'unsupported_media_type: the bytes are not a PNG, JPEG, WebP, GIF or PDF (or the body’s type is not one listed); nothing was kept' },
      507: { description: 'insufficient_storage: the disk filled up; nothing was kept' },
    },
    handler: async (ctx, { params, auth }) => {
      try {
        return created(await addAttachment(envOf(ctx, auth), ctx, params.id, params.recordId));
      } catch (err) {
        // Refused before the body was read (access, record, count): the connection cannot carry another request.
        if (!ctx.req.complete) ctx.set('Connection', 'close');
        throw err;
      }
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/data-sources/{id}/records/{recordId}/attachments/{attachmentId}',
    auth: 'session',
    minRole: 'viewer',
    tags: RECORD_TAGS,
    summary: 'Remove an attachment from a record (the file goes too)',
    description: 'Needs editor access to the source. The record’s audit trail gets an `attachment_removed` entry.',
    params: AttachmentParams,
    responses: {
      204: { description: 'Removed' },
      403: { description: 'forbidden: the caller’s access to this source is below editor' },
      404: { description: 'not_found: no such source, record in it, or attachment of that record' },
    },
    handler: async (ctx, { params, auth }) => {
      await removeAttachment(envOf(ctx, auth), params.id, params.recordId, params.attachmentId);
      return noContent();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/data-sources/{id}/records/{recordId}/attachments/{attachmentId}/content',
    auth: 'session',
    minRole: 'viewer',
    tags: RECORD_TAGS,
    summary: 'An attachment’s bytes: its sniffed type, ETag (sha256), 304, Range; images inline, PDFs as a download',
    description:
      "Needs viewer access to the source. Sent with `X-Content-Type-Options: nosniff`, a `Content-Security-Policy` starting `default-src 'none'` (with sandbox), and a `Content-Disposition` whose file name is made safe (RFC 6266, `filename*` per RFC 5987 when it is not ASCII).",
    params: AttachmentParams,
    responses: {
      200: { description: 'The file', content: { 'image/*': {}, 'application/pdf': {} } },
      206: { description: 'Part of it', content: { 'image/*': {}, 'application/pdf': {} } },
      304: { description: 'Not modified (If-None-Match matched the ETag)' },
      403: { description: 'forbidden: the caller may not read this source' },
      404: { description: 'not_found: no such source, record in it, or attachment of that record' },
      416: { description: 'range_not_satisfiable: Content-Range gives the length' },
    },
    handler: async (ctx, { params, auth }) => serveAttachment(envOf(ctx, auth), ctx, params.id, params.recordId, params.attachmentId),
  }),
];

/** Comments and attachments of records, as index.ts registers them. */
export const recordFileRoutes = [...recordCommentRoutes, ...recordAttachmentRoutes];
