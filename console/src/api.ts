/** The console's only door to the server: JSON envelopes, CSRF header, typed errors. */

export interface User {
  id: string;
  email: string;
  displayName: string;
  role: Role;
  disabled: boolean;
  totpEnabled: boolean;
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
