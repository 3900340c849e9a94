import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import { nowIso } from '../../platform/db/ids.js';
import { OutboundError, safeFetch } from '../../platform/http/outbound.js';
import { sniffFile } from '../../platform/media/sniff.js';
import { deleteOwnAssets, fetchPolicy, folderNamed, mediaServiceOf, type Usage } from '../media/index.js';
import { fireOutputChange } from './hooks.js';
import {
  deleteImageRow,
  dueImages,
  imageFailed,
  imageReady,
  imagesOfSource,
  noteImageUrls,
  readyImages,
  refetchImagesOfAssets,
  sourcesOfImageAssets,
  unusedImages,
} from './images.repo.js';
import { outputKeysOf } from './outputs.repo.js';

/**
 * Images in rows (issue 17, docs/data-sources.md "Images in rows"): the addresses in an
 * output's `image` cells are fetched once each, under the outbound rules (DESIGN.md section
 * 9, the same guard feeds use), and kept as image assets processed like uploads (in the
 * library folder "Data source images"), so a manifest lists their player variants next to
 * the output and a screen shows them offline. Fetching runs in the background, two at a
 * time; a failure is retried after 5 minutes, then 1 hour, then given up (diagnostics say
 * why). When a source's images become assets its screens are told; images no kept output
 * version lists any more, and a deleted source's, go with their assets.
 */

export const IMAGE_FOLDER = 'Data source images';
const IMAGE_MAX_BYTES = 20 * 1024 * 1024;
const IMAGE_TIMEOUT_MS = 20_000;
const RETRY_AFTER_MS = [5 * 60_000, 60 * 60_000];
/** An image is not dropped in its first hour (an output listing it may be being stored). */
const GRACE_MS = 3_600_000;
const CONCURRENCY = 2;

function mediaOf(deps: AppDeps) {
  const media = mediaServiceOf(deps);
  if (!media) throw new Error('the media module is not installed');
  return media;
}

/** Records the addresses an output uses and, when some are new, starts fetching them. */
export async function noteImages(deps: AppDeps, sourceId: string, urls: readonly string[]): Promise<void> {
  if (urls.length === 0) return;
  if ((await noteImageUrls(deps.db, sourceId, urls, nowIso())) > 0) kickImageFetch(deps);
}

/** The ready images among these addresses: url -> asset id. */
export async function imageAssets(deps: AppDeps, sourceId: string, urls: readonly string[]): Promise<Map<string, string>> {
  return urls.length ? readyImages(deps.db, sourceId, urls) : new Map();
}

const RUNNING = new ScopeKey('data-sources.image-fetch', () => ({ running: null as Promise<number> | null, again: false }));

/** Runs the fetcher now (once at a time; a kick while it runs makes it look again when done). */
export function kickImageFetch(deps: AppDeps): Promise<number> {
  const state = deps.scope.get(RUNNING);
  if (state.running) {
    state.again = true;
    return state.running;
  }
  const run = async () => {
    let total = 0;
    do {
      state.again = false;
      total += await fetchDueImages(deps);
    } while (state.again);
    return total;
  };
  state.running = deps.periodic
    .track(run())
    .catch((err: unknown) => {
      deps.logger.error({ err }, 'data-source image fetch failed');
      return 0;
    })
    .finally(() => {
      state.running = null;
    });
  return state.running;
}

/** Fetches every due image; sources that got new assets have their screens told. Answers how many were tried. */
async function fetchDueImages(deps: AppDeps): Promise<number> {
  let tried = 0;
  for (;;) {
    if (deps.periodic.isStopping) return tried;
    const due = await dueImages(deps.db, nowIso(), 20);
    if (due.length === 0) return tried;
    const readySources = new Set<string>();
    let next = 0;
    const worker = async () => {
      while (next < due.length) {
        const d = due[next++]!;
        try {
          if (await fetchImage(deps, d.source_id, d.url, d.attempts)) readySources.add(d.source_id);
        } catch (err) {
          // Not the address's fault (a full disk, the database): tried again later, never in a loop now.
          deps.logger.error({ err, sourceId: d.source_id }, 'could not keep a data-source image');
          const retryAt = nowIso(Date.now() + (RETRY_AFTER_MS[d.attempts] ?? RETRY_AFTER_MS.at(-1)!));
          await imageFailed(deps.db, d.source_id, d.url, 'The server could not store the image; it will try again', d.attempts + 1, retryAt);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    tried += due.length;
    for (const sourceId of readySources) {
      const keys = (await outputKeysOf(deps.db, sourceId)).map((k) => k.view_key);
      if (keys.length) await fireOutputChange(deps, { sourceId, viewKeys: keys, deleted: false });
    }
  }
}

/** One image: fetched, checked to be an image, ingested as an asset. Answers whether it became one. */
async function fetchImage(deps: AppDeps, sourceId: string, url: string, attempts: number): Promise<boolean> {
  const media = mediaOf(deps);
  const fail = async (message: string, permanent = false) => {
    const delay = permanent ? undefined : RETRY_AFTER_MS[attempts];
    await imageFailed(deps.db, sourceId, url, message, attempts + 1, delay === undefined ? null : nowIso(Date.now() + delay));
    return false;
  };
  let body: Buffer;
  try {
    const res = await safeFetch(url, await fetchPolicy(deps), { timeoutMs: IMAGE_TIMEOUT_MS, maxBytes: IMAGE_MAX_BYTES, headers: { accept: 'image/*' } });
    if (res.status !== 200) return fail(`The image address answered ${res.status}`, res.status === 404 || res.status === 410);
    if (res.truncated) return fail(`The image is larger than ${IMAGE_MAX_BYTES / 1024 / 1024} MB`, true);
    body = res.body;
  } catch (err) {
    if (err instanceof OutboundError) return fail(err.message, err.code === 'address_not_allowed' || err.code === 'invalid_url');
    throw err;
  }
  await fs.mkdir(media.store.tmpDir, { recursive: true });
  const file = media.store.tempPath();
  try {
    await fs.writeFile(file, body);
    const sniffed = await sniffFile(file);
    if (sniffed?.kind !== 'image') return fail('The address does not give an image (PNG, JPEG, WebP, GIF, AVIF or SVG)', true);
    const name = decodeURIComponent(path.posix.basename(new URL(url).pathname)).slice(0, 200) || 'image';
    const assetId = await media.ingestFile({
      file,
      kind: 'image',
      contentType: sniffed.contentType,
      name,
      originalFilename: name,
      folderId: await folderNamed(media, IMAGE_FOLDER),
      tags: ['data-source'],
      createdBy: null,
    });
    await imageReady(deps.db, sourceId, url, assetId);
    return true;
  } finally {
    await fs.rm(file, { force: true });
  }
}

/** Timed: images no kept output version lists any more (a deleted source's too) go with their assets. */
export async function dropUnusedImages(deps: AppDeps, now = Date.now()): Promise<number> {
  const rows = await unusedImages(deps.db, nowIso(now - GRACE_MS), 200);
  await dropImages(deps, rows);
  return rows.length;
}

/** A deleted source's images go at once. */
export async function dropSourceImages(deps: AppDeps, sourceId: string): Promise<void> {
  await dropImages(deps, await imagesOfSource(deps.db, sourceId));
}

async function dropImages(deps: AppDeps, rows: readonly { source_id: string; url: string; asset_id: string | null }[]): Promise<void> {
  for (const r of rows) {
    await deleteImageRow(deps.db, r.source_id, r.url);
    if (r.asset_id) await deleteOwnAssets(mediaOf(deps), [r.asset_id]);
  }
}

/** Someone deleted an image asset a source still uses (forced, in the library): it is fetched again. */
export async function fetchDeletedImagesAgain(deps: AppDeps, assetIds: readonly string[]): Promise<void> {
  if ((await refetchImagesOfAssets(deps.db, assetIds, nowIso())) > 0) kickImageFetch(deps);
}

/** Assets that are a source's images are used by that source (the library says so before deleting one). */
export async function imageAssetUsages(db: AppDeps['db'], assetIds: readonly string[]): Promise<Usage[]> {
  return (await sourcesOfImageAssets(db, assetIds)).map((r) => ({ assetId: r.asset_id!, type: 'data-source', id: r.id, name: r.name }));
}
