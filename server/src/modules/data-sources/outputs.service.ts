import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import { KeyedLocks } from '../../platform/media/locks.js';
import { requireLevel } from './access.js';
import { findSourceRow, getSourceRow, parseJson, snapshotMetasOf, snapshotOf } from './data-sources.repo.js';
import { dropSourceImages, dropUnusedImages, imageAssets, kickImageFetch, noteImages } from './images.service.js';
import type { Env } from './data-sources.service.js';
import { type DataChange, findDataSourceUsages, fireOutputChange, screenMayDownloadData } from './hooks.js';
import { buildOutput, viewKeyOf, WHOLE_SOURCE } from './outputs.js';
import {
  blobOf,
  currentOutputs,
  ensureOutputKey,
  dropUnusedKeys,
  expiredOutputKeys,
  extendOutput,
  insertOutput,
  outputKey,
  outputById,
  outputKeysOf,
  outputVersions,
  touchOutputKey,
  type OutputRow,
} from './outputs.repo.js';
import type { View } from './views.js';

/**
 * Outputs (issue 17, docs/data-sources.md "Outputs"): the documents players download. A
 * manifest build asks `outputFor(source, view)`: the key is recorded as used and its current
 * version answered, built first when the snapshot moved on, a date-dependent view expired, or
 * none exists. A data change rebuilds every used key of the source at once (`rebuildOutputs`),
 * so the manifests the change bumps find them ready; a rebuild giving the same rows keeps the
 * current version, and only keys whose version changed are reported (their screens alone are
 * told). One build per (source, key) at a time.
 */

/** A manifest's `data` entry (DESIGN.md section 12). */
export interface OutputRef {
  outputId: string;
  sourceId: string;
  viewKey: string | null;
  revision: number;
  url: string;
  sha256: string;
  sizeBytes: number;
}

/** What a manifest build gets: the output, and the assets its rows' images became (the ones ready so far). */
export interface OutputForManifest {
  output: OutputRef;
  images: { url: string; assetId: string }[];
}

export const outputUrl = (outputId: string) => `/api/v1/player/data-outputs/${outputId}`;

/** A key's last use is written at most this often (a manifest build per screen per hour asks). */
const TOUCH_EVERY_MS = 3_600_000;
/** Keys no manifest asked for in this long are dropped with their versions. */
export const UNUSED_KEY_TTL_MS = 7 * 86_400_000;

const LOCKS = new ScopeKey('data-sources.output-locks', () => new KeyedLocks());

const refOf = (row: OutputRow): OutputRef => ({
  outputId: row.id,
  sourceId: row.source_id,
  viewKey: row.view_key || null,
  revision: row.revision,
  url: outputUrl(row.id),
  sha256: row.sha256,
  sizeBytes: row.size_bytes,
});

export type OutputAnswer = ({ ok: true } & OutputForManifest) | { ok: false; reason: 'no_source' | 'no_data' | 'invalid_view'; message: string };

/** The current output of (source, view) for a manifest, built when needed. */
export async function outputFor(deps: AppDeps, sourceId: string, view: View | null, now = new Date()): Promise<OutputAnswer> {
  const { key, json } = viewKeyOf(view);
  const db = deps.db;
  const known = await outputKey(db, sourceId, key);
  if (!known || Date.parse(known.last_used_at) < now.getTime() - TOUCH_EVERY_MS) {
    if (!(await findSourceRow(db, sourceId))) return { ok: false, reason: 'no_source', message: 'The data source no longer exists' };
    await touchOutputKey(db, sourceId, key, json, nowIso(now.getTime()));
  }
  const built = await buildKey(deps, sourceId, key, view, now, false);
  if (built.ok) {
    const urls = parseJson<string[]>(built.row.image_urls, []);
    const assets = await imageAssets(deps, sourceId, urls);
    return { ok: true, output: refOf(built.row), images: urls.filter((u) => assets.has(u)).map((url) => ({ url, assetId: assets.get(url)! })) };
  }
  return built.reason === 'invalid_view'
    ? { ok: false, reason: 'invalid_view', message: `The view does not fit the source's columns: ${built.message}` }
    : { ok: false, reason: built.reason, message: built.reason === 'no_data' ? 'The data source has no data yet' : 'The data source no longer exists' };
}

type KeyResult = { ok: true; row: OutputRow; changed: boolean } | { ok: false; reason: 'no_source' | 'no_data' | 'invalid_view'; message: string };

/**
 * Makes the key's current version match the snapshot (building only when the snapshot's
 * revision moved, the version expired, or `force`). `changed`: a new version with other
 * data became current.
 */
async function buildKey(deps: AppDeps, sourceId: string, key: string, view: View | null, now: Date, force: boolean): Promise<KeyResult> {
  const release = await deps.scope.get(LOCKS).acquire(`${sourceId}/${key}`);
  try {
    const db = deps.db;
    const meta = (await snapshotMetasOf(db, [sourceId])).get(sourceId);
    if (!meta) return { ok: false, reason: 'no_data', message: 'no data yet' };
    const current = (await currentOutputs(db, sourceId, [key])).get(key);
    const fresh =
      current &&
      Math.max(current.revision, current.checked_revision) === meta.revision &&
      (!current.expires_at || Date.parse(current.expires_at) > now.getTime());
    if (current && fresh && !force) return { ok: true, row: current, changed: false };
    const [source, snapshot] = await Promise.all([findSourceRow(db, sourceId), snapshotOf(db, sourceId)]);
    if (!source || !snapshot) return { ok: false, reason: 'no_source', message: 'gone' };
    const built = buildOutput(snapshot, view, { timeZone: source.time_zone, now });
    if (!built.ok) return { ok: false, reason: 'invalid_view', message: built.errors.map((e) => e.message).join('; ') };
    await noteImages(deps, sourceId, built.imageUrls);
    if (current && !force && current.data_sha256 === built.dataSha256) {
      await extendOutput(db, current.id, snapshot.revision, built.expiresAt);
      return { ok: true, row: { ...current, checked_revision: snapshot.revision, expires_at: built.expiresAt }, changed: false };
    }
    const row: OutputRow = {
      id: newId(),
      source_id: sourceId,
      view_key: key,
      revision: snapshot.revision,
      sha256: built.sha256,
      data_sha256: built.dataSha256,
      size_bytes: built.bytes.length,
      row_count: built.rowCount,
      generated_at: nowIso(now.getTime()),
      expires_at: built.expiresAt,
      image_urls: JSON.stringify(built.imageUrls),
      checked_revision: snapshot.revision,
    };
    const stored = await db.transaction().execute(async (trx) => {
      // The key may have gone (the source deleted, the key dropped) while this was building.
      if (!(await outputKey(trx, sourceId, key))) return false;
      await insertOutput(trx, row, built.bytes);
      return true;
    });
    if (!stored) return { ok: false, reason: 'no_source', message: 'gone' };
    return { ok: true, row, changed: true };
  } finally {
    release();
  }
}

const viewOfKey = (json: string | null): View | null => (json ? (JSON.parse(json) as View) : null);

/** Rebuilds every used key of a source; answers the keys whose current version changed. Never throws. */
export async function rebuildOutputs(deps: AppDeps, sourceId: string, options: { force?: boolean; now?: Date } = {}): Promise<string[]> {
  const changed: string[] = [];
  for (const k of await outputKeysOf(deps.db, sourceId)) {
    try {
      const r = await buildKey(deps, sourceId, k.view_key, viewOfKey(k.view), options.now ?? new Date(), options.force ?? false);
      if (r.ok && r.changed) changed.push(k.view_key);
    } catch (err) {
      deps.logger.error({ err, sourceId, viewKey: k.view_key }, 'could not build a data-source output');
    }
  }
  return changed;
}

/** Timed work: date-dependent views past their midnight are built again; keys unused for a week dropped. */
export async function rebuildExpiredOutputs(deps: AppDeps, now = new Date()): Promise<{ sourceId: string; viewKeys: string[] }[]> {
  await dropUnusedKeys(deps.db, nowIso(now.getTime() - UNUSED_KEY_TTL_MS));
  const out: { sourceId: string; viewKeys: string[] }[] = [];
  for (const e of await expiredOutputKeys(deps.db, nowIso(now.getTime()), 200)) {
    const k = await outputKey(deps.db, e.source_id, e.view_key);
    if (!k) continue;
    const r = await buildKey(deps, e.source_id, e.view_key, viewOfKey(k.view), now, false);
    if (r.ok && r.changed) out.push({ sourceId: e.source_id, viewKeys: [e.view_key] });
  }
  return out;
}

// ---- the routes' side ----

/** GET /data-sources/{id}/outputs: every kept version, newest first per key, with who uses the source. */
export async function listOutputs(env: Env, id: string) {
  const db = env.deps.db;
  const row = await getSourceRow(db, id);
  await requireLevel(db, env.caller, id, 'viewer', row.name);
  const [keys, versions, usedBy] = await Promise.all([outputKeysOf(db, id), outputVersions(db, id), findDataSourceUsages(env.deps, [id])]);
  const currentIds = new Set([...(await currentOutputs(db, id)).values()].map((o) => o.id));
  return {
    keys: keys.map((k) => ({ viewKey: k.view_key || null, view: viewOfKey(k.view), createdAt: k.created_at, lastUsedAt: k.last_used_at })),
    outputs: versions.map((o) => ({
      id: o.id,
      viewKey: o.view_key || null,
      revision: o.revision,
      sha256: o.sha256,
      sizeBytes: o.size_bytes,
      rowCount: o.row_count,
      generatedAt: o.generated_at,
      expiresAt: o.expires_at,
      current: currentIds.has(o.id),
      url: outputUrl(o.id),
    })),
    usedBy: usedBy.map((u) => ({ type: u.type, id: u.id, name: u.name })),
  };
}

/** POST /data-sources/{id}/outputs/rebuild: builds the whole source's output and every used view's again. */
export async function forceRebuild(env: Env, id: string) {
  const db = env.deps.db;
  const row = await getSourceRow(db, id);
  await requireLevel(db, env.caller, id, 'editor', row.name);
  await ensureOutputKey(db, id, WHOLE_SOURCE, null, nowIso());
  const changed = await rebuildOutputs(env.deps, id, { force: true });
  if (changed.length) await fireOutputChange(env.deps, { sourceId: id, viewKeys: changed, deleted: false });
  return listOutputs(env, id);
}

/** The data-change hook the module installs first: outputs follow the data, then the screens using changed ones are told. */
export async function onDataChange(deps: AppDeps, change: DataChange): Promise<void> {
  if (change.change === 'deleted') {
    await fireOutputChange(deps, { sourceId: change.sourceId, viewKeys: [], deleted: true });
    await dropSourceImages(deps, change.sourceId);
    return;
  }
  const changed = await rebuildOutputs(deps, change.sourceId);
  if (changed.length) await fireOutputChange(deps, { sourceId: change.sourceId, viewKeys: changed, deleted: false });
}

/** The periodic tick's work: date-dependent views past midnight, unused keys, images due or no longer used. */
export async function outputsTick(deps: AppDeps): Promise<void> {
  for (const c of await rebuildExpiredOutputs(deps)) await fireOutputChange(deps, { ...c, deleted: false });
  await dropUnusedImages(deps);
  await kickImageFetch(deps);
}

/** The bytes of an output a screen may download (its current manifest uses the source), else undefined. */
export async function outputForScreen(deps: AppDeps, screenId: string, outputId: string) {
  const row = await outputById(deps.db, outputId);
  if (!row || !(await screenMayDownloadData(deps, screenId, row.source_id))) return undefined;
  const bytes = await blobOf(deps.db, row.sha256);
  return bytes ? { row, bytes } : undefined;
}

/** An output's columns and rows, and its source's name (widgets compile from them), or undefined when gone. */
export async function outputDocument(deps: AppDeps, outputId: string) {
  const row = await outputById(deps.db, outputId);
  if (!row) return undefined;
  const [bytes, source] = await Promise.all([blobOf(deps.db, row.sha256), findSourceRow(deps.db, row.source_id)]);
  if (!bytes || !source) return undefined;
  const doc = JSON.parse(bytes.toString('utf8')) as { columns: { name: string; type: string }[]; rows: Record<string, unknown>[] };
  return { columns: doc.columns, rows: doc.rows, sourceName: source.name };
}
