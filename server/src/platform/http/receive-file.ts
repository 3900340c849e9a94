import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import parseContentDisposition from 'content-disposition';
import type { Context, Middleware } from 'koa';
import { ApiError, isDiskFull } from './errors.js';

/** One file a request carried, written to a temp file (the caller moves or removes it). */
export interface ReceivedFile {
  /** The temp file (inside the directory given). */
  file: string;
  sizeBytes: number;
  /** SHA-256 of the bytes (hex), computed while they arrived. */
  sha256: string;
  /** The name the client gave (multipart filename, Content-Disposition, or ?name=), unchecked; null when none. */
  clientName: string | null;
}

export interface ReceiveOptions {
  /** Where the temp file goes (created when missing); the caller's sweep owns leftovers. */
  dir: string;
  maxBytes: number;
  /** The multipart field that carries the file. */
  field: string;
  /** Says what is being sent, in error messages ("An attachment"). */
  what: string;
}

const MULTIPART = 'multipart/form-data';

/** The `filename` of a request's Content-Disposition header, or null (absent or unreadable). */
function dispositionName(header: string): string | null {
  if (!header) return null;
  try {
    const name = parseContentDisposition.parse(header).parameters.filename;
    return typeof name === 'string' && name ? name : null;
  } catch {
    return null;
  }
}

function tooLarge(options: ReceiveOptions): ApiError {
  return new ApiError('payload_too_large', `${options.what} may be at most ${options.maxBytes} bytes (${Math.round(options.maxBytes / 1024 / 1024)} MiB)`);
}

/**
 * Receives one file from a request body, streamed to disk and never held in memory: either
 * `multipart/form-data` with the file in `options.field` (parsed by koa-body's formidable,
 * one file, a few small fields at most), or a raw body (any type; the name from
 * Content-Disposition's filename or `?name=`). More than `maxBytes` answers 413
 * `payload_too_large` (a Content-Length over it before anything is read) and nothing stays
 * on disk; an empty file 400; a full disk 507. When the answer comes before the body was
 * read, the connection is closed after it.
 */
export async function receiveFile(ctx: Context, options: ReceiveOptions): Promise<ReceivedFile> {
  const declared = Number(ctx.get('content-length') || Number.NaN);
  if (declared > options.maxBytes + (ctx.is(MULTIPART) ? 64 * 1024 : 0)) {
    ctx.set('Connection', 'close');
    throw tooLarge(options);
  }
  await fs.mkdir(options.dir, { recursive: true });
  try {
    return ctx.is(MULTIPART) ? await receiveMultipart(ctx, options) : await receiveRaw(ctx, options);
  } catch (err) {
    if (!ctx.req.complete) ctx.set('Connection', 'close'); // the rest of the body is not read
    if (err instanceof ApiError) throw err;
    if (isDiskFull(err)) throw new ApiError('insufficient_storage', 'The disk is full; the upload was discarded');
    throw new ApiError('validation_failed', `The upload did not complete: ${(err as Error).message}`);
  }
}

async function receiveRaw(ctx: Context, options: ReceiveOptions): Promise<ReceivedFile> {
  const file = path.join(options.dir, `in-${Date.now()}-${randomBytes(6).toString('hex')}`);
  let size = 0;
  const hash = createHash('sha256');
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > options.maxBytes) return done(tooLarge(options));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(ctx.req, counter, createWriteStream(file, { mode: 0o600 }));
  } catch (err) {
    await fs.rm(file, { force: true });
    throw err;
  }
  if (size === 0) {
    await fs.rm(file, { force: true });
    throw new ApiError('validation_failed', `${options.what} is empty: send the file as the body`);
  }
  const query = ctx.query.name;
  const clientName = (typeof query === 'string' && query ? query : null) ?? dispositionName(ctx.get('content-disposition'));
  return { file, sizeBytes: size, sha256: hash.digest('hex'), clientName };
}

interface FormidableFile {
  filepath: string;
  size: number;
  /** hex digest (hashAlgorithm below) */
  hash: string;
  originalFilename: string | null;
}

async function receiveMultipart(ctx: Context, options: ReceiveOptions): Promise<ReceivedFile> {
  // formidable writes into its own directory: whatever it leaves on a failure goes with it.
  const dir = await fs.mkdtemp(path.join(options.dir, 'form-'));
  // koa-body (and formidable under it) loads at the first multipart upload, not at start
  // (issue 24: ~1.6 MiB of heap a server that never takes one keeps for nothing).
  const { koaBody } = await import('koa-body');
  const parse = koaBody({
    multipart: true,
    json: false,
    text: false,
    urlencoded: false,
    parsedMethods: ['POST', 'PUT'] as never,
    formidable: {
      uploadDir: dir,
      maxFiles: 1,
      maxFileSize: options.maxBytes,
      maxTotalFileSize: options.maxBytes,
      maxFields: 10,
      maxFieldsSize: 16 * 1024,
      allowEmptyFiles: false,
      minFileSize: 1,
      hashAlgorithm: 'sha256',
    },
  }) as unknown as Middleware;
  try {
    try {
      await parse(ctx, async () => {});
    } catch (err) {
      const e = err as { httpCode?: number; code?: unknown; message?: string };
      if (isDiskFull(err)) throw err;
      if (e.httpCode === 413) throw tooLarge(options);
      if (e.code === 1010 || e.code === 1008) throw new ApiError('validation_failed', `${options.what} is empty`);
      throw new ApiError('validation_failed', `The multipart body could not be read: ${String(e.message ?? err).slice(0, 200)}`);
    }
    const files = (ctx.request as unknown as { files?: Record<string, FormidableFile | FormidableFile[]> }).files ?? {};
    const names = Object.keys(files);
    const got = files[options.field];
    if (!got || Array.isArray(got)) {
      const other = names.length ? ` (got ${names.map((n) => JSON.stringify(n.slice(0, 40))).join(', ')})` : '';
      throw new ApiError('validation_failed', `Send one file in the multipart field "${options.field}"${other}`, {
        details: { issues: [{ location: 'body', path: [options.field], message: 'one file is required here', code: 'invalid' }] },
      });
    }
    const file = path.join(options.dir, `in-${Date.now()}-${randomBytes(6).toString('hex')}`);
    await fs.rename(got.filepath, file);
    return { file, sizeBytes: got.size, sha256: got.hash, clientName: got.originalFilename || null };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/**
 * A small raw body read into memory (an uploaded preview image): a Content-Length or a
 * stream over `limit` bytes is 413 `payload_too_large` as soon as it shows.
 */
export async function readBodyLimited(ctx: Context, limit: number): Promise<Buffer> {
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
