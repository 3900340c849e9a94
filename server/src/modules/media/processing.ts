import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import type { AppDeps } from '../../platform/app-deps.js';
import { nowIso } from '../../platform/db/ids.js';
import type { AssetsTable, AssetVariantsTable } from '../../platform/db/schema.js';
import { PermanentJobError, type JobContext } from '../../platform/jobs/queue.js';
import { type AvResult, MediaRejected, processAudio, processPdf, processVideo } from '../../platform/media/av.js';
import { ImageRejected, probeImage, renderImage, type RenderedFile } from '../../platform/media/image.js';
import { hashFile, type MediaStore } from '../../platform/media/store.js';
import { fireAssetChange } from './hooks.js';
import {
  assetStateOf,
  deleteVariants,
  deleteVariantsOf,
  getAsset,
  insertMediaFile,
  insertVariant,
  listVariants,
  recordAssetReady,
  setAssetProgress,
  touchAsset,
} from './media.repo.js';

/**
 * Processing: an asset's original is probed and rendered into its variants (sharp for
 * images, ffmpeg for video and audio, poppler for PDF, never inside a transaction), the
 * files are stored, then one short transaction records them.
 */

/** What processing needs of the media service (service.ts runs it; a narrow type keeps the import one way). */
export interface ProcessingHost {
  deps: AppDeps;
  store: MediaStore;
  removeOrphans(candidates: readonly (string | null)[]): Promise<void>;
}

/** What processing found out about an asset, plus its rendered variants (the same shape for every kind). */
export type ProcessResult = AvResult;

/**
 * The `media.process` job (`process`: a processing asset becomes ready with its variants)
 * and `media.reprocess` (`reprocess`: a ready asset's variants rendered again, those that
 * came out the same keep their ids). An asset that left the expected state meanwhile
 * (deleted, failed, retried) is left alone.
 */
export async function renderAndRecord(media: ProcessingHost, assetId: string, job: JobContext, mode: 'process' | 'reprocess'): Promise<void> {
  const db = media.deps.db;
  const expected = mode === 'process' ? 'processing' : 'ready';
  const asset = await getAsset(db, assetId);
  if (!asset?.sha256) return; // deleted meanwhile
  const current = asset.state === 'archived' ? asset.state_before_archive : asset.state;
  if (current !== expected) return;
  const source = media.store.pathOf(asset.sha256);
  if (mode === 'reprocess' && !existsSync(source))
    throw new PermanentJobError(`The original file of asset ${assetId} is missing from the media store; upload it again`);
  const work = await media.store.workDir();
  try {
    const progress = async (fraction: number) => {
      job.progress(fraction);
      if (mode === 'process') await setAssetProgress(db, assetId, Math.round(fraction * 1000) / 1000);
    };
    let result: ProcessResult;
    try {
      result = await render(media.deps, asset, source, work, progress, job.signal);
    } catch (err) {
      if (err instanceof ImageRejected || err instanceof MediaRejected) throw new PermanentJobError(err.message);
      throw err;
    }
    const hashed: { f: RenderedFile; sha256: string; size: number }[] = [];
    for (const f of result.files) hashed.push({ f, ...(await hashFile(f.file)) });
    const stored: {
      f: RenderedFile | null;
      sha256: string;
      size: number;
      contentType: string;
      width: number | null;
      height: number | null;
      purpose: AssetVariantsTable['purpose'];
      page: number | null;
    }[] = [];
    for (const { f, sha256, size } of hashed) {
      stored.push({ f, sha256, size, contentType: f.contentType, width: f.width, height: f.height, purpose: f.purpose, page: f.page ?? null });
    }
    for (const o of result.originalAs ?? []) {
      stored.push({
        f: null,
        sha256: asset.sha256,
        size: asset.size_bytes ?? 0,
        contentType: o.contentType,
        width: o.width,
        height: o.height,
        purpose: o.purpose,
        page: null,
      });
    }
    const old = await listVariants(db, assetId);
    const now = nowIso();
    // The variants' hashes are held from their adoption to the commit (see MediaStore.locks).
    const applied = await media.store.locks.withAll(
      hashed.map((h) => h.sha256),
      async () => {
        for (const h of hashed) await media.store.adopt(h.f.file, { sha256: h.sha256, size: h.size });
        return db.transaction().execute(async (trx) => {
          const row = await assetStateOf(trx, assetId);
          if (!row) return false;
          const archived = row.state === 'archived';
          if ((archived ? row.state_before_archive : row.state) !== expected) return false;
          for (const s of stored) {
            await insertMediaFile(trx, { sha256: s.sha256, size_bytes: s.size, content_type: s.contentType, created_at: now });
          }
          if (mode === 'reprocess') {
            // Keep the variants that came out the same; replace the rest.
            const sameAs = (v: AssetVariantsTable, s: (typeof stored)[number]) =>
              v.purpose === s.purpose &&
              v.page === s.page &&
              v.content_type === s.contentType &&
              v.sha256 === s.sha256 &&
              v.width === s.width &&
              v.height === s.height;
            const kept = new Set<string>();
            const fresh = stored.filter((s) => {
              const match = old.find((v) => !kept.has(v.id) && sameAs(v, s));
              if (match) kept.add(match.id);
              return !match;
            });
            const gone = old.filter((v) => !kept.has(v.id)).map((v) => v.id);
            if (gone.length === 0 && fresh.length === 0) return false;
            if (gone.length) await deleteVariants(trx, gone);
            for (const s of fresh) await insertVariant(trx, assetId, s, now);
            await touchAsset(trx, assetId, now);
            return true;
          }
          await deleteVariantsOf(trx, assetId);
          for (const s of stored) await insertVariant(trx, assetId, s, now);
          const facts = {
            width: result.width,
            height: result.height,
            durationMs: result.durationMs,
            pageCount: result.pageCount,
            metadata: JSON.stringify(result.metadata),
          };
          await recordAssetReady(trx, assetId, archived, facts, now);
          return true;
        });
      },
    );
    await media.removeOrphans([...old.map((v) => v.sha256), ...stored.map((s) => s.sha256)]);
    if (applied) await fireAssetChange(media.deps, { change: mode === 'process' ? 'ready' : 'updated', assetIds: [assetId] });
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

async function render(
  deps: AppDeps,
  asset: AssetsTable,
  source: string,
  work: string,
  progress: (f: number) => Promise<void>,
  signal: AbortSignal,
): Promise<ProcessResult> {
  const { config, tools } = deps;
  switch (asset.kind) {
    case 'image': {
      const isSvg = asset.content_type === 'image/svg+xml';
      const info = await probeImage(source, config.imageMaxPixels);
      await progress(0.2);
      const files = await renderImage(source, info, work, config.imageMaxPixels, isSvg);
      return {
        files,
        width: info.width,
        height: info.height,
        durationMs: null,
        pageCount: null,
        metadata: { format: isSvg ? 'svg' : info.format, animated: info.animated, frames: info.frames },
      };
    }
    case 'video':
      return processVideo(tools, source, work, config.imageMaxPixels, progress, signal);
    case 'audio':
      return processAudio(tools, source, asset.content_type ?? '', work, progress, signal);
    case 'pdf':
      return processPdf(tools, source, work, config.imageMaxPixels, progress, signal);
    default:
      throw new PermanentJobError(`${asset.kind} assets are not processed`);
  }
}
