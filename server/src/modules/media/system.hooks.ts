import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { AppDeps } from '../../platform/app-deps.js';
import { ApiError } from '../../platform/http/errors.js';
import { JobQueue, queueStatus } from '../../platform/jobs/queue.js';
import {
  registerMaintenanceAction,
  registerRestoreParticipant,
  registerStatusContributor,
  type MaintenanceAction,
  type RestoreParticipant,
  type StatusContributor,
} from '../system/index.js';
import {
  activeJobAssetIds,
  deleteMediaFile,
  fileReferenced,
  insertJobs,
  jobStates,
  mediaCounts,
  readyAssetsOfKinds,
  type ReprocessCandidate,
  referencedHashes,
  reprocessCandidatesByIds,
  unreferencedMediaFiles,
} from './maintenance.repo.js';
import { ASSET_KINDS, ASSET_STATES } from './media.schemas.js';
import { mediaServiceOf, REPROCESS_JOB, type MediaService } from './service.js';
import { uuidParam } from '../../platform/http/route.js';

/**
 * What the media module adds to `GET /system/status` (`media`, `jobs`) and to
 * `POST /system/maintenance/{action}` (`prune-media`, `reprocess-thumbnails`).
 * docs/operations.md describes both for operators.
 */

const SHA256 = /^[0-9a-f]{64}$/;
/** Store files younger than this are never pruned: a job or an upload may be about to commit its row. */
export const PRUNE_MIN_AGE_MS = 3_600_000;
/** Job work directories (media/tmp) older than this belong to no running job. */
export const STALE_WORK_MS = 24 * 3_600_000;
const PROCESSABLE_KINDS = ['image', 'video', 'audio', 'pdf'] as const;

function serviceOf(deps: AppDeps): MediaService {
  const media = mediaServiceOf(deps);
  if (!media) throw new ApiError('conflict', 'The media library is not running in this process');
  return media;
}

const zeroes = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

// ---------------------------------------------------------------- status: media

/** Asset counts by state and kind, logical bytes of originals and variants, physical bytes of the store. */
export async function mediaStatus(db: AppDeps['db']) {
  const { groups, variants: v, files, uploads } = await mediaCounts(db);
  const byState = zeroes(ASSET_STATES);
  const byKind = zeroes(ASSET_KINDS);
  let total = 0;
  let originalBytes = 0;
  for (const g of groups) {
    const n = Number(g.n);
    total += n;
    byState[g.state] = (byState[g.state] ?? 0) + n;
    byKind[g.kind] = (byKind[g.kind] ?? 0) + n;
    originalBytes += Number(g.bytes ?? 0);
  }
  return {
    assets: total,
    byState,
    byKind,
    /** Sum of the originals' sizes, per asset (two assets of the same file count twice). */
    originalBytes,
    variants: Number(v?.n ?? 0),
    variantBytes: Number(v?.bytes ?? 0),
    /** Distinct files in the store (content-addressed: the same bytes are stored once). */
    storedFiles: Number(files?.n ?? 0),
    storedBytes: Number(files?.bytes ?? 0),
    partialUploads: Number(uploads?.n ?? 0),
    partialUploadBytes: Number(uploads?.bytes ?? 0),
  };
}

const mediaStatusSection: StatusContributor = { key: 'media', title: 'Media library', collect: (deps) => mediaStatus(deps.db) };
const jobsStatusSection: StatusContributor = { key: 'jobs', title: 'Background jobs', collect: (deps) => queueStatus(deps.db) };

// Processing writes variants into media/ and rows into the database: not across a restore's swap.
const mediaJobsParticipant: RestoreParticipant = {
  key: 'media-jobs',
  pause: async (deps) => void (await mediaServiceOf(deps)?.jobs.pause()),
  resume: async (deps) => void (await mediaServiceOf(deps)?.jobs.resume()),
};

// ---------------------------------------------------------------- maintenance: prune-media

async function sizeOfTree(p: string): Promise<{ files: number; bytes: number }> {
  const st = await fs.lstat(p).catch(() => null);
  if (!st) return { files: 0, bytes: 0 };
  if (!st.isDirectory()) return { files: 1, bytes: st.size };
  let files = 0;
  let bytes = 0;
  for (const name of await fs.readdir(p).catch(() => [] as string[])) {
    const sub = await sizeOfTree(path.join(p, name));
    files += sub.files;
    bytes += sub.bytes;
  }
  return { files, bytes };
}

async function readDir(dir: string): Promise<Dirent[]> {
  try {
    return await fs.readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

export interface PruneResult {
  dryRun: boolean;
  /** Store files no asset or variant references (removed, or that would be). */
  orphanFiles: number;
  orphanBytes: number;
  /** media_files rows no asset or variant references. */
  orphanRows: number;
  /** Leftovers of interrupted jobs and copies in media/tmp and the store. */
  staleTemp: { entries: number; bytes: number };
  /** Partial uploads past their expiry, and part files no upload owns. */
  partialUploads: { uploads: number; strayFiles: number; bytes: number };
  filesRemoved: number;
  bytesRemoved: number;
  /** Referenced files that are not on disk (reprocess-thumbnails restores variants; originals need a new upload). */
  missingFiles: number;
  missingSample: string[];
}

/**
 * Deletes files in the media store that no asset or variant references, stale job
 * leftovers and stale partial uploads. Files younger than PRUNE_MIN_AGE_MS are kept (a job
 * or an upload may be about to commit the row that references them). media/screenshots
 * belongs to the screens module (retention.screenshotDays) and is not touched.
 */
export async function pruneMedia(
  deps: AppDeps,
  media: MediaService,
  options: { dryRun: boolean; progress?: (f: number, m: string) => void },
): Promise<PruneResult> {
  const { db } = deps;
  const progress = options.progress ?? (() => {});
  const dryRun = options.dryRun;
  progress(0.02, 'reading references');
  const refs = await referencedHashes(db);

  const result: PruneResult = {
    dryRun,
    orphanFiles: 0,
    orphanBytes: 0,
    orphanRows: 0,
    staleTemp: { entries: 0, bytes: 0 },
    partialUploads: { uploads: 0, strayFiles: 0, bytes: 0 },
    filesRemoved: 0,
    bytesRemoved: 0,
    missingFiles: 0,
    missingSample: [],
  };
  const now = Date.now();
  const seen = new Set<string>();
  const root = media.store.root;
  const top = (await readDir(root)).filter((e) => e.isDirectory() && /^[0-9a-f]{2}$/.test(e.name));
  for (const [i, a] of top.entries()) {
    progress(0.05 + (0.75 * i) / Math.max(1, top.length), `scanning media/${a.name}`);
    for (const b of await readDir(path.join(root, a.name))) {
      if (!b.isDirectory()) continue;
      const dir = path.join(root, a.name, b.name);
      for (const f of await readDir(dir)) {
        if (!f.isFile()) continue;
        const file = path.join(dir, f.name);
        if (SHA256.test(f.name)) seen.add(f.name);
        if (SHA256.test(f.name) && refs.has(f.name)) continue;
        const st = await fs.stat(file).catch(() => null);
        if (!st || now - st.mtimeMs < PRUNE_MIN_AGE_MS) continue;
        if (!SHA256.test(f.name)) {
          // A copy interrupted before its rename (MediaStore.adopt across filesystems).
          result.staleTemp.entries++;
          result.staleTemp.bytes += st.size;
          if (!dryRun) await fs.rm(file, { force: true });
          continue;
        }
        // Re-check holding the hash: an upload or a job may be adopting it, or have committed a row meanwhile.
        const release = await media.store.locks.acquire(f.name);
        try {
          if (await fileReferenced(db, f.name)) continue;
          const again = await fs.stat(file).catch(() => null);
          if (!again || now - again.mtimeMs < PRUNE_MIN_AGE_MS) continue;
          result.orphanFiles++;
          result.orphanBytes += st.size;
          if (dryRun) continue;
          await deleteMediaFile(db, f.name);
          await fs.rm(file, { force: true });
        } finally {
          release();
        }
      }
    }
  }

  progress(0.82, 'checking rows');
  // Rows of files no asset or variant references whose file is gone.
  const rows = await unreferencedMediaFiles(db);
  for (const r of rows) {
    // A row whose file is on disk was judged above, by the file's age.
    if (seen.has(r.sha256) || now - Date.parse(r.created_at) < PRUNE_MIN_AGE_MS) continue;
    result.orphanRows++;
    if (!dryRun && !(await fileReferenced(db, r.sha256))) await deleteMediaFile(db, r.sha256);
  }

  progress(0.88, 'job leftovers');
  for (const e of await readDir(media.store.tmpDir)) {
    const p = path.join(media.store.tmpDir, e.name);
    const st = await fs.lstat(p).catch(() => null);
    if (!st || now - st.mtimeMs < STALE_WORK_MS) continue;
    const size = await sizeOfTree(p);
    result.staleTemp.entries++;
    result.staleTemp.bytes += size.bytes;
    if (!dryRun) await fs.rm(p, { recursive: true, force: true });
  }

  progress(0.94, 'partial uploads');
  result.partialUploads = await media.expireUploads({ dryRun });

  for (const sha of refs) {
    if (seen.has(sha)) continue;
    result.missingFiles++;
    if (result.missingSample.length < 20) result.missingSample.push(sha);
  }
  result.filesRemoved = result.orphanFiles + result.staleTemp.entries + result.partialUploads.uploads + result.partialUploads.strayFiles;
  result.bytesRemoved = result.orphanBytes + result.staleTemp.bytes + result.partialUploads.bytes;
  if (dryRun) {
    // Nothing was removed: the counts say what would be.
    result.filesRemoved = 0;
    result.bytesRemoved = 0;
  }
  return result;
}

const pruneMediaAction: MaintenanceAction = {
  name: 'prune-media',
  summary:
    'Delete media store files no asset or variant references (older than an hour), job leftovers and stale partial uploads; reports files and bytes. `{"dryRun": true}` only counts',
  minRole: 'admin',
  exclusive: true,
  options: z.object({ dryRun: z.boolean().optional() }).strict(),
  async run({ deps, options, progress }) {
    const o = options as { dryRun?: boolean };
    return { ...(await pruneMedia(deps, serviceOf(deps), { dryRun: o.dryRun ?? false, progress })) };
  },
};

// ---------------------------------------------------------------- maintenance: reprocess-thumbnails

const ReprocessOptions = z
  .object({
    /** Only these assets (each must be a ready image, video, audio or PDF); default all ready ones. */
    assetIds: z.array(uuidParam).min(1).max(10_000).optional(),
    /** Only assets of these kinds. */
    kinds: z.array(z.enum(PROCESSABLE_KINDS)).min(1).optional(),
  })
  .strict();

const chunks = <T>(list: readonly T[], size: number): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
};

const reprocessThumbnailsAction: MaintenanceAction = {
  name: 'reprocess-thumbnails',
  summary:
    'Render thumbnails and other variants again from the originals, through the job queue (assets stay ready); `assetIds` or `kinds` narrow it. Reports jobs queued, then follows them to the end',
  minRole: 'admin',
  exclusive: true, // writes media: never during a restore's swap
  options: ReprocessOptions,
  async run({ deps, options, progress }) {
    const o = options as z.output<typeof ReprocessOptions>;
    const media = serviceOf(deps);
    const { db } = deps;
    const kinds = o.kinds ?? [...PROCESSABLE_KINDS];
    progress(0.01, 'selecting assets');
    let rows: ReprocessCandidate[];
    if (o.assetIds) {
      rows = [];
      for (const part of chunks([...new Set(o.assetIds)], 500)) rows.push(...(await reprocessCandidatesByIds(db, part)));
    } else {
      rows = await readyAssetsOfKinds(db, kinds);
    }
    const skipped: { assetId: string; reason: string }[] = [];
    const skip = (assetId: string, reason: string) => skipped.push({ assetId, reason });
    const found = new Set(rows.map((r) => r.id));
    for (const id of o.assetIds ?? []) if (!found.has(id)) skip(id, 'no such asset');
    const eligible = rows.filter((r) => {
      const state = r.state === 'archived' ? r.state_before_archive : r.state;
      if (!(PROCESSABLE_KINDS as readonly string[]).includes(r.kind) || !r.sha256) {
        skip(r.id, `a ${r.kind} asset has no rendered variants`);
        return false;
      }
      if (!kinds.includes(r.kind as (typeof PROCESSABLE_KINDS)[number])) {
        skip(r.id, `kind ${r.kind} not selected`);
        return false;
      }
      if (state !== 'ready') {
        skip(r.id, `state ${state}: only ready assets are reprocessed`);
        return false;
      }
      return true;
    });
    // An asset whose reprocess is already queued or running is not queued twice.
    const pending = new Set(await activeJobAssetIds(db, REPROCESS_JOB));
    const toQueue = eligible.filter((r) => !pending.has(r.id));
    const jobIds: string[] = [];
    progress(0.05, `queueing ${toQueue.length} jobs`);
    for (const part of chunks(toQueue, 500)) {
      const jobRows = part.map((r) => JobQueue.row(REPROCESS_JOB, { assetId: r.id }, { maxAttempts: 2 }));
      await insertJobs(db, jobRows);
      jobIds.push(...jobRows.map((r) => r.id));
    }
    media.jobs.kick();
    const counts = { queued: jobIds.length, alreadyQueued: eligible.length - toQueue.length, skipped: skipped.length, succeeded: 0, failed: 0 };
    const failures: { assetId: string; error: string }[] = [];
    // Follow the jobs: the run's progress is the share of its jobs that finished.
    for (;;) {
      let finished = 0;
      let succeeded = 0;
      failures.length = 0;
      for (const part of chunks(jobIds, 500)) {
        const states = await jobStates(db, part);
        finished += part.length - states.length; // pruned meanwhile: finished long ago
        for (const s of states) {
          if (s.state === 'done') {
            finished++;
            succeeded++;
          } else if (s.state === 'failed') {
            finished++;
            if (failures.length < 50) failures.push({ assetId: (JSON.parse(s.payload) as { assetId: string }).assetId, error: s.last_error ?? 'failed' });
          }
        }
      }
      counts.succeeded = succeeded;
      counts.failed = jobIds.length === 0 ? 0 : finished - succeeded;
      progress(0.1 + (0.9 * finished) / Math.max(1, jobIds.length), `${finished} of ${jobIds.length} jobs finished`);
      if (finished >= jobIds.length) break;
      if (media.jobs.isStopped)
        throw new ApiError('conflict', `The server is stopping; ${jobIds.length - finished} reprocess jobs stay queued for the next start`);
      await new Promise((r) => setTimeout(r, 500));
    }
    return { ...counts, failures, skippedAssets: skipped.slice(0, 100) };
  },
};

/** The media module's status sections, restore participant and maintenance actions, registered by its install(). */
export function registerMediaSystemHooks(deps: AppDeps): void {
  registerStatusContributor(deps, mediaStatusSection);
  registerStatusContributor(deps, jobsStatusSection);
  registerRestoreParticipant(deps, mediaJobsParticipant);
  registerMaintenanceAction(deps, pruneMediaAction);
  registerMaintenanceAction(deps, reprocessThumbnailsAction);
}
