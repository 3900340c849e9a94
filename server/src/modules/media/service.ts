import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Transaction } from 'kysely';
import type Koa from 'koa';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import type { AssetKind, Database } from '../../platform/db/schema.js';
import { ApiError, isDiskFull } from '../../platform/http/errors.js';
import { type PartIo, realPartIo, tusResumableOnEveryAnswer } from '../../platform/http/tus.js';
import { JobQueue, type JobContext } from '../../platform/jobs/queue.js';
import { KeyedLocks } from '../../platform/media/locks.js';
import { hashFile, MediaStore } from '../../platform/media/store.js';
import { getSettings } from '../system/index.js';
import { fireAssetChange } from './hooks.js';
import { uploadLimits } from './limits.js';
import { renderAndRecord } from './processing.js';
import { activeJobPayloads, deleteMediaFile, mediaFileExists, mediaFileHashes, orphanedFiles, websitesWithoutThumbnail } from './maintenance.repo.js';
import { ensureTags, getAsset, insertAsset, insertJob, insertMediaFile, recordAssetFailure, tagAssets } from './media.repo.js';
import { deleteUpload, expiredUploadIds, uploadExists } from './uploads.repo.js';
import { runWebsiteThumbnail, WEBSITE_THUMBNAIL_JOB } from './website-thumbnail.js';

export const PROCESS_JOB = 'media.process';
/** Renders a ready asset's variants again (maintenance action reprocess-thumbnails). */
export const REPROCESS_JOB = 'media.reprocess';

declare module 'koa' {
  interface DefaultContext {
    media: MediaService;
  }
}

/** A file that becomes an asset (ingestFile). */
export interface IngestInput {
  /** The file; it is moved into the store (or removed when the store has its bytes). */
  file: string;
  /** What sniffFile decided from the bytes. */
  kind: AssetKind;
  contentType: string;
  name: string;
  originalFilename: string | null;
  folderId: string | null;
  tags: readonly string[];
  createdBy: string | null;
  /** Said in the 507 answer when the disk is full. */
  diskFullMessage?: string;
  /** Runs inside the transaction that records the asset (e.g. the upload row goes). */
  inTransaction?: (trx: Transaction<Database>) => Promise<void>;
}

/** The media library's runtime: the store, the job queue, and processing. */
export class MediaService {
  readonly store: MediaStore;
  readonly uploadsDir: string;
  /**
   * One request at a time per upload (HEAD, PATCH, DELETE, complete, expiry). A PATCH
   * holding it is stopped (its request destroyed) when a newer request for the same upload
   * arrives, as tusd does: a client resuming after a stalled connection is never blocked by
   * it, and never runs beside it.
   */
  readonly uploadLocks = new KeyedLocks();
  /** How PATCH writes and syncs part files (platform/http/tus.ts); a test replaces it to fail like a full disk. */
  partIo: PartIo = realPartIo();

  constructor(
    readonly deps: AppDeps,
    readonly jobs: JobQueue,
  ) {
    this.store = new MediaStore(deps.config.dataDir);
    this.uploadsDir = path.join(deps.config.dataDir, 'uploads');
  }

  partPath(uploadId: string): string {
    return path.join(this.uploadsDir, `${uploadId}.part`);
  }

  /**
   * Runs `fn` holding the upload's lock. `stop`, when given, is how a newer request for the
   * same upload makes this one give way (a PATCH destroys its request stream).
   */
  async withUploadLock<T>(id: string, fn: () => Promise<T>, stop?: () => void): Promise<T> {
    const release = await this.uploadLocks.acquire(id, stop);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /**
   * Removes media files no asset or variant references any more. Each hash is checked and
   * removed holding its store lock, so a file an upload or a job is adopting (stored, its
   * row not committed yet) is left alone: it is referenced once that commit lands.
   */
  async removeOrphans(candidates: readonly (string | null)[]): Promise<void> {
    const db = this.deps.db;
    for (const sha of new Set(candidates.filter((c): c is string => Boolean(c)))) {
      const release = await this.store.locks.acquire(sha);
      try {
        if ((await orphanedFiles(db, [sha])).length === 0) continue;
        await deleteMediaFile(db, sha);
        await this.store.remove(sha);
      } finally {
        release();
      }
    }
  }

  /**
   * How a file becomes an asset (uploads' `complete`, the demo seed): the bytes go into the
   * store under their hash (linked: the file itself stays until the commit), then one
   * transaction records the media file, the asset (state processing), its tags and the
   * processing job; the queue is kicked, the file removed. A full disk or database answers
   * 507 and leaves the file where it was (the upload can be completed again). Answers the
   * asset id.
   */
  async ingestFile(input: IngestInput): Promise<string> {
    const db = this.deps.db;
    const diskFull = () => new ApiError('insufficient_storage', input.diskFullMessage ?? 'The disk is full; free some space and try again');
    let hashed: { sha256: string; size: number };
    try {
      hashed = await hashFile(input.file);
    } catch (err) {
      if (isDiskFull(err)) throw diskFull();
      throw err;
    }
    const id = await this.store.locks.withAll([hashed.sha256], async () => {
      let stored: { sha256: string; size: number; created: boolean };
      try {
        stored = await this.store.adopt(input.file, hashed, { keepSource: true });
      } catch (err) {
        if (isDiskFull(err)) throw diskFull();
        throw err;
      }
      const id = newId();
      const now = nowIso();
      const job = JobQueue.row(PROCESS_JOB, { assetId: id });
      try {
        await db.transaction().execute(async (trx) => {
          await insertMediaFile(trx, { sha256: stored.sha256, size_bytes: stored.size, content_type: input.contentType, created_at: now });
          await insertAsset(trx, {
            id,
            kind: input.kind,
            state: 'processing',
            state_before_archive: null,
            name: input.name,
            sha256: stored.sha256,
            size_bytes: stored.size,
            content_type: input.contentType,
            original_filename: input.originalFilename,
            width: null,
            height: null,
            duration_ms: null,
            page_count: null,
            folder_id: input.folderId,
            failure_reason: null,
            progress: 0,
            metadata: '{}',
            website: null,
            created_by: input.createdBy,
            created_at: now,
            updated_at: now,
            archived_at: null,
          });
          if (input.tags.length) await tagAssets(trx, [id], await ensureTags(trx, input.tags));
          await insertJob(trx, job);
          if (input.inTransaction) await input.inTransaction(trx);
        });
      } catch (err) {
        // Nothing references the store file this call made: take it back (we hold its hash).
        if (stored.created) await this.store.remove(stored.sha256).catch(() => {});
        if (isDiskFull(err)) throw diskFull();
        throw err;
      }
      return id;
    });
    await fs.rm(input.file, { force: true });
    this.jobs.kick();
    return id;
  }

  async queueProcessing(assetId: string): Promise<void> {
    await this.jobs.enqueue(PROCESS_JOB, { assetId });
  }

  /** The job: probe, render, store, then one short transaction records the result. */
  async process(assetId: string, job: JobContext): Promise<void> {
    await renderAndRecord(this, assetId, job, 'process');
  }

  /**
   * The `media.reprocess` job (maintenance action reprocess-thumbnails): renders a ready
   * asset's variants again from its original and stores any file that is missing. The asset
   * stays `ready` throughout (screens keep playing it); variants whose bytes did not change
   * keep their ids, so manifests only change when a variant really did.
   */
  async reprocess(assetId: string, job: JobContext): Promise<void> {
    await renderAndRecord(this, assetId, job, 'reprocess');
  }

  async markFailed(assetId: string, reason: string): Promise<void> {
    const db = this.deps.db;
    const row = await getAsset(db, assetId);
    if (!row) return;
    await recordAssetFailure(db, assetId, row.state === 'archived', reason.slice(0, 1000));
    await fireAssetChange(this.deps, { change: 'failed', assetIds: [assetId] });
  }

  /**
   * Files in the store that no row references and that are older than an hour: left by a
   * crash between storing a file and committing its row. Walks media/ (two levels).
   */
  async sweepStore(minAgeMs = 3_600_000): Promise<number> {
    const root = this.store.root;
    if (!existsSync(root)) return 0;
    const known = new Set(await mediaFileHashes(this.deps.db));
    let removed = 0;
    for (const a of await fs.readdir(root)) {
      if (!/^[0-9a-f]{2}$/.test(a)) continue;
      for (const b of await fs.readdir(path.join(root, a))) {
        const dir = path.join(root, a, b);
        for (const name of await fs.readdir(dir)) {
          if (!/^[0-9a-f]{64}$/.test(name) || known.has(name)) continue;
          const file = path.join(dir, name);
          const stat = await fs.stat(file).catch(() => null);
          if (!stat || Date.now() - stat.mtimeMs < minAgeMs) continue;
          // Re-check holding the hash: an upload or a job may be adopting it or have committed its row.
          const release = await this.store.locks.acquire(name);
          try {
            if (await mediaFileExists(this.deps.db, name)) continue;
            const again = await fs.stat(file).catch(() => null);
            if (!again || Date.now() - again.mtimeMs < minAgeMs) continue;
            await fs.rm(file, { force: true });
            removed++;
          } finally {
            release();
          }
        }
      }
    }
    return removed;
  }

  /**
   * Deletes expired partial uploads and stray part files: past their `expires_at`, or
   * untouched for longer than the effective expiry now (a lowered setting applies to the
   * uploads already under way). Answers what went, with the bytes on disk.
   */
  async expireUploads(options: { dryRun?: boolean } = {}): Promise<{ uploads: number; strayFiles: number; bytes: number }> {
    const db = this.deps.db;
    const { expiryMs } = await uploadLimits(this.deps);
    const now = Date.now();
    const expired = await expiredUploadIds(db, nowIso(), new Date(now - expiryMs).toISOString());
    const out = { uploads: 0, strayFiles: 0, bytes: 0 };
    const sizeOf = async (file: string) => (await fs.stat(file).catch(() => null))?.size ?? 0;
    for (const id of expired) {
      // An upload a request is working on is left for the next round.
      const release = this.uploadLocks.tryAcquire(id);
      if (!release) continue;
      try {
        out.uploads++;
        out.bytes += await sizeOf(this.partPath(id));
        if (options.dryRun) continue;
        await deleteUpload(db, id);
        await fs.rm(this.partPath(id), { force: true });
      } finally {
        release();
      }
    }
    if (!existsSync(this.uploadsDir)) return out;
    for (const name of await fs.readdir(this.uploadsDir)) {
      if (!name.endsWith('.part')) continue;
      const id = name.replace(/\.part$/, '');
      const release = this.uploadLocks.tryAcquire(id);
      if (!release) continue;
      try {
        // Checked holding the upload: a creation may have just written its row.
        if (await uploadExists(db, id)) continue;
        out.strayFiles++;
        out.bytes += await sizeOf(path.join(this.uploadsDir, name));
        if (!options.dryRun) await fs.rm(path.join(this.uploadsDir, name), { force: true });
      } finally {
        release();
      }
    }
    return out;
  }
}

/** The media service of each app (maintenance actions reach the store and the queue through it). */
const MEDIA_SERVICE = new ScopeKey<{ service?: MediaService }>('media.service', () => ({}));

export function mediaServiceOf(deps: AppDeps): MediaService | undefined {
  return deps.scope.get(MEDIA_SERVICE).service;
}

/** The media job kinds, run by `media` on `jobs`. */
export function registerMediaJobs(jobs: JobQueue, media: MediaService): void {
  jobs.register(PROCESS_JOB, {
    run: (payload: { assetId: string }, ctx) => media.process(payload.assetId, ctx),
    onFailed: (payload: { assetId: string }, error) => media.markFailed(payload.assetId, error),
  });
  // A failed reprocess leaves the asset as it was (ready, with its old variants); the job shows the error.
  jobs.register(REPROCESS_JOB, { run: (payload: { assetId: string }, ctx) => media.reprocess(payload.assetId, ctx) });
  // A website's thumbnail (its preview picture, or a card with its icon and title): the asset stays ready whatever happens.
  jobs.register(WEBSITE_THUMBNAIL_JOB, { run: (payload: { assetId: string }, ctx) => runWebsiteThumbnail(media, payload.assetId, ctx) });
}

/** Website assets made before they got thumbnails: one job each (once: every run leaves a thumbnail). */
async function backfillWebsiteThumbnails(deps: AppDeps, jobs: JobQueue): Promise<void> {
  const ids = await websitesWithoutThumbnail(deps.db, 1000);
  if (ids.length === 0) return;
  const pending = new Set(
    (await activeJobPayloads(deps.db, WEBSITE_THUMBNAIL_JOB)).map((payload) => {
      try {
        return (JSON.parse(payload) as { assetId?: string }).assetId ?? '';
      } catch {
        return '';
      }
    }),
  );
  for (const id of ids) if (!pending.has(id)) await jobs.enqueue(WEBSITE_THUMBNAIL_JOB, { assetId: id }, { maxAttempts: 2 });
}

/** Wires the media library into an app: context, job handler, periodic tasks, the queue. */
export function installMedia(app: Koa, deps: AppDeps): MediaService {
  const jobs = new JobQueue(deps.db, deps.logger.child({ module: 'jobs' }), { concurrency: deps.config.jobConcurrency, cluster: deps.cluster });
  const media = new MediaService(deps, jobs);
  app.context.media = media;
  deps.scope.get(MEDIA_SERVICE).service = media;
  registerMediaJobs(jobs, media);
  deps.periodic.every('uploads.expire', 10 * 60_000, async () => void (await media.expireUploads()));
  // Finished and failed jobs are kept settings retention.jobHistoryDays (read at each run).
  deps.periodic.every('jobs.prune', 6 * 60 * 60_000, async () => {
    const settings = await getSettings(deps.db);
    await jobs.prune(settings.retention.jobHistoryDays * 24 * 3_600_000);
  });
  deps.periodic.every('media.sweep', 24 * 60 * 60_000, async () => void (await media.sweepStore()));
  // Instances sharing a database: the jobs of an instance that stopped or died run again here.
  if (deps.cluster.shared) deps.periodic.every('jobs.orphans', 30_000, async () => void (await jobs.recoverInterrupted()));
  app.use(tusResumableOnEveryAnswer('/api/v1/uploads'));
  deps.periodic.onStop(() => jobs.stop());
  void fs
    .mkdir(media.uploadsDir, { recursive: true })
    // Work directories of jobs a crash interrupted (running jobs start again from scratch).
    // Not when instances share the media directory: theirs are in there too (the sweep
    // removes stale work directories by age, modules/media/system.hooks.ts).
    .then(() => (deps.cluster.shared ? undefined : fs.rm(media.store.tmpDir, { recursive: true, force: true })))
    .then(() => jobs.start())
    .then(() => backfillWebsiteThumbnails(deps, jobs))
    .catch((err: unknown) => deps.logger.error({ err }, 'media job queue did not start'));
  void deps.tools.pdf();
  return media;
}
