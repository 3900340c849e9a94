import { newId, nowIso } from '../../platform/db/ids.js';
import { storableJson } from '../../platform/db/json.js';
import type { AssetsTable } from '../../platform/db/schema.js';
import { roleAtLeast, type Role } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import { frameBlockers, OutboundError, safeFetch } from '../../platform/http/outbound.js';
import { JobQueue } from '../../platform/jobs/queue.js';
import { fireAssetChange, findAssetUsages } from './hooks.js';
import { fetchPolicy } from './limits.js';
import { deleteAssetRow, ensureTags, getAsset, insertAsset, insertJob, listVariants, processAgain, setWebsite, tagAssets } from './media.repo.js';
import { insertFolder, rootFolderNamed } from './organize.repo.js';
import type { WebsiteSettings } from './media.schemas.js';
import { PROCESS_JOB, type MediaService } from './service.js';
import { WEBSITE_THUMBNAIL_JOB } from './website-thumbnail.js';

/** What happens to an asset beyond its row: deletion, processing again, websites. */

/**
 * Deletes an asset unless something uses it (409 listing what, with `details.usedBy` and
 * `details.usages`); `force` (admins and owners only, 403 otherwise) deletes it anyway.
 * Its media files go when nothing references their sha256.
 */
export async function deleteAsset(media: MediaService, asset: AssetsTable, options: { force: boolean; role: Role }): Promise<void> {
  const deps = media.deps;
  if (options.force && !roleAtLeast(options.role, 'admin')) throw new ApiError('forbidden', 'Only admins and owners may delete an asset that is in use');
  const usages = await findAssetUsages(deps, [asset.id]);
  if (usages.length > 0 && !options.force) {
    const usedBy = [...new Map(usages.map((u) => [`${u.type}:${u.id}`, { type: u.type, id: u.id, name: u.name }])).values()];
    const names = usedBy.slice(0, 5).map((u) => `${u.type} "${u.name}"`);
    throw new ApiError(
      'conflict',
      `"${asset.name}" is used by ${names.join(', ')}${usedBy.length > 5 ? ` and ${usedBy.length - 5} more` : ''}; remove it there first (or force as an admin)`,
      { details: { usedBy, usages } },
    );
  }
  const variants = await listVariants(deps.db, asset.id);
  await deleteAssetRow(deps.db, asset.id);
  await media.removeOrphans([asset.sha256, ...variants.map((v) => v.sha256)]);
  await fireAssetChange(deps, { change: 'deleted', assetIds: [asset.id] });
}

/** A failed asset is processed again (409 when it has not failed). */
export async function retryAsset(media: MediaService, asset: AssetsTable): Promise<void> {
  if (asset.state !== 'failed') throw new ApiError('conflict', `Only a failed asset can be retried (this one is ${asset.state})`);
  await processAgain(media.deps.db, asset.id, JobQueue.row(PROCESS_JOB, { assetId: asset.id }));
  media.jobs.kick();
}

/** A new website asset: ready at once; its thumbnail is made in the background. Answers its id. */
export async function createWebsiteAsset(
  media: MediaService,
  input: { website: WebsiteSettings; name: string; folderId: string | null; tags: readonly string[]; createdBy: string },
): Promise<string> {
  const { website } = input;
  const id = newId();
  const now = nowIso();
  await media.deps.db.transaction().execute(async (trx) => {
    await insertAsset(trx, {
      id,
      kind: 'website',
      state: 'ready',
      state_before_archive: null,
      name: input.name,
      sha256: null,
      size_bytes: null,
      content_type: 'text/html',
      original_filename: null,
      width: website.viewport?.width ?? null,
      height: website.viewport?.height ?? null,
      duration_ms: null,
      page_count: null,
      folder_id: input.folderId,
      failure_reason: null,
      progress: null,
      metadata: '{}',
      website: storableJson(website, 'website'),
      created_by: input.createdBy,
      created_at: now,
      updated_at: now,
      archived_at: null,
    });
    if (input.tags.length) await tagAssets(trx, [id], await ensureTags(trx, input.tags));
    await insertJob(trx, JobQueue.row(WEBSITE_THUMBNAIL_JOB, { assetId: id }, { maxAttempts: 2 }));
  });
  media.jobs.kick();
  await fireAssetChange(media.deps, { change: 'ready', assetIds: [id] });
  return id;
}

/** What the body of PATCH /assets/{id}/website may change (undefined: keep; null: clear). */
export type WebsiteChange = { [K in keyof WebsiteSettings]?: WebsiteSettings[K] | undefined };

/** The website settings of a website asset (409 when the asset is not one). */
export function websiteOf(asset: AssetsTable): WebsiteSettings {
  if (asset.kind !== 'website' || !asset.website) throw new ApiError('conflict', `This asset is a ${asset.kind}, not a website`);
  return JSON.parse(asset.website) as WebsiteSettings;
}

/** Changes a website asset's settings; a new URL gets a new thumbnail. */
export async function changeWebsite(media: MediaService, asset: AssetsTable, change: WebsiteChange): Promise<void> {
  const current = websiteOf(asset);
  const next: WebsiteSettings = {
    url: change.url ?? current.url,
    refreshIntervalSec: change.refreshIntervalSec !== undefined ? change.refreshIntervalSec : current.refreshIntervalSec,
    zoom: change.zoom ?? current.zoom,
    viewport: change.viewport !== undefined ? change.viewport : current.viewport,
    injectionEnabled: change.injectionEnabled ?? current.injectionEnabled,
    css: change.css !== undefined ? change.css : current.css,
    js: change.js !== undefined ? change.js : current.js,
  };
  await setWebsite(media.deps.db, asset.id, storableJson(next, 'website'), { width: next.viewport?.width ?? null, height: next.viewport?.height ?? null });
  if (next.url !== current.url) await media.jobs.enqueue(WEBSITE_THUMBNAIL_JOB, { assetId: asset.id }, { maxAttempts: 2 });
  await fireAssetChange(media.deps, { change: 'replaced', assetIds: [asset.id] });
}

/** What fetching a website now found (GET /assets/{id}/website/diagnostics). */
export interface WebsiteDiagnostics {
  url: string;
  finalUrl: string | null;
  reachable: boolean;
  status: number | null;
  elapsedMs: number;
  redirects: { url: string; status: number; location?: string }[];
  tls: { protocol: string | null; authorized: boolean; error: string | null } | null;
  frameable: boolean | null;
  frameBlockers: string[];
  headers: { xFrameOptions: string | null; contentSecurityPolicy: string | null; contentType: string | null };
  error: { code: string; message: string } | null;
}

/** Fetches the website now, through the outbound guard: reachability, status, TLS, redirects, frame blockers. */
export async function diagnoseWebsite(media: MediaService, asset: AssetsTable): Promise<WebsiteDiagnostics> {
  const { url } = websiteOf(asset);
  const started = Date.now();
  const policy = await fetchPolicy(media.deps);
  try {
    const res = await safeFetch(url, policy, { method: 'GET', timeoutMs: 10_000, maxBytes: 256 * 1024 });
    const blockers = frameBlockers(res.headers);
    const header = (h: string) => {
      const v = res.headers[h];
      return v === undefined ? null : ([] as string[]).concat(v).join(', ');
    };
    return {
      url,
      finalUrl: res.url,
      reachable: true,
      status: res.status,
      elapsedMs: Date.now() - started,
      redirects: res.redirects,
      tls: res.tls,
      frameable: blockers.length === 0,
      frameBlockers: blockers,
      headers: { xFrameOptions: header('x-frame-options'), contentSecurityPolicy: header('content-security-policy'), contentType: header('content-type') },
      error: res.status >= 400 ? { code: 'http_status', message: `The site answered ${res.status}` } : null,
    };
  } catch (err) {
    if (!(err instanceof OutboundError)) throw err;
    return {
      url,
      finalUrl: null,
      reachable: false,
      status: null,
      elapsedMs: Date.now() - started,
      redirects: err.redirects,
      tls: err.code === 'tls_error' ? { protocol: null, authorized: false, error: err.message } : null,
      frameable: null,
      frameBlockers: [],
      headers: { xFrameOptions: null, contentSecurityPolicy: null, contentType: null },
      error: { code: err.code, message: err.message },
    };
  }
}

/**
 * A root folder by name, made when absent (the folder data-source images go to): answers its
 * id. Two calls at once may both make one; the oldest is answered from then on.
 */
export async function folderNamed(media: MediaService, name: string): Promise<string> {
  const db = media.deps.db;
  const found = await rootFolderNamed(db, name);
  if (found) return found;
  const now = nowIso();
  await insertFolder(db, { id: newId(), name, parent_id: null, created_at: now, updated_at: now });
  return (await rootFolderNamed(db, name))!;
}

/** Deletes assets whatever uses them (what the server made for itself, e.g. a data source's images, when it no longer needs them). */
export async function deleteOwnAssets(media: MediaService, assetIds: readonly string[]): Promise<void> {
  for (const id of assetIds) {
    const asset = await getAsset(media.deps.db, id);
    if (asset) await deleteAsset(media, asset, { force: true, role: 'owner' });
  }
}
