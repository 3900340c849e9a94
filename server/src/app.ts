import Koa, { type Context } from 'koa';
import { defaultAuthenticators } from './authenticators.js';
import { consoleScriptHashes, consoleStatic, defaultConsoleDir } from './platform/http/console.js';
import { conventions, logLateErrors } from './platform/http/middleware.js';
import { pruneIdempotencyKeys } from './platform/http/idempotency.js';
import { buildRouter } from './platform/http/router.js';
import { ServerSecrets } from './platform/security/secrets.js';
import { Throttle } from './platform/security/throttle.js';
import { RealtimeHub } from './platform/realtime/hub.js';
import { ROUTES } from './routes.js';
import { MODULES } from './modules/index.js';
import { restoreGate } from './modules/system/index.js';
import { webReleaseResolver } from './modules/update-deployments/web-releases.js';
import type { AppDeps } from './platform/app-deps.js';

/** The same page on this server's HTTPS listener, for a plain-HTTP request (null: already secure, or no listener). */
function httpsUrlOf(deps: AppDeps, ctx: Context): string | null {
  if (ctx.secure || !deps.https) return null;
  const port = deps.https.port === 443 ? '' : `:${deps.https.port}`;
  return `https://${ctx.hostname}${port}${ctx.originalUrl}`;
}

/** The Koa application: conventions, auth, every route. Tests build it on port 0. */
export function buildApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy });
  const realtime = (deps.realtime ??= new RealtimeHub(deps.logger));
  realtime.attachCluster(deps.cluster); // players on other instances (PostgreSQL)
  const authenticators = deps.authenticators ?? defaultAuthenticators(deps);
  const routes = [...ROUTES, ...(deps.extraRoutes ?? [])];
  const secrets = new ServerSecrets(deps.config.dataDir);
  const throttle = new Throttle(deps.db);
  app.context.deps = deps;
  app.context.routes = routes;
  app.context.realtime = realtime;
  app.context.secrets = secrets;
  app.context.throttle = throttle;
  app.silent = true; // errors are logged by conventions' error envelope with the request id...
  app.on('error', logLateErrors(deps.logger)); // ...and those after a response started, here
  app.use(conventions(deps.logger)); // request id and log, error envelope, common headers
  app.use(restoreGate(deps)); // /api answers 503 while a restore swaps the data (modules/system)
  // The console and the player pages (before sessions: static files need none).
  app.use(
    consoleStatic(deps.config.consoleDir ?? defaultConsoleDir(), routes, {
      httpsRedirect: deps.config.httpsRedirect ? (ctx) => httpsUrlOf(deps, ctx) : undefined,
      scriptHashes: () => consoleScriptHashes(deps),
      // /play/v/<version>/: stored web releases (docs/player-updates.md).
      webRelease: webReleaseResolver(deps),
    }),
  );
  // Every module wires itself in, in MODULES order: its middleware (sessions, the tus header)
  // runs before the router, its periodic tasks, job kinds and hooks.
  for (const m of MODULES) m.install?.({ app, deps, realtime, secrets });
  // Hourly: sign-in throttle counters and Idempotency-Keys past their 24 hours.
  deps.periodic.every('auth-throttle.prune', 60 * 60_000, async () => {
    await throttle.prune();
    await pruneIdempotencyKeys(deps.db);
  });
  app.use(
    buildRouter(routes, {
      jsonLimitBytes: deps.config.jsonLimitBytes,
      validateResponses: deps.config.validateResponses,
      authenticators: () => authenticators,
    }),
  );
  return app;
}
