import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { buildApp } from './app.js';
import { ConfigError, databaseTarget, loadConfig, type Config } from './config.js';
import { DatabaseTooNewError, migrate, openDatabase, pingDatabase, UnknownMigrationError } from './platform/db/database.js';
import { ensureInstanceId } from './platform/db/meta.js';
import { newAppDeps } from './platform/app-deps.js';
import { clusterOf } from './platform/cluster.js';
import { installFaultHandlers, type FaultHandlerOptions } from './platform/faults.js';
import type { Route } from './platform/http/route.js';
import { PeriodicTasks } from './platform/jobs/periodic.js';
import { createLogger } from './platform/log.js';
import { MediaTools } from './platform/media/tools.js';
import { recoverInterruptedRestore } from './modules/system/restore.js';
import { getSettings, settleDefaultTimeZone } from './modules/system/settings.js';
import { defaultNames, generatedIdentity, providedIdentity, TlsError, type TlsIdentity } from './platform/security/tls.js';
import { listen, type RunningServer } from './server.js';
import { SERVER_VERSION } from './version.js';

function fail(line: string): never {
  process.stderr.write(`placard: ${line}\n`);
  process.exit(1);
}

export interface MainOptions {
  /** Routes served beside the modules' (tests that need the real process to misbehave). */
  extraRoutes?: readonly Route[];
  /** Shorter fault-handling times for those tests (platform/faults.ts has the defaults). */
  faults?: Pick<FaultHandlerOptions, 'checkTimeoutMs' | 'maxFaults' | 'stormWindowMs' | 'requestGraceMs'>;
}

/**
 * Boot: config -> data directory -> database -> migrations -> HTTP, a clean stop on
 * SIGTERM/SIGINT, and the last-resort fault handlers (platform/faults.ts) once it listens.
 */
export async function main(options: MainOptions = {}): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }
  const logger = createLogger(config.logLevel);
  for (const dir of ['media', 'uploads', 'backups', 'releases']) mkdirSync(path.join(config.dataDir, dir), { recursive: true });

  const recovered = recoverInterruptedRestore(config.dataDir);
  if (recovered) logger.warn(recovered);
  const database = openDatabase(databaseTarget(config), { poolSize: config.databasePoolSize });
  if (database.kind === 'postgres') logger.info({ database: database.file }, 'using PostgreSQL');
  try {
    const report = await migrate(database.db);
    if (report.applied.length) logger.info({ applied: report.applied }, 'database migrated');
  } catch (err) {
    await database.db.destroy();
    if (err instanceof DatabaseTooNewError || err instanceof UnknownMigrationError) fail(err.message);
    throw err;
  }
  const instanceId = await ensureInstanceId(database.db);
  // First start: the default time zone becomes the box's (docs/operations.md); a stored one stays.
  const zone = await settleDefaultTimeZone(database.db);
  if (zone.stored !== 'kept') logger.info({ timeZone: zone.zone, why: zone.stored }, 'default time zone stored');

  const tools = new MediaTools(config);
  const periodic = new PeriodicTasks(logger);
  // HTTPS identity: the admin's certificate, or one made (first start) and kept in <data>/tls/.
  let identity: TlsIdentity | null = null;
  if (config.httpsPort !== 0) {
    try {
      if (config.tlsCertFile && config.tlsKeyFile) identity = providedIdentity(config.tlsCertFile, config.tlsKeyFile);
      else {
        const settings = await getSettings(database.db);
        const hosts = [config.publicUrl, settings.publicUrl].flatMap((u) => (u ? [new URL(u).hostname] : []));
        const made = await generatedIdentity(config.dataDir, defaultNames(hosts));
        if (made.issued) logger.info({ subjectAltNames: made.subjectAltNames, certFile: made.certFile }, 'TLS certificate issued');
        identity = made;
      }
    } catch (err) {
      await database.close();
      if (err instanceof TlsError) fail(`HTTPS: ${err.message} (PLACARD_HTTPS_PORT=0 turns HTTPS off)`);
      throw err;
    }
  }

  // PostgreSQL: this instance's own connection (liveness lock, messages from the others).
  const cluster = clusterOf(database, logger);
  try {
    await cluster.start();
  } catch (err) {
    await database.close();
    fail(`cannot connect to PostgreSQL at ${database.file}: ${(err as Error).message}`);
  }
  const deps = newAppDeps({ config, db: database.db, logger, tools, periodic, cluster, extraRoutes: options.extraRoutes });
  const app = buildApp(deps);
  const listenOrFail = async (port: number, what: string, tls?: TlsIdentity): Promise<RunningServer> =>
    listen(app, config.host, port, config.shutdownTimeoutMs, tls).catch(async (err: NodeJS.ErrnoException) => {
      await database.close();
      if (err.code === 'EACCES')
        fail(
          `cannot listen on ${config.host} port ${port}: permission denied (ports below 1024 need CAP_NET_BIND_SERVICE: install.sh --port ${port} grants it to the service)`,
        );
      if (err.code === 'EADDRINUSE') fail(`cannot listen on ${config.host} port ${port}: another program uses it (${what})`);
      if (err.code === 'EADDRNOTAVAIL') fail(`cannot listen on ${config.host} port ${port}: this machine has no such address (PLACARD_HOST)`);
      throw err;
    });
  const running = await listenOrFail(config.port, 'PLACARD_PORT');
  // After listening, a server reports accept failures (EMFILE when out of file descriptors)
  // as 'error' events: logged, the server keeps listening.
  running.server.on('error', (err) => logger.error({ err }, 'the HTTP server reported an error'));
  let secure: RunningServer | null = null;
  if (identity) {
    secure = await listenOrFail(config.httpsPort, 'PLACARD_HTTPS_PORT; 0 turns HTTPS off', identity).catch(async (err) => {
      await running.close(0);
      throw err;
    });
    secure.server.on('error', (err) => logger.error({ err }, 'the HTTPS server reported an error'));
    deps.https = { port: secure.port, identity };
  }
  periodic.start();
  logger.info(
    {
      version: SERVER_VERSION,
      instanceId,
      url: running.url,
      httpsUrl: secure?.url ?? null,
      tlsFingerprint: identity?.fingerprintSha256 ?? null,
      tlsPin: identity?.pin ?? null,
      dataDir: config.dataDir,
      ffmpeg: tools.ffmpeg,
      ffprobe: tools.ffprobe,
    },
    `Placard listening on ${config.publicUrl ?? running.url}`,
  );
  void tools.check().then((status) => {
    for (const [name, check] of Object.entries(status)) if (!check.ok) logger.warn({ tool: name }, check.detail);
  });

  let stopping = false;
  const stop = async (signal: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    // The status the process ends with even if the stop never finishes but the event loop
    // empties (a task awaiting a wedged database keeps nothing alive): a fault's stop is 1.
    process.exitCode = exitCode;
    logger.info({ signal }, 'stopping: finishing in-flight requests');
    try {
      await Promise.all([running.close(), secure?.close()]);
      await periodic.stop();
      await cluster.stop();
      await database.close(); // checkpoints the WAL
    } catch (err) {
      logger.error({ err }, 'stopping failed; the database will recover from its WAL at the next start');
      process.exit(1);
    }
    logger.info(exitCode === 0 ? 'stopped cleanly' : 'stopped after a fault');
    process.exit(exitCode);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // Before this point a fault ends the process (Node's default): nothing is serving yet.
  installFaultHandlers({
    ...options.faults,
    logger,
    selfCheck: () => pingDatabase(database.db),
    stop: () => {
      // A stop that itself hangs must not keep a faulty process alive.
      setTimeout(() => process.exit(1), config.shutdownTimeoutMs + 5_000).unref();
      void stop('fault', 1);
    },
  });
}

// Run when executed directly (node dist/server/src/main.js, tsx server/src/main.ts); a
// test helper imports main() to start the real process with extra routes.
const self = process.argv[1] ? path.resolve(process.argv[1]) : '';
if (self.endsWith(`${path.sep}main.js`) || self.endsWith(`${path.sep}main.ts`)) {
  main().catch((err: unknown) => {
    process.stderr.write(`placard: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
