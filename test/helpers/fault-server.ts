// The real server (main() of server/src/main.ts, its fault handlers included) with routes
// that misbehave the ways the last-resort handlers exist for. Run by test/faults.test.ts
// through startServerProcess(..., { script: 'test/helpers/fault-server.ts' }).
import { PassThrough } from 'node:stream';
import { z } from 'zod';
import { main } from '../../server/src/main.js';
import { defineRoute, ok } from '../../server/src/platform/http/route.js';

const never = () => new Promise<never>(() => {});
const Answer = z.object({ done: z.boolean() });

const faultRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/test-faults/stream-error',
    auth: 'public',
    tags: ['Test'],
    summary: 'An error event nobody listens to, and no answer (what the tar upload did)',
    responses: { 200: { description: 'never', data: Answer } },
    handler: async () => {
      const stream = new PassThrough();
      setImmediate(() => stream.destroy(new Error('injected: an error event nobody listens to')));
      return never();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/test-faults/rejection',
    auth: 'public',
    tags: ['Test'],
    summary: 'Answers, leaving a rejected promise behind',
    responses: { 200: { description: 'answered', data: Answer } },
    handler: () => {
      void Promise.reject(new Error('injected: a rejection nobody handles'));
      return ok({ done: true });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/test-faults/wedge',
    auth: 'public',
    tags: ['Test'],
    summary: "Holds the database's one connection for good, then faults",
    responses: { 200: { description: 'answered', data: Answer } },
    handler: (ctx) => {
      void ctx.deps.db.connection().execute(never);
      setTimeout(() => {
        throw new Error('injected: a fault while the database is wedged');
      }, 50);
      return ok({ done: true });
    },
  }),
];

const ms = (name: string) => (process.env[name] ? Number(process.env[name]) : undefined);

await main({
  extraRoutes: faultRoutes,
  faults: {
    maxFaults: ms('FAULT_MAX'),
    requestGraceMs: ms('FAULT_GRACE_MS'),
    checkTimeoutMs: ms('FAULT_CHECK_MS'),
  },
});
