import type Koa from 'koa';
import type { AppDeps } from './app-deps.js';
import type { Route } from './http/route.js';
import type { RealtimeHub } from './realtime/hub.js';
import type { ServerSecrets } from './security/secrets.js';

/** What a module's install() is given: the app being built and its dependencies. */
export interface ModuleContext {
  app: Koa;
  deps: AppDeps;
  /** The player socket hub of this app (deps.realtime, always set here). */
  realtime: RealtimeHub;
  /** Keys derived from the server's secret (sessions, signed links). */
  secrets: ServerSecrets;
}

/**
 * The one shape of a module (docs/architecture.md, "Modules"): `modules/<area>/index.ts`
 * exports one of these. `routes` are served by the router; `install` wires the module into
 * one app (Koa middleware, periodic tasks, hooks, job kinds) and runs once per buildApp, in
 * the order of `MODULES` (modules/index.ts): a module installs after the ones it uses.
 */
export interface PlacardModule {
  /** The area's folder name under modules/. */
  name: string;
  routes: readonly Route[];
  install?(ctx: ModuleContext): void;
}
