import t from 'tap';
import { z } from 'zod';
import { defineRoute, ok } from '../server/src/platform/http/route.js';
import { startApp } from './helpers/harness.js';

/**
 * A route's body pre-check (RouteDef.bodyPrecheck): what it accepts reaches the handler as it
 * answered, without the schema; whatever it refuses is validated by the schema, so a refused
 * body gets the schema's own 400 envelope, the same as a route without a pre-check.
 */

const Body = z.object({ n: z.number().int().min(0), tags: z.array(z.string()).max(3).optional() });
const seen = { accepted: 0, refused: 0 };
const precheck = (v: unknown) => {
  const o = v as { n?: unknown; tags?: unknown } | null;
  if (o && typeof o === 'object' && Object.keys(o).length === 1 && Number.isInteger(o.n) && (o.n as number) >= 0) {
    seen.accepted++;
    // The schema's output for this value; the marker is how the test tells which path ran.
    return { data: { n: o.n as number, via: 'precheck' } as z.output<typeof Body> };
  }
  seen.refused++;
  return undefined;
};
const route = (path: string, withPrecheck: boolean) =>
  defineRoute({
    method: 'POST',
    path,
    auth: 'public',
    tags: ['Test'],
    summary: 'echo',
    body: Body,
    ...(withPrecheck ? { bodyPrecheck: precheck } : {}),
    responses: { 200: { description: 'the body as validated', data: z.record(z.string(), z.unknown()) } },
    handler: (_ctx, { body }) => ok(body),
  });

t.test('the pre-check answers what it accepts; the schema validates the rest, with its own errors', async (t) => {
  const app = await startApp(t, { extraRoutes: [route('/api/v1/test-precheck', true), route('/api/v1/test-plain', false)] });
  const post = (path: string, json: unknown) => app.json(path, { method: 'POST', json });

  const fast = await post('/api/v1/test-precheck', { n: 3 });
  t.equal(fast.status, 200);
  t.same(fast.body.data, { n: 3, via: 'precheck' }, 'the handler got the pre-check’s output');
  t.equal(seen.accepted, 1);

  const slow = await post('/api/v1/test-precheck', { n: 3, tags: ['a'] });
  t.equal(slow.status, 200);
  t.same(slow.body.data, { n: 3, tags: ['a'] }, 'a body the pre-check leaves goes through the schema');
  t.equal(seen.refused, 1);

  for (const bad of [{ n: -1 }, { n: 1.5 }, { n: '2' }, { n: 1, tags: ['a', 'b', 'c', 'd'] }, [], {}]) {
    const mine = await post('/api/v1/test-precheck', bad);
    const plain = await post('/api/v1/test-plain', bad);
    t.equal(mine.status, 400, JSON.stringify(bad));
    t.strictSame(mine.body, plain.body, `${JSON.stringify(bad)}: the envelope of a route without a pre-check`);
    t.equal(mine.body.error.code, 'validation_failed');
  }
  t.equal(seen.accepted, 1, 'the pre-check accepted none of the refused bodies');
});
