import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { created, defineRoute, uuidParam } from '../../platform/http/route.js';
import {
  answerOffset,
  readCreation,
  readPatch,
  receivePatch,
  requireTus,
  TUS_EXTENSIONS,
  TUS_OCTETS,
  TUS_VERSION,
  tusAnswer,
  tusHeaders,
  httpDate,
} from '../../platform/http/tus.js';
import { uploadLimits } from './limits.js';
import { assetView } from './media.repo.js';
import { Asset } from './media.schemas.js';
import { checkOwner, completeUpload, createUpload, loadUpload, metadataFolder, patchTarget, terminateUpload, uploadForOffset } from './uploads.service.js';

const TAGS = ['Uploads'];
const uploadIdParams = z.object({ id: uuidParam });

/** The tus endpoints (platform/http/tus.ts speaks the protocol) and completing an upload into an asset. */
export const uploadRoutes = [
  defineRoute({
    method: 'OPTIONS',
    path: '/api/v1/uploads',
    auth: 'public',
    extension: true,
    tags: TAGS,
    summary: 'tus discovery: version, extensions, maximum size, checksum algorithms',
    responses: {
      204: {
        description: 'Capabilities in headers',
        headers: { 'Tus-Version': { description: '1.0.0' }, 'Tus-Extension': { description: TUS_EXTENSIONS }, 'Tus-Max-Size': { description: 'bytes' } },
      },
    },
    handler: async (ctx) => tusAnswer(ctx, 204, tusHeaders((await uploadLimits(ctx.deps)).maxBytes)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/uploads',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'tus creation: announce an upload (Upload-Length, Upload-Metadata: filename, filetype, name, folderId, tags)',
    description:
      'Answers 201 with `Location: /api/v1/uploads/{id}`; send the bytes with PATCH, then `POST /api/v1/uploads/{id}/complete`. Only the user who creates an upload may send its bytes and complete it.',
    rawBody: { contentTypes: [TUS_OCTETS] },
    responses: {
      413: { description: 'payload_too_large: Upload-Length is over the limit (Tus-Max-Size)' },
      412: { description: 'unsupported_protocol_version: Tus-Resumable is missing or not 1.0.0' },
      400: { description: 'validation_failed: Upload-Length, Upload-Metadata or Upload-Defer-Length is wrong, or bytes were sent with the creation' },
      201: {
        description: 'Created',
        headers: { Location: { description: 'The upload URL' }, 'Upload-Expires': { description: 'When an untouched partial upload is deleted' } },
      },
    },
    handler: async (ctx, { auth }) => {
      requireTus(ctx);
      const limits = await uploadLimits(ctx.deps);
      const { length, metadata } = readCreation(ctx, { maxBytes: limits.maxBytes, emptyRefusal: 'An empty file is not media' });
      // A folder named in the metadata must exist now (complete checks again: it may go meanwhile).
      await metadataFolder(ctx.media, metadata);
      const { id, expiresAt } = await createUpload(ctx.media, { length, metadata, createdBy: (auth as SessionPrincipal).userId, expiryMs: limits.expiryMs });
      return tusAnswer(ctx, 201, { Location: `/api/v1/uploads/${id}`, 'Upload-Expires': httpDate(expiresAt), 'Tus-Resumable': TUS_VERSION });
    },
  }),
  defineRoute({
    method: 'HEAD',
    path: '/api/v1/uploads/{id}',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'tus: the upload offset (to resume)',
    description: "The creator's HEAD stops a PATCH of this upload still in progress (a stalled connection) first, so the offset is the settled one.",
    params: uploadIdParams,
    responses: {
      412: { description: 'unsupported_protocol_version: Tus-Resumable is missing or not 1.0.0' },
      200: {
        description: 'Upload-Offset and Upload-Length in headers',
        headers: { 'Upload-Offset': { description: 'bytes received' }, 'Upload-Length': { description: 'bytes announced' } },
      },
    },
    handler: async (ctx, { params, auth }) => {
      requireTus(ctx);
      const row = await uploadForOffset(ctx.media, params.id, auth);
      answerOffset(ctx, {
        offset: row.offset_bytes,
        length: row.length_bytes,
        expiresAt: row.expires_at,
        metadata: JSON.parse(row.metadata) as Record<string, string>,
      });
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/uploads/{id}',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'tus: append bytes at Upload-Offset (application/offset+octet-stream; Upload-Checksum optional)',
    description:
      'A newer request for the same upload (a resuming client) stops this one: what arrived is kept (unless Upload-Checksum cannot be verified) and the connection is closed.',
    params: uploadIdParams,
    rawBody: { contentTypes: [TUS_OCTETS] },
    responses: {
      460: { description: 'checksum_mismatch: the chunk does not match Upload-Checksum; it was discarded' },
      413: { description: 'payload_too_large: more bytes than the upload has room for' },
      412: { description: 'unsupported_protocol_version: Tus-Resumable is missing or not 1.0.0' },
      409: { description: "conflict: Upload-Offset is not the offset received (the answer's Upload-Offset is)" },
      400: { description: 'validation_failed: Upload-Offset or Upload-Checksum is malformed, or the body ended early' },
      204: { description: 'Bytes stored; the new Upload-Offset in headers', headers: { 'Upload-Offset': { description: 'bytes received' } } },
    },
    handler: async (ctx, { params, auth }) => {
      const patch = readPatch(ctx);
      checkOwner(await loadUpload(ctx.media, params.id), auth, 'write');
      return receivePatch(ctx, patch, patchTarget(ctx.media, params.id));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/uploads/{id}',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'tus termination: discard a partial upload',
    description: 'The user who created the upload, or an admin or owner. A PATCH of it in progress is stopped first.',
    params: uploadIdParams,
    responses: { 412: { description: 'unsupported_protocol_version: Tus-Resumable is missing or not 1.0.0' }, 204: { description: 'Discarded' } },
    handler: async (ctx, { params, auth }) => {
      requireTus(ctx);
      await terminateUpload(ctx.media, params.id, auth);
      return tusAnswer(ctx, 204, { 'Tus-Resumable': TUS_VERSION });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/uploads/{id}/complete',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Turn a finished upload into an asset and start processing it',
    description:
      'Only the user who created the upload. The type is decided from the bytes (not the name; ffprobe tells audio from video); unsupported types, and kinds this server cannot process (no ffmpeg, no poppler), answer 415 and the upload is discarded. A full disk answers 507 and keeps the upload: complete it again later.',
    params: uploadIdParams,
    body: z.object({
      name: z.string().trim().min(1).max(200).optional(),
      folderId: z.uuid().optional(),
      tags: z.array(z.string().trim().min(1).max(64)).max(50).optional(),
    }),
    responses: { 409: { description: 'conflict: the upload is not finished' }, 201: { description: 'The new asset (state processing)', data: Asset } },
    handler: async (ctx, { params, body, auth }) => {
      const assetId = await completeUpload(ctx.media, params.id, body, auth);
      return created(await assetView(ctx.deps.db, assetId));
    },
  }),
];
