import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import type { Context, Middleware } from 'koa';
import { ApiError, isDiskFull } from './errors.js';

/**
 * The tus 1.0.0 resumable-upload protocol (https://tus.io/protocols/resumable-upload),
 * extensions creation, termination, checksum and expiration: its headers, errors and
 * metadata, and the PATCH that appends a request's bytes to a part file. It knows nothing
 * of what an upload becomes: the caller says where an upload's state lives (TusPatchTarget).
 */

export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = 'creation,termination,checksum,expiration';
export const TUS_CHECKSUM_ALGORITHMS = ['sha1', 'sha256', 'md5'] as const;
export const TUS_OCTETS = 'application/offset+octet-stream';

/** The discovery headers (OPTIONS). */
export const tusHeaders = (maxBytes: number) => ({
  'Tus-Resumable': TUS_VERSION,
  'Tus-Version': TUS_VERSION,
  'Tus-Max-Size': String(maxBytes),
  'Tus-Extension': TUS_EXTENSIONS,
  'Tus-Checksum-Algorithm': TUS_CHECKSUM_ALGORITHMS.join(','),
});

/** Every tus response carries Tus-Resumable, errors included. */
export function tusError(code: ConstructorParameters<typeof ApiError>[0], message: string, extra: Record<string, string> = {}, details?: unknown) {
  return new ApiError(code, message, { headers: { 'Tus-Resumable': TUS_VERSION, ...extra }, details });
}

/** tus clients look for Tus-Resumable on every answer under `base`, auth failures included. */
export function tusResumableOnEveryAnswer(base: string): Middleware {
  return (ctx, next) => {
    if (ctx.path === base || ctx.path.startsWith(`${base}/`)) ctx.set('Tus-Resumable', TUS_VERSION);
    return next();
  };
}

/** 412 unless the request speaks tus 1.0.0. */
export function requireTus(ctx: Context): void {
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

/** The `Upload-Metadata` header of stored metadata (parseMetadata's inverse). */
export function encodeMetadata(meta: Record<string, string>): string {
  return Object.entries(meta)
    .map(([k, v]) => (v ? `${k} ${Buffer.from(v).toString('base64')}` : k))
    .join(',');
}

const nonNegInt = (h: string) => (/^\d{1,16}$/.test(h) ? Number(h) : null);
export const httpDate = (iso: string) => new Date(iso).toUTCString();

/** A tus answer: headers and no body (the router's empty reply would turn a null body into 204). */
export function tusAnswer(ctx: Context, status: number, headers: Record<string, string>): void {
  ctx.set(headers);
  ctx.status = status;
  ctx.body = '';
  ctx.remove('Content-Type');
  ctx.length = 0;
}

/**
 * The headers of a creation (POST), checked after requireTus: Upload-Length within
 * `maxBytes` (refused when 0 with `emptyRefusal`, when given), no deferred length, no bytes
 * sent with the creation, and well-formed Upload-Metadata.
 */
export function readCreation(ctx: Context, options: { maxBytes: number; emptyRefusal?: string }): { length: number; metadata: Record<string, string> } {
  const { maxBytes } = options;
  if (ctx.get('upload-defer-length')) throw tusError('validation_failed', 'Upload-Defer-Length is not supported: send Upload-Length');
  const length = nonNegInt(ctx.get('upload-length'));
  if (length === null) throw tusError('validation_failed', 'Upload-Length must be a non-negative integer');
  if (length === 0 && options.emptyRefusal !== undefined) throw tusError('validation_failed', options.emptyRefusal);
  if (length > maxBytes) throw tusError('payload_too_large', `The file is larger than the ${maxBytes} bytes allowed`, { 'Tus-Max-Size': String(maxBytes) });
  if (Number(ctx.get('content-length') || 0) > 0) throw tusError('validation_failed', 'creation-with-upload is not supported: send the bytes with PATCH');
  return { length, metadata: parseMetadata(ctx.get('upload-metadata')) };
}

/** The answer to HEAD: where the upload stands. */
export function answerOffset(ctx: Context, upload: { offset: number; length: number; expiresAt: string; metadata: Record<string, string> }): void {
  const headers: Record<string, string> = {
    'Upload-Offset': String(upload.offset),
    'Upload-Length': String(upload.length),
    'Upload-Expires': httpDate(upload.expiresAt),
    'Cache-Control': 'no-store',
    'Tus-Resumable': TUS_VERSION,
  };
  const encoded = encodeMetadata(upload.metadata);
  if (encoded) headers['Upload-Metadata'] = encoded;
  tusAnswer(ctx, 200, headers);
}

/** What a PATCH request says, checked before anything about the upload is looked at. */
export interface TusPatch {
  offset: number;
  checksum: { algorithm: string; expected: string } | null;
}

/** A PATCH's headers: Tus-Resumable, the content type, Upload-Offset and an optional Upload-Checksum. */
export function readPatch(ctx: Context): TusPatch {
  requireTus(ctx);
  if (ctx.request.type !== TUS_OCTETS) throw tusError('unsupported_media_type', `Send the bytes as ${TUS_OCTETS}`);
  const offset = nonNegInt(ctx.get('upload-offset'));
  if (offset === null) throw tusError('validation_failed', 'Upload-Offset must be a non-negative integer');
  let checksum: TusPatch['checksum'] = null;
  const checksumHeader = ctx.get('upload-checksum');
  if (checksumHeader) {
    const [algorithm, expected, ...rest] = checksumHeader.trim().split(' ');
    if (!algorithm || !expected || rest.length || !/^[A-Za-z0-9+/]+={0,2}$/.test(expected))
      throw tusError('validation_failed', 'Upload-Checksum must be "<algorithm> <base64 digest>"');
    if (!(TUS_CHECKSUM_ALGORITHMS as readonly string[]).includes(algorithm))
      throw tusError('validation_failed', `Checksum algorithm ${algorithm} is not supported; use ${TUS_CHECKSUM_ALGORITHMS.join(', ')}`);
    checksum = { algorithm, expected };
  }
  return { offset, checksum };
}

/**
 * How PATCH writes a chunk into a part file and makes it durable. Replaceable, so a test
 * can make a write fail the way a full disk does (ENOSPC).
 */
export interface PartIo {
  write(handle: fs.FileHandle, buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesWritten: number }>;
  sync(handle: fs.FileHandle): Promise<void>;
}

export const realPartIo = (): PartIo => ({
  write: (h, b, o, l, p) => h.write(b, o, l, p),
  sync: (h) => h.sync(),
});

/** Where one upload's state lives: what receivePatch asks of its owner. */
export interface TusPatchTarget {
  /** The part file the bytes are appended to. */
  file: string;
  io: PartIo;
  /**
   * Runs `receive` holding the upload: nothing else touches its part file meanwhile.
   * `stop` is how a newer request for the same upload makes this one give way.
   */
  exclusive<T>(receive: () => Promise<T>, stop: () => void): Promise<T>;
  /** The upload's offset and length now (called holding it); throws when it is gone. */
  load(): Promise<{ offset: number; length: number }>;
  /** The part file is missing: the upload ends (answered 404). */
  partGone(): Promise<void>;
  /** When the upload expires, touched now (Upload-Expires, ISO). */
  renewedExpiry(): Promise<string>;
  /** Records the bytes received and the new expiry. */
  record(offset: number, expiresAt: string): Promise<void>;
}

/**
 * PATCH: appends the request's body at the upload's offset, fsyncs it, records the new
 * offset and answers 204. 409 when Upload-Offset is not the offset received, 413 past the
 * announced length, 460 when Upload-Checksum does not match (the chunk is discarded), 507
 * on a full disk (nothing half-written stays). A body that ends early (the client went
 * away, or a newer request for the upload stopped this one) keeps what arrived for the
 * resume, unless a checksum cannot be verified.
 */
export async function receivePatch(ctx: Context, patch: TusPatch, target: TusPatchTarget): Promise<void> {
  // Until the body is read, a newer request for this upload stops this one by ending its body.
  let stoppable = true;
  const stop = () => {
    if (stoppable) ctx.req.destroy();
  };
  try {
    return await target.exclusive(() => receive(), stop);
  } catch (err) {
    // Answered before the whole body was read: the connection cannot carry another request.
    if (!ctx.req.complete) ctx.set('Connection', 'close');
    throw err;
  }
  async function receive() {
    const { checksum } = patch;
    const row = await target.load();
    if (patch.offset !== row.offset) {
      throw tusError('conflict', `Upload-Offset ${patch.offset} does not match the ${row.offset} bytes received`, {
        'Upload-Offset': String(row.offset),
      });
    }
    const declared = ctx.get('content-length') ? Number(ctx.get('content-length')) : null;
    const room = row.length - row.offset;
    if (declared !== null && declared > room) throw tusError('payload_too_large', `Only ${room} more bytes fit in this upload`);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(target.file, 'r+');
    } catch (err) {
      // Only a part file that is gone ends the upload; an unusable directory (503) or a
      // full disk (507) leaves it to be resumed once the operator fixes it.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await target.partGone();
      throw tusError('not_found', 'Upload not found (its data is gone)');
    }
    const io = target.io;
    const start = row.offset;
    let pos = start;
    const hash = checksum ? createHash(checksum.algorithm) : null;
    let failure: unknown = null;
    try {
      // A crash after a write but before its offset was recorded leaves extra bytes: drop them.
      await handle.truncate(start);
      for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
        if (pos + chunk.length > row.length) throw tusError('payload_too_large', `The upload is ${row.length} bytes; more were sent`);
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
    const expires = await target.renewedExpiry();
    if (keep !== start || !failure) {
      try {
        await target.record(keep, expires);
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
    return tusAnswer(ctx, 204, { 'Upload-Offset': String(keep), 'Upload-Expires': httpDate(expires), 'Tus-Resumable': TUS_VERSION });
  }
}
