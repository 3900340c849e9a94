import './no-outbound.mjs';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { buildApp } from '../../server/src/app.js';
import { type AppDeps, newAppDeps } from '../../server/src/platform/app-deps.js';
import { testConfig, type Config } from '../../server/src/config.js';
import { clusterOf } from '../../server/src/platform/cluster.js';
import { migrate, openDatabase, type OpenedDatabase, postgresUrlOf } from '../../server/src/platform/db/database.js';
import { createLogger } from '../../server/src/platform/log.js';
import type { Route } from '../../server/src/platform/http/route.js';
import type { Authenticators } from '../../server/src/platform/http/auth.js';
import { listen, type RunningServer } from '../../server/src/server.js';
import { defaultNames, generatedIdentity, type TlsIdentity } from '../../server/src/platform/security/tls.js';
import { freshPostgresDatabase, TEST_DATABASE_URL } from './postgres.js';

/** A fresh temporary data directory, removed when the test ends. */
export function tempDataDir(t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface TestApp {
  url: string;
  dataDir: string;
  deps: AppDeps;
  database: OpenedDatabase;
  server: RunningServer;
  /** With `https: true`: the HTTPS listener's URL and identity (a generated certificate in the data directory). */
  httpsUrl: string | null;
  tls: TlsIdentity | null;
  /** fetch against the app; `path` starts with '/'. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** fetch and parse JSON; answers status, headers and body. */
  json<T = any>(path: string, init?: RequestInit & { json?: unknown }): Promise<{ status: number; headers: Headers; body: T }>;
}

export interface TestAppOptions {
  config?: Partial<Config>;
  extraRoutes?: readonly Route[];
  authenticators?: Authenticators;
  /** Also listen with HTTPS (port 0, the certificate main.ts would make), as deps.https. */
  https?: boolean;
  /**
   * A second instance of `other` (PostgreSQL only): the same database and data directory
   * (the shared media), its own process state, pool and cluster connection.
   */
  instanceOf?: TestApp;
}

/** The PostgreSQL connections each test app keeps. */
export const TEST_POOL_SIZE = 4;

/**
 * The database a test's app runs on: a real SQLite file in its data directory, or with
 * PLACARD_TEST_DATABASE_URL a PostgreSQL database of its own (helpers/postgres.ts). `drop`
 * removes the PostgreSQL one, after the app has closed it.
 */
export async function testDatabase(dataDir: string): Promise<{ database: OpenedDatabase; drop: () => Promise<void> }> {
  if (TEST_DATABASE_URL) {
    const { url, drop } = await freshPostgresDatabase();
    return { database: openDatabase(url, { poolSize: TEST_POOL_SIZE }), drop };
  }
  return { database: openDatabase(path.join(dataDir, 'placard.db')), drop: async () => undefined };
}

/** The real app, on a real port (0), over a real SQLite file in a temp data directory (or PostgreSQL: testDatabase). */
export async function startApp(t: Test, options: TestAppOptions = {}): Promise<TestApp> {
  const other = options.instanceOf;
  const otherUrl = other ? postgresUrlOf(other.database) : null;
  if (other && !otherUrl) throw new Error('instanceOf: a second instance needs PostgreSQL (PLACARD_TEST_DATABASE_URL)');
  const dataDir = other ? other.dataDir : tempDataDir(t);
  const config = testConfig(dataDir, options.config);
  const { database, drop } = otherUrl
    ? { database: openDatabase(otherUrl, { poolSize: TEST_POOL_SIZE }), drop: async () => undefined }
    : await testDatabase(dataDir);
  await migrate(database.db);
  const logger = createLogger(process.env.PLACARD_TEST_LOG ?? 'silent');
  const cluster = clusterOf(database, logger);
  await cluster.start();
  const deps = newAppDeps({
    config,
    db: database.db,
    logger,
    cluster,
    authenticators: options.authenticators,
    extraRoutes: options.extraRoutes,
  });
  const app = buildApp(deps);
  const server = await listen(app, '127.0.0.1', 0, 1_000);
  let secure: RunningServer | null = null;
  let tls: TlsIdentity | null = null;
  if (options.https) {
    tls = await generatedIdentity(dataDir, defaultNames());
    secure = await listen(app, '127.0.0.1', 0, 1_000, tls);
    deps.https = { port: secure.port, identity: tls };
  }
  t.teardown(async () => {
    await Promise.all([server.close(), secure?.close()]);
    await deps.periodic.stop();
    await cluster.stop();
    await database.close();
    await drop();
  });
  const doFetch = (p: string, init?: RequestInit) => fetch(server.url + p, init);
  return {
    url: server.url,
    dataDir,
    deps,
    database,
    server,
    httpsUrl: secure?.url ?? null,
    tls,
    fetch: doFetch,
    json: jsonOver(doFetch),
  };
}

/**
 * TestApp's `json` over a fetch of paths (the app on a port, or a server process): sends
 * `json` as the body, answers status, headers and the parsed body (the text when not JSON).
 */
export function jsonOver(doFetch: (path: string, init?: RequestInit) => Promise<Response>): TestApp['json'] {
  return async (p, init = {}) => {
    const { json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (json !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
    const res = await doFetch(p, { ...rest, headers, ...(json !== undefined ? { body: JSON.stringify(json) } : {}) });
    const text = await res.text();
    let body: any = null;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    return { status: res.status, headers: res.headers, body };
  };
}

/**
 * Holds the app's one database connection while `start` fires requests, so they all queue
 * on it and their queries interleave once it is released: a check and a write that are
 * not in one transaction would let several requests see the same state and all succeed.
 */
export async function contended<T>(app: TestApp, start: () => Promise<T>[]): Promise<T[]> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const held = app.deps.db.connection().execute(() => gate);
  const pending = start();
  await new Promise((r) => setTimeout(r, 400)); // let every request reach the database
  release();
  await held;
  return Promise.all(pending);
}
