import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { z } from 'zod';
import { authenticate, isAuthKind, type Authenticators, type Principal } from './auth.js';
import { ApiError, knownFailure, type ErrorCode } from './errors.js';
import { claimIdempotencyKey, idempotencyKeyOf, principalKeyOf } from './idempotency.js';
import { parseJsonBody, readBodyText } from './json-body.js';
import { CODE_BY_STATUS } from './middleware.js';
import { contentTypeDeclared, responsesOf } from './responses.js';
import { authKinds, toRouterPath, type Reply, type Route } from './route.js';

export interface RouterOptions {
  jsonLimitBytes: number;
  validateResponses: boolean;
  authenticators: () => Authenticators;
}

type Location = 'params' | 'query' | 'body';

function issuesOf(location: Location, error: z.ZodError) {
  return error.issues.map((i) => ({ location, path: i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)), message: i.message, code: i.code }));
}

function validate<T>(schema: z.ZodType<T> | undefined, value: unknown, location: Location): T {
  if (!schema) return (location === 'body' ? undefined : {}) as T;
  return validated(schema.safeParse(value), location);
}

/** The value of a successful validation, or the error it answers (404 for params, else 400 with zod's issues). */
function validated<T>(result: z.ZodSafeParseResult<T>, location: Location): T {
  if (result.success) return result.data;
  if (location === 'params') throw new ApiError('not_found', 'Resource not found');
  const issues = issuesOf(location, result.error);
  const first = issues[0];
  const where = first ? `${location}${first.path.length ? `.${first.path.join('.')}` : ''}: ${first.message}` : location;
  throw new ApiError('validation_failed', `Invalid request ${where}`, { details: { issues } });
}

/**
 * A route's body as the router validates it: the route's pre-check (RouteDef.bodyPrecheck)
 * when it accepts the value, else the body schema, whose issues a refusal then carries.
 */
export function safeParseBody(route: Pick<Route, 'body' | 'bodyPrecheck'>, value: unknown): z.ZodSafeParseResult<unknown> {
  const fast = route.bodyPrecheck?.(value);
  if (fast) return { success: true, data: fast.data };
  return route.body ? route.body.safeParse(value) : { success: true, data: undefined };
}

const isJsonType = (type: string) => /^application\/([a-z0-9.+-]+\+)?json$/i.test(type);

function hasBody(ctx: Context): boolean {
  const len = ctx.get('content-length');
  if (len) return Number(len) > 0;
  return Boolean(ctx.get('transfer-encoding'));
}

/**
 * Reads a JSON body as text (readBodyText: size limit, content codings) and parses it with
 * parseJsonBody (depth, entry and key limits, then JSON.parse); failures map onto the error
 * vocabulary. The text is kept as `ctx.request.body` (an Idempotency-Key compares it).
 */
function jsonBodyParser(limitBytes: number): (ctx: Context) => Promise<unknown> {
  return async (ctx) => {
    if (!hasBody(ctx)) return {};
    const type = ctx.request.type;
    if (!isJsonType(type)) {
      throw new ApiError('unsupported_media_type', `Send the body as application/json${type ? ` (got ${type})` : ''}`);
    }
    let text: string;
    try {
      text = await readBodyText(ctx.req, limitBytes);
    } catch (err) {
      const e = err as { status?: number };
      if (e.status === 413) throw new ApiError('payload_too_large', `The body is larger than ${limitBytes} bytes`);
      if (e.status === 415) throw new ApiError('unsupported_media_type', 'Unsupported body encoding');
      throw new ApiError('malformed_json', 'The body could not be read as text');
    }
    ctx.request.body = text;
    return parseJsonBody(text);
  };
}

/**
 * A route answered something its definition does not declare (PLACARD_VALIDATE_RESPONSES,
 * on in tests): a status, an error code, a content type or a body. Answered 500, logged
 * with the reason.
 */
export class ResponseContractError extends Error {
  constructor(route: Pick<Route, 'method' | 'path'>, what: string) {
    super(`${route.method} ${route.path} ${what}`);
    this.name = 'ResponseContractError';
  }
}

/** The status (and code) the error envelope (middleware.ts, answerError) will answer for `err`; it mirrors that middleware. */
export function answeredStatus(err: unknown): { status: number; code: string } {
  if (err instanceof ApiError) return { status: err.status, code: err.code };
  const known = knownFailure(err);
  if (known) return { status: known.status, code: known.code };
  const e = err as { status?: number; expose?: boolean } | null;
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500 && e.expose) {
    // As answerError maps it: a status of the vocabulary keeps its code, any other is 400.
    const code = CODE_BY_STATUS[e.status];
    return code ? { status: e.status, code } : { status: 400, code: 'validation_failed' };
  }
  return { status: 500, code: 'internal' };
}

function checkThrown(route: Route, err: unknown): void {
  const { status, code } = answeredStatus(err);
  const declared = responsesOf(route)[status];
  const why = err instanceof Error ? `: ${err.message}` : '';
  if (!declared) throw new ResponseContractError(route, `answered ${status} ${code}, a status it does not declare${why}`);
  const coded = err instanceof ApiError || knownFailure(err) !== null;
  if (coded && declared.codes && !declared.codes.includes(code as ErrorCode)) {
    throw new ResponseContractError(route, `answered ${status} with code ${code}, not one of its declared ${declared.codes.join(', ')}${why}`);
  }
}

/** A handler that wrote ctx.status/ctx.body itself: the status and the content type must be declared. */
function checkWritten(ctx: Context, route: Route): void {
  const status = ctx.status;
  const declared = responsesOf(route)[status];
  if (!declared) throw new ResponseContractError(route, `answered ${status}, a status it does not declare`);
  const empty = (ctx.body == null || ctx.body === '') && (ctx.method !== 'HEAD' || !ctx.response.get('Content-Type'));
  if (status === 204 || status === 304 || empty) return;
  const type = ctx.response.get('Content-Type');
  const types = declared.data ? ['application/json'] : Object.keys(declared.content ?? {});
  if (!type || !contentTypeDeclared(type, types)) {
    throw new ResponseContractError(route, `answered ${status} as ${type || 'no content type'}, not one of its declared ${types.join(', ') || '(no body)'}`);
  }
}

function applyReply(ctx: Context, route: Route, reply: Reply, validateResponses: boolean): void {
  if (reply.headers) ctx.set(reply.headers);
  if (validateResponses && !responsesOf(route)[reply.status]) {
    throw new ResponseContractError(route, `answered ${reply.status}, a status it does not declare`);
  }
  ctx.status = reply.status;
  if (reply.kind === 'empty') {
    ctx.body = null;
    return;
  }
  const schema = route.responses[reply.status]?.data;
  if (validateResponses) {
    if (!schema) throw new ResponseContractError(route, `answered ${reply.status} with a JSON body, which it does not declare`);
    const checked = schema.safeParse(reply.data);
    if (!checked.success) {
      throw new ResponseContractError(route, `answered data that breaks its schema: ${JSON.stringify(checked.error.issues)}`);
    }
  }
  ctx.body = { data: reply.data };
}

/** Builds the full request pipeline of one route: auth, body, validation, handler, reply. */
function routeMiddleware(route: Route, options: RouterOptions): Middleware {
  const kinds = authKinds(route);
  const parseBody = route.body && !route.rawBody ? jsonBodyParser(route.bodyLimitBytes ?? options.jsonLimitBytes) : null;
  const rawTypes = route.rawBody?.contentTypes;
  // A public route needs no authenticate() call, and a handler that answers at once no
  // await: each promise and await of a request costs an async hook (the request scope,
  // middleware.ts), and /healthz, the bench's routes and a 304 are a few microseconds of work.
  const isPublic = kinds.includes('public');
  const pipeline = async (ctx: Context) => {
    const auth: Principal = isPublic ? { kind: 'anonymous' } : await authenticate(ctx, kinds, route.minRole, options.authenticators(), route.deviceIdOnly);
    ctx.state.auth = auth;
    const params = validate(route.params, ctx.params, 'params');
    const query = validate(route.query, ctx.query, 'query');
    let body: unknown;
    if (parseBody) {
      body = validated(safeParseBody(route, await parseBody(ctx)), 'body');
    } else if (rawTypes && hasBody(ctx)) {
      if (!rawTypes.includes(ctx.request.type)) throw new ApiError('unsupported_media_type', `Send the body as ${rawTypes.join(' or ')}`);
      // Raw bodies are stored as sent: a compressed one would be kept compressed (and a
      // gzip bomb never inflated here), so a content coding is refused (RFC 9110 15.5.16).
      const coding = ctx.get('content-encoding').trim().toLowerCase();
      if (coding && coding !== 'identity') {
        throw new ApiError('unsupported_media_type', `Content-Encoding ${coding.slice(0, 40)} is not accepted here: send the bytes uncompressed`);
      }
    }
    const key = route.idempotent ? idempotencyKeyOf(ctx) : null;
    const principal = key === null ? null : principalKeyOf(auth);
    if (key === null || principal === null) {
      const answered = route.handler(ctx, { params, query, body, auth } as never);
      const reply = answered instanceof Promise ? await answered : answered;
      if (reply) applyReply(ctx, route, reply, options.validateResponses);
      else if (options.validateResponses) checkWritten(ctx, route);
      return;
    }
    // Idempotency-Key (idempotency.ts): the body as sent, so the same bytes are the same request.
    const sent = typeof ctx.request.body === 'string' ? ctx.request.body : '';
    const claim = await claimIdempotencyKey(ctx.deps.db, { principal, key, method: ctx.method, path: ctx.path, body: sent });
    if (claim.kind === 'replay') {
      applyReply(ctx, route, claim.reply, options.validateResponses);
      return;
    }
    let reply: Reply | void;
    try {
      reply = await route.handler(ctx, { params, query, body, auth } as never);
      if (reply) applyReply(ctx, route, reply, options.validateResponses);
      else if (options.validateResponses) checkWritten(ctx, route);
    } catch (err) {
      // Errors are not kept: the key is free again, and a retry runs the request.
      await claim.release().catch((e: unknown) => ctx.deps.logger.warn({ err: e }, 'could not release an Idempotency-Key'));
      throw err;
    }
    try {
      // A handler that wrote the answer itself has nothing to keep: the key is freed.
      if (reply) await claim.finish(reply);
      else await claim.release();
    } catch (err) {
      // The change is made; answer it. A retry with this key may run again (logged).
      ctx.deps.logger.warn({ err }, 'could not keep the reply of an Idempotency-Key');
      await claim.release().catch(() => undefined);
    }
  };
  if (!options.validateResponses) return pipeline;
  // Tests: every answer, errors included, must be one the route declares (responses.ts).
  return async (ctx) => {
    try {
      await pipeline(ctx);
    } catch (err) {
      if (!(err instanceof ResponseContractError)) checkThrown(route, err);
      throw err;
    }
  };
}

function segmentsOf(path: string): string[] {
  return path.split('/').filter(Boolean);
}

/**
 * Literal segments before parameters, position by position, so that
 * `/content-submissions/{id}/approve` is tried before `/content-submissions/{type}/{id}`;
 * an explicit HEAD before the GET that would also answer HEAD.
 */
export function compareRoutes(a: Pick<Route, 'path' | 'method'>, b: Pick<Route, 'path' | 'method'>): number {
  const sa = segmentsOf(a.path);
  const sb = segmentsOf(b.path);
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    const pa = sa[i]!.startsWith('{');
    const pb = sb[i]!.startsWith('{');
    if (pa !== pb) return pa ? 1 : -1;
  }
  if (a.path === b.path && a.method !== b.method) {
    if (a.method === 'HEAD') return -1;
    if (b.method === 'HEAD') return 1;
  }
  return 0;
}

/** Checks the route table once at start: one definition per method+path, sane auth. */
export function checkRoutes(routes: readonly Route[]): void {
  const seen = new Set<string>();
  for (const r of routes) {
    const key = `${r.method} ${r.path}`;
    if (seen.has(key)) throw new Error(`route defined twice: ${key}`);
    seen.add(key);
    const kinds = r.auth === undefined ? [] : authKinds(r);
    if (kinds.length === 0) throw new Error(`route without an auth kind: ${key}`);
    for (const k of kinds) if (!isAuthKind(k)) throw new Error(`${key}: unknown auth kind ${JSON.stringify(k)}`);
    if (kinds.includes('public') && kinds.length > 1) throw new Error(`a public route takes no other auth kind: ${key}`);
    if (r.idempotent && ((r.method !== 'POST' && r.method !== 'PATCH') || kinds.includes('public'))) {
      throw new Error(`${key}: Idempotency-Key is for POST and PATCH routes with a caller`);
    }
    for (const m of r.path.matchAll(/\{([^}]+)\}/g)) {
      const shape = (r.params as unknown as { shape?: Record<string, unknown> } | undefined)?.shape;
      if (!shape || !(m[1]! in shape)) throw new Error(`${key}: path parameter {${m[1]}} has no schema`);
    }
  }
}

/**
 * The key a path is grouped by: `/api/v1/<resource>` for the API, else its first segment.
 * @koa/router tries its layers one regex at a time, so one router of every route cost each
 * request ~300 regex tests (issue 24's profile: more than the /healthz handler itself); one
 * router per key tries at most the thirty-odd routes of one resource.
 */
function groupKey(path: string): string {
  const s = path.split('/', 5);
  return s[1] === 'api' && s[2] === 'v1' ? `/api/v1/${s[3] ?? ''}` : `/${s[1] ?? ''}`;
}

/**
 * The router: every route's pipeline, then the fallbacks. A path that exists for other
 * methods answers 405 with Allow (OPTIONS answers 204 with Allow); anything else 404.
 *
 * @koa/router matches (its regexes, case-sensitive, an optional trailing slash, parameters
 * decoded as it decodes them), but its `routes()` middleware is not used: per request it
 * composed a fresh middleware chain of the matched layers (flattening arrays, one closure a
 * layer), read the Host header for host matching, and stored matched-route fields nothing
 * here reads (issue 24's second profile: ~1.7 µs of a /healthz request). A method+path has
 * one layer, whose pipeline never calls next, so the first layer matching the path and the
 * method is what its chain ran; it runs directly.
 */
export function buildRouter(routes: readonly Route[], options: RouterOptions): Middleware {
  checkRoutes(routes);
  const sorted = [...routes].sort(compareRoutes);
  // A route whose key holds a parameter (none today) could match a path of any key: it joins every group.
  const everywhere = (route: Route) => groupKey(route.path).includes('{');
  const keys = new Set(sorted.filter((r) => !everywhere(r)).map((r) => groupKey(r.path)));
  const build = (key: string | null) => {
    // Case-sensitive: /API/... is not /api/... (path checks elsewhere, the restore gate and
    // no-store among them, rely on that).
    const router = new Router({ sensitive: true });
    for (const route of sorted) {
      if (!everywhere(route) && groupKey(route.path) !== key) continue;
      const methods = route.method === 'GET' ? ['HEAD', 'GET'] : [route.method];
      router.register(toRouterPath(route.path), methods, routeMiddleware(route, options), { name: `${route.method} ${route.path}` });
    }
    return router;
  };
  const groups = new Map([...keys].map((key) => [key, build(key)]));
  const rest = build(null);
  return (ctx) => {
    const path = ctx.path;
    const router = groups.get(groupKey(path)) ?? rest;
    const match = router.match(path, ctx.method);
    const layer = match.pathAndMethod[0];
    if (layer) {
      ctx.params = layer.params(path, layer.captures(path), {});
      (ctx.request as { params?: unknown }).params = ctx.params;
      return (layer.stack[0] as Middleware)(ctx, noNext);
    }
    if (match.path.length === 0) {
      throw new ApiError('not_found', `No route ${ctx.method} ${path}`);
    }
    const allowed = new Set<string>();
    for (const l of match.path) for (const m of l.methods) allowed.add(m);
    const allow = [...allowed].join(', ');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Allow', allow);
      ctx.status = 204;
      return;
    }
    throw new ApiError('method_not_allowed', `${ctx.method} is not allowed here; allowed: ${allow}`, {
      headers: { Allow: allow },
    });
  };
}

/** A route's pipeline answers; it never calls on. */
const noNext = async () => {};
