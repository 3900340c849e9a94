import Koa from 'koa';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './platform/db/database.js';
import type { Authenticators } from './platform/http/auth.js';
import { baseHeaders, errorEnvelope, requestContext } from './platform/http/middleware.js';
import type { Route } from './platform/http/route.js';
import { buildRouter } from './platform/http/router.js';
import type { MediaTools } from './platform/media/tools.js';
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
  /** Credential resolvers installed by the feature modules; none means only public routes answer. */
  authenticators?: Authenticators;
  /** Routes added by tests and benchmarks, served like any other. */
  extraRoutes?: readonly Route[];
}

declare module 'koa' {
  interface DefaultContext {
    deps: AppDeps;
    /** Every route this app serves, for the OpenAPI document. */
    routes: readonly Route[];
  }
}

/** The Koa application: conventions, auth, every route. Tests build it on port 0. */
export function buildApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy });
  const routes = [...ROUTES, ...(deps.extraRoutes ?? [])];
  app.context.deps = deps;
  app.context.routes = routes;
  app.silent = true; // errors are logged by errorEnvelope with the request id
  app.use(requestContext(deps.logger));
  app.use(errorEnvelope());
  app.use(baseHeaders());
  app.use(
    buildRouter(routes, {
      jsonLimitBytes: deps.config.jsonLimitBytes,
      validateResponses: deps.config.validateResponses,
      authenticators: () => deps.authenticators ?? {},
    }),
  );
  return app;
}
