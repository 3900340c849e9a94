import { Upload, defaultOptions } from 'tus-js-client';
import { api, ApiError, getCsrfToken } from './api';
import type { Asset } from './types';

/** One file on its way into the library: tus upload, then /complete. */
export interface UploadItem {
  key: string;
  file: File;
  sentBytes: number;
  totalBytes: number;
  /** `refused`: the server will not take it (type, size): no retry is offered. `failed`: it may work again. */
  state: 'uploading' | 'paused' | 'completing' | 'done' | 'failed' | 'refused';
  resumed: boolean;
  error: string | null;
  asset: Asset | null;
  upload: Upload | null;
}

const CHUNK_BYTES = 16 * 1024 * 1024;

/**
 * Starts (or resumes, when this browser began the same file before: tus-js-client keeps
 * its URL in localStorage, keyed by name, type, size and modification time) one upload.
 * `onChange` gets every progress step; the promise settles when the asset exists.
 */
export async function startUpload(item: UploadItem, target: { folderId: string | null; tags: string[] }, onChange: (item: UploadItem) => void): Promise<void> {
  const update = (patch: Partial<UploadItem>) => onChange(Object.assign(item, patch));
  const upload = new Upload(item.file, {
    endpoint: '/api/v1/uploads',
    chunkSize: CHUNK_BYTES,
    retryDelays: [0, 1000, 3000, 5000, 10000, 20000],
    storeFingerprintForResuming: true,
    removeFingerprintOnSuccess: true,
    metadata: {
      filename: item.file.name,
      filetype: item.file.type || 'application/octet-stream',
      name: item.file.name,
      ...(target.folderId ? { folderId: target.folderId } : {}),
      ...(target.tags.length ? { tags: target.tags.join(',') } : {}),
    },
    onBeforeRequest(req) {
      const token = getCsrfToken();
      if (token) req.setHeader('X-CSRF-Token', token);
    },
    onProgress(sent, total) {
      update({ sentBytes: sent, totalBytes: total });
    },
    onShouldRetry(err) {
      const status = err.originalResponse?.getStatus() ?? 0;
      // Client errors (too large, forbidden, unsupported) will not get better by retrying.
      return status === 0 || status === 409 || status === 423 || status >= 500;
    },
  });
  update({ upload, state: 'uploading', error: null });
  const previous = await upload.findPreviousUploads();
  if (previous[0]) {
    upload.resumeFromPreviousUpload(previous[0]);
    update({ resumed: true });
  }
  await new Promise<void>((resolve, reject) => {
    upload.options.onSuccess = () => resolve();
    upload.options.onError = (err) => reject(err);
    upload.start();
  }).catch((err: Error & { originalResponse?: { getBody(): string; getStatus(): number } | null }) => {
    const status = err.originalResponse?.getStatus() ?? 0;
    const body = err.originalResponse?.getBody();
    let message = err.message;
    try {
      message = (JSON.parse(body ?? '') as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      if (!err.originalResponse)
        message =
          'The connection was lost. The upload resumes from where it stopped when you try again (also after reloading the page and choosing the same file).';
    }
    throw new UploadError(message, refusedStatus(status));
  });
  const id = upload.url?.split('/').pop();
  if (!id) throw new Error('The server did not say where the upload went');
  update({ state: 'completing', sentBytes: item.totalBytes });
  try {
    const asset = await api.post<Asset>(`uploads/${id}/complete`, {
      name: item.file.name,
      ...(target.folderId ? { folderId: target.folderId } : {}),
      ...(target.tags.length ? { tags: target.tags } : {}),
    });
    update({ state: 'done', asset });
  } catch (err) {
    if (err instanceof ApiError) throw new UploadError(err.message, refusedStatus(err.status));
    throw new Error(String(err));
  }
}

/** A client error that trying again will not fix (type, size, rights): 4xx but conflicts and locks. */
const refusedStatus = (status: number) => status >= 400 && status < 500 && status !== 409 && status !== 423 && status !== 429 && status !== 408;

export class UploadError extends Error {
  constructor(
    message: string,
    /** The server refused the file itself: retrying the same file cannot help. */
    readonly refused: boolean,
  ) {
    super(message);
  }
}

/** Uploads this browser started and did not finish (they resume when the same file is chosen again). */
export async function unfinishedUploads(): Promise<{ name: string; size: number }[]> {
  try {
    const all = await defaultOptions.urlStorage?.findAllUploads();
    return (all ?? []).map((u) => ({ name: String(u.metadata?.filename ?? 'file'), size: Number(u.size ?? 0) }));
  } catch {
    return [];
  }
}

/** What the server accepts (GET /media/capabilities). */
export interface MediaCapabilities {
  maxUploadBytes: number;
  accepted: { contentType: string; kind: 'image' | 'video' | 'audio' | 'pdf'; extensions: string[]; available: boolean }[];
  kinds: Record<string, { available: boolean; detail: string }>;
}

const KIND_WORD: Record<string, string> = { image: 'Images', video: 'Videos', audio: 'Audio files', pdf: 'PDFs' };

/**
 * Whether the server will take `file`, decided before any byte is sent: its first bytes
 * (the same magic numbers the server's `file-type` reads), its name, its size, and the
 * kinds this server can process. Answers null when it may go, else why not. When the bytes
 * say nothing but the name is a known kind, the server decides (no false refusals).
 */
export async function refusalOf(file: File, caps: MediaCapabilities | null): Promise<string | null> {
  if (!caps) return null;
  if (file.size === 0) return 'The file is empty.';
  if (file.size > caps.maxUploadBytes) return `The file is larger than this server takes (${formatSize(caps.maxUploadBytes)}).`;
  const ext = file.name.includes('.') ? file.name.split('.').pop()!.toLowerCase() : '';
  const head = new Uint8Array(await file.slice(0, 64 * 1024).arrayBuffer());
  const text = new TextDecoder('utf-8', { fatal: false }).decode(head.slice(0, 4096));
  const svg = /^\s*(<\?xml[\s\S]*?\?>\s*)?(<!--[\s\S]*?-->\s*|<!DOCTYPE[^>]*>\s*)*<svg[\s>]/i.test(text.replace(/^\uFEFF/, ''));
  let mime: string | null = null;
  try {
    const { fileTypeFromBuffer } = await import('file-type');
    mime = (await fileTypeFromBuffer(head))?.mime ?? null;
  } catch {
    mime = null; // detection failed: the server decides
  }
  if (mime === 'audio/x-m4a') mime = 'audio/mp4';
  if (svg && (!mime || mime === 'application/xml' || mime.startsWith('text/'))) mime = 'image/svg+xml';
  const accepted = mime ? caps.accepted.find((a) => a.contentType === mime) : caps.accepted.find((a) => a.extensions.includes(ext));
  if (!accepted) {
    const what = mime ? `${mime} files` : ext ? `.${ext} files` : 'Files of this type';
    return `${what} cannot go in the library. Placard takes images, videos, audio and PDFs.`;
  }
  if (!accepted.available)
    return `${KIND_WORD[accepted.kind] ?? accepted.kind} cannot be processed on this server: ${caps.kinds[accepted.kind]?.detail ?? 'a tool is missing'}.`;
  return null;
}

function formatSize(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${Math.round(v * 10) / 10} ${units[i]}`;
}
