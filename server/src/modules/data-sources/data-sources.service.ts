import type { Context } from 'koa';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import { storableJson } from '../../platform/db/json.js';
import type { Principal } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import type { ServerSecrets } from '../../platform/security/secrets.js';
import { cachedSettings } from '../system/index.js';
import { type AccessLevel, type Caller, callerOf, levelsOf, requireLevel } from './access.js';
import {
  attemptsOf,
  copyManualRows,
  copySnapshot,
  deleteSource,
  existingSources,
  fetchStateOf,
  findSourceRow,
  fetchStatesOf,
  getSourceRow,
  insertSource,
  manualRowsOf,
  parseJson,
  replaceManualRows,
  setGrant,
  snapshotMetasOf,
  snapshotOf,
  updateSource,
  upsertFetchState,
  writeSnapshot,
  type FetchStateRow,
  type SnapshotMeta,
  type SourceRow,
} from './data-sources.repo.js';
import type { CreateBody, DataSourceDto, PatchBody } from './data-sources.schemas.js';
import { fireDataChange, findDataSourceUsages, screensShowing } from './hooks.js';
import { copyForm, hasPublishedForm } from './forms.repo.js';
import { checkRowsAgainstForm } from './forms.rows.js';
import { failedImages, imageCounts } from './images.repo.js';
import { currentOutputs } from './outputs.repo.js';
import { checkRows, projectRows } from './manual-rows.js';
import { deleteRecordFiles } from './records-attachments.files.js';
import { recordIdsWithAttachments } from './records-attachments.repo.js';
import { type ProviderDefinition, providerById, providerIds } from './providers/index.js';
import type { Column, Row } from './providers/types.js';
import { effectiveInterval } from './refresh.js';
import { checkView, type View } from './views.js';
import { keepSecrets, maskSecrets, openSecrets, SecretUnreadableError, sealSecrets } from './secrets.js';

/** What a request gives the service: the app, the server's key (sealing) and who asks. */
export interface Env {
  deps: AppDeps;
  secrets: ServerSecrets;
  caller: Caller;
}

export function envOf(ctx: Context, auth: Principal): Env {
  return { deps: ctx.deps, secrets: ctx.secrets, caller: callerOf(auth) };
}

// biome-ignore lint/suspicious/noExplicitAny: each provider has its own config type
export type AnyProvider = ProviderDefinition<any>;
export type Config = Record<string, unknown>;

/** A source whose last fetch succeeded is stale anyway when nothing succeeded for this many intervals (the refresh is not running). */
const STALE_AFTER_INTERVALS = 3;

/** 404 naming the providers, for an unknown `{provider}` path segment. */
export function providerOrNotFound(id: string): AnyProvider {
  const provider = providerById(id);
  if (!provider) {
    throw new ApiError('not_found', `No provider "${id.slice(0, 64)}"; the providers are: ${providerIds().join(', ')}`, {
      details: { providers: providerIds() },
    });
  }
  return provider;
}

function badConfig(issues: readonly { path: readonly PropertyKey[]; message: string; code?: string }[]): ApiError {
  const list = issues.map((i) => ({
    location: 'body',
    path: ['config', ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
    message: i.message,
    code: i.code ?? 'custom',
  }));
  const first = list[0];
  return new ApiError('validation_failed', `Invalid config${first ? ` at ${first.path.join('.')}: ${first.message}` : ''}`, { details: { issues: list } });
}

function originOf(url: unknown): string | null {
  if (typeof url !== 'string') return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/**
 * Validates an incoming config with the provider's schema: `{set: true}` at a secret path
 * keeps the secret stored in `stored` (400 when none is stored), and a kept secret never
 * follows the address to another site (400: enter it again). Answers the plain config.
 */
export function validateConfig(secrets: ServerSecrets, provider: AnyProvider, incoming: Config, stored: Config | null): Config {
  let kept: ReturnType<typeof keepSecrets>;
  try {
    kept = keepSecrets(secrets, incoming, stored, provider.secretPaths);
  } catch (err) {
    if (err instanceof SecretUnreadableError) throw badConfig([{ path: err.path, message: err.message, code: 'secret_unreadable' }]);
    throw err;
  }
  if (kept.missing.length) {
    throw badConfig(kept.missing.map((path) => ({ path, message: 'No secret is stored here to keep; send its value', code: 'secret_not_set' })));
  }
  const parsed = provider.configSchema.safeParse(kept.config);
  if (!parsed.success) throw badConfig(parsed.error.issues);
  const config = parsed.data as Config;
  if (kept.kept.length && stored && originOf(config.url) !== originOf(stored.url)) {
    throw badConfig(
      kept.kept.map((path) => ({
        path,
        message: 'The address moved to another site: enter this secret again (a stored secret is never sent to a new site unasked)',
        code: 'secret_not_set',
      })),
    );
  }
  return config;
}

function checkInterval(provider: AnyProvider, asked: number | undefined): number | null {
  if (!provider.refresh) {
    if (asked !== undefined) {
      throw new ApiError('validation_failed', `A ${provider.name.toLowerCase()} source does not refresh; leave refreshIntervalSec out`, {
        details: { issues: [{ location: 'body', path: ['refreshIntervalSec'], message: 'this provider does not refresh', code: 'custom' }] },
      });
    }
    return null;
  }
  const { minSec, maxSec, defaultSec } = provider.refresh;
  const value = asked ?? defaultSec;
  if (value < minSec || value > maxSec) {
    throw new ApiError('validation_failed', `refreshIntervalSec must be between ${minSec} and ${maxSec} for ${provider.id}`, {
      details: { issues: [{ location: 'body', path: ['refreshIntervalSec'], message: `between ${minSec} and ${maxSec}`, code: 'too_small' }] },
    });
  }
  return value;
}

function checkManualRows(provider: AnyProvider, columns: readonly Column[], rows: readonly Row[] | undefined): void {
  if (rows === undefined) return;
  if (provider.id !== 'manual-table') {
    throw new ApiError('validation_failed', `Only a table keeps rows in Placard; a ${provider.id} source gets them from its document`, {
      details: { issues: [{ location: 'body', path: ['rows'], message: 'only for manual-table sources', code: 'custom' }] },
    });
  }
  const issues = checkRows(columns, rows);
  if (issues.length) {
    const first = issues[0]!;
    throw new ApiError('validation_failed', `Invalid rows: ${first.path.join('.')} ${first.message}`, {
      details: { issues: issues.map((i) => ({ location: 'body', path: i.path, message: i.message, code: 'custom' })) },
    });
  }
}

export const manualColumns = (config: Config): Column[] => (Array.isArray(config.columns) ? (config.columns as Column[]) : []);

/** Rebuilds a table's snapshot from its rows and columns; answers the revision when the data changed. */
export async function rebuildManualSnapshot(db: Db, sourceId: string, columns: readonly Column[]): Promise<number | null> {
  const rows = projectRows(columns, await manualRowsOf(db, sourceId));
  const written = await writeSnapshot(db, sourceId, { columns: [...columns], rows, warnings: [] }, nowIso());
  return written.changed ? written.revision : null;
}

// ---- answers ----

interface Staleness {
  stale: boolean;
  reason: string | null;
}

export function staleness(row: SourceRow, state: FetchStateRow | undefined, snapshot: SnapshotMeta | undefined, now = Date.now()): Staleness {
  const provider = providerById(row.provider);
  if (!provider?.refresh) return { stale: false, reason: null };
  const failures = state?.consecutive_failures ?? 0;
  if (failures > 0) {
    const since = state?.last_success_at ? `data from ${state.last_success_at} is shown` : 'there is no data yet';
    const times = failures === 1 ? 'The last fetch' : `The last ${failures} fetches`;
    return { stale: true, reason: `${times} failed (${state?.last_error ?? 'unknown error'}); ${since}` };
  }
  const interval = effectiveInterval(provider.refresh, row.refresh_interval_sec);
  const last = state?.last_success_at ? Date.parse(state.last_success_at) : null;
  if (snapshot && last !== null && now - last > (STALE_AFTER_INTERVALS * interval + 60) * 1000) {
    return { stale: true, reason: `No fetch succeeded since ${state!.last_success_at} although the source refreshes every ${interval} s` };
  }
  return { stale: false, reason: null };
}

/** The answers for these rows (one query per table, whatever their number). */
export async function sourceDtos(env: Env, rows: readonly SourceRow[]): Promise<DataSourceDto[]> {
  const db = env.deps.db;
  const ids = rows.map((r) => r.id);
  const [states, metas, levels] = await Promise.all([fetchStatesOf(db, ids), snapshotMetasOf(db, ids), levelsOf(db, env.caller, ids)]);
  return rows.map((row) => {
    const state = states.get(row.id);
    const meta = metas.get(row.id);
    const provider = providerById(row.provider);
    const { stale } = staleness(row, state, meta);
    return {
      id: row.id,
      name: row.name,
      provider: row.provider,
      config: maskSecrets(parseJson<Config>(row.config, {})) as Config,
      columns: parseJson<Column[]>(row.columns, []),
      rowCount: meta?.rowCount ?? 0,
      refreshIntervalSec: provider?.refresh ? effectiveInterval(provider.refresh, row.refresh_interval_sec) : null,
      timeZone: row.time_zone,
      state: {
        lastFetchAt: state?.last_attempt_at ?? null,
        lastSuccessAt: state?.last_success_at ?? (provider?.refresh ? null : (meta?.fetchedAt ?? null)),
        nextFetchAt: state?.next_fetch_at ?? null,
        stale,
        error: state && state.consecutive_failures > 0 ? state.last_error : null,
      },
      snapshot: meta ? { revision: meta.revision, sha256: meta.sha256, fetchedAt: meta.fetchedAt } : null,
      revision: row.revision,
      myAccess: levels.get(row.id) ?? 'viewer',
      createdBy: row.created_by,
      updatedBy: row.updated_by,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  });
}

export async function sourceDto(env: Env, id: string): Promise<DataSourceDto> {
  return (await sourceDtos(env, [await getSourceRow(env.deps.db, id)]))[0]!;
}

// ---- changes ----

export async function createSource(env: Env, body: CreateBody): Promise<string> {
  const { deps, secrets, caller } = env;
  const provider = providerOrNotFound(body.provider);
  const config = validateConfig(secrets, provider, body.config, null);
  const interval = checkInterval(provider, body.refreshIntervalSec);
  const columns = provider.fetch ? [] : manualColumns(config);
  checkManualRows(provider, columns, body.rows);
  const timeZone = body.timeZone ?? (await cachedSettings(deps.db)).timeZone;
  const stored = storableJson(sealSecrets(secrets, config, provider.secretPaths), 'config');
  const id = newId();
  const at = nowIso();
  let revision: number | null = null;
  await deps.db.transaction().execute(async (trx) => {
    await insertSource(trx, {
      id,
      name: body.name,
      provider: provider.id,
      config: stored,
      columns: JSON.stringify(columns),
      refresh_interval_sec: interval,
      time_zone: timeZone,
      revision: 1,
      created_by: caller.userId,
      updated_by: caller.userId,
      created_at: at,
      updated_at: at,
    });
    // Whoever makes a source owns it (deletes it, manages its access), whatever their role gives elsewhere.
    await setGrant(trx, id, caller.userId, 'owner', caller.userId);
    if (provider.fetch) await upsertFetchState(trx, id, { next_fetch_at: at });
    else {
      await replaceManualRows(trx, id, body.rows ?? []);
      revision = await rebuildManualSnapshot(trx, id, columns);
    }
  });
  if (revision !== null) await fireDataChange(deps, { sourceId: id, change: 'data', revision });
  return id;
}

/**
 * Changes a source in one transaction that reads it, checks `expect` (If-Match) and the
 * caller's access, then writes: a concurrent change cannot slip in between.
 */
export async function patchSource(env: Env, id: string, body: PatchBody, expect: (revision: number) => void): Promise<void> {
  const { deps, secrets, caller } = env;
  let dataRevision: number | null = null;
  let replacedWithFiles: string[] = [];
  await deps.db.transaction().execute(async (trx) => {
    const row = await getSourceRow(trx, id);
    expect(row.revision);
    await requireLevel(trx, caller, id, 'editor', row.name);
    const provider = providerById(row.provider);
    if (!provider)
      throw new ApiError('conflict', `This server no longer offers the ${row.provider} provider; delete the source or duplicate its data elsewhere`);
    const set: Partial<SourceRow> = {};
    let refetch = false;
    const storedConfig = parseJson<Config>(row.config, {});
    let columns = parseJson<Column[]>(row.columns, []);
    if (body.config !== undefined) {
      const config = validateConfig(secrets, provider, body.config, storedConfig);
      let current: unknown = null;
      try {
        current = openSecrets(secrets, storedConfig, provider.secretPaths);
      } catch {
        current = null; // unreadable: whatever came is a change
      }
      if (JSON.stringify(current) !== JSON.stringify(config)) {
        set.config = storableJson(sealSecrets(secrets, config, provider.secretPaths), 'config');
        refetch = true;
      }
      if (!provider.fetch) {
        if (JSON.stringify(manualColumns(config)) !== row.columns && (await hasPublishedForm(trx, id))) {
          throw new ApiError('conflict', `The columns of "${row.name}" follow its published form: change the form's draft and publish it`);
        }
        columns = manualColumns(config);
        set.columns = JSON.stringify(columns);
      }
    }
    if (body.name !== undefined && body.name !== row.name) set.name = body.name;
    if (body.timeZone !== undefined && body.timeZone !== row.time_zone) {
      set.time_zone = body.timeZone;
      refetch = true; // calendars expand in it
    }
    let intervalChanged = false;
    if (body.refreshIntervalSec !== undefined) {
      const interval = checkInterval(provider, body.refreshIntervalSec);
      intervalChanged = interval !== row.refresh_interval_sec;
      if (intervalChanged) set.refresh_interval_sec = interval;
    }
    checkManualRows(provider, columns, body.rows);
    if (body.rows !== undefined && !provider.fetch) await checkRowsAgainstForm(trx, id, body.rows, () => requireLevel(trx, caller, id, 'owner', row.name));
    if (Object.keys(set).length === 0 && body.rows === undefined) return;
    const at = nowIso();
    await updateSource(trx, id, row.revision, { ...set, updated_by: caller.userId, updated_at: at });
    if (provider.fetch && refetch) {
      // Another document: fetch it soon, unconditionally, with a clean slate.
      await upsertFetchState(trx, id, {
        etag: null,
        last_modified: null,
        body_sha256: null,
        consecutive_failures: 0,
        last_error: null,
        last_error_code: null,
        next_fetch_at: at,
      });
    } else if (provider.fetch && provider.refresh && intervalChanged) {
      const state = await fetchStateOf(trx, id);
      const from = state?.last_attempt_at ? Date.parse(state.last_attempt_at) : Date.now();
      const interval = effectiveInterval(provider.refresh, set.refresh_interval_sec ?? null);
      if (!state?.consecutive_failures) await upsertFetchState(trx, id, { next_fetch_at: nowIso(Math.max(Date.now(), from + interval * 1000)) });
    }
    if (!provider.fetch) {
      // Replaced rows (records) lose their attachments: the rows by cascade, the files after the commit.
      if (body.rows !== undefined) replacedWithFiles = await recordIdsWithAttachments(trx, id);
      if (body.rows !== undefined) await replaceManualRows(trx, id, body.rows);
      dataRevision = await rebuildManualSnapshot(trx, id, columns);
    }
  });
  if (replacedWithFiles.length) await deleteRecordFiles(deps, id, replacedWithFiles);
  if (dataRevision !== null) await fireDataChange(deps, { sourceId: id, change: 'data', revision: dataRevision });
}

/** A copy of a source: its config (secrets copied sealed), data and rows; the caller owns the copy. */
export async function duplicateSource(env: Env, id: string, name: string | undefined): Promise<string> {
  const { deps, caller } = env;
  const copyId = newId();
  await deps.db.transaction().execute(async (trx) => {
    const row = await getSourceRow(trx, id);
    await requireLevel(trx, caller, id, 'editor', row.name);
    const at = nowIso();
    await insertSource(trx, {
      ...row,
      id: copyId,
      name: name ?? `${row.name} (copy)`.slice(0, 200),
      revision: 1,
      created_by: caller.userId,
      updated_by: caller.userId,
      created_at: at,
      updated_at: at,
    });
    await setGrant(trx, copyId, caller.userId, 'owner', caller.userId);
    await copySnapshot(trx, id, copyId);
    await copyManualRows(trx, id, copyId);
    await copyForm(trx, id, copyId, caller.userId, at);
    const provider = providerById(row.provider);
    if (provider?.fetch) {
      const state = await fetchStateOf(trx, id);
      // The same document: the copy keeps the conditional state that goes with the copied snapshot.
      await upsertFetchState(trx, copyId, {
        etag: state?.etag ?? null,
        last_modified: state?.last_modified ?? null,
        body_sha256: state?.body_sha256 ?? null,
        next_fetch_at: at,
      });
    }
  });
  const snapshot = (await snapshotMetasOf(deps.db, [copyId])).get(copyId);
  if (snapshot) await fireDataChange(deps, { sourceId: copyId, change: 'data', revision: snapshot.revision });
  return copyId;
}

export async function removeSource(env: Env, id: string, expect: (revision: number) => void): Promise<void> {
  const { deps, caller } = env;
  await deps.db.transaction().execute(async (trx) => {
    const row = await getSourceRow(trx, id);
    expect(row.revision);
    await requireLevel(trx, caller, id, 'owner', row.name);
    const usages = await findDataSourceUsages(deps, [id], trx);
    if (usages.length) {
      const names = usages.slice(0, 5).map((u) => `${u.type} ${u.name ? `"${u.name}"` : u.id}`);
      const more = usages.length > 5 ? ` and ${usages.length - 5} more` : '';
      throw new ApiError('conflict', `Data source "${row.name}" is in use by ${names.join(', ')}${more}; remove those uses first`, {
        details: { usedBy: usages.map((u) => ({ type: u.type, id: u.id, name: u.name })) },
      });
    }
    await deleteSource(trx, id);
  });
  await deleteRecordFiles(deps, id); // the records' attachment rows went by cascade
  await fireDataChange(deps, { sourceId: id, change: 'deleted', revision: null });
}

// ---- diagnostics ----

export async function diagnostics(env: Env, id: string) {
  const db = env.deps.db;
  const row = await getSourceRow(db, id);
  await requireLevel(db, env.caller, id, 'viewer', row.name);
  const provider = providerById(row.provider);
  const [state, meta, attempts, usedBy, outputs, imageStates, imageFailures, screens] = await Promise.all([
    fetchStateOf(db, id),
    snapshotMetasOf(db, [id]).then((m) => m.get(id)),
    attemptsOf(db, id),
    findDataSourceUsages(env.deps, [id]),
    currentOutputs(db, id),
    imageCounts(db, id),
    failedImages(db, id),
    screensShowing(env.deps, id),
  ]);
  const { stale, reason } = staleness(row, state, meta);
  const confirmed = state?.last_success_at ?? meta?.fetchedAt ?? null;
  return {
    sourceId: id,
    provider: row.provider,
    refreshIntervalSec: provider?.refresh ? effectiveInterval(provider.refresh, row.refresh_interval_sec) : null,
    attempts,
    consecutiveFailures: state?.consecutive_failures ?? 0,
    lastSuccessAt: state?.last_success_at ?? null,
    nextRunAt: state?.next_fetch_at ?? null,
    snapshot: meta
      ? {
          revision: meta.revision,
          sha256: meta.sha256,
          fetchedAt: meta.fetchedAt,
          ageSec: Math.max(0, Math.round((Date.now() - Date.parse(provider?.refresh && confirmed ? confirmed : meta.fetchedAt)) / 1000)),
          rowCount: meta.rowCount,
          sizeBytes: meta.sizeBytes,
          warnings: meta.warnings,
        }
      : null,
    stale,
    staleReason: reason,
    usedBy: usedBy.map((u) => ({ type: u.type, id: u.id, name: u.name })),
    screens,
    outputs: [...outputs.values()].map((o) => ({
      id: o.id,
      viewKey: o.view_key || null,
      revision: o.revision,
      sizeBytes: o.size_bytes,
      rowCount: o.row_count,
      generatedAt: o.generated_at,
    })),
    images: {
      pending: imageStates.pending ?? 0,
      ready: imageStates.ready ?? 0,
      failed: imageStates.failed ?? 0,
      failures: imageFailures.map((f) => ({ url: f.url, error: f.error ?? '', attempts: f.attempts })),
    },
  };
}

/** The current data of a source (rows + columns + revision), what an output is built from; null before its first data. */
export async function currentData(db: Db, sourceId: string) {
  return snapshotOf(db, sourceId);
}

/** Which of the ids are data sources (layouts check what their zones name). */
export async function existingSourceIds(db: Db, ids: readonly string[]): Promise<Set<string>> {
  return existingSources(db, ids);
}

/** The mistakes of a view against the source's columns (empty: it fits); for content that places a view. */
export async function viewProblems(db: Db, sourceId: string, view: View): Promise<string[]> {
  const row = await findSourceRow(db, sourceId);
  if (!row) return [];
  const columns = (await snapshotMetasOf(db, [sourceId])).get(sourceId)?.columns ?? parseJson<Column[]>(row.columns, []);
  return checkView(columns, view, { timeZone: row.time_zone, now: new Date() }).map((e) => `${e.path.join('.')}: ${e.message}`);
}

export type { AccessLevel };
