import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import type { AppDeps } from '../../platform/app-deps.js';
import { deleteInBatches } from '../../platform/db/batch.js';
import { registerStatusContributor, type StatusContributor } from '../system/index.js';
import { getSettings, type Settings } from '../system/index.js';
import type { RealtimeHub } from '../../platform/realtime/hub.js';
import { expireCommands } from './commands.repo.js';
import { screenshotDir } from './commands.service.js';
import { resolveDeviceCredential } from './device-auth.js';
import { runPowerAssist } from './fleet.service.js';
import { deriveStatus, newId, nowIso } from './screens.repo.js';

/** Player history other than contacts (status changes, pairing, commands...) is kept a year. */
export const EVENT_RETENTION_MS = 365 * 24 * 3600_000;
const DAY_MS = 24 * 3600_000;
/** A screenshot file younger than this is kept even when no row names it yet (its row may be about to commit). */
const SCREENSHOT_GRACE_MS = 3600_000;

/** Records status transitions (online -> stale -> offline) that happen without a request. */
export async function sweepStatuses(db: AppDeps['db'], now = Date.now()): Promise<number> {
  const rows = await db.selectFrom('screens').select(['id', 'known_status', 'last_seen_ms', 'expected_interval_sec']).execute();
  let changed = 0;
  for (const r of rows) {
    const status = deriveStatus(r, now);
    if (status === r.known_status) continue;
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('screens').set({ known_status: status }).where('id', '=', r.id).where('known_status', '=', r.known_status).execute();
      await trx
        .insertInto('screen_history')
        .values({ id: newId(), screen_id: r.id, at: nowIso(now), at_ms: now, kind: 'status', detail: JSON.stringify({ from: r.known_status, to: status }) })
        .execute();
    });
    changed++;
  }
  return changed;
}

export type Retention = Pick<Settings['retention'], 'heartbeatDays' | 'noiseHistoryDays' | 'screenshotDays'>;

/**
 * Prunes player history past its retention: heartbeats and liveness pings after
 * `heartbeatDays` (settings retention), other events after a year, finished pairing
 * sessions after a day. Without `retention`, reads the settings.
 */
export async function pruneHistory(db: AppDeps['db'], now = Date.now(), retention?: Pick<Retention, 'heartbeatDays'>): Promise<number> {
  const days = (retention ?? (await getSettings(db)).retention).heartbeatDays;
  const contacts = now - days * DAY_MS;
  const events = now - EVENT_RETENTION_MS;
  const a = await deleteInBatches(
    db,
    (limit) =>
      sql`delete from screen_history where id in (select id from screen_history where kind in ('heartbeat', 'liveness') and at_ms < ${contacts} limit ${limit})`,
  );
  const b = await deleteInBatches(
    db,
    (limit) =>
      sql`delete from screen_history where id in (select id from screen_history where kind not in ('heartbeat', 'liveness') and at_ms < ${events} limit ${limit})`,
  );
  const c = await db
    .deleteFrom('pairing_sessions')
    .where('expires_at', '<', nowIso(now - 24 * 3600_000))
    .where('status', 'in', ['pending', 'rejected'])
    .executeTakeFirst();
  return a + b + Number(c.numDeletedRows);
}

/** Deletes noise meter buckets older than `noiseHistoryDays`. */
export async function pruneNoise(db: AppDeps['db'], now: number, noiseHistoryDays: number): Promise<number> {
  const cutoff = now - noiseHistoryDays * DAY_MS;
  return deleteInBatches(
    db,
    (limit) =>
      sql`delete from noise_buckets where (screen_id, started_at) in (select screen_id, started_at from noise_buckets where started_ms < ${cutoff} limit ${limit})`,
  );
}

/**
 * Deletes screenshot commands that returned their image more than `screenshotDays` ago,
 * then the files in media/screenshots no command names any more (files are
 * content-addressed: two commands may share one).
 */
export async function pruneScreenshots(
  db: AppDeps['db'],
  dataDir: string,
  now: number,
  screenshotDays: number,
): Promise<{ rows: number; files: number; bytes: number }> {
  const cutoff = nowIso(now - screenshotDays * DAY_MS);
  const rows = await deleteInBatches(
    db,
    (limit) =>
      sql`delete from screen_commands where id in (select id from screen_commands where screenshot_sha256 is not null and completed_at < ${cutoff} limit ${limit})`,
  );
  const out = { rows, files: 0, bytes: 0 };
  const dir = screenshotDir(dataDir);
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return out;
  }
  const kept = new Set(
    (await db.selectFrom('screen_commands').select('screenshot_sha256').where('screenshot_sha256', 'is not', null).execute()).map((c) => c.screenshot_sha256),
  );
  for (const name of names) {
    if (kept.has(name)) continue;
    const file = path.join(dir, name);
    const st = await fs.stat(file).catch(() => null);
    if (!st?.isFile() || now - st.mtimeMs < SCREENSHOT_GRACE_MS) continue;
    // Re-check: a result may have named this file meanwhile.
    if (/^[0-9a-f]{64}$/.test(name) && (await db.selectFrom('screen_commands').select('id').where('screenshot_sha256', '=', name).executeTakeFirst())) continue;
    await fs.rm(file, { force: true });
    out.files++;
    out.bytes += st.size;
  }
  return out;
}

/** The screens module's retention, by the settings as they are now (the periodic task `screens.retention`). */
export async function applyRetention(deps: Pick<AppDeps, 'db' | 'config'>, now = Date.now(), retention?: Retention) {
  const r = retention ?? (await getSettings(deps.db)).retention;
  const history = await pruneHistory(deps.db, now, r);
  const noise = await pruneNoise(deps.db, now, r.noiseHistoryDays);
  const screenshots = await pruneScreenshots(deps.db, deps.config.dataDir, now, r.screenshotDays);
  return {
    historyRows: history,
    noiseBuckets: noise,
    screenshotRows: screenshots.rows,
    screenshotFiles: screenshots.files,
    screenshotBytes: screenshots.bytes,
  };
}

/** The fleet at a glance (the `fleet` section of `GET /system/status`). */
export async function fleetStatus(db: AppDeps['db'], now = Date.now()) {
  const rows = await db.selectFrom('screens').select(['last_seen_ms', 'expected_interval_sec', 'disabled_at', 'revoked_at']).execute();
  const out = { screens: 0, online: 0, stale: 0, offline: 0, neverSeen: 0, disabled: 0, revoked: 0 };
  for (const r of rows) {
    if (r.revoked_at) {
      out.revoked++;
      continue;
    }
    out.screens++;
    if (r.disabled_at) {
      out.disabled++;
      continue;
    }
    const status = deriveStatus(r, now);
    if (status === 'pending') out.neverSeen++;
    else out[status]++;
  }
  return out;
}

const fleetStatusSection: StatusContributor = {
  key: 'fleet',
  title: 'Screens',
  // Revoked screens are counted apart; disabled ones are not counted online or offline.
  collect: (deps) => fleetStatus(deps.db),
};

/** Wires the screens module into the app: the socket's credential check and periodic jobs. */
export function installScreens(deps: AppDeps, realtime: RealtimeHub): void {
  realtime.setAuthenticator(async (token) => {
    const { screen, credentialId } = await resolveDeviceCredential(deps.db, token);
    return { screenId: screen.id, credentialId, manifestRevision: screen.manifest_revision };
  });
  deps.periodic.every('screens.status-sweep', 30_000, async () => {
    await sweepStatuses(deps.db);
    await expireCommands(deps.db);
  });
  deps.periodic.every('screens.power-assist', 60_000, async () => {
    await runPowerAssist({ db: deps.db, realtime });
  });
  deps.periodic.every('screens.retention', 60 * 60_000, async () => {
    const removed = await applyRetention(deps);
    if (Object.values(removed).some((n) => n > 0)) deps.logger.info({ removed }, 'screens retention applied');
  });
}

/** The screens module's status section, registered by its install(). */
export function registerScreensStatus(deps: AppDeps): void {
  registerStatusContributor(deps, fleetStatusSection);
}
