import { z } from 'zod';
import type { AppDeps } from '../../platform/app-deps.js';
import { type Db, openedDatabaseOf, pingDatabase } from '../../platform/db/database.js';
import { ApiError } from '../../platform/http/errors.js';
import { defineRoute, ok } from '../../platform/http/route.js';
import { ScopeKey } from '../../platform/app-scope.js';
import { StorageHealth, withDeadline } from '../../platform/storage.js';
import { SERVER_VERSION } from '../../version.js';

const Check = z.object({ ok: z.boolean(), detail: z.string() });

const Checks = z.object({
  database: Check,
  sharp: Check,
  ffmpeg: Check,
  ffprobe: Check,
  restore: Check,
  mediaStore: Check,
  uploads: Check,
  diskSpace: Check,
});

const Readiness = z.object({ status: z.literal('ready'), checks: Checks });

/** How long the database may take to answer `select 1` before readiness says it does not. */
const DATABASE_TIMEOUT_MS = 2_000;

/** The storage probes of each app (cached a few seconds: /readyz is public and polled). */
const STORAGE = new ScopeKey<{ health?: StorageHealth }>('health.storage', () => ({}));
function storageOf(deps: AppDeps): StorageHealth {
  const slot = deps.scope.get(STORAGE);
  slot.health ??= new StorageHealth(deps.config.dataDir, deps.config.minFreeBytes);
  return slot.health;
}

/** PostgreSQL: the pool's state after the ping (SQLite has one connection, no pool). */
function poolDetail(db: Db): string {
  const pool = openedDatabaseOf(db)?.pool;
  if (!pool) return '';
  return ` (PostgreSQL pool: ${pool.totalCount - pool.idleCount} of ${pool.totalCount} connections busy, ${pool.waitingCount} waiting)`;
}

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
    summary: 'Readiness: database, media tools and storage usable, no restore running',
    description:
      'Answers 503 `not_ready` naming what is missing: the database answers (within 2 s; on PostgreSQL the detail gives the pool’s busy and waiting connections); sharp, ffmpeg and ffprobe run; no restore is running; ' +
      '`media/` and `uploads/` take a new file (written, fsynced, removed); the data directory’s disk has more free space than ' +
      'PLACARD_MIN_FREE_BYTES (256 MiB by default). Media tool checks are cached for 30 s, storage checks for 5 s.',
    responses: {
      200: { description: 'Ready to serve', data: Readiness },
      503: {
        description: 'not_ready: a check failed; `details.checks` holds every check with `ok` and `detail`, the message names the failing ones',
      },
    },
    handler: async (ctx) => {
      const { db, tools, state } = ctx.deps;
      if (state.restoreInProgress) {
        // Answer at once: the database is being swapped and must not be waited on.
        throw new ApiError('not_ready', 'Not ready: a restore is in progress', {
          details: { checks: { restore: { ok: false, detail: 'a restore is in progress' } } },
        });
      }
      const [database, media, stored] = await Promise.all([
        withDeadline(pingDatabase(db), DATABASE_TIMEOUT_MS, 'the database').then(
          () => ({ ok: true, detail: `answers${poolDetail(db)}` }),
          (err: Error) => ({ ok: false, detail: `database does not answer: ${err.message}${poolDetail(db)}` }),
        ),
        tools.check(),
        storageOf(ctx.deps).check(),
      ]);
      const restore = state.restoreInProgress ? { ok: false, detail: 'a restore is in progress' } : { ok: true, detail: 'no restore running' };
      const checks = { database, ...media, restore, ...stored };
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
