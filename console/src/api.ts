/** The console's only door to the server: JSON envelopes, CSRF header, typed errors. */

export interface User {
  id: string;
  email: string;
  displayName: string;
  role: Role;
  disabled: boolean;
  totpEnabled: boolean;
  /** False while a user made without a password has not used their set-password link. */
  passwordSet?: boolean;
  createdAt: string;
  updatedAt: string;
}
export type Role = 'owner' | 'admin' | 'publisher' | 'editor' | 'viewer';
export const ROLES: readonly Role[] = ['owner', 'admin', 'publisher', 'editor', 'viewer'];
const RANK: Record<Role, number> = { viewer: 0, editor: 1, publisher: 2, admin: 3, owner: 4 };
export const atLeast = (user: User | null | undefined, role: Role) => Boolean(user && RANK[user.role] >= RANK[role]);

export interface AuthStatus {
  setupRequired: boolean;
  authenticated: boolean;
  mfaPending: boolean;
  user: User | null;
  csrfToken: string | null;
  /** Approvals on (docs/publishing.md): saves are drafts and editors submit them; answered to the signed-in only. */
  approvalsRequired?: boolean;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** An error answer of the API (or a network failure, code `network`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
  /** The message of the zod issue on `field` of the body, when the server named one. */
  fieldMessage(field: string): string | undefined {
    const issues = (this.details as { issues?: { path?: unknown[]; message?: string }[] } | undefined)?.issues;
    return issues?.find((i) => i.path?.[0] === field)?.message;
  }
  /** The message of the zod issue at a nested body path (`['retention', 'heartbeatDays']`), when the server named one. */
  messageAt(path: readonly (string | number)[]): string | undefined {
    const issues = (this.details as { issues?: { path?: unknown[]; message?: string }[] } | undefined)?.issues;
    return issues?.find((i) => i.path?.length === path.length && path.every((p, n) => String(i.path![n]) === String(p)))?.message;
  }
}

let csrfToken: string | null = null;
export const getCsrfToken = () => csrfToken;
export const setCsrfToken = (token: string | null) => {
  csrfToken = token;
};

/** Called when the server says the session is gone, so the app can show sign-in. */
let onUnauthenticated: () => void = () => {};
export const setUnauthenticatedHandler = (fn: () => void) => {
  onUnauthenticated = fn;
};

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Do not run the signed-out handler on 401 (sign-in forms handle it themselves). */
  quiet401?: boolean;
}

export async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(path.startsWith('/') ? path : `/api/v1/${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'network', 'The server cannot be reached. Check the connection and try again.');
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: handled below */
  }
  if (!res.ok) {
    const error = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
    const apiError = new ApiError(res.status, error?.code ?? 'internal', error?.message ?? `The server answered ${res.status}`, error?.details);
    if (res.status === 401 && apiError.code === 'unauthenticated' && !options.quiet401) onUnauthenticated();
    throw apiError;
  }
  return (parsed as { data: T }).data;
}

export const api = {
  get: <T>(path: string, options?: RequestOptions) => request<T>('GET', path, options),
  post: <T>(path: string, body?: unknown, options?: RequestOptions) => request<T>('POST', path, { ...options, body: body ?? {} }),
  patch: <T>(path: string, body: unknown, options?: RequestOptions) => request<T>('PATCH', path, { ...options, body }),
  put: <T>(path: string, body: unknown, options?: RequestOptions) => request<T>('PUT', path, { ...options, body }),
  del: <T = void>(path: string, options?: RequestOptions) => request<T>('DELETE', path, options),
};

/** Query string from defined, non-empty values. */
export function qs(params: Record<string, string | number | boolean | undefined | null>): string {
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') sp.set(k, String(v));
  const s = sp.toString();
  return s ? `?${s}` : '';
}

/** An API error out of a response body (envelope or not). */
function errorOf(status: number, text: string): ApiError {
  let error: { code?: string; message?: string; details?: unknown } | undefined;
  try {
    error = (JSON.parse(text) as { error?: typeof error }).error;
  } catch {
    /* not JSON */
  }
  return new ApiError(status, error?.code ?? 'internal', error?.message ?? `The server answered ${status}`, error?.details);
}

/**
 * Sends a file as the raw body of a POST (or a multipart form: pass FormData and no
 * contentType, the browser writes the boundary), reporting upload progress (fetch cannot):
 * used for backup archives and player releases. Resolves with the envelope's `data`; rejects with ApiError (code `network`
 * when the connection failed, `aborted` when `signal` aborted it).
 */
export function uploadFile<T>(
  path: string,
  file: Blob | FormData,
  options: { contentType?: string; onProgress?: (sent: number, total: number) => void; signal?: AbortSignal },
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path.startsWith('/') ? path : `/api/v1/${path}`);
    if (options.contentType) xhr.setRequestHeader('content-type', options.contentType);
    xhr.setRequestHeader('accept', 'application/json');
    if (csrfToken) xhr.setRequestHeader('x-csrf-token', csrfToken);
    xhr.upload.onprogress = (e) => options.onProgress?.(e.loaded, e.lengthComputable ? e.total : file instanceof Blob ? file.size : 0);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        try {
          resolve((JSON.parse(xhr.responseText) as { data: T }).data);
        } catch {
          resolve(undefined as T);
        }
        return;
      }
      const err = errorOf(xhr.status, xhr.responseText);
      if (xhr.status === 401 && err.code === 'unauthenticated') onUnauthenticated();
      reject(err);
    };
    xhr.onerror = () => reject(new ApiError(0, 'network', 'The upload was cut off: the server cannot be reached. Check the connection and try again.'));
    xhr.onabort = () => reject(new ApiError(0, 'aborted', 'The upload was cancelled.'));
    options.signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(file);
  });
}

/** Saves `text` as a file the browser downloads (an export the API answered as JSON). */
export function saveTextFile(name: string, text: string, type = 'application/json'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
