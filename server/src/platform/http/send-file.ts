import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import type { Context } from 'koa';
import { ApiError } from './errors.js';

export interface SendFileOptions {
  /** Path made by the server (the media store), never from the request. */
  path: string;
  contentType: string;
  /** Strong validator: the file's sha256. */
  etag: string;
  /** `inline` or `attachment`, with a file name (sanitised here). */
  disposition?: { type: 'inline' | 'attachment'; filename?: string };
  cacheControl?: string;
  /** A Content-Security-Policy for the response (SVG and other active types). */
  csp?: string;
}

/** A `Content-Disposition` that cannot break out of its header: ASCII fallback plus RFC 5987 name. */
export function contentDisposition(type: 'inline' | 'attachment', filename?: string): string {
  if (!filename) return type;
  const clean = filename.replace(/[\u0000-\u001f\u007f/\\]/g, '').slice(0, 200) || 'file';
  const ascii = clean.replace(/[^\x20-\x7e]/g, '_').replace(/["%;]/g, '_');
  return `${type}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(clean)}`;
}

export type ByteRange = { start: number; end: number };

/**
 * Parses a `Range` header against a length: one range of `a-b`, `a-` or `-N`, clamped.
 * Answers null to serve the whole file (absent, not bytes, several ranges), the range,
 * or 'unsatisfiable'.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | null | 'unsatisfiable' {
  if (!header) return null;
  const m = /^\s*bytes\s*=\s*(.+)$/i.exec(header);
  if (!m) return null;
  const specs = m[1]!.split(',').map((s) => s.trim()).filter(Boolean);
  if (specs.length !== 1) return null; // several ranges: the whole file (RFC 9110 allows it)
  const r = /^(\d*)\s*-\s*(\d*)$/.exec(specs[0]!);
  if (!r || (r[1] === '' && r[2] === '')) return null;
  if (r[1] === '') {
    const n = Number(r[2]);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(r[1]);
  const end = r[2] === '' ? size - 1 : Math.min(Number(r[2]), size - 1);
  if (!Number.isSafeInteger(start) || start >= size) return 'unsatisfiable';
  if (end < start) return null; // syntactically invalid: ignored
  return { start, end };
}

function etagMatches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/**
 * Streams a file with Range (single range), If-Range (strong ETag or date), ETag,
 * If-None-Match (304) and HEAD; never reads the file into memory.
 */
export async function sendFile(ctx: Context, options: SendFileOptions): Promise<void> {
  let stat;
  try {
    stat = await fs.stat(options.path);
  } catch {
    throw new ApiError('not_found', 'The file is missing from the media store');
  }
  const size = stat.size;
  const etag = `"${options.etag}"`;
  ctx.set('ETag', etag);
  ctx.set('Last-Modified', stat.mtime.toUTCString());
  ctx.set('Accept-Ranges', 'bytes');
  ctx.set('Cache-Control', options.cacheControl ?? 'private, no-cache');
  ctx.set('X-Content-Type-Options', 'nosniff');
  if (options.csp) ctx.set('Content-Security-Policy', options.csp);
  if (options.disposition) ctx.set('Content-Disposition', contentDisposition(options.disposition.type, options.disposition.filename));

  const inm = ctx.get('if-none-match');
  if (inm && etagMatches(inm, etag)) {
    ctx.status = 304;
    return;
  }

  let range = parseRange(ctx.get('range') || undefined, size);
  const ifRange = ctx.get('if-range');
  if (range && ifRange) {
    const trimmed = ifRange.trim();
    const fresh = trimmed.startsWith('"') || trimmed.startsWith('W/') ? trimmed === etag : Date.parse(trimmed) >= Math.floor(stat.mtimeMs / 1000) * 1000;
    if (!fresh) range = null;
  }
  if (range === 'unsatisfiable') {
    throw new ApiError('range_not_satisfiable', `The range is outside the ${size} bytes of this file`, { headers: { 'Content-Range': `bytes */${size}` } });
  }
  ctx.type = options.contentType;
  if (range) {
    ctx.status = 206;
    ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
    if (ctx.method !== 'HEAD') ctx.body = createReadStream(options.path, { start: range.start, end: range.end, highWaterMark: 256 * 1024 });
    ctx.length = range.end - range.start + 1;
  } else {
    ctx.status = 200;
    if (ctx.method !== 'HEAD') ctx.body = createReadStream(options.path, { highWaterMark: 256 * 1024 });
    ctx.length = size;
  }
  // HEAD: no body is set (Koa would turn a null body into 204); the headers are GET's.
}
