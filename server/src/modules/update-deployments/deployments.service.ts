/**
 * Update deployments (issue 23; docs/update-deployments.md): create one over targets in
 * waves (screens of another family or architecture skipped, and why), read it, cancel it,
 * retry a failed screen. The rollout itself is rollout.ts.
 */
import { randomUUID } from 'node:crypto';
import semver from 'semver';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import type { DeploymentScreenState } from '../../platform/db/schema/releases.js';
import { ApiError, invalidReference, notFound, type Reference } from '../../platform/http/errors.js';
import { contentChanged } from '../content/index.js';
import { screensOfTargets, type TargetRef, unknownTargets } from '../screens/index.js';
import {
  type DeploymentRow,
  type DeploymentScreenRow,
  deploymentRow,
  deploymentRows,
  deploymentScreen,
  deploymentScreens,
  insertDeployment,
  OPEN_STATES,
  type ScreenFacts,
  screenFacts,
  stateCounts,
  updateDeployment,
  updateScreens,
} from './deployments.repo.js';
import type { Deployment, DeploymentInput, DeploymentSummary, StoredWave } from './deployments.schemas.js';
import { advance } from './rollout.js';
import { type ArtifactRow, type ReleaseRow, releaseArtifacts, releaseRow, releaseRows, usableArtifacts } from './releases.repo.js';

const DEFAULT_WAVES = [{ screens: 1 }, { percent: 50 }, { percent: 100 }];

const invalid = (path: string, message: string) =>
  new ApiError('validation_failed', message, { details: { issues: [{ location: 'body', path: [path], message, code: 'custom' }] } });

/** The family a screen's player belongs to (release contract, "Which screen is which family"). */
export function familyOf(s: Pick<ScreenFacts, 'family' | 'version'>): string | null {
  if (s.family) return s.family;
  return s.version ? 'web' : null;
}

/**
 * Why a screen is skipped, or the artifacts it may be served: the one fitting its recorded
 * architecture, or (none recorded) any of the release's, as its player asks by architecture.
 */
export function eligibility(s: ScreenFacts, release: ReleaseRow, artifacts: readonly ArtifactRow[]): { skip: string } | { artifacts: ArtifactRow[] } {
  const family = familyOf(s);
  if (!family) return { skip: 'never_reported' };
  if (family !== release.family) return { skip: 'family_mismatch' };
  const usable = usableArtifacts(artifacts, s.architecture);
  if (!usable.length) return { skip: 'architecture_mismatch' };
  const current = s.version ? semver.valid(semver.clean(s.version) ?? s.version) : null;
  if (current && semver.gte(current, release.version)) return { skip: 'already_current' };
  return { artifacts: usable };
}

/** Each wave's size: `screens` adds that many, `percent` reaches that cumulative share; the last takes the rest. */
export function sizeWaves(waves: readonly ({ screens: number } | { percent: number })[], eligible: number): StoredWave[] {
  let reached = 0;
  return waves.map((w, i) => {
    let upTo = 'screens' in w ? reached + w.screens : Math.ceil((w.percent / 100) * eligible - 1e-9);
    upTo = Math.min(eligible, Math.max(reached, upTo));
    if (i === waves.length - 1) upTo = eligible;
    const size = upTo - reached;
    reached = upTo;
    return { ...w, size, startedAt: null, completedAt: null };
  });
}

function targetRefs(t: DeploymentInput['targets']): TargetRef[] {
  return [
    ...(t.all ? [{ type: 'all', id: '' }] : []),
    ...(t.screenIds ?? []).map((id) => ({ type: 'screen', id })),
    ...(t.groupIds ?? []).map((id) => ({ type: 'group', id })),
    ...(t.locationIds ?? []).map((id) => ({ type: 'location', id })),
  ];
}

export async function createDeployment(deps: AppDeps, input: DeploymentInput, userId: string | null): Promise<Deployment> {
  const db = deps.db;
  const t = input.targets;
  if (!t.all && !t.screenIds?.length && !t.groupIds?.length && !t.locationIds?.length)
    throw invalid('targets', 'Name at least one target: all, screenIds, groupIds or locationIds');
  const release = await releaseRow(db, input.releaseId);
  const refs: Reference[] = release ? [] : [{ path: ['releaseId'], message: 'no such release' }];
  refs.push(...(await unknownTargets(db, t)));
  if (refs.length || !release) throw invalidReference('The body names something that does not exist', refs);
  const artifacts = await releaseArtifacts(db, release.id);
  const facts = await screenFacts(db, await screensOfTargets(db, targetRefs(t)));

  const nowIso = new Date().toISOString();
  const id = randomUUID();
  const decided = facts.map((s) => ({ s, e: eligibility(s, release, artifacts) }));
  const notStored = [
    ...new Set(decided.flatMap(({ e }) => ('artifacts' in e ? e.artifacts.filter((a) => !a.stored_path).map((a) => a.architecture) : []))),
  ].sort();
  if (notStored.length)
    throw new ApiError('release_not_cached', `The release has no stored artifact for ${notStored.join(', ')}: cache it first`, {
      details: { architectures: notStored },
    });
  const eligibleCount = decided.filter(({ e }) => 'artifacts' in e).length;
  const waves = sizeWaves(input.waves ?? DEFAULT_WAVES, eligibleCount);
  const waveOf: number[] = waves.flatMap((w, i) => Array<number>(w.size).fill(i));
  let next = 0;
  const rows: DeploymentScreenRow[] = decided.map(({ s, e }) => ({
    deployment_id: id,
    screen_id: s.id,
    wave: 'artifacts' in e ? waveOf[next++]! : null,
    state: 'artifacts' in e ? 'pending' : 'skipped',
    skip_reason: 'skip' in e ? e.skip : null,
    progress: null,
    error: null,
    from_version: s.version,
    installed_version: null,
    offered_at: null,
    confirmed_at: null,
    updated_at: nowIso,
  }));
  const row: DeploymentRow = {
    id,
    release_id: release.id,
    state: 'running',
    targets: JSON.stringify(t),
    waves: JSON.stringify(waves),
    failure_threshold: input.failureThreshold,
    wave_wait_sec: input.waveWaitSec,
    confirm_timeout_sec: input.confirmTimeoutSec,
    maintenance_window: input.maintenanceWindow ? JSON.stringify(input.maintenanceWindow) : null,
    current_wave: 0,
    wave_started_at: null,
    paused_reason: null,
    revision: 1,
    created_by: userId,
    created_at: nowIso,
    updated_at: nowIso,
  };
  const superseded = await insertDeployment(db, row, rows);
  // Screens taken from another deployment lose that offer (the new one may offer theirs again).
  if (superseded.length)
    await contentChanged(
      deps,
      [],
      rows.filter((r) => r.state !== 'skipped').map((r) => r.screen_id),
    );
  await advance(deps, id);
  return deploymentDto(db, id);
}

type Counts = Deployment['counts'];

function countsOf(by: Map<string, number> | undefined): Counts {
  const n = (...states: DeploymentScreenState[]) => states.reduce((sum, s) => sum + (by?.get(s) ?? 0), 0);
  return {
    total: [...(by?.values() ?? [])].reduce((a, b) => a + b, 0),
    skipped: n('skipped'),
    pending: n('pending'),
    offered: n('offered'),
    inProgress: n('downloading', 'downloaded', 'installing'),
    installed: n('installed'),
    failed: n('failed'),
    cancelled: n('cancelled'),
  };
}

function summaryOf(d: DeploymentRow, release: ReleaseRow | undefined, counts: Counts): DeploymentSummary {
  const waves = JSON.parse(d.waves) as StoredWave[];
  return {
    id: d.id,
    releaseId: d.release_id,
    release: { family: release?.family ?? 'unknown', version: release?.version ?? '0.0.0', channel: release?.channel ?? 'stable' },
    state: d.state,
    targets: JSON.parse(d.targets) as DeploymentSummary['targets'],
    waves: waves.map((w, index) => ({
      index,
      ...(w.screens !== undefined ? { screens: w.screens } : {}),
      ...(w.percent !== undefined ? { percent: w.percent } : {}),
      size: w.size,
      state: w.completedAt ? 'done' : w.startedAt ? 'active' : 'pending',
      startedAt: w.startedAt,
      completedAt: w.completedAt,
    })),
    currentWave: d.current_wave,
    failureThreshold: d.failure_threshold,
    waveWaitSec: d.wave_wait_sec,
    confirmTimeoutSec: d.confirm_timeout_sec,
    maintenanceWindow: d.maintenance_window ? (JSON.parse(d.maintenance_window) as { start: string; end: string }) : null,
    pausedReason: d.paused_reason,
    counts,
    createdAt: d.created_at,
    updatedAt: d.updated_at,
    revision: d.revision,
  };
}

export async function deploymentDto(db: Db, id: string): Promise<Deployment> {
  const d = await deploymentRow(db, id);
  if (!d) throw notFound('Update deployment');
  const release = (await releaseRow(db, d.release_id)) ?? undefined;
  const screens = await deploymentScreens(db, id);
  const by = new Map<string, number>();
  for (const s of screens) by.set(s.state, (by.get(s.state) ?? 0) + 1);
  return {
    ...summaryOf(d, release, countsOf(by)),
    screens: screens.map((s) => ({
      screenId: s.screen_id,
      name: s.name,
      wave: s.wave,
      state: s.state,
      progress: s.progress,
      error: s.error,
      skipReason: s.skip_reason,
      fromVersion: s.from_version,
      installedVersion: s.installed_version,
      offeredAt: s.offered_at,
      confirmedAt: s.confirmed_at,
    })),
  };
}

/** Every deployment without its screens, newest first. */
export async function listDeployments(db: Db): Promise<DeploymentSummary[]> {
  const rows = await deploymentRows(db);
  const releases = await releaseRows(
    db,
    rows.map((r) => r.release_id),
  );
  const counts = await stateCounts(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => summaryOf(r, releases.get(r.release_id), countsOf(counts.get(r.id))));
}

const finished = () => new ApiError('deployment_finished', 'The deployment is cancelled or completed');

/** Stops a deployment: no further waves, the screens not yet installed cancelled (offer withdrawn). */
export async function cancelDeployment(deps: AppDeps, id: string): Promise<Deployment> {
  const now = new Date().toISOString();
  const withdrawn = await deps.db.transaction().execute(async (trx) => {
    const d = await deploymentRow(trx, id);
    if (!d) throw notFound('Update deployment');
    if (d.state === 'cancelled' || d.state === 'completed') throw finished();
    const changed = await updateScreens(trx, id, null, OPEN_STATES, { state: 'cancelled', error: 'cancelled', updated_at: now });
    await updateDeployment(trx, id, { state: 'cancelled', paused_reason: null }, now);
    return changed;
  });
  if (withdrawn.length) await contentChanged(deps, [], withdrawn);
  return deploymentDto(deps.db, id);
}

/** Offers the update again to a failed screen now; a deployment paused by failures runs again when they fall under the threshold. */
export async function retryScreen(deps: AppDeps, id: string, screenId: string): Promise<Deployment> {
  const now = new Date().toISOString();
  await deps.db.transaction().execute(async (trx) => {
    const d = await deploymentRow(trx, id);
    if (!d) throw notFound('Update deployment');
    const row = await deploymentScreen(trx, id, screenId);
    if (!row) throw notFound('Screen in this deployment');
    if (d.state === 'cancelled' || d.state === 'completed') throw finished();
    if (row.state !== 'failed') throw new ApiError('not_failed', `The screen's update is ${row.state}, not failed`);
    await updateScreens(trx, id, [screenId], ['failed'], {
      state: 'offered',
      offered_at: now,
      error: null,
      progress: null,
      installed_version: null,
      confirmed_at: null,
      updated_at: now,
    });
    await updateDeployment(trx, id, {}, now);
  });
  await contentChanged(deps, [], [screenId]);
  await advance(deps, id);
  return deploymentDto(deps.db, id);
}

/**
 * Pauses a deployment by hand (an extension: docs/update-deployments.md "Pause and resume"):
 * nobody new is offered the update and no next wave starts; screens holding the offer carry
 * on. A paused deployment (by hand or by failures) is answered as it is.
 */
export async function pauseDeployment(deps: AppDeps, id: string): Promise<Deployment> {
  const now = new Date().toISOString();
  await deps.db.transaction().execute(async (trx) => {
    const d = await deploymentRow(trx, id);
    if (!d) throw notFound('Update deployment');
    if (d.state === 'cancelled' || d.state === 'completed') throw finished();
    if (d.state === 'running') await updateDeployment(trx, id, { state: 'paused', paused_reason: 'manual' }, now);
  });
  return deploymentDto(deps.db, id);
}

/**
 * Runs a paused deployment again: the step that follows offers the current wave (or starts
 * the next one). Failed screens at or over the threshold refuse it (409 `conflict`): retry
 * them first, or cancel. A running deployment is answered as it is.
 */
export async function resumeDeployment(deps: AppDeps, id: string): Promise<Deployment> {
  const now = new Date().toISOString();
  const resumed = await deps.db.transaction().execute(async (trx) => {
    const d = await deploymentRow(trx, id);
    if (!d) throw notFound('Update deployment');
    if (d.state === 'cancelled' || d.state === 'completed') throw finished();
    if (d.state === 'running') return false;
    const failed = (await stateCounts(trx, [id])).get(id)?.get('failed') ?? 0;
    if (failed >= d.failure_threshold)
      throw new ApiError(
        'conflict',
        `${failed} screen${failed === 1 ? '' : 's'} failed and the deployment pauses at ${d.failure_threshold}: retry the failed screens (or cancel) before resuming`,
        { details: { failed, failureThreshold: d.failure_threshold } },
      );
    await updateDeployment(trx, id, { state: 'running', paused_reason: null }, now);
    return true;
  });
  if (resumed) await advance(deps, id);
  return deploymentDto(deps.db, id);
}
