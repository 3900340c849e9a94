import { z } from 'zod';
import { ApiError } from '../../server/src/platform/http/errors.js';
import { created, defineRoute, noContent, ok, uuidParam } from '../../server/src/platform/http/route.js';

// Routes that exist only in this test, to exercise the shared pipeline.
const Thing = z.object({ id: z.string(), name: z.string(), count: z.number().int() });
export const sampleRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/test-things',
    auth: 'public',
    tags: ['Test'],
    summary: 'create',
    bodyLimitBytes: 2048,
    body: z.object({ name: z.string().min(1).max(50), count: z.number().int().min(0) }),
    responses: { 201: { description: 'made', data: Thing } },
    handler: (_ctx, { body }) => created({ id: 'x', ...body }),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/test-things/{id}',
    auth: 'public',
    tags: ['Test'],
    summary: 'read',
    params: z.object({ id: uuidParam }),
    query: z.object({ verbose: z.enum(['true', 'false']).optional() }),
    responses: { 200: { description: 'the thing', data: Thing } },
    handler: (_ctx, { params }) => ok({ id: params.id, name: 'n', count: 1 }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/test-things/{id}',
    auth: 'public',
    tags: ['Test'],
    summary: 'delete',
    params: z.object({ id: uuidParam }),
    responses: { 204: { description: 'gone' } },
    handler: () => noContent(),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/test-boom',
    auth: 'public',
    tags: ['Test'],
    summary: 'fails',
    responses: { 200: { description: 'never' } },
    handler: () => {
      throw new Error('secret internals at /srv/x.ts:12');
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/test-conflict',
    auth: 'public',
    tags: ['Test'],
    summary: 'conflict',
    responses: { 200: { description: 'never' }, 409: { description: 'always' } },
    handler: () => {
      throw new ApiError('conflict', 'already there', { details: { where: ['a'] } });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/test-drift',
    auth: 'public',
    tags: ['Test'],
    summary: 'answers data that breaks its schema',
    responses: { 200: { description: 'thing', data: Thing } },
    handler: () => ok({ id: 1 }),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/test-default-limit',
    auth: 'public',
    tags: ['Test'],
    summary: 'a body under the server-wide JSON limit',
    body: z.object({ text: z.string() }),
    responses: { 200: { description: 'length', data: z.object({ length: z.number() }) } },
    handler: (_ctx, { body }) => ok({ length: body.text.length }),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/test-koa-throw',
    auth: 'public',
    tags: ['Test'],
    summary: 'a client error raised the Koa way, with a status outside the vocabulary',
    responses: { 200: { description: 'never' }, 400: { description: 'validation_failed: what a status outside the vocabulary becomes' } },
    handler: (ctx) => ctx.throw(422, 'the Koa way'),
  }),
];

/**
 * A public route that, once a request reaches its handler, waits until the test lets it go:
 * `inside` resolves when a request is in the handler, `release()` lets it answer
 * `{data: {done: true}}`. For tests of what happens to requests in flight.
 */
export function heldRoute(method: 'GET' | 'POST', path: string) {
  let entered!: () => void;
  const inside = new Promise<void>((r) => (entered = r));
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const route = defineRoute({
    method,
    path,
    auth: 'public',
    tags: ['Test'],
    summary: 'waits for the test',
    responses: { 200: { description: 'done', data: z.object({ done: z.boolean() }) } },
    handler: async () => {
      entered();
      await released;
      return ok({ done: true });
    },
  });
  return { route, inside, release };
}
