import { roleAtLeast } from './auth.js';
import { ERROR_CODES, type ErrorCode } from './errors.js';
import { authKinds, type ResponseSpec, type Route } from './route.js';

/**
 * Every status an operation can answer, in one place: the statuses its definition
 * declares (what its handler answers) plus the ones the platform adds from the route's
 * properties (auth kinds, role, path parameters, query, body, rate limiting, being under
 * /api). The OpenAPI document is built from this, and the router's response check
 * (PLACARD_VALIDATE_RESPONSES, on in tests) refuses any status that is not in it.
 * docs/api-conventions.md ("Which statuses an operation declares") states the rules.
 */

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A response as the document and the response check see it. */
export interface DeclaredResponse extends ResponseSpec {
  /** Error codes an error answer (>= 400) of this status may carry. */
  codes?: readonly ErrorCode[];
}

/** The codes an error answer of `status` may carry (version_conflict is 409 when no If-Match was sent). */
export function codesForStatus(status: number): ErrorCode[] {
  const codes = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((c) => ERROR_CODES[c].status === status);
  if (status === 409) codes.push('version_conflict');
  return codes;
}

const list = (codes: readonly string[]) => codes.join(', ');

/**
 * The statuses the platform answers for a route before or around its handler, by rule:
 *
 * - 400 `validation_failed`/`malformed_json`: the route has a query or a JSON body schema;
 * - 401: every route that is not public (which codes depends on the kinds it takes);
 * - 403: `csrf_failed` for session routes with an unsafe method, `forbidden` for a minRole
 *   above viewer and for integration tokens (capability), `screen_disabled` for device routes;
 * - 400 `validation_failed` and 412 `version_conflict`: the route takes If-Match (`ifMatch`);
 * - 400 `validation_failed`, 409 `conflict` and 422 `idempotency_key_reused`: the route takes
 *   Idempotency-Key (`idempotent`); its success statuses list the `Idempotency-Replayed` header;
 * - 404 `not_found`: the route has path parameters (an id that is not a UUID, an unknown one);
 * - 413 `payload_too_large`: a JSON body (over the route's limit);
 * - 415 `unsupported_media_type`: a JSON body or a raw body of given types;
 * - 429 `rate_limited`: the route is `rateLimited` (its handler counts failed attempts);
 * - 500 `internal`: every route;
 * - 503 `not_ready`: every route under /api/ (a restore is running, or the data directory
 *   is unusable: a directory replaced by a file, no write permission, a read-only disk);
 * - 507 `insufficient_storage`: every route under /api/ (sessions, credentials and the
 *   routes themselves write to the database; a full disk answers 507).
 */
export function platformResponses(route: Route): Record<number, DeclaredResponse> {
  const kinds = authKinds(route);
  const out: Record<number, DeclaredResponse> = {};
  const api = route.path.startsWith('/api/');
  if (route.query || route.body) {
    out[400] = { description: 'validation_failed (details.issues names each problem) or malformed_json', codes: ['validation_failed', 'malformed_json'] };
  }
  if (!kinds.includes('public')) {
    const codes: ErrorCode[] = ['unauthenticated', 'invalid_credential'];
    if (kinds.includes('session')) codes.push('mfa_required');
    if (kinds.includes('device') || kinds.some((k) => k.startsWith('integration:'))) codes.push('credential_revoked');
    out[401] = { description: `No credential of a kind this route accepts, or a bad one: ${list(codes)}`, codes };
    const forbidden: ErrorCode[] = [];
    if (kinds.includes('session') && UNSAFE.has(route.method)) forbidden.push('csrf_failed');
    if ((kinds.includes('session') && route.minRole && !roleAtLeast('viewer', route.minRole)) || kinds.some((k) => k.startsWith('integration:'))) {
      forbidden.push('forbidden');
    }
    if (kinds.includes('device')) forbidden.push('screen_disabled');
    if (forbidden.length) out[403] = { description: list(forbidden), codes: forbidden };
  }
  if (route.ifMatch) {
    const malformed = 'validation_failed: If-Match is not a revision';
    out[400] = out[400] ? { ...out[400], description: `${out[400].description}; ${malformed}` } : { description: malformed, codes: ['validation_failed'] };
    out[412] = { description: 'version_conflict: If-Match names a revision that is no longer current (details.currentRevision)', codes: ['version_conflict'] };
  }
  if (route.idempotent) {
    const badKey = 'validation_failed: Idempotency-Key is not 1-255 visible ASCII characters';
    out[400] = out[400] ? { ...out[400], description: `${out[400].description}; ${badKey}` } : { description: badKey, codes: ['validation_failed'] };
    out[409] = { description: 'conflict: a request with this Idempotency-Key is still being processed; retry shortly', codes: ['conflict'] };
    out[422] = {
      description: 'idempotency_key_reused: this Idempotency-Key was used for a different request (method, path or body)',
      codes: ['idempotency_key_reused'],
    };
  }
  if (route.params) out[404] = { description: 'not_found: a path id that is not a UUID, or names nothing', codes: ['not_found'] };
  if (route.body && !route.rawBody) out[413] = { description: 'payload_too_large: the body is over the route’s limit', codes: ['payload_too_large'] };
  if ((route.body && !route.rawBody) || route.rawBody) {
    out[415] = { description: 'unsupported_media_type: a body of a type the route does not take', codes: ['unsupported_media_type'] };
  }
  if (route.rateLimited) {
    out[429] = {
      description: `rate_limited: too many failed attempts${typeof route.rateLimited === 'string' ? ` (${route.rateLimited})` : ''}; Retry-After says when to try again`,
      codes: ['rate_limited'],
      headers: { 'Retry-After': { description: 'seconds' } },
    };
  }
  out[500] = { description: 'internal: an unexpected failure; the message and details.requestId carry the request id', codes: ['internal'] };
  if (api) {
    out[503] = {
      description: 'not_ready: a restore is in progress, or the data directory is unusable (/readyz names the check)',
      codes: ['not_ready'],
      headers: { 'Retry-After': { description: 'seconds' } },
    };
    out[507] = { description: 'insufficient_storage: the data directory’s disk is full; nothing was kept', codes: ['insufficient_storage'] };
  }
  return out;
}

/**
 * The codes a declared error names where its description starts (`conflict: the email is
 * taken`, `invalid_credential or credential_revoked`); every code of the status when it
 * names none.
 */
export function namedCodes(status: number, description: string): ErrorCode[] {
  const possible = codesForStatus(status);
  const head = /^([a-z_]+(?:(?:\s*,\s*|\s+or\s+|\s*\/\s*)[a-z_]+)*)/.exec(description)?.[1] ?? '';
  const named = head.split(/\s*,\s*|\s+or\s+|\s*\/\s*/).filter((c): c is ErrorCode => (possible as string[]).includes(c));
  return named.length ? named : possible;
}

const REPLAYED_HEADER = {
  'Idempotency-Replayed': {
    description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key (the request did not run again)',
  },
};

const cache = new WeakMap<Route, Readonly<Record<number, DeclaredResponse>>>();

/**
 * Everything a route can answer: its own declared responses merged with the platform's.
 * An error status both declare keeps the route's words and gains the platform's codes.
 */
export function responsesOf(route: Route): Readonly<Record<number, DeclaredResponse>> {
  let merged = cache.get(route);
  if (merged) return merged;
  const platform = platformResponses(route);
  const out: Record<number, DeclaredResponse> = {};
  for (const [key, spec] of Object.entries(route.responses)) {
    const status = Number(key);
    const extra = platform[status];
    const codes = status >= 400 ? [...new Set([...(spec.codes ?? namedCodes(status, spec.description)), ...(extra?.codes ?? [])])] : undefined;
    out[status] = {
      ...spec,
      ...(extra && extra.description !== spec.description ? { description: `${spec.description}; also ${extra.description}` } : {}),
      ...(codes ? { codes } : {}),
      ...(extra?.headers || spec.headers ? { headers: { ...extra?.headers, ...spec.headers } } : {}),
    };
  }
  for (const [key, spec] of Object.entries(platform)) if (!(Number(key) in out)) out[Number(key)] = spec;
  if (route.idempotent) {
    for (const [key, spec] of Object.entries(out)) {
      if (Number(key) < 300) out[Number(key)] = { ...spec, headers: { ...spec.headers, ...REPLAYED_HEADER } };
    }
  }
  merged = Object.freeze(out);
  cache.set(route, merged);
  return merged;
}

/** True when `type` (a Content-Type, parameters allowed) is one of `declared` (`image/*` ranges allowed). */
export function contentTypeDeclared(type: string, declared: readonly string[]): boolean {
  const bare = type.split(';')[0]!.trim().toLowerCase();
  return declared.some((d) => {
    const want = d.toLowerCase();
    if (want === '*/*') return true;
    if (want.endsWith('/*')) return bare.startsWith(want.slice(0, -1));
    return bare === want.split(';')[0]!.trim();
  });
}
