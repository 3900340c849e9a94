import fs from 'node:fs/promises';

export type SniffedKind = 'image' | 'video' | 'audio' | 'pdf';

export interface Sniffed {
  kind: SniffedKind;
  contentType: string;
  ext: string;
}

/** What the media library accepts, by sniffed MIME type. */
export const ACCEPTED: Readonly<Record<string, SniffedKind>> = {
  'image/jpeg': 'image',
  'image/png': 'image',
  'image/gif': 'image',
  'image/webp': 'image',
  'image/avif': 'image',
  'image/heic': 'image',
  'image/heif': 'image',
  'image/tiff': 'image',
  'image/bmp': 'image',
  'image/svg+xml': 'image',
  'video/mp4': 'video',
  'video/quicktime': 'video',
  'video/webm': 'video',
  'video/x-matroska': 'video',
  'video/x-msvideo': 'video',
  'video/mpeg': 'video',
  'video/mp2t': 'video',
  'video/x-m4v': 'video',
  'audio/mpeg': 'audio',
  'audio/mp4': 'audio',
  'audio/x-m4a': 'audio',
  'audio/aac': 'audio',
  'audio/ogg': 'audio',
  'audio/opus': 'audio',
  'audio/wav': 'audio',
  'audio/x-wav': 'audio',
  'audio/wave': 'audio',
  'audio/flac': 'audio',
  'audio/x-flac': 'audio',
  'application/pdf': 'pdf',
};

/** File name endings people use for each accepted type (for pickers and early refusals; the bytes decide). */
export const EXTENSIONS: Readonly<Record<string, readonly string[]>> = {
  'image/jpeg': ['jpg', 'jpeg', 'jfif'],
  'image/png': ['png', 'apng'],
  'image/gif': ['gif'],
  'image/webp': ['webp'],
  'image/avif': ['avif'],
  'image/heic': ['heic'],
  'image/heif': ['heif'],
  'image/tiff': ['tif', 'tiff'],
  'image/bmp': ['bmp'],
  'image/svg+xml': ['svg'],
  'video/mp4': ['mp4'],
  'video/quicktime': ['mov', 'qt'],
  'video/webm': ['webm'],
  'video/x-matroska': ['mkv'],
  'video/x-msvideo': ['avi'],
  'video/mpeg': ['mpeg', 'mpg'],
  'video/mp2t': ['ts', 'm2ts', 'mts'],
  'video/x-m4v': ['m4v'],
  'audio/mpeg': ['mp3'],
  'audio/mp4': ['m4a'],
  'audio/x-m4a': ['m4a'],
  'audio/aac': ['aac'],
  'audio/ogg': ['ogg', 'oga'],
  'audio/opus': ['opus'],
  'audio/wav': ['wav'],
  'audio/x-wav': ['wav'],
  'audio/wave': ['wav'],
  'audio/flac': ['flac'],
  'audio/x-flac': ['flac'],
  'application/pdf': ['pdf'],
};

async function head(file: string, bytes: number): Promise<string> {
  const handle = await fs.open(file, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** SVG is text: an optional BOM, XML prolog, comments and doctype, then an <svg> root. */
async function looksLikeSvg(file: string): Promise<boolean> {
  const text = await head(file, 4096);
  const stripped = text
    .replace(/^\uFEFF/, '')
    .replace(/^\s*<\?xml[\s\S]*?\?>/, '')
    .replace(/^(\s*(<!--[\s\S]*?-->|<!DOCTYPE[^>]*>))*/i, '');
  return /^\s*<svg[\s>]/i.test(stripped);
}

/** file-type (with its tokenizers) loads at the first upload, not at start (docs/performance.md, "Idle memory"). */
const fileType = () => import('file-type');

/**
 * Decides a file's type from its bytes (file-type's magic numbers, plus a check for SVG
 * text), never from its name. Answers null for anything the library does not accept.
 */
export async function sniffFile(file: string): Promise<Sniffed | null> {
  const found = await (await fileType()).fileTypeFromFile(file);
  if (found && (found.mime === 'application/xml' || found.mime.startsWith('text/')) && (await looksLikeSvg(file))) {
    return { kind: 'image', contentType: 'image/svg+xml', ext: 'svg' };
  }
  if (found) {
    let mime: string = found.mime;
    // An .m4a is an MP4 container; ffprobe tells audio from video later.
    if (mime === 'audio/x-m4a') mime = 'audio/mp4';
    const kind = ACCEPTED[mime];
    return kind ? { kind, contentType: mime, ext: found.ext } : null;
  }
  if (await looksLikeSvg(file)) return { kind: 'image', contentType: 'image/svg+xml', ext: 'svg' };
  return null;
}

/** A name for people: what the sniffer found, for error messages. */
export async function describeUnsupported(file: string): Promise<string> {
  const { fileTypeFromFile } = await fileType();
  const found = await fileTypeFromFile(file).catch(() => undefined);
  return found ? `${found.mime} files are not supported` : 'the file type is not recognised';
}

/** The MIME type file-type reads from bytes already in memory, or null (a small upload such as a preview image). */
export async function sniffBufferType(bytes: Uint8Array): Promise<string | null> {
  return (await (await fileType()).fileTypeFromBuffer(bytes))?.mime ?? null;
}
