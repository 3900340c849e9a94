import { z } from 'zod';
import { pingDatabase } from '../../platform/db/database.js';
import { ApiError } from '../../platform/http/errors.js';
import { defineRoute, ok } from '../../platform/http/route.js';
import { SERVER_VERSION } from '../../version.js';

const Check = z.object({ ok: z.boolean(), detail: z.string() });

const Readiness = z.object({
  status: z.literal('ready'),
  checks: z.object({ database: Check, sharp: Check, ffmpeg: Check, ffprobe: Check, restore: Check }),
});

export const healthRoutes = [
  defineRoute({
    method: 'GET',
    path: '/healthz',
    auth: 'public',
    tags: ['Health'],
    summary: 'Liveness: the process responds',
    responses: {
      200: {
        description: 'The server process is up',
        data: z.object({ status: z.literal('ok'), version: z.string(), uptimeSec: z.number() }),
      },
    },
    handler: () => ok({ status: 'ok', version: SERVER_VERSION, uptimeSec: Math.round(process.uptime()) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/readyz',
    auth: 'public',
    tags: ['Health'],
    summary: 'Readiness: database and media tools usable, no restore running',
    description: 'Answers 503 `not_ready` naming what is missing. Media tool checks are cached for 30 s.',
    responses: {
      200: { description: 'Ready to serve', data: Readiness },
      503: { description: 'not_ready: details.checks names what failed' },
    },
    handler: async (ctx) => {
      const { db, tools, state } = ctx.deps;
      if (state.restoreInProgress) {
        // Answer at once: the database is being swapped and must not be waited on.
        throw new ApiError('not_ready', 'Not ready: a restore is in progress', {
          details: { checks: { restore: { ok: false, detail: 'a restore is in progress' } } },
        });
      }
      const database = await pingDatabase(db).then(
        () => ({ ok: true, detail: 'answers' }),
        (err: Error) => ({ ok: false, detail: `database does not answer: ${err.message}` }),
      );
      const media = await tools.check();
      const restore = state.restoreInProgress ? { ok: false, detail: 'a restore is in progress' } : { ok: true, detail: 'no restore running' };
      const checks = { database, ...media, restore };
      const failing = Object.entries(checks).filter(([, c]) => !c.ok);
      if (failing.length > 0) {
        throw new ApiError('not_ready', `Not ready: ${failing.map(([name, c]) => `${name} (${c.detail})`).join('; ')}`, {
          details: { checks },
        });
      }
      return ok({ status: 'ready', checks });
    },
  }),
];
