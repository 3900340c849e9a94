import Koa from 'koa';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './platform/db/database.js';
import { defaultAuthenticators } from './authenticators.js';
import type { Authenticators } from './platform/http/auth.js';
import type { PeriodicTasks } from './platform/jobs/periodic.js';
import { consoleStatic, defaultConsoleDir } from './platform/http/console.js';
import { baseHeaders, errorEnvelope, logLateErrors, requestContext } from './platform/http/middleware.js';
import type { Route } from './platform/http/route.js';
import { buildRouter } from './platform/http/router.js';
import type { MediaTools } from './platform/media/tools.js';
import { installSessions } from './modules/accounts/sessions.js';
import { installSystem } from './modules/system/system.routes.js';
import { restoreGate } from './modules/system/restore-gate.js';
import { installMedia } from './modules/media/index.js';
import { installDemo } from './modules/demo/demo.routes.js';
import { ServerSecrets } from './platform/security/secrets.js';
import { Throttle } from './platform/security/throttle.js';
import { RealtimeHub } from './platform/realtime/hub.js';
import { installScreens } from './modules/screens/screens.module.js';
import { ROUTES } from './routes.js';

/** Process-wide state routes read (a restore in progress turns /readyz to 503). */
export interface AppState {
  restoreInProgress: boolean;
}

export interface AppDeps {
  config: Config;
  db: Db;
  logger: Logger;
  tools: MediaTools;
  state: AppState;
  /** Periodic maintenance; modules register their tasks in buildApp, main.ts starts them. */
  periodic: PeriodicTasks;
  /**
   * The WebSocket hub (player sockets). Made by buildApp when not given; listen() attaches
   * it to the HTTP server. Modules push through it (screens/revision.ts).
   */
  realtime?: RealtimeHub;
  /** Replaces the modules' credential resolvers (tests of the auth plumbing only). */
  authenticators?: Authenticators;
  /** Routes added by tests and benchmarks, served like any other. */
  extraRoutes?: readonly Route[];
}

declare module 'koa' {
  interface DefaultContext {
    deps: AppDeps;
    /** Every route this app serves, for the OpenAPI document. */
    routes: readonly Route[];
    /** The player socket hub (same object as deps.realtime). */
    realtime: RealtimeHub;
  }
}

/** The Koa application: conventions, auth, every route. Tests build it on port 0. */
export function buildApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy });
  const realtime = (deps.realtime ??= new RealtimeHub(deps.logger));
  const authenticators = deps.authenticators ?? defaultAuthenticators(deps);
  const routes = [...ROUTES, ...(deps.extraRoutes ?? [])];
  const secrets = new ServerSecrets(deps.config.dataDir);
  const throttle = new Throttle(deps.db);
  app.context.deps = deps;
  app.context.routes = routes;
  app.context.realtime = realtime;
  app.context.secrets = secrets;
  app.context.throttle = throttle;
  app.silent = true; // errors are logged by errorEnvelope with the request id...
  app.on('error', logLateErrors(deps.logger)); // ...and those after a response started, here
  app.use(requestContext(deps.logger));
  app.use(errorEnvelope());
  app.use(baseHeaders());
  app.use(restoreGate(deps)); // /api answers 503 while a restore swaps the data (modules/system)
  // The console and the player pages (before sessions: static files need none).
  app.use(consoleStatic(deps.config.consoleDir ?? defaultConsoleDir(), routes));
  installSessions(app, deps, secrets.derive('session-cookie').toString('base64url'));
  const media = installMedia(app, deps);
  installScreens(deps, realtime);
  deps.periodic.every('auth-throttle.prune', 60 * 60_000, () => throttle.prune());
  installSystem(deps);
  installDemo(deps, media); // PLACARD_DEMO: seeds once in the background (docs/demo.md)
  app.use(
    buildRouter(routes, {
      jsonLimitBytes: deps.config.jsonLimitBytes,
      validateResponses: deps.config.validateResponses,
      authenticators: () => authenticators,
    }),
  );
  return app;
}
