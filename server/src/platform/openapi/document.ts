import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import { ERROR_CODES } from '../http/errors.js';
import { authKinds, type Route } from '../http/route.js';
import { API_VERSION, SERVER_VERSION } from '../../version.js';

const ErrorEnvelope = z
  .object({
    error: z.object({
      code: z.enum(Object.keys(ERROR_CODES) as [keyof typeof ERROR_CODES, ...(keyof typeof ERROR_CODES)[]]),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  })
  .meta({ id: 'ErrorEnvelope', description: 'Every error: a machine-readable code and a human-readable message.' });

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorEnvelope } },
});

function operationId(route: Route): string {
  if (route.operationId) return route.operationId;
  const words = route.path
    .replace(/^\/api\/v1\//, '/')
    .split(/[/.\-]/)
    .filter(Boolean)
    .map((w) => (w.startsWith('{') ? 'by ' + w.slice(1, -1) : w));
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

function operation(route: Route): ZodOpenApiOperationObject {
  const kinds = authKinds(route);
  const responses: Record<string, NonNullable<ZodOpenApiOperationObject['responses']>['default']> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    const content = spec.data
      ? { 'application/json': { schema: z.object({ data: spec.data }) } }
      : spec.content
        ? Object.fromEntries(Object.entries(spec.content).map(([type, c]) => [type, c.schema ? { schema: c.schema } : {}]))
        : undefined;
    responses[status] = { description: spec.description, ...(content ? { content } : {}), ...(spec.headers ? { headers: Object.fromEntries(Object.entries(spec.headers).map(([h, d]) => [h, { description: d.description, schema: { type: 'string' } }])) } : {}) };
  }
  const add = (status: string, description: string) => {
    if (!responses[status]) responses[status] = errorResponse(description);
  };
  if (route.query || route.body) add('400', 'validation_failed or malformed_json');
  if (!kinds.includes('public')) add('401', 'No acceptable credential (unauthenticated, invalid_credential, ...)');
  if (kinds.includes('session') || kinds.some((k) => k.startsWith('integration:'))) add('403', 'forbidden or csrf_failed');
  if (route.params) add('404', 'not_found');
  if (route.body) {
    add('413', 'payload_too_large');
    add('415', 'unsupported_media_type');
  }
  add('500', 'internal (the message carries the request id)');

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
  if (route.params || route.query) {
    op.requestParams = {
      ...(route.params ? { path: route.params as never } : {}),
      ...(route.query ? { query: route.query as never } : {}),
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
