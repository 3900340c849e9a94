import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import { nowIso } from '../../platform/db/ids.js';
import type { ServerSecrets } from '../../platform/security/secrets.js';
import { fetchPolicy } from '../media/index.js';
import {
  dueSourceIds,
  fetchStateOf,
  findSourceRow,
  insertAttempt,
  parseJson,
  snapshotMetasOf,
  sourceRevision,
  upsertFetchState,
  writeSnapshot,
  type AttemptOutcome,
} from './data-sources.repo.js';
import { fireDataChange } from './hooks.js';
import { providerById } from './providers/index.js';
import { type FetchAttempt, type FetchOutcome, ProviderFetchError, type RefreshBounds } from './providers/types.js';
import { openSecrets, SecretUnreadableError } from './secrets.js';

/**
 * The refresh of remote sources (docs/data-sources.md, "Refresh"): a periodic task looks for
 * sources whose next fetch is due and fetches them, a few at once. A fetch is conditional
 * (ETag, Last-Modified, then the body's sha256): an unchanged answer writes only the attempt.
 * New data becomes the snapshot (a new revision when it differs). A failure keeps the last
 * snapshot, marks the source stale with the reason and retries with exponential backoff.
 */
export const REFRESH_TICK_MS = 5_000;
/** Fetches at once. */
export const REFRESH_CONCURRENCY = 3;
/** Sources looked at per tick (the next tick takes the rest). */
const DUE_PER_TICK = 100;
/** A successful refresh is scheduled up to this fraction of the interval later (spreads sources made together). */
export const JITTER = 0.1;

/** Seconds until the next fetch: the interval after a success; after failures, backoff from the provider's minimum, doubling, at most its maximum. */
export function nextDelaySec(bounds: RefreshBounds, intervalSec: number, failures: number, random: () => number = Math.random): number {
  const base = failures === 0 ? intervalSec : Math.min(bounds.minSec * 2 ** Math.min(failures - 1, 30), bounds.maxSec);
  return Math.min(base * (1 + JITTER * random()), Math.max(bounds.maxSec, intervalSec));
}

/** The interval a source refreshes at: the one asked for, else the provider's default, within its bounds. */
export function effectiveInterval(bounds: RefreshBounds, asked: number | null): number {
  return Math.min(Math.max(asked ?? bounds.defaultSec, bounds.minSec), bounds.maxSec);
}

export type RefreshResult =
  | { kind: 'data'; revision: number; changed: boolean }
  | { kind: 'unchanged' }
  | { kind: 'failed'; error: string; code: string }
  /** Deleted, changed meanwhile (the result was dropped; the change scheduled a new fetch), not remote, or already being fetched. */
  | { kind: 'skipped'; why: 'gone' | 'changed' | 'not-remote' | 'busy' };

/** Sources being fetched right now in this app, so two paths never fetch one source at once. */
const RUNNING = new ScopeKey('data-sources.refreshing', () => new Set<string>());

/** Fetches one source now (whether due or not) and records the outcome. */
export async function refreshSource(deps: AppDeps, secrets: ServerSecrets, sourceId: string): Promise<RefreshResult> {
  const running = deps.scope.get(RUNNING);
  if (running.has(sourceId)) return { kind: 'skipped', why: 'busy' };
  running.add(sourceId);
  try {
    return await refresh(deps, secrets, sourceId);
  } finally {
    running.delete(sourceId);
  }
}

async function refresh(deps: AppDeps, secrets: ServerSecrets, sourceId: string): Promise<RefreshResult> {
  const { db } = deps;
  const source = await findSourceRow(db, sourceId);
  if (!source) return { kind: 'skipped', why: 'gone' };
  const provider = providerById(source.provider);
  if (!provider?.fetch || !provider.refresh) {
    await upsertFetchState(db, sourceId, { next_fetch_at: null });
    return { kind: 'skipped', why: 'not-remote' };
  }
  const bounds = provider.refresh;
  const interval = effectiveInterval(bounds, source.refresh_interval_sec);
  const state = await fetchStateOf(db, sourceId);
  const hasSnapshot = (await snapshotMetasOf(db, [sourceId])).has(sourceId);
  const started = new Date();
  const stored = parseJson<Record<string, unknown>>(source.config, {});
  const failed = (code: string, error: string) => ({
    attempt: {
      at: started.toISOString(),
      url: typeof stored.url === 'string' ? stored.url : '',
      status: null,
      bytes: 0,
      latencyMs: Date.now() - started.getTime(),
      error,
      errorCode: code,
    },
    error,
    code,
  });
  let outcome: FetchOutcome | null = null;
  let failure: { attempt: FetchAttempt; error: string; code: string } | null = null;
  try {
    const config = provider.configSchema.safeParse(openSecrets(secrets, stored, provider.secretPaths));
    if (!config.success) {
      failure = failed('invalid_config', `The source’s settings are no longer valid (${config.error.issues[0]?.message ?? 'invalid'}); edit the source`);
    } else {
      outcome = await provider.fetch(config.data, {
        policy: await fetchPolicy(deps),
        timeZone: source.time_zone,
        now: started,
        // Conditional only when there is data to keep: a 304 without a snapshot would leave nothing.
        previous: hasSnapshot && state ? { etag: state.etag, lastModified: state.last_modified, bodySha256: state.body_sha256 } : null,
        timeoutMs: deps.config.dataSourceTimeoutMs,
      });
    }
  } catch (err) {
    if (err instanceof ProviderFetchError) failure = { attempt: err.attempt, error: err.message, code: err.code };
    else if (err instanceof SecretUnreadableError) failure = failed('secret_unreadable', err.message);
    else {
      deps.logger.error({ err, sourceId }, 'data source refresh failed unexpectedly');
      failure = failed('internal', 'The fetch failed unexpectedly; the server log has the details');
    }
  }

  const at = nowIso();
  let result: RefreshResult = { kind: 'skipped', why: 'changed' };
  await db.transaction().execute(async (trx) => {
    // The source changed or went away while we fetched: the result belongs to an old config.
    const revision = await sourceRevision(trx, sourceId);
    if (revision !== source.revision) return; // undefined: gone
    const attemptOutcome: AttemptOutcome = failure ? 'failed' : outcome!.kind;
    await insertAttempt(trx, sourceId, failure?.attempt ?? outcome!.attempt, attemptOutcome);
    if (failure) {
      const failures = (state?.consecutive_failures ?? 0) + 1;
      await upsertFetchState(trx, sourceId, {
        consecutive_failures: failures,
        last_attempt_at: at,
        last_error: failure.error.slice(0, 2000),
        last_error_code: failure.code,
        next_fetch_at: nowIso(Date.now() + nextDelaySec(bounds, interval, failures) * 1000),
      });
      result = { kind: 'failed', error: failure.error, code: failure.code };
      return;
    }
    const o = outcome!;
    await upsertFetchState(trx, sourceId, {
      etag: o.state.etag,
      last_modified: o.state.lastModified,
      body_sha256: o.state.bodySha256,
      consecutive_failures: 0,
      last_attempt_at: at,
      last_success_at: at,
      last_error: null,
      last_error_code: null,
      next_fetch_at: nowIso(Date.now() + nextDelaySec(bounds, interval, 0) * 1000),
    });
    if (o.kind === 'unchanged') {
      result = { kind: 'unchanged' };
      return;
    }
    const written = await writeSnapshot(trx, sourceId, o.dataset, at);
    result = { kind: 'data', ...written };
  });
  const r = result as RefreshResult;
  if (r.kind === 'data' && r.changed) await fireDataChange(deps, { sourceId, change: 'data', revision: r.revision });
  return r;
}

/** One tick: every due source, REFRESH_CONCURRENCY at a time. Answers how many were fetched. */
export async function refreshDue(deps: AppDeps, secrets: ServerSecrets): Promise<number> {
  const due = await dueSourceIds(deps.db, nowIso(), DUE_PER_TICK);
  let next = 0;
  const worker = async () => {
    while (next < due.length) {
      const id = due[next++]!;
      try {
        await refreshSource(deps, secrets, id);
      } catch (err) {
        // A database failure while recording: try again later rather than every tick.
        deps.logger.error({ err, sourceId: id }, 'data source refresh could not be recorded');
        await upsertFetchState(deps.db, id, { next_fetch_at: nowIso(Date.now() + 60_000) }).catch(() => {});
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(REFRESH_CONCURRENCY, due.length) }, worker));
  return due.length;
}
