import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppDeps } from '../../platform/app-deps.js';
import { registerStatusContributor, type StatusContributor } from '../system/index.js';
import { getSettings, type Settings } from '../system/index.js';
import type { RealtimeHub } from '../../platform/realtime/hub.js';
import { expireCommands, pruneScreenshotCommands, screenshotNamed, screenshotsInUse } from './commands.repo.js';
import { screenshotDir } from './commands.service.js';
import { resolveDeviceCredential } from './device-auth.js';
import { runPowerAssist } from './fleet.service.js';
import { pruneNoiseRollups } from './noise-rollups.repo.js';
import { pruneContactHistory, pruneEventHistory, pruneNoiseBuckets, recordStatusChange, screensForStatusSweep } from './heartbeat.repo.js';
import { deleteFinishedPairings } from './pairing.repo.js';
import { deriveStatus, nowIso, screensForFleetStatus } from './screens.repo.js';

/** Player history other than contacts (status changes, pairing, commands...) is kept a year. */
export const EVENT_RETENTION_MS = 365 * 24 * 3600_000;
const DAY_MS = 24 * 3600_000;
/** A screenshot file younger than this is kept even when no row names it yet (its row may be about to commit). */
const SCREENSHOT_GRACE_MS = 3600_000;

/** Records status transitions (online -> stale -> offline) that happen without a request. */
export async function sweepStatuses(db: AppDeps['db'], now = Date.now()): Promise<number> {
  const rows = await screensForStatusSweep(db);
  let changed = 0;
  for (const r of rows) {
    const status = deriveStatus(r, now);
    if (status === r.known_status) continue;
    if (await recordStatusChange(db, r.id, r.known_status, status, now, r.last_seen_ms)) changed++;
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
  const a = await pruneContactHistory(db, contacts);
  const b = await pruneEventHistory(db, events);
  const c = await deleteFinishedPairings(db, nowIso(now - 24 * 3600_000));
  return a + b + c;
}

/** Deletes noise meter buckets older than `noiseHistoryDays`. */
export async function pruneNoise(db: AppDeps['db'], now: number, noiseHistoryDays: number): Promise<number> {
  const cutoff = now - noiseHistoryDays * DAY_MS;
  return pruneNoiseBuckets(db, cutoff);
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
  const rows = await pruneScreenshotCommands(db, cutoff);
  const out = { rows, files: 0, bytes: 0 };
  const dir = screenshotDir(dataDir);
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return out;
  }
  const kept = await screenshotsInUse(db);
  for (const name of names) {
    if (kept.has(name)) continue;
    const file = path.join(dir, name);
    const st = await fs.stat(file).catch(() => null);
    if (!st?.isFile() || now - st.mtimeMs < SCREENSHOT_GRACE_MS) continue;
    // Re-check: a result may have named this file meanwhile.
    if (/^[0-9a-f]{64}$/.test(name) && (await screenshotNamed(db, name))) continue;
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
  // The roll-ups outlive the raw buckets (noise-rollups.ts: minutes 400 days, hours and days 5 years).
  const noiseRollups = await pruneNoiseRollups(deps.db, now);
  const screenshots = await pruneScreenshots(deps.db, deps.config.dataDir, now, r.screenshotDays);
  return {
    historyRows: history,
    noiseBuckets: noise,
    noiseRollups,
    screenshotRows: screenshots.rows,
    screenshotFiles: screenshots.files,
    screenshotBytes: screenshots.bytes,
  };
}

/** The fleet at a glance (the `fleet` section of `GET /system/status`). */
export async function fleetStatus(db: AppDeps['db'], now = Date.now()) {
  const rows = await screensForFleetStatus(db);
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
