import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import type { ErrorCode } from '../http/errors.js';
import { codesForStatus, responsesOf } from '../http/responses.js';
import { authKinds, type Route } from '../http/route.js';
import { API_VERSION, SERVER_VERSION } from '../../version.js';

/** The error envelope of one status: its code is one of that status's codes (errors.ts). */
const envelopes = new Map<number, z.ZodType>();
function errorEnvelope(status: number): z.ZodType {
  let schema = envelopes.get(status);
  if (!schema) {
    const codes = codesForStatus(status);
    schema = z
      .object({
        error: z.object({
          code: z.enum(codes as [ErrorCode, ...ErrorCode[]]),
          message: z.string(),
          details: z.unknown().optional(),
        }),
      })
      .meta({ id: `Error${status}`, description: `An error answer of status ${status}: ${codes.join(', ')}.` });
    envelopes.set(status, schema);
  }
  return schema;
}

function operationId(route: Route): string {
  if (route.operationId) return route.operationId;
  const words = route.path
    .replace(/^\/api\/v1\//, '/')
    .split(/[/.-]/)
    .filter(Boolean)
    .map((w) => (w.startsWith('{') ? `by ${w.slice(1, -1)}` : w));
  const camel = [route.method.toLowerCase(), ...words]
    .join(' ')
    .replace(/[^A-Za-z0-9 ]/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1)))
    .join('');
  return camel;
}

function security(route: Route): Record<string, string[]>[] {
  const out: Record<string, string[]>[] = [];
  for (const kind of authKinds(route)) {
    if (kind === 'public') return [];
    if (kind === 'session') out.push({ sessionCookie: [] });
    else if (kind === 'device') out.push({ deviceBearer: [] });
    else out.push({ integrationBearer: [] });
  }
  return out;
}

const IfMatchHeader = z.object({
  'if-match': z
    .string()
    .optional()
    .meta({ description: 'The revision the change is based on (as in the ETag: `"3"`, `3` or `W/"3"`); a stale one answers 412 `version_conflict`' }),
});

const IdempotencyKeyHeader = z.object({
  'idempotency-key': z.string().optional().meta({
    description:
      'Makes a retry safe: 1-255 visible ASCII characters (a quoted string as the draft writes it, or bare). A retry with the same key and request answers the first reply again (with `Idempotency-Replayed: true`); kept 24 hours',
  }),
});

const headerObjects = (headers: Record<string, { description: string }>) =>
  Object.fromEntries(Object.entries(headers).map(([h, d]) => [h, { description: d.description, schema: { type: 'string' as const } }]));

function operation(route: Route): ZodOpenApiOperationObject {
  const kinds = authKinds(route);
  const responses: Record<string, NonNullable<ZodOpenApiOperationObject['responses']>['default']> = {};
  // Every status the route or the platform answers (platform/http/responses.ts); errors
  // carry the envelope of their status.
  for (const [status, spec] of Object.entries(responsesOf(route))) {
    const code = Number(status);
    const content = spec.data
      ? { 'application/json': { schema: z.object({ data: spec.data }) } }
      : spec.content
        ? Object.fromEntries(Object.entries(spec.content).map(([type, c]) => [type, c.schema ? { schema: c.schema } : {}]))
        : code >= 400
          ? { 'application/json': { schema: errorEnvelope(code) } }
          : undefined;
    responses[status] = {
      description: spec.description,
      ...(content ? { content } : {}),
      ...(spec.headers ? { headers: headerObjects(spec.headers) } : {}),
      // The error codes this operation answers with this status (a subset of the envelope's).
      ...(code >= 400 && spec.codes ? { 'x-placard-error-codes': [...spec.codes] } : {}),
    };
  }

  const op: ZodOpenApiOperationObject = {
    operationId: operationId(route),
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [...route.tags],
    security: security(route),
    responses: responses as ZodOpenApiOperationObject['responses'],
    'x-placard-auth': kinds,
    ...(route.minRole ? { 'x-placard-min-role': route.minRole } : {}),
    ...(route.extension ? { 'x-placard-extension': true } : {}),
  };
  if (route.params || route.query || route.ifMatch || route.idempotent) {
    const header = route.ifMatch && route.idempotent ? IfMatchHeader.extend(IdempotencyKeyHeader.shape) : route.ifMatch ? IfMatchHeader : IdempotencyKeyHeader;
    op.requestParams = {
      ...(route.params ? { path: route.params as never } : {}),
      ...(route.query ? { query: route.query as never } : {}),
      ...(route.ifMatch || route.idempotent ? { header: header as never } : {}),
    };
  }
  if (route.body) {
    op.requestBody = { required: true, content: { 'application/json': { schema: route.body } } };
  } else if (route.rawBody) {
    op.requestBody = { required: true, content: Object.fromEntries(route.rawBody.contentTypes.map((t) => [t, {}])) };
  }
  return op;
}

/** The OpenAPI 3.1 document, generated from the same route objects that serve requests. */
export function buildOpenApiDocument(routes: readonly Route[], options: { serverUrl?: string | null } = {}) {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    const item = (paths[route.path] ??= {});
    (item as Record<string, unknown>)[route.method.toLowerCase()] = operation(route);
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Placard signage server API',
      version: API_VERSION,
      description: `Placard ${SERVER_VERSION}: a self-hosted digital-signage server. Success bodies are {"data": ...}; errors are {"error": {"code", "message"}}.`,
      license: { name: 'AGPL-3.0-only', identifier: 'AGPL-3.0-only' },
    },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    paths,
    components: {
      securitySchemes: {
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'placard.sid', description: 'Console session; unsafe methods also send X-CSRF-Token.' },
        deviceBearer: { type: 'http', scheme: 'bearer', bearerFormat: 'device credential', description: 'svc_device_<public-id>.<secret>' },
        integrationBearer: { type: 'http', scheme: 'bearer', bearerFormat: 'integration token', description: 'svci_<public-id>.<secret>' },
      },
    },
  });
}
