import path from 'node:path';
import type Koa from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../../platform/app-deps.js';
import { openedDatabaseOf, postgresUrlOf } from '../../platform/db/database.js';
import { ApiError } from '../../platform/http/errors.js';
import { ServerSecrets } from '../../platform/security/secrets.js';
import { v7 as uuidv7 } from 'uuid';
import { createBackup } from './backup-create.js';
import { optimize, pageBytes, vacuum } from './database.repo.js';
import { configuredPassphrase } from './backup-crypto.js';
import { BACKUP_NAME, BackupError, backupsDir, MIN_PASSPHRASE_LENGTH, type BackupKind } from './backup-format.js';
import { listBackups } from './backup-store.js';
import { maintenanceAction, registerMaintenanceAction, restoreParticipantList, type MaintenanceAction, type RestoreParticipant } from './hooks.js';
import { restoreBackup } from './restore.js';
import { drainWrites } from './restore-gate.js';
import { getSettings, invalidateSettings } from './settings.js';

export const RUN_STATES = ['running', 'succeeded', 'failed'] as const;

export const MaintenanceRunDto = z.object({
  id: z.string(),
  action: z.string(),
  state: z.enum(RUN_STATES),
  /** 0..1 */
  progress: z.number().min(0).max(1),
  message: z.string(),
  result: z.record(z.string(), z.unknown()).nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  requestedBy: z.string().nullable(),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
});
export type MaintenanceRun = z.output<typeof MaintenanceRunDto>;

interface RunStore {
  runs: Map<string, { run: MaintenanceRun; done: Promise<void> }>;
  exclusive: string | null;
}

/** Runs live in memory: they describe this process's work (a restore replaces the database they would sit in). */
const stores = new Map<string, RunStore>();

function storeFor(deps: AppDeps): RunStore {
  let store = stores.get(deps.config.dataDir);
  if (!store) {
    store = { runs: new Map(), exclusive: null };
    stores.set(deps.config.dataDir, store);
  }
  return store;
}

export function findRun(deps: AppDeps, id: string): MaintenanceRun | undefined {
  return storeFor(deps).runs.get(id)?.run;
}

export function listRuns(deps: AppDeps): MaintenanceRun[] {
  return [...storeFor(deps).runs.values()].map((r) => r.run).reverse();
}

/** Waits until the run finishes or `timeoutMs` passes; answers the run as it then is. */
export async function waitForRun(deps: AppDeps, id: string, timeoutMs: number): Promise<MaintenanceRun | undefined> {
  const entry = storeFor(deps).runs.get(id);
  if (!entry) return undefined;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([entry.done, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
  return entry.run;
}

/**
 * Starts a maintenance action in the background and answers its run at once. Exclusive
 * actions never overlap (409 `conflict` naming the running one).
 */
export function startRun(deps: AppDeps, action: MaintenanceAction, options: unknown, requestedBy: string | null, app: Koa | null): MaintenanceRun {
  const store = storeFor(deps);
  if (action.exclusive && store.exclusive) {
    const running = store.runs.get(store.exclusive)?.run;
    throw new ApiError('conflict', `Another maintenance action is running (${running?.action ?? 'unknown'}, run ${store.exclusive}); wait for it to finish`, {
      details: { runId: store.exclusive },
    });
  }
  const run: MaintenanceRun = {
    id: uuidv7(),
    action: action.name,
    state: 'running',
    progress: 0,
    message: 'starting',
    result: null,
    error: null,
    requestedBy,
    startedAt: new Date().toISOString(),
    finishedAt: null,
  };
  if (action.exclusive) store.exclusive = run.id;
  const log = deps.logger.child({ maintenance: action.name, runId: run.id });
  log.info('maintenance started');
  const done = (async () => {
    try {
      const result = await action.run({
        deps,
        options,
        requestedBy,
        app,
        progress(fraction, message) {
          run.progress = Math.max(run.progress, Math.min(1, Math.max(0, fraction)));
          run.message = message;
        },
      });
      run.result = result;
      run.state = 'succeeded';
      run.progress = 1;
      run.message = 'done';
      log.info({ result }, 'maintenance succeeded');
    } catch (err) {
      run.state = 'failed';
      if (err instanceof ApiError) run.error = { code: err.code, message: err.message };
      else if (err instanceof BackupError) run.error = { code: err.kind === 'failed' ? 'internal' : 'validation_failed', message: err.message };
      else run.error = { code: 'internal', message: (err as Error).message ?? String(err) };
      run.message = run.error.message;
      log.error({ err }, 'maintenance failed');
    } finally {
      run.finishedAt = new Date().toISOString();
      if (store.exclusive === run.id) store.exclusive = null;
    }
  })();
  store.runs.set(run.id, { run, done });
  // Keep the last 100 runs.
  while (store.runs.size > 100) {
    const oldest = store.runs.keys().next().value as string;
    if (oldest === store.exclusive) break;
    store.runs.delete(oldest);
  }
  return run;
}

/** The live database file behind deps.db. */
export function databaseFileOf(deps: AppDeps): string {
  return openedDatabaseOf(deps.db)?.file ?? path.join(deps.config.dataDir, 'placard.db');
}

/** What a backup dumps: the SQLite file, or on PostgreSQL the URL the app opened (password included: never log it). */
function backupSourceOf(deps: AppDeps): string {
  const live = openedDatabaseOf(deps.db);
  return (live && postgresUrlOf(live)) ?? databaseFileOf(deps);
}

/**
 * A backup: encrypted with `passphrase` when given, else with the configured one
 * (PLACARD_BACKUP_PASSPHRASE_FILE), else plain; copied to PLACARD_BACKUP_COPY_DIR when set
 * (a failed copy is in the result's `copy` and the log, the backup itself stands).
 */
export async function runBackup(
  deps: AppDeps,
  kind: BackupKind,
  includeMedia: boolean | undefined,
  progress: (f: number, m: string) => void,
  passphrase?: string,
) {
  const settings = await getSettings(deps.db);
  const info = await createBackup({
    dataDir: deps.config.dataDir,
    databaseFile: backupSourceOf(deps),
    kind,
    includeMedia: includeMedia ?? settings.backups.includeMedia,
    keep: settings.backups.keep,
    progress,
    passphrase: passphrase ?? configuredPassphrase(deps.config.backupPassphraseFile),
    copyTo: deps.config.backupCopyDir,
  });
  if (info.copy && !info.copy.ok)
    deps.logger.warn({ backup: info.name, dir: info.copy.dir, error: info.copy.error }, 'the backup was not copied to PLACARD_BACKUP_COPY_DIR');
  return info;
}

const Passphrase = z
  .string()
  .min(MIN_PASSPHRASE_LENGTH)
  .max(1024)
  .regex(/^[^\r\n\0]*$/, 'one line');

const backupAction: MaintenanceAction = {
  name: 'backup',
  summary: 'Online backup: a consistent database snapshot (PostgreSQL: pg_dump) plus the media store, as one tar in backups/',
  minRole: 'admin',
  exclusive: true,
  options: z.object({ includeMedia: z.boolean().optional(), passphrase: Passphrase.optional() }).strict(),
  async run({ deps, options, progress }) {
    const o = options as { includeMedia?: boolean; passphrase?: string };
    const info = await runBackup(deps, 'manual', o.includeMedia, progress, o.passphrase);
    return { backup: info, downloadUrl: `/api/v1/system/backups/${info.name}` };
  },
};

/** How long a restore waits for writes already under way before it swaps the data in. */
const DRAIN_TIMEOUT_MS = 30_000;

const restoreAction: MaintenanceAction = {
  name: 'restore',
  summary: 'Restore a backup from backups/ (upload one with POST /api/v1/system/backups); /readyz answers 503 meanwhile',
  minRole: 'owner',
  exclusive: true,
  options: z.object({ backup: z.string().regex(BACKUP_NAME, 'a backup name from GET /api/v1/system/backups'), passphrase: Passphrase.optional() }).strict(),
  async run({ deps, options, progress, app }) {
    const o = options as { backup: string; passphrase?: string };
    const live = openedDatabaseOf(deps.db);
    if (!live) throw new ApiError('conflict', 'This server cannot swap its database while running; use `placard restore` with the service stopped');
    // Set before the first await: from the moment the run exists, /readyz answers 503 and
    // the gate turns new /api requests away.
    deps.state.restoreInProgress = true;
    const paused: RestoreParticipant[] = [];
    try {
      const file = path.join(backupsDir(deps.config.dataDir), o.backup);
      const found = (await listBackups(deps.config.dataDir)).find((b) => b.name === o.backup);
      if (!found) throw new ApiError('not_found', `No backup named ${o.backup}`);
      const passphrase = found.encrypted ? (o.passphrase ?? configuredPassphrase(deps.config.backupPassphraseFile)) : null;
      if (found.encrypted && !passphrase)
        throw new ApiError('validation_failed', `${o.backup} is encrypted: give options.passphrase (this server has no PLACARD_BACKUP_PASSPHRASE_FILE)`);
      // What is already under way finishes first: writes that got in before the gate closed,
      // then background work (jobs) stops. Nothing then writes across the swap.
      progress(0.01, 'waiting for writes under way to finish');
      const left = await drainWrites(deps, DRAIN_TIMEOUT_MS);
      if (left) deps.logger.warn({ requests: left }, 'restore goes on while some writes still run');
      for (const participant of restoreParticipantList(deps)) {
        await participant.pause(deps);
        paused.push(participant);
      }
      const result = await restoreBackup({ dataDir: deps.config.dataDir, file, live, progress, passphrase });
      // The restored secret.key seals TOTP seeds of the restored users: use it from now on.
      if (app) app.context.secrets = new ServerSecrets(deps.config.dataDir);
      // The restored database has its own settings: hot paths must not keep the old ones.
      invalidateSettings();
      return {
        restored: o.backup,
        createdAt: result.header.createdAt,
        serverVersion: result.header.serverVersion,
        files: result.files,
        bytes: result.bytes,
        schemaVersion: result.migratedTo,
      };
    } finally {
      // Also after a failed restore: the live data is then the old one, untouched.
      for (const participant of paused) {
        await participant.resume(deps).catch((err: unknown) => deps.logger.error({ err, participant: participant.key }, 'could not resume after the restore'));
      }
      deps.state.restoreInProgress = false;
    }
  },
};

const vacuumAction: MaintenanceAction = {
  name: 'vacuum',
  summary:
    'Rebuild the database file compactly (VACUUM), then checkpoint the WAL and refresh the query planner statistics (PostgreSQL: VACUUM and ANALYZE, sizes from pg_database_size)',
  minRole: 'admin',
  exclusive: true,
  async run({ deps, progress }) {
    const live = openedDatabaseOf(deps.db);
    const before = await pageBytes(deps.db);
    progress(0.1, 'vacuuming');
    await vacuum(deps.db);
    // PostgreSQL has no file of ours to checkpoint: its own checkpoints handle its WAL.
    if (live?.kind === 'sqlite') {
      progress(0.8, 'checkpointing');
      live.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    }
    progress(0.9, 'refreshing the planner statistics');
    await optimize(deps.db);
    const after = await pageBytes(deps.db);
    return { sizeBeforeBytes: before, sizeAfterBytes: after, reclaimedBytes: Math.max(0, before - after) };
  },
};

export { maintenanceAction };

/** The system module's maintenance actions (backup, restore, vacuum...), registered by its install(). */
export function registerSystemActions(deps: AppDeps): void {
  registerMaintenanceAction(deps, backupAction);
  registerMaintenanceAction(deps, restoreAction);
  registerMaintenanceAction(deps, vacuumAction);
}
