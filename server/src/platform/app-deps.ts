import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { AppScope } from './app-scope.js';
import { Cluster } from './cluster.js';
import type { Db } from './db/database.js';
import type { Authenticators } from './http/auth.js';
import type { Route } from './http/route.js';
import { PeriodicTasks } from './jobs/periodic.js';
import { MediaTools } from './media/tools.js';
import type { RealtimeHub } from './realtime/hub.js';
import type { TlsIdentity } from './security/tls.js';

/** The HTTPS listener: its port and the identity it presents (docs/trust.md). */
export interface HttpsInfo {
  port: number;
  identity: TlsIdentity;
}

/** Process-wide state routes read (a restore in progress turns /readyz to 503). */
export interface AppState {
  restoreInProgress: boolean;
}

/**
 * What every module is given: the configuration, the database, the logger, the media tools,
 * the periodic tasks and the socket hub. One object per app (tests build several apps in one
 * process, each with its own).
 */
export interface AppDeps {
  config: Config;
  db: Db;
  logger: Logger;
  tools: MediaTools;
  state: AppState;
  /** This app's registries, caches and counters (platform/app-scope.ts). */
  scope: AppScope;
  /** Periodic maintenance; modules register their tasks in install(), main.ts starts them. */
  periodic: PeriodicTasks;
  /**
   * The instances sharing the database (platform/cluster.ts): one lone process on SQLite;
   * on PostgreSQL messages between instances, their liveness and the periodic ticks' claims.
   */
  cluster: Cluster;
  /**
   * The WebSocket hub (player sockets). Made by buildApp when not given; listen() attaches
   * it to the HTTP server. Modules push through it (screens/revision.ts).
   */
  realtime?: RealtimeHub;
  /**
   * The HTTPS listener, set by main.ts (and tests) once it listens; null or absent: none.
   * Installer scripts are served for it with its key pinned (modules/provisioning).
   */
  https?: HttpsInfo | null;
  /** Replaces the modules' credential resolvers (tests of the auth plumbing only). */
  authenticators?: Authenticators;
  /** Routes added by tests and benchmarks, served like any other. */
  extraRoutes?: readonly Route[];
}

/** AppDeps for one app: what is not given is made fresh (media tools, periodic tasks, state, scope). */
export function newAppDeps(parts: Pick<AppDeps, 'config' | 'db' | 'logger'> & Partial<AppDeps>): AppDeps {
  const deps: AppDeps = {
    tools: new MediaTools(parts.config),
    periodic: new PeriodicTasks(parts.logger),
    state: { restoreInProgress: false },
    scope: new AppScope(),
    cluster: parts.cluster ?? new Cluster(parts.db, null, parts.logger),
    ...parts,
  };
  // Instances sharing a database run each periodic tick once between them.
  if (deps.cluster.shared) deps.periodic.claimTicksWith((name, everyMs) => deps.cluster.claimTick(name, everyMs));
  return deps;
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
