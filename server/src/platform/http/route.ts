import type { Context } from 'koa';
import { z } from 'zod';
import type { AuthKind, Principal, Role } from './auth.js';
import type { ErrorCode } from './errors.js';

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/**
 * One status a route answers. Success statuses give `data` (a JSON envelope) or `content`
 * (anything else: documents, scripts, media, by their real content types; `image/*` ranges
 * allowed); error statuses (>= 400) give a description only: they always answer the error
 * envelope, and the document says so. Statuses the platform answers (auth, validation,
 * limits...) are added from the route's properties (platform/http/responses.ts): declare
 * only what the handler itself answers.
 */
export interface ResponseSpec {
  description: string;
  /** Schema of `data` in a JSON success envelope `{"data": ...}`. */
  data?: z.ZodType;
  /** A body that is not an envelope (documents, scripts, media): content type -> schema. */
  content?: Record<string, { schema?: z.ZodType }>;
  headers?: Record<string, { description: string }>;
  /** Error statuses: the codes it carries, when narrower than every code of that status. */
  codes?: readonly ErrorCode[];
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  auth: Principal;
}

/** What a handler returns. `undefined` means the handler wrote ctx.status/ctx.body itself. */
export type Reply =
  | { kind: 'json'; status: number; data: unknown; headers?: Record<string, string> }
  | { kind: 'empty'; status: number; headers?: Record<string, string> };

export const ok = (data: unknown, headers?: Record<string, string>): Reply => ({ kind: 'json', status: 200, data, headers });
export const created = (data: unknown, headers?: Record<string, string>): Reply => ({ kind: 'json', status: 201, data, headers });
export const noContent = (headers?: Record<string, string>): Reply => ({ kind: 'empty', status: 204, headers });

type AnyObject = z.ZodType<Record<string, unknown>>;

/**
 * One object per route: it drives the router, request validation, the response check
 * and the OpenAPI document, so they cannot drift apart.
 */
export interface RouteDef<P extends AnyObject, Q extends AnyObject, B extends z.ZodType> {
  method: HttpMethod;
  /** OpenAPI-style path: `/api/v1/screens/{id}`. */
  path: string;
  /** Who may call it; enforced centrally before anything else runs. */
  auth: AuthKind | readonly AuthKind[];
  /** For session callers: the weakest role allowed. */
  minRole?: Role;
  /**
   * A `device` route whose handler uses the principal's `screenId` only: its authentication
   * checks the credential and its screen's state without reading the screen's row (the
   * status document is the row's widest column). The screens module's `screenOf(ctx)` throws
   * on such a route. For the player's hot routes: heartbeat, liveness, media and data downloads.
   */
  deviceIdOnly?: boolean;
  summary: string;
  description?: string;
  tags: readonly string[];
  operationId?: string;
  /** True for routes Placard adds beyond the spec (marked in the OpenAPI document). */
  extension?: boolean;
  params?: P;
  query?: Q;
  /** JSON body schema. Requests without a body are validated as `{}`. */
  body?: B;
  /**
   * A fast check of the body for the requests the route usually gets, tried before `body`'s
   * schema: it answers `{ data }` only for a value the schema accepts, with the output the
   * schema would give, and undefined for anything else, which the schema then validates (so a
   * refused body gets the schema's own issues). For bodies where zod's generic machinery costs
   * more than the work (the heartbeat's 120 noise buckets).
   */
  bodyPrecheck?: (value: unknown) => { data: z.output<B> } | undefined;
  /** Body size limit for this route, when not the server's JSON default. */
  bodyLimitBytes?: number;
  /** The handler reads the request stream itself (uploads); no body parsing happens. */
  rawBody?: { contentTypes: readonly string[] };
  /**
   * The handler throttles failed attempts (sign-in, codes, tokens): the platform declares
   * 429 `rate_limited` with Retry-After. A string says what is counted.
   */
  rateLimited?: true | string;
  /**
   * The route takes `If-Match: <revision>` (resources people edit concurrently): the
   * document lists the header, and the platform declares 400 `validation_failed` for a
   * malformed one and 412 `version_conflict` for a stale one.
   */
  ifMatch?: true;
  /**
   * The route takes `Idempotency-Key` (POST and PATCH routes that create or change something
   * a retry must not do twice; platform/http/idempotency.ts): a retry with the same key and
   * request answers the first reply again. The handler must answer with a Reply (not write
   * ctx itself). The platform declares the statuses this adds (400, 409, 422).
   */
  idempotent?: true;
  /** What the handler answers; the platform's statuses are added (see ResponseSpec). */
  responses: Record<number, ResponseSpec>;
  handler: (ctx: Context, input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>) => Promise<Reply | void> | Reply | void;
}

export type Route = RouteDef<AnyObject, AnyObject, z.ZodType>;

// z.ZodObject<{}> is the type of z.object({}): a route without params or query.
export function defineRoute<
  // biome-ignore lint/complexity/noBannedTypes: z.object({})'s type
  P extends AnyObject = z.ZodObject<{}>,
  // biome-ignore lint/complexity/noBannedTypes: z.object({})'s type
  Q extends AnyObject = z.ZodObject<{}>,
  B extends z.ZodType = z.ZodUndefined,
>(def: RouteDef<P, Q, B>): Route {
  return def as unknown as Route;
}

export function authKinds(route: Pick<Route, 'auth'>): readonly AuthKind[] {
  return typeof route.auth === 'string' ? [route.auth] : route.auth;
}

/** A path id: a UUID, lower-cased. Anything else makes the route answer 404. */
export const uuidParam = z.uuid().transform((s) => s.toLowerCase());

/** `/api/v1/screens/{id}` -> `/api/v1/screens/:id` for @koa/router. */
export function toRouterPath(path: string): string {
  return path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}
