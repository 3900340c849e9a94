import { Upload, defaultOptions } from 'tus-js-client';
import { api, ApiError, getCsrfToken } from './api';
import type { Asset } from './types';

/** One file on its way into the library: tus upload, then /complete. */
export interface UploadItem {
  key: string;
  file: File;
  sentBytes: number;
  totalBytes: number;
  state: 'uploading' | 'paused' | 'completing' | 'done' | 'failed';
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
    const body = err.originalResponse?.getBody();
    let message = err.message;
    try {
      message = (JSON.parse(body ?? '') as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      if (!err.originalResponse) message = 'The connection was lost. The upload resumes from where it stopped when you try again (also after reloading the page and choosing the same file).';
    }
    throw new Error(message);
  });
  const id = upload.url?.split('/').pop();
  if (!id) throw new Error('The server did not say where the upload went');
  update({ state: 'completing', sentBytes: item.totalBytes });
  try {
    const asset = await api.post<Asset>(`uploads/${id}/complete`, { name: item.file.name, ...(target.folderId ? { folderId: target.folderId } : {}), ...(target.tags.length ? { tags: target.tags } : {}) });
    update({ state: 'done', asset });
  } catch (err) {
    throw err instanceof ApiError ? err : new Error(String(err));
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
