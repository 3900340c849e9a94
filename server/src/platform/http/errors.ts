import { describeUniqueViolation, uniqueViolationOf } from '../db/constraints.js';
import { DATABASE_UNAVAILABLE, NUL_IN_TEXT } from '../db/postgres.js';

/**
 * The closed vocabulary of error codes (DESIGN.md section 3). Every error the API
 * answers carries one of these codes and the HTTP status given here. Add a code here,
 * deliberately, and document it in docs/api-conventions.md; nowhere else.
 */
export const ERROR_CODES = {
  validation_failed: { status: 400, description: 'The request (body, query or headers) failed validation; details name each problem.' },
  too_many_points: {
    status: 400,
    description: 'A noise history series at this resolution would have more than 10 000 points: pick a coarser one or a shorter range.',
  },
  malformed_json: { status: 400, description: 'The body is not valid JSON.' },
  invalid_asset: { status: 400, description: 'The body names an asset of a kind that cannot be used there (a brand bug’s logo that is not an image).' },
  invalid_artifact: {
    status: 400,
    description: 'An uploaded player release artifact is not what its family needs (an APK that is not a zip with AndroidManifest.xml).',
  },
  unauthenticated: { status: 401, description: 'No credential of a kind this route accepts, or the session ended.' },
  invalid_credential: { status: 401, description: 'The credential is unknown or malformed.' },
  credential_revoked: { status: 401, description: 'The device credential was revoked; the screen must pair again.' },
  mfa_required: { status: 401, description: 'Password accepted; the second factor is still needed.' },
  csrf_failed: { status: 403, description: 'An unsafe request without the session’s X-CSRF-Token.' },
  forbidden: { status: 403, description: 'Authenticated, but the role or capability does not allow this.' },
  screen_disabled: { status: 403, description: 'The screen is disabled.' },
  not_found: { status: 404, description: 'No such route or resource (a path id that is not a UUID included).' },
  plugin_not_found: { status: 404, description: 'No built-in plugin has this id.' },
  not_installed: { status: 404, description: 'The plugin is not installed (uninstalling it again).' },
  method_not_allowed: { status: 405, description: 'The path exists but not for this method; see the Allow header.' },
  conflict: { status: 409, description: 'The request conflicts with the current state (in use, already exists, ...).' },
  plugin_required: { status: 409, description: 'An installed plugin needs this one; details.requiredBy names them.' },
  plugin_not_installed: { status: 409, description: 'The plugin is not installed: its instances cannot be added or changed.' },
  artifact_exists: { status: 409, description: 'The player release already has an artifact for this architecture.' },
  release_source_not_configured: { status: 409, description: 'No release source URL: none given and PLACARD_RELEASE_SOURCE_URL is not set.' },
  release_source_not_connected: { status: 409, description: 'The release source is not connected (no approved device grant).' },
  no_device_grant: { status: 409, description: 'No device authorization grant is under way with the release source.' },
  release_not_cached: { status: 409, description: 'An artifact of the release that a target screen needs is not stored on this server yet: cache it first.' },
  deployment_finished: { status: 409, description: 'The update deployment (or this screen’s part in it) is cancelled or completed.' },
  not_failed: { status: 409, description: 'Only a screen whose update failed can be retried.' },
  version_conflict: { status: 412, description: 'If-Match named a revision that is no longer current (409 where no If-Match was involved).' },
  idempotency_key_reused: {
    status: 422,
    description: 'The Idempotency-Key was already used for a different request (method, path or body); use a new key for a new request.',
  },
  upgrade_required: { status: 426, description: 'This route is a WebSocket: send the request as an Upgrade.' },
  payload_too_large: { status: 413, description: 'The body is larger than this route accepts.' },
  unsupported_media_type: { status: 415, description: 'The body’s Content-Type is not one this route accepts.' },
  unsupported_protocol_version: {
    status: 412,
    description: 'The request names a protocol version this server does not speak (tus: Tus-Resumable other than 1.0.0).',
  },
  range_not_satisfiable: { status: 416, description: 'The Range cannot be served; Content-Range gives the length.' },
  checksum_mismatch: { status: 460, description: 'tus: the chunk does not match its Upload-Checksum; it was discarded.' },
  rate_limited: { status: 429, description: 'Too many attempts; Retry-After says when to try again.' },
  internal: { status: 500, description: 'An unexpected failure; the message carries the request id.' },
  not_ready: { status: 503, description: 'A dependency (database, media tools, the data directory) is unavailable or a restore is running.' },
  insufficient_storage: { status: 507, description: 'The data directory’s disk is full; nothing was kept.' },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details?: unknown;
}

/** An error the API answers as `{"error": {code, message, details?}}`. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: unknown;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: { details?: unknown; status?: number; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = options.status ?? ERROR_CODES[code].status;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  toBody(): { error: ErrorBody } {
    const error: ErrorBody = { code: this.code, message: this.message };
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

export const notFound = (what = 'Resource') => new ApiError('not_found', `${what} not found`);
export const conflict = (message: string, details?: unknown) => new ApiError('conflict', message, { details });
export const forbidden = (message = 'You are not allowed to do this') => new ApiError('forbidden', message);

/** A request field that names something that does not exist: where it is, and what it lacks. */
export interface Reference {
  path: readonly (string | number)[];
  message: string;
  /** Where the field is: the JSON body (default) or a header (tus Upload-Metadata). */
  location?: 'body' | 'header';
}

/**
 * An id inside the request (its body, or a header) that names nothing: the client's
 * invalid input, 400 `validation_failed` with one issue per field (`code:
 * 'invalid_reference'`), whatever the module. A path id that names nothing is 404
 * `not_found` instead: there the resource itself is missing. docs/api-conventions.md,
 * "Unknown ids".
 */
export function invalidReference(message: string, refs: Reference | readonly Reference[], details: Record<string, unknown> = {}): ApiError {
  const list = (Array.isArray(refs) ? refs : [refs]) as readonly Reference[];
  const issues = list.map((r) => ({ location: r.location ?? 'body', path: [...r.path], message: r.message, code: 'invalid_reference' }));
  return new ApiError('validation_failed', message, { details: { ...details, issues } });
}

/**
 * The References for the ids of a body list that are not in `known`, by their index in
 * the list as sent (`screenIds[2]`); empty when all are known.
 */
export function unknownIdsIn(field: string, ids: readonly string[], known: ReadonlySet<string>, message: string): Reference[] {
  const out: Reference[] = [];
  for (const [i, id] of ids.entries()) if (!known.has(id)) out.push({ path: [field, i], message });
  return out;
}

/** 400 `validation_failed` for one body field whose value is wrong (`code: 'invalid'`). */
export function invalidField(field: string, message: string): ApiError {
  return new ApiError('validation_failed', message, { details: { issues: [{ location: 'body', path: [field], message, code: 'invalid' }] } });
}

/** Errors of a full disk (or quota, or a database that cannot grow): answered 507 `insufficient_storage`. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  // 53100: PostgreSQL's disk_full.
  return code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL' || code === '53100';
}

/**
 * PostgreSQL cannot be reached or refuses work for now (issue 25): no connection
 * (ECONNREFUSED, a timeout of the pool), a connection exception (class 08), too many
 * connections (53300), a server shutting down or restarting (57P01-57P03). The
 * operator's problem, not the request's: 503 `not_ready`, as /readyz says.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === DATABASE_UNAVAILABLE || /^08/.test(code) || ['53300', '57P01', '57P02', '57P03'].includes(code));
}

/** System error codes that mean the data directory cannot be used as it is (not the request's fault). */
const STORAGE_UNUSABLE = new Set(['ENOTDIR', 'EACCES', 'EPERM', 'EROFS', 'EIO', 'ESTALE']);
/** ...when a file-system call answers them (an EPERM of `kill` or an EACCES of `connect` is something else). */
const FS_CALLS = new Set([
  'open',
  'read',
  'write',
  'close',
  'fsync',
  'fdatasync',
  'ftruncate',
  'mkdir',
  'mkdtemp',
  'rmdir',
  'rm',
  'unlink',
  'rename',
  'link',
  'symlink',
  'copyfile',
  'stat',
  'lstat',
  'fstat',
  'statfs',
  'scandir',
  'opendir',
  'access',
  'utime',
  'futime',
  'chmod',
  'realpath',
]);

/**
 * A file-system error that says the storage itself is unusable: a directory replaced by a
 * file, permissions taken away, a read-only or failing disk. Answered 503 `not_ready` (the
 * operator's problem, like a missing media tool; /readyz names the failing check).
 */
export function isStorageUnusable(err: unknown): boolean {
  const e = err as { code?: unknown; syscall?: unknown } | null;
  if (typeof e?.code !== 'string' || typeof e.syscall !== 'string' || !FS_CALLS.has(e.syscall)) return false;
  // mkdir -p over a file answers EEXIST.
  return STORAGE_UNUSABLE.has(e.code) || (e.code === 'EEXIST' && e.syscall === 'mkdir');
}

/**
 * A write refused by a UNIQUE or PRIMARY KEY constraint (a race two requests both won the
 * "is it free?" check for, or a name that is taken): 409 `conflict`, `details.fields`
 * naming the request fields where the constraint is known (platform/db/constraints.ts).
 * The message never carries SQL or table names.
 */
export function uniqueConflict(err: unknown): ApiError | null {
  const violation = uniqueViolationOf(err);
  if (!violation) return null;
  const { fields, message } = describeUniqueViolation(violation);
  return new ApiError('conflict', message, { details: { fields } });
}

/**
 * The envelope answer of a failure that is not an ApiError but is known: a full disk (507),
 * an unusable data directory (503) or a unique constraint (409). Null for anything else (a 500, or a Koa client error).
 * the error envelope (middleware.ts) answers it and the router's response check expects it, so both see the
 * same status.
 */
export function knownFailure(err: unknown): ApiError | null {
  if (isDiskFull(err)) return new ApiError('insufficient_storage', 'The server’s disk is full; free some space and try again');
  if ((err as { code?: unknown } | null)?.code === NUL_IN_TEXT) {
    return new ApiError('validation_failed', 'A text value holds a NUL character (U+0000), which cannot be stored or searched for');
  }
  if (isDatabaseUnavailable(err)) {
    return new ApiError('not_ready', 'The server cannot reach its database; try again shortly (/readyz names the check)', { headers: { 'Retry-After': '10' } });
  }
  if (isStorageUnusable(err)) {
    const e = err as NodeJS.ErrnoException;
    return new ApiError(
      'not_ready',
      `The server cannot use its data directory (${e.code} on ${e.syscall}); an operator must repair it (/readyz names the check)`,
      {
        headers: { 'Retry-After': '60' },
      },
    );
  }
  return uniqueConflict(err);
}
