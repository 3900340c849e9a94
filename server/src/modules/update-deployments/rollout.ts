/**
 * The rollout (docs/update-deployments.md): one step of a deployment, run by the tick every
 * 2 s and after every change (creation, a player's report, retry). It confirms installs (a
 * heartbeat reporting the release's version), fails screens that did not confirm in time,
 * pauses at the failure threshold, offers the current wave's screens inside their
 * maintenance window, and moves to the next wave `waveWaitSec` after the current one
 * settled. Everything it knows is in the tables, so a restart continues where it stopped.
 */
import semver from 'semver';
import type { AppDeps } from '../../platform/app-deps.js';
import { wallClock } from '../../platform/time/zone-clock.js';
import { contentChanged } from '../content/index.js';
import { defaultTimeZone } from '../schedules/index.js';
import {
  type DeploymentRow,
  deploymentRow,
  deploymentScreens,
  liveDeploymentIds,
  OFFERED_STATES,
  OPEN_STATES,
  type ScreenEntry,
  updateDeployment,
  updateScreens,
} from './deployments.repo.js';
import type { StoredWave } from './deployments.schemas.js';
import { releaseRow } from './releases.repo.js';

/** How often the tick runs (the release contract: every 2 s). */
export const TICK_MS = 2000;
export const TICK_NAME = 'update-deployments.tick';

/** True when `reported` is the same semver version as `target`. */
export function sameVersion(reported: string | null | undefined, target: string): boolean {
  if (!reported) return false;
  const v = semver.valid(semver.clean(reported) ?? reported);
  return v !== null && semver.eq(v, target);
}

/** The wall-clock time `HH:MM` in a time zone at `nowMs` (the platform's zone clock, memoized per zone and month). */
export function localHHMM(timeZone: string, nowMs: number): string {
  return new Date(wallClock(nowMs, timeZone)).toISOString().slice(11, 16);
}

/** Inside [start, end) in local time; a window with end before start wraps midnight. */
export function inWindow(window: { start: string; end: string } | null, local: string): boolean {
  if (!window) return true;
  if (window.start < window.end) return local >= window.start && local < window.end;
  return local >= window.start || local < window.end;
}

/** Runs one step of every running or paused deployment. */
export async function tick(deps: AppDeps): Promise<void> {
  for (const id of await liveDeploymentIds(deps.db)) {
    try {
      await advance(deps, id);
    } catch (err) {
      deps.logger.error({ err, deploymentId: id }, 'update deployment step failed');
    }
  }
}

/**
 * One step of a deployment, in one transaction; then the screens whose offer appeared or
 * went away are told (their manifest revision bumped, `manifest.changed` pushed).
 */
export async function advance(deps: AppDeps, id: string, nowMs = Date.now()): Promise<void> {
  const fallbackZone = await defaultTimeZone(deps.db);
  const bump = new Set<string>();
  await deps.db.transaction().execute(async (trx) => {
    const d = await deploymentRow(trx, id);
    if (!d || (d.state !== 'running' && d.state !== 'paused')) return;
    const release = await releaseRow(trx, d.release_id);
    if (!release) return;
    const now = new Date(nowMs).toISOString();
    const screens = await deploymentScreens(trx, id);
    let dirty = false;
    const set = async (s: ScreenEntry, patch: Partial<ScreenEntry>) => {
      const changed = await updateScreens(trx, id, [s.screen_id], [s.state], { ...patch, updated_at: now });
      if (changed.length) {
        Object.assign(s, patch);
        bump.add(s.screen_id);
        dirty = true;
      }
    };

    for (const s of screens) {
      const offered = OFFERED_STATES.includes(s.state);
      // A heartbeat with the release's version confirms (a late one too, after a timeout).
      if ((offered || (s.state === 'failed' && s.error === 'confirmation_timeout')) && sameVersion(s.current_version, release.version)) {
        await set(s, { state: 'installed', installed_version: s.current_version, confirmed_at: now, progress: 1, error: null });
      } else if (offered && s.offered_at && Date.parse(s.offered_at) + d.confirm_timeout_sec * 1000 <= nowMs) {
        await set(s, { state: 'failed', error: 'confirmation_timeout' });
      }
    }

    const failed = screens.filter((s) => s.state === 'failed').length;
    let state: DeploymentRow['state'] = d.state;
    let pausedReason = d.paused_reason;
    if (state === 'running' && failed >= d.failure_threshold) {
      state = 'paused';
      pausedReason = 'failure_threshold';
    } else if (state === 'paused' && pausedReason === 'failure_threshold' && failed < d.failure_threshold) {
      state = 'running';
      pausedReason = null;
    }

    const waves = JSON.parse(d.waves) as StoredWave[];
    const window = d.maintenance_window ? (JSON.parse(d.maintenance_window) as { start: string; end: string }) : null;
    let w = d.current_wave;
    let wavesChanged = false;
    // Paused: nobody new is offered and no wave starts, but the current wave's end is recorded
    // once its offered screens settle (the wait for the next one counts from it on resume).
    const current = waves[w];
    if (state === 'paused' && current?.startedAt && !current.completedAt && !screens.some((s) => s.wave === w && OPEN_STATES.includes(s.state))) {
      current.completedAt = now;
      wavesChanged = true;
    }
    while (state === 'running' && w < waves.length) {
      const wave = waves[w]!;
      if (!wave.startedAt) {
        wave.startedAt = now;
        wavesChanged = true;
      }
      for (const s of screens) {
        if (s.wave !== w || s.state !== 'pending') continue;
        if (!inWindow(window, localHHMM(s.time_zone ?? fallbackZone, nowMs))) continue;
        await set(s, { state: 'offered', offered_at: now, from_version: s.current_version, progress: null, error: null });
      }
      if (screens.some((s) => s.wave === w && OPEN_STATES.includes(s.state))) break;
      if (!wave.completedAt) {
        wave.completedAt = now;
        wavesChanged = true;
      }
      // Empty waves (a share that adds no screen) are passed over without a wait.
      let next = w + 1;
      while (next < waves.length && waves[next]!.size === 0) next++;
      if (next >= waves.length || nowMs >= Date.parse(wave.completedAt) + d.wave_wait_sec * 1000) {
        for (let e = w + 1; e < next; e++) {
          waves[e]!.startedAt ??= now;
          waves[e]!.completedAt ??= now;
          wavesChanged = true;
        }
      }
      if (next >= waves.length) {
        w = waves.length - 1;
        state = 'completed';
        break;
      }
      if (nowMs < Date.parse(wave.completedAt) + d.wave_wait_sec * 1000) break;
      w = next;
    }

    if (dirty || wavesChanged || state !== d.state || pausedReason !== d.paused_reason || w !== d.current_wave) {
      await updateDeployment(
        trx,
        id,
        { state, paused_reason: pausedReason, current_wave: w, waves: JSON.stringify(waves), wave_started_at: waves[w]?.startedAt ?? d.wave_started_at },
        now,
      );
    }
  });
  if (bump.size) await contentChanged(deps, [], [...bump]);
}
