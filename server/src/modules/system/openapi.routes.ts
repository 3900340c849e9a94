import type { Context } from 'koa';
import { z } from 'zod';
import { defineRoute } from '../../platform/http/route.js';
import { buildOpenApiDocument } from '../../platform/openapi/document.js';

const documents = new WeakMap<object, string>();

/** The document is built once per app (routes do not change while it runs). */
function documentFor(ctx: Context): string {
  let doc = documents.get(ctx.routes);
  if (!doc) {
    doc = JSON.stringify(buildOpenApiDocument(ctx.routes, { serverUrl: ctx.deps.config.publicUrl }));
    documents.set(ctx.routes, doc);
  }
  return doc;
}

export const openApiRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/openapi.json',
    auth: 'public',
    extension: true,
    tags: ['System'],
    summary: 'This API as an OpenAPI 3.1 document',
    description: 'Served as the bare document (no envelope) so OpenAPI tools read it directly.',
    responses: {
      200: { description: 'The OpenAPI 3.1 document', content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } },
    },
    handler: (ctx) => {
      ctx.type = 'application/json';
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = documentFor(ctx);
    },
  }),
];
