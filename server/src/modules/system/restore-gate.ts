import type Koa from 'koa';
import type { AppDeps } from '../../app.js';
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
  return async (ctx, next) => {
    if (deps.state.restoreInProgress && (ctx.path === '/api' || ctx.path.startsWith('/api/'))) {
      const open = (ctx.method === 'GET' || ctx.method === 'HEAD') && OPEN_DURING_RESTORE.some((re) => re.test(ctx.path));
      if (!open) {
        throw new ApiError('not_ready', 'A restore is in progress; try again when it has finished (GET /api/v1/system/status shows it)', {
          details: { checks: { restore: { ok: false, detail: 'a restore is in progress' } } },
          headers: { 'Retry-After': '10' },
        });
      }
    }
    await next();
  };
}
