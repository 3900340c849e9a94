import { z } from 'zod';
import t from 'tap';
import { currentRequest, type RequestScope } from '../server/src/platform/http/middleware.js';
import { defineRoute, ok } from '../server/src/platform/http/route.js';
import { startApp } from './helpers/harness.js';

/**
 * The request scope (platform/http/middleware.ts) rides on every promise made while a request
 * runs, and some of those outlive the request (a cached manifest's gzip, a shared build). What
 * could fail: the scope keeping the finished request's response (and with it the request and
 * its socket) alive for as long as such a promise is kept.
 */
t.test('the request scope holds the response only while the handlers run', async (t) => {
  let seen: RequestScope | undefined;
  let during: unknown;
  const kept: Promise<unknown>[] = [];
  const route = defineRoute({
    method: 'GET',
    path: '/api/v1/test-scope',
    auth: 'public',
    tags: ['Test'],
    summary: 'keeps a promise made in the request',
    responses: { 200: { description: 'done', data: z.object({ done: z.boolean() }) } },
    handler: async () => {
      seen = currentRequest();
      during = seen?.res;
      kept.push(Promise.resolve(1));
      return ok({ done: true });
    },
  });
  const app = await startApp(t, { extraRoutes: [route] });
  const res = await app.json('/api/v1/test-scope', { headers: { 'x-request-id': 'scope-1' } });
  t.equal(res.status, 200);
  t.equal(seen?.id, 'scope-1', 'the handler runs in its request’s scope');
  t.ok(during, 'the response is there while the handler runs');
  t.equal(seen?.res, null, 'and let go once the request is answered');
  t.equal(kept.length, 1);
});
