import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { ApiError, knownFailure, type ErrorCode } from './errors.js';

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request a piece of work runs for, where Node's async context tracks it (platform/faults.ts names it). */
export interface RequestScope {
  id: string;
  method: string;
  path: string;
  /**
   * The response while the request's handlers run; null once they are done (answered, or a
   * body streaming). Every promise made while a request runs carries its scope, and some
   * outlive the request (a cached manifest's gzip, a shared build): holding the response
   * after that kept each one's response, request and closed socket alive (a heap snapshot of
   * the fleet simulator at 3,000 players found 3,056 ServerResponses held this way).
   */
  res: ServerResponse | null;
}

const scopes = new AsyncLocalStorage<RequestScope>();

/** The request the current code runs for, or undefined (outside requests, or where the async context was lost). */
export function currentRequest(): RequestScope | undefined {
  return scopes.getStore();
}

/**
 * A request's `ctx.state`: the request id, and `log`, a child logger with the id, made at
 * its first use (most requests never log anything but the access line, which the process
 * logger writes with the same fields; a pino child per request was ~0.6 µs of a /healthz
 * request in issue 24's second profile).
 */
class RequestState {
  [key: string]: unknown;
  readonly #logger: Logger;
  #log: Logger | undefined;
  constructor(
    readonly requestId: string,
    logger: Logger,
  ) {
    this.#logger = logger;
  }
  get log(): Logger {
    this.#log ??= this.#logger.child({ reqId: this.requestId });
    return this.#log;
  }
}

/**
 * The conventions every request goes through, in one middleware (each async layer is a
 * few promises more per request, and with the request scope below each promise costs an
 * async hook: issue 24 measured them): a request id (the caller's X-Request-Id when sane),
 * a child logger (made when used) and an access log line; the error envelope (answerError);
 * the headers every answer carries; the request's async scope (currentRequest, for
 * platform/faults.ts): one AsyncLocalStorage run per request, around the rest of the chain.
 */
export function conventions(logger: Logger): Middleware {
  return (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('x-request-id');
    const id = INCOMING_ID.test(incoming) ? incoming : randomUUID();
    ctx.state = new RequestState(id, logger);
    ctx.set('X-Request-Id', id);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'same-origin');
    const scope: RequestScope = { id, method: ctx.method, path: ctx.path, res: ctx.res };
    return scopes.run(scope, inScope, ctx, next, logger, started, scope);
  };
}

async function inScope(ctx: Context, next: () => Promise<unknown>, logger: Logger, started: bigint, scope: RequestScope): Promise<void> {
  try {
    await next();
  } catch (err) {
    answerError(ctx, err);
  }
  scope.res = null; // answered: a fault from here on has no request to cut (RequestScope.res)
  const path = ctx.path;
  // API answers are live state: never cached unless a route says otherwise.
  if (path.startsWith('/api/') && !ctx.response.get('Cache-Control')) ctx.set('Cache-Control', 'no-store');
  const level = path === '/healthz' || path === '/readyz' ? 'debug' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  // The path only: query strings may carry things that do not belong in logs. The process
  // logger with reqId first writes the same line as the request's child logger would.
  logger[level]({ reqId: ctx.state.requestId as string, method: ctx.method, path, status: ctx.status, ms: Math.round(ms * 10) / 10 }, 'request');
}

/** For client errors raised outside our code (Koa, its middleware): status -> code. */
export const CODE_BY_STATUS: Partial<Record<number, ErrorCode>> = {
  400: 'validation_failed',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  412: 'version_conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  416: 'range_not_satisfiable',
  429: 'rate_limited',
};

/**
 * Turns a failure into the error envelope. ApiErrors answer as they are; other
 * client errors raised by Koa or its middleware (with `expose`) map by status; a full disk
 * or database (ENOSPC, EDQUOT, SQLITE_FULL) is 507 `insufficient_storage`; an unusable
 * data directory (ENOTDIR, EACCES, EROFS, EIO...: isStorageUnusable) is 503 `not_ready`;
 * a write a UNIQUE or PRIMARY KEY constraint refused is 409 `conflict` (errors.ts, knownFailure);
 * anything else is 500 `internal` with the request id and no stack.
 */
function answerError(ctx: Context, err: unknown): void {
  let apiError: ApiError;
  if (err instanceof ApiError) {
    apiError = err;
  } else {
    const e = err as { status?: number; expose?: boolean; message?: string };
    const status = typeof e.status === 'number' ? e.status : 500;
    const code = CODE_BY_STATUS[status];
    const known = knownFailure(err);
    if (known) {
      // A full disk or an unusable data directory is the operator's problem, said plainly;
      // a unique constraint is a race or a taken name (409), worth a debug line.
      const log = ctx.state.log ?? console;
      if (known.code === 'insufficient_storage') log.warn({ err }, 'disk full');
      else if (known.code === 'not_ready') log.error({ err }, 'the data directory is unusable');
      else log.debug({ err: (err as Error).message }, 'unique constraint answered 409');
      apiError = known;
    } else if (status >= 400 && status < 500 && e.expose) {
      // A client error outside the vocabulary (408, 411, 422...) is a bad request, still in the envelope.
      apiError = code ? new ApiError(code, e.message || code, { status }) : new ApiError('validation_failed', e.message || 'Bad request');
    } else {
      const id = ctx.state.requestId as string;
      (ctx.state.log ?? console).error({ err }, 'unhandled error');
      apiError = new ApiError('internal', `Internal error; quote request id ${id} when reporting it`, { details: { requestId: id } });
    }
  }
  ctx.status = apiError.status;
  ctx.set(apiError.headers);
  ctx.body = apiError.toBody();
}

/** Client aborts are routine (a player that moves on mid-download); anything else is worth a warning. */
const ROUTINE_STREAM_ERRORS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']);

/**
 * Koa emits 'error' for failures the error envelope cannot answer any more: a response stream
 * that breaks after its headers went out. With `app.silent` they would vanish; log them.
 */
export function logLateErrors(logger: Logger) {
  return (err: Error & { code?: string }, ctx?: { state?: { log?: Logger }; method?: string; path?: string }) => {
    const log = ctx?.state?.log ?? logger;
    const routine = err.code !== undefined && ROUTINE_STREAM_ERRORS.has(err.code);
    log[routine ? 'debug' : 'warn']({ err, method: ctx?.method, path: ctx?.path }, 'response failed after it started');
  };
}
