import type Koa from 'koa';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import { ApiError } from '../../platform/http/errors.js';

/** What a client may still ask while a restore runs: the status and the runs (the restore's own progress). */
const OPEN_DURING_RESTORE = [/^\/api\/v1\/system\/status\/?$/, /^\/api\/v1\/system\/maintenance\/runs(?:\/[^/]+)?\/?$/];

/**
 * While a restore runs, every /api request but `GET /api/v1/system/status` and the
 * maintenance runs answers 503 `not_ready` at once: a write accepted now would land in the
 * database or media store the restore is about to swap out, and be lost. Registered early
 * (before sessions: it touches no database). /readyz answers 503 on its own; the console,
 * the player pages and media files outside /api keep being served.
 */
export function restoreGate(deps: AppDeps): Koa.Middleware {
  const writes = writesOf(deps);
  // A plain function: a request that is not a counted write passes on without the promise
  // (and its async hook: platform/http/middleware.ts) of an async layer.
  return (ctx, next) => {
    const api = ctx.path === '/api' || ctx.path.startsWith('/api/');
    if (deps.state.restoreInProgress && api) {
      const open = (ctx.method === 'GET' || ctx.method === 'HEAD') && OPEN_DURING_RESTORE.some((re) => re.test(ctx.path));
      if (!open) {
        throw new ApiError('not_ready', 'A restore is in progress; try again when it has finished (GET /api/v1/system/status shows it)', {
          details: { checks: { restore: { ok: false, detail: 'a restore is in progress' } } },
          headers: { 'Retry-After': '10' },
        });
      }
    }
    // Writes that got in before the gate closed are counted, so a restore can wait for them
    // (an upload's `complete` links its file into media/ and then commits its row: across
    // the swap that would be a row pointing at a file that went with the old store). The
    // maintenance routes are not: a restore started with `wait` would wait for itself. Nor
    // are tus PATCHes: they only append to a part file in uploads/, which a restore leaves.
    if (
      !api ||
      SAFE.has(ctx.method) ||
      ctx.path.startsWith('/api/v1/system/maintenance/') ||
      (ctx.method === 'PATCH' && ctx.path.startsWith('/api/v1/uploads/'))
    )
      return next();
    return counted(writes, next);
  };
}

async function counted(writes: Writes, next: Koa.Next): Promise<void> {
  writes.inFlight++;
  try {
    await next();
  } finally {
    writes.inFlight--;
    if (writes.inFlight === 0) for (const wake of writes.waiters.splice(0)) wake();
  }
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

interface Writes {
  inFlight: number;
  waiters: (() => void)[];
}
const WRITES = new ScopeKey<Writes>('system.writes-in-flight', () => ({ inFlight: 0, waiters: [] }));

function writesOf(deps: AppDeps): Writes {
  return deps.scope.get(WRITES);
}

/**
 * Waits until no /api write that passed the gate is still running, or `timeoutMs` passed;
 * answers how many are still running then. Call after setting `restoreInProgress` (no new
 * write gets in). A write that outlasts the wait (a tus PATCH streaming a big file) goes on;
 * its part file is not in the swapped data, and its row update finds the restored database.
 */
export async function drainWrites(deps: AppDeps, timeoutMs: number): Promise<number> {
  const writes = writesOf(deps);
  if (writes.inFlight === 0) return 0;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    writes.waiters.push(() => {
      clearTimeout(timer);
      resolve();
    });
  });
  return writes.inFlight;
}
