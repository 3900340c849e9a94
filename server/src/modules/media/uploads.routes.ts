import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import type { Context } from 'koa';
import { z } from 'zod';
import { roleAtLeast, type Principal, type SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError, invalidReference, isDiskFull, notFound } from '../../platform/http/errors.js';
import { created, defineRoute, uuidParam } from '../../platform/http/route.js';
import { avKindOf } from '../../platform/media/av.js';
import { describeUnsupported, sniffFile } from '../../platform/media/sniff.js';
import { storableJson } from '../../platform/db/json.js';
import { uploadLimits } from './limits.js';
import { Asset, assetView, newId, nowIso } from './repo.js';

const TAGS = ['Uploads'];
export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = 'creation,termination,checksum,expiration';
const CHECKSUM_ALGORITHMS = ['sha1', 'sha256', 'md5'] as const;
const OCTETS = 'application/offset+octet-stream';

const tusHeaders = (maxBytes: number) => ({
  'Tus-Resumable': TUS_VERSION,
  'Tus-Version': TUS_VERSION,
  'Tus-Max-Size': String(maxBytes),
  'Tus-Extension': TUS_EXTENSIONS,
  'Tus-Checksum-Algorithm': CHECKSUM_ALGORITHMS.join(','),
});

/** Every tus response carries Tus-Resumable, errors included. */
function tusError(code: ConstructorParameters<typeof ApiError>[0], message: string, extra: Record<string, string> = {}, details?: unknown) {
  return new ApiError(code, message, { headers: { 'Tus-Resumable': TUS_VERSION, ...extra }, details });
}

function requireTus(ctx: Context): void {
  ctx.set('Tus-Resumable', TUS_VERSION);
  const v = ctx.get('tus-resumable');
  if (v !== TUS_VERSION) {
    throw tusError(
      'unsupported_protocol_version',
      v ? `Tus-Resumable ${v} is not supported; this server speaks ${TUS_VERSION}` : 'Send Tus-Resumable: 1.0.0 (this is a tus 1.0.0 endpoint)',
      { 'Tus-Version': TUS_VERSION },
    );
  }
}

/** `Upload-Metadata`: comma-separated `key base64value` pairs (value optional). */
export function parseMetadata(header: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header.trim()) return out;
  for (const pair of header.split(',')) {
    const [key, value, ...rest] = pair.trim().split(' ');
    if (!key || rest.length > 0 || !/^[\x21-\x7e]+$/.test(key) || key in out) throw tusError('validation_failed', 'Upload-Metadata is malformed');
    if (value !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) throw tusError('validation_failed', `Upload-Metadata value of ${key} is not base64`);
    out[key] = value ? Buffer.from(value, 'base64').toString('utf8') : '';
  }
  return out;
}

const nonNegInt = (h: string) => (/^\d{1,16}$/.test(h) ? Number(h) : null);
const httpDate = (iso: string) => new Date(iso).toUTCString();

async function loadUpload(ctx: Context, id: string) {
  const row = await ctx.deps.db.selectFrom('uploads').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || row.expires_at < nowIso()) throw tusError('not_found', 'Upload not found (it may have expired)');
  return row;
}

async function loadCompletable(ctx: Context, id: string) {
  const row = await ctx.deps.db.selectFrom('uploads').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || row.expires_at < nowIso()) throw notFound('Upload');
  return row;
}

/**
 * An upload is its creator's: only they send its bytes and complete it. Admins and owners
 * may also read its offset and terminate it. Anyone else is told it does not exist (the
 * check runs before the upload's lock is taken, so they cannot stop its PATCH either).
 */
function checkOwner(row: { created_by: string | null }, auth: Principal, action: 'read' | 'write' | 'terminate'): void {
  const who = auth as SessionPrincipal;
  if (row.created_by !== null && row.created_by === who.userId) return;
  if (roleAtLeast(who.role, 'admin')) {
    if (action !== 'write') return;
    throw tusError('forbidden', 'Only the user who started this upload can send its bytes or complete it');
  }
  throw tusError('not_found', 'Upload not found (it may have expired)');
}

/** The folder an upload's metadata names: null when none; 400 when it is not a folder. */
async function metadataFolder(ctx: Context, meta: Record<string, string>): Promise<string | null> {
  const raw = meta.folderId?.trim();
  if (!raw) return null;
  const issue = (message: string) =>
    tusError(
      'validation_failed',
      `Upload-Metadata folderId ${message}; send an existing folder's id (or complete with a folderId in the body)`,
      {},
      {
        issues: [{ location: 'header', path: ['Upload-Metadata', 'folderId'], message, code: 'invalid_reference' }],
      },
    );
  if (!z.uuid().safeParse(raw).success) throw issue('is not a folder id');
  const id = raw.toLowerCase();
  if (!(await ctx.deps.db.selectFrom('content_folders').select('id').where('id', '=', id).executeTakeFirst())) throw issue('names no folder');
  return id;
}

/** Cleans a file name into an asset name: no path, no control characters, bounded. */
export function nameFrom(filename: string | null | undefined): string {
  const base = (filename ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 200);
  return clean || 'Untitled';
}

const uploadIdParams = z.object({ id: uuidParam });
/** An answer without a body (the router's empty reply would turn a null body into 204). */
function empty(ctx: Context, status: number, headers: Record<string, string>): void {
  ctx.set(headers);
  ctx.status = status;
  ctx.body = '';
  ctx.remove('Content-Type');
  ctx.length = 0;
}

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
    handler: async (ctx) => empty(ctx, 204, tusHeaders((await uploadLimits(ctx.deps)).maxBytes)),
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
    rawBody: { contentTypes: [OCTETS] },
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
      const { db } = ctx.deps;
      const limits = await uploadLimits(ctx.deps);
      if (ctx.get('upload-defer-length')) throw tusError('validation_failed', 'Upload-Defer-Length is not supported: send Upload-Length');
      const length = nonNegInt(ctx.get('upload-length'));
      if (length === null) throw tusError('validation_failed', 'Upload-Length must be a non-negative integer');
      if (length === 0) throw tusError('validation_failed', 'An empty file is not media');
      if (length > limits.maxBytes)
        throw tusError('payload_too_large', `The file is larger than the ${limits.maxBytes} bytes allowed`, { 'Tus-Max-Size': String(limits.maxBytes) });
      if (Number(ctx.get('content-length') || 0) > 0) throw tusError('validation_failed', 'creation-with-upload is not supported: send the bytes with PATCH');
      const metadata = parseMetadata(ctx.get('upload-metadata'));
      // A folder named in the metadata must exist now (complete checks again: it may go meanwhile).
      await metadataFolder(ctx, metadata);
      const media = ctx.media;
      await fs.mkdir(media.uploadsDir, { recursive: true });
      const stats = await fs.statfs(media.uploadsDir);
      if (stats.bavail * stats.bsize < length * 2 + 64 * 1024 * 1024) {
        throw tusError('insufficient_storage', 'Not enough free disk space for this upload and its processing');
      }
      const id = newId();
      const now = Date.now();
      const expires = new Date(now + limits.expiryMs).toISOString();
      // Held while the part file exists without its row, so the stray-file sweep leaves it alone.
      const release = media.uploadLocks.tryAcquire(id)!;
      try {
        await fs.writeFile(media.partPath(id), '');
        await db
          .insertInto('uploads')
          .values({
            id,
            length_bytes: length,
            offset_bytes: 0,
            metadata: storableJson(metadata, 'Upload-Metadata'),
            filename: metadata.filename ?? null,
            filetype: metadata.filetype ?? null,
            created_by: (auth as SessionPrincipal).userId,
            created_at: new Date(now).toISOString(),
            updated_at: new Date(now).toISOString(),
            expires_at: expires,
          })
          .execute();
      } catch (err) {
        await fs.rm(media.partPath(id), { force: true });
        throw err;
      } finally {
        release();
      }
      return empty(ctx, 201, { Location: `/api/v1/uploads/${id}`, 'Upload-Expires': httpDate(expires), 'Tus-Resumable': TUS_VERSION });
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
      const first = await loadUpload(ctx, params.id);
      checkOwner(first, auth, 'read');
      // The creator resuming takes the lock (stopping a stalled PATCH); an admin looking does not.
      const row = first.created_by === (auth as SessionPrincipal).userId ? await ctx.media.withUploadLock(params.id, () => loadUpload(ctx, params.id)) : first;
      const headers: Record<string, string> = {
        'Upload-Offset': String(row.offset_bytes),
        'Upload-Length': String(row.length_bytes),
        'Upload-Expires': httpDate(row.expires_at),
        'Cache-Control': 'no-store',
        'Tus-Resumable': TUS_VERSION,
      };
      const meta = JSON.parse(row.metadata) as Record<string, string>;
      const encoded = Object.entries(meta)
        .map(([k, v]) => (v ? `${k} ${Buffer.from(v).toString('base64')}` : k))
        .join(',');
      if (encoded) headers['Upload-Metadata'] = encoded;
      return empty(ctx, 200, headers);
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
    rawBody: { contentTypes: [OCTETS] },
    responses: {
      460: { description: 'checksum_mismatch: the chunk does not match Upload-Checksum; it was discarded' },
      413: { description: 'payload_too_large: more bytes than the upload has room for' },
      412: { description: 'unsupported_protocol_version: Tus-Resumable is missing or not 1.0.0' },
      409: { description: "conflict: Upload-Offset is not the offset received (the answer's Upload-Offset is)" },
      400: { description: 'validation_failed: Upload-Offset or Upload-Checksum is malformed, or the body ended early' },
      204: { description: 'Bytes stored; the new Upload-Offset in headers', headers: { 'Upload-Offset': { description: 'bytes received' } } },
    },
    handler: async (ctx, { params, auth }) => {
      requireTus(ctx);
      if (ctx.request.type !== OCTETS) throw tusError('unsupported_media_type', `Send the bytes as ${OCTETS}`);
      const offsetHeader = nonNegInt(ctx.get('upload-offset'));
      if (offsetHeader === null) throw tusError('validation_failed', 'Upload-Offset must be a non-negative integer');
      let checksum: { algorithm: string; expected: string } | null = null;
      const checksumHeader = ctx.get('upload-checksum');
      if (checksumHeader) {
        const [algorithm, expected, ...rest] = checksumHeader.trim().split(' ');
        if (!algorithm || !expected || rest.length || !/^[A-Za-z0-9+/]+={0,2}$/.test(expected))
          throw tusError('validation_failed', 'Upload-Checksum must be "<algorithm> <base64 digest>"');
        if (!(CHECKSUM_ALGORITHMS as readonly string[]).includes(algorithm))
          throw tusError('validation_failed', `Checksum algorithm ${algorithm} is not supported; use ${CHECKSUM_ALGORITHMS.join(', ')}`);
        checksum = { algorithm, expected };
      }
      const media = ctx.media;
      const db = ctx.deps.db;
      checkOwner(await loadUpload(ctx, params.id), auth, 'write');
      // Until the body is read, a newer request for this upload stops this one by ending its body.
      let stoppable = true;
      const stop = () => {
        if (stoppable) ctx.req.destroy();
      };
      try {
        return await media.withUploadLock(params.id, () => receive(), stop);
      } catch (err) {
        // Answered before the whole body was read: the connection cannot carry another request.
        if (!ctx.req.complete) ctx.set('Connection', 'close');
        throw err;
      }
      async function receive() {
        const row = await loadUpload(ctx, params.id);
        if (offsetHeader !== row.offset_bytes) {
          throw tusError('conflict', `Upload-Offset ${offsetHeader} does not match the ${row.offset_bytes} bytes received`, {
            'Upload-Offset': String(row.offset_bytes),
          });
        }
        const declared = ctx.get('content-length') ? Number(ctx.get('content-length')) : null;
        const room = row.length_bytes - row.offset_bytes;
        if (declared !== null && declared > room) throw tusError('payload_too_large', `Only ${room} more bytes fit in this upload`);
        // Holding the lock, the upload exists and nothing else (complete, DELETE, another
        // PATCH, expiry) touches its part file until this request releases it.
        const file = media.partPath(row.id);
        let handle: fs.FileHandle;
        try {
          handle = await fs.open(file, 'r+');
        } catch {
          await db.deleteFrom('uploads').where('id', '=', row.id).execute();
          throw tusError('not_found', 'Upload not found (its data is gone)');
        }
        const io = media.partIo;
        const start = row.offset_bytes;
        let pos = start;
        const hash = checksum ? createHash(checksum.algorithm) : null;
        let failure: unknown = null;
        try {
          // A crash after a write but before its offset was recorded leaves extra bytes: drop them.
          await handle.truncate(start);
          for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
            if (pos + chunk.length > row.length_bytes) throw tusError('payload_too_large', `The upload is ${row.length_bytes} bytes; more were sent`);
            let written = 0;
            while (written < chunk.length) {
              const { bytesWritten } = await io.write(handle, chunk, written, chunk.length - written, pos + written);
              written += bytesWritten;
            }
            hash?.update(chunk);
            pos += chunk.length;
          }
        } catch (err) {
          failure = err;
        } finally {
          stoppable = false;
        }
        let keep = pos;
        const aborted = failure !== null && !(failure instanceof ApiError) && !isDiskFull(failure);
        if (failure !== null && !aborted) keep = start; // refused or disk full: nothing half-written stays
        if (aborted && checksum) keep = start; // an unverifiable partial chunk is discarded
        if (!failure && hash && hash.digest('base64') !== checksum!.expected) {
          keep = start;
          failure = tusError('checksum_mismatch', 'The chunk does not match Upload-Checksum; it was discarded', { 'Upload-Offset': String(start) });
        }
        try {
          // Always: a failed write may have left bytes past `pos`.
          if (keep !== pos || failure) await handle.truncate(keep);
          await io.sync(handle);
        } catch (err) {
          failure ??= err;
          keep = start;
          await handle.truncate(start).catch(() => {});
        } finally {
          await handle.close();
        }
        const expires = new Date(Date.now() + (await uploadLimits(ctx.deps)).expiryMs).toISOString();
        if (keep !== start || !failure) {
          try {
            await db.updateTable('uploads').set({ offset_bytes: keep, updated_at: nowIso(), expires_at: expires }).where('id', '=', row.id).execute();
          } catch (err) {
            // The offset stays where it was: the next PATCH truncates the unrecorded bytes away.
            if (isDiskFull(err)) throw tusError('insufficient_storage', 'The disk is full; the chunk was discarded', { 'Upload-Offset': String(start) });
            throw err;
          }
        }
        if (failure) {
          if (isDiskFull(failure)) throw tusError('insufficient_storage', 'The disk is full; the chunk was discarded', { 'Upload-Offset': String(start) });
          if (failure instanceof ApiError) throw failure;
          // The client went away (or a newer request stopped this one): what arrived is kept for the resume; nobody reads this answer.
          throw tusError('validation_failed', 'The request body ended early');
        }
        return empty(ctx, 204, { 'Upload-Offset': String(keep), 'Upload-Expires': httpDate(expires), 'Tus-Resumable': TUS_VERSION });
      }
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
      checkOwner(await loadUpload(ctx, params.id), auth, 'terminate');
      await ctx.media.withUploadLock(params.id, async () => {
        const row = await loadUpload(ctx, params.id);
        await ctx.deps.db.deleteFrom('uploads').where('id', '=', row.id).execute();
        await fs.rm(ctx.media.partPath(row.id), { force: true });
      });
      return empty(ctx, 204, { 'Tus-Resumable': TUS_VERSION });
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
      const media = ctx.media;
      const { db, tools } = ctx.deps;
      checkOwner(await loadCompletable(ctx, params.id), auth, 'write');
      const assetId = await media.withUploadLock(params.id, async () => {
        const row = await loadCompletable(ctx, params.id);
        if (row.offset_bytes !== row.length_bytes)
          throw new ApiError('conflict', `The upload has ${row.offset_bytes} of ${row.length_bytes} bytes; send the rest first`);
        const meta = JSON.parse(row.metadata) as Record<string, string>;
        let folderId: string | null;
        if (body.folderId) {
          folderId = body.folderId.toLowerCase();
          if (!(await db.selectFrom('content_folders').select('id').where('id', '=', folderId).executeTakeFirst())) {
            throw invalidReference('folderId names no folder', { path: ['folderId'], message: 'no such folder' });
          }
        } else {
          folderId = await metadataFolder(ctx, meta);
        }
        const tags =
          body.tags ??
          (meta.tags
            ? meta.tags
                .split(',')
                .map((t) => t.trim())
                .filter((t) => t && t.length <= 64)
                .slice(0, 50)
            : []);
        const file = media.partPath(row.id);
        const discard = async () => {
          await db.deleteFrom('uploads').where('id', '=', row.id).execute();
          await fs.rm(file, { force: true });
        };
        const sniffed = await sniffFile(file);
        if (!sniffed) {
          const why = await describeUnsupported(file);
          await discard();
          throw new ApiError('unsupported_media_type', `${why}; upload images (JPEG, PNG, GIF, WebP, AVIF, HEIF, TIFF, SVG), video, audio or PDF`);
        }
        let { kind, contentType } = sniffed;
        if (kind === 'video' || kind === 'audio') {
          const av = await tools.av();
          if (!av.available) {
            await discard();
            throw new ApiError('unsupported_media_type', `Video and audio are unavailable on this server (ffmpeg and ffprobe are needed): ${av.detail}`);
          }
          // The container does not say whether there is a picture: ffprobe does.
          const decided = await avKindOf(tools, file, contentType);
          if (decided) ({ kind, contentType } = decided);
        }
        if (kind === 'pdf') {
          const support = await tools.pdf();
          if (!support.available) {
            await discard();
            throw new ApiError('unsupported_media_type', `PDF is unavailable on this server: ${support.detail}`);
          }
        }
        return media.ingestFile({
          file,
          kind,
          contentType,
          name: body.name ?? nameFrom(meta.name || row.filename),
          originalFilename: row.filename ? nameFrom(row.filename) : null,
          folderId,
          tags,
          createdBy: (auth as SessionPrincipal).userId,
          diskFullMessage: 'The disk is full; the upload is kept, free some space and complete it again',
          inTransaction: async (trx) => void (await trx.deleteFrom('uploads').where('id', '=', row.id).execute()),
        });
      });
      return created(await assetView(db, assetId));
    },
  }),
];
