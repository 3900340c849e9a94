import fs from 'node:fs/promises';
import { z } from 'zod';
import { newId, nowIso } from '../../platform/db/ids.js';
import { storableJson } from '../../platform/db/json.js';
import type { UploadsTable } from '../../platform/db/schema.js';
import { roleAtLeast, type Principal, type SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { type TusPatchTarget, tusError } from '../../platform/http/tus.js';
import { avKindOf } from '../../platform/media/av.js';
import { describeUnsupported, sniffFile } from '../../platform/media/sniff.js';
import { uploadLimits } from './limits.js';
import { checkFolderRef, folderExists } from './organize.repo.js';
import type { MediaService } from './service.js';
import { deleteUpload, findUpload, insertUpload, recordUploadOffset } from './uploads.repo.js';

/**
 * What an upload is to the media library: its creator's, in a folder, becoming an asset.
 * The tus protocol itself is platform/http/tus.ts; these functions are what it is given.
 */

/** The upload `id` names, for the tus routes: 404 (with Tus-Resumable) when none or expired. */
export async function loadUpload(media: MediaService, id: string): Promise<UploadsTable> {
  const row = await findUpload(media.deps.db, id);
  if (!row || row.expires_at < nowIso()) throw tusError('not_found', 'Upload not found (it may have expired)');
  return row;
}

/** The same for complete, which is not a tus request. */
async function loadCompletable(media: MediaService, id: string): Promise<UploadsTable> {
  const row = await findUpload(media.deps.db, id);
  if (!row || row.expires_at < nowIso()) throw notFound('Upload');
  return row;
}

/**
 * An upload is its creator's: only they send its bytes and complete it. Admins and owners
 * may also read its offset and terminate it. Anyone else is told it does not exist (the
 * check runs before the upload's lock is taken, so they cannot stop its PATCH either).
 */
export function checkOwner(row: { created_by: string | null }, auth: Principal, action: 'read' | 'write' | 'terminate'): void {
  const who = auth as SessionPrincipal;
  if (row.created_by !== null && row.created_by === who.userId) return;
  if (roleAtLeast(who.role, 'admin')) {
    if (action !== 'write') return;
    throw tusError('forbidden', 'Only the user who started this upload can send its bytes or complete it');
  }
  throw tusError('not_found', 'Upload not found (it may have expired)');
}

/** The folder an upload's metadata names: null when none; 400 when it is not a folder. */
export async function metadataFolder(media: MediaService, meta: Record<string, string>): Promise<string | null> {
  const raw = meta.folderId?.trim();
  if (!raw) return null;
  const issue = (message: string) =>
    tusError(
      'validation_failed',
      `Upload-Metadata folderId ${message}; send an existing folder's id (or complete with a folderId in the body)`,
      {},
      {
        issues: [{ location: 'header', path: ['Upload-Metadata', 'folderId'], message, code: 'invalid_reference' }],
      },
    );
  if (!z.uuid().safeParse(raw).success) throw issue('is not a folder id');
  const id = raw.toLowerCase();
  if (!(await folderExists(media.deps.db, id))) throw issue('names no folder');
  return id;
}

/** Cleans a file name into an asset name: no path, no control characters, bounded. */
export function nameFrom(filename: string | null | undefined): string {
  const base = (filename ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 200);
  return clean || 'Untitled';
}

/**
 * A new upload: its empty part file and its row. 507 when the disk has no room for the file
 * and its processing. Answers its id and when it expires untouched.
 */
export async function createUpload(
  media: MediaService,
  input: { length: number; metadata: Record<string, string>; createdBy: string; expiryMs: number },
): Promise<{ id: string; expiresAt: string }> {
  await fs.mkdir(media.uploadsDir, { recursive: true });
  const stats = await fs.statfs(media.uploadsDir);
  if (stats.bavail * stats.bsize < input.length * 2 + 64 * 1024 * 1024) {
    throw tusError('insufficient_storage', 'Not enough free disk space for this upload and its processing');
  }
  const id = newId();
  const now = Date.now();
  const expiresAt = new Date(now + input.expiryMs).toISOString();
  // Held while the part file exists without its row, so the stray-file sweep leaves it alone.
  const release = media.uploadLocks.tryAcquire(id)!;
  try {
    await fs.writeFile(media.partPath(id), '');
    await insertUpload(media.deps.db, {
      id,
      length_bytes: input.length,
      offset_bytes: 0,
      metadata: storableJson(input.metadata, 'Upload-Metadata'),
      filename: input.metadata.filename ?? null,
      filetype: input.metadata.filetype ?? null,
      created_by: input.createdBy,
      created_at: new Date(now).toISOString(),
      updated_at: new Date(now).toISOString(),
      expires_at: expiresAt,
    });
  } catch (err) {
    await fs.rm(media.partPath(id), { force: true });
    throw err;
  } finally {
    release();
  }
  return { id, expiresAt };
}

/** The upload for HEAD: the creator resuming takes the lock (stopping a stalled PATCH); an admin looking does not. */
export async function uploadForOffset(media: MediaService, id: string, auth: Principal): Promise<UploadsTable> {
  const first = await loadUpload(media, id);
  checkOwner(first, auth, 'read');
  return first.created_by === (auth as SessionPrincipal).userId ? media.withUploadLock(id, () => loadUpload(media, id)) : first;
}

/** Where PATCH finds and records upload `id` (platform/http/tus.ts receivePatch). */
export function patchTarget(media: MediaService, id: string): TusPatchTarget {
  const db = media.deps.db;
  return {
    file: media.partPath(id),
    get io() {
      return media.partIo;
    },
    exclusive: (receive, stop) => media.withUploadLock(id, receive, stop),
    load: async () => {
      const row = await loadUpload(media, id);
      return { offset: row.offset_bytes, length: row.length_bytes };
    },
    partGone: () => deleteUpload(db, id),
    renewedExpiry: async () => new Date(Date.now() + (await uploadLimits(media.deps)).expiryMs).toISOString(),
    record: (offset, expiresAt) => recordUploadOffset(db, id, offset, nowIso(), expiresAt),
  };
}

/** tus termination: the creator, an admin or an owner discards a partial upload (a PATCH of it is stopped first). */
export async function terminateUpload(media: MediaService, id: string, auth: Principal): Promise<void> {
  checkOwner(await loadUpload(media, id), auth, 'terminate');
  await media.withUploadLock(id, async () => {
    const row = await loadUpload(media, id);
    await deleteUpload(media.deps.db, row.id);
    await fs.rm(media.partPath(row.id), { force: true });
  });
}

/** What the client may say when completing (else the upload's metadata decides). */
export interface CompleteInput {
  name?: string | undefined;
  folderId?: string | undefined;
  tags?: string[] | undefined;
}

/**
 * A finished upload becomes an asset (state processing), decided from its bytes: an
 * unsupported type, or a kind this server cannot process, answers 415 and discards the
 * upload; a full disk answers 507 and keeps it. Answers the asset id.
 */
export async function completeUpload(media: MediaService, id: string, input: CompleteInput, auth: Principal): Promise<string> {
  const { db, tools } = media.deps;
  checkOwner(await loadCompletable(media, id), auth, 'write');
  return media.withUploadLock(id, async () => {
    const row = await loadCompletable(media, id);
    if (row.offset_bytes !== row.length_bytes)
      throw new ApiError('conflict', `The upload has ${row.offset_bytes} of ${row.length_bytes} bytes; send the rest first`);
    const meta = JSON.parse(row.metadata) as Record<string, string>;
    let folderId: string | null;
    if (input.folderId) {
      folderId = input.folderId.toLowerCase();
      await checkFolderRef(db, folderId);
    } else {
      folderId = await metadataFolder(media, meta);
    }
    const tags =
      input.tags ??
      (meta.tags
        ? meta.tags
            .split(',')
            .map((t) => t.trim())
            .filter((t) => t && t.length <= 64)
            .slice(0, 50)
        : []);
    const file = media.partPath(row.id);
    const discard = async () => {
      await deleteUpload(db, row.id);
      await fs.rm(file, { force: true });
    };
    const sniffed = await sniffFile(file);
    if (!sniffed) {
      const why = await describeUnsupported(file);
      await discard();
      throw new ApiError('unsupported_media_type', `${why}; upload images (JPEG, PNG, GIF, WebP, AVIF, HEIF, TIFF, SVG), video, audio or PDF`);
    }
    let { kind, contentType } = sniffed;
    if (kind === 'video' || kind === 'audio') {
      const av = await tools.av();
      if (!av.available) {
        await discard();
        throw new ApiError('unsupported_media_type', `Video and audio are unavailable on this server (ffmpeg and ffprobe are needed): ${av.detail}`);
      }
      // The container does not say whether there is a picture: ffprobe does.
      const decided = await avKindOf(tools, file, contentType);
      if (decided) ({ kind, contentType } = decided);
    }
    if (kind === 'pdf') {
      const support = await tools.pdf();
      if (!support.available) {
        await discard();
        throw new ApiError('unsupported_media_type', `PDF is unavailable on this server: ${support.detail}`);
      }
    }
    return media.ingestFile({
      file,
      kind,
      contentType,
      name: input.name ?? nameFrom(meta.name || row.filename),
      originalFilename: row.filename ? nameFrom(row.filename) : null,
      folderId,
      tags,
      createdBy: (auth as SessionPrincipal).userId,
      diskFullMessage: 'The disk is full; the upload is kept, free some space and complete it again',
      inTransaction: (trx) => deleteUpload(trx, row.id),
    });
  });
}
