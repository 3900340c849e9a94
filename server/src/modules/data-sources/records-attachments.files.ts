import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppDeps } from '../../platform/app-deps.js';

/**
 * Where record attachments live (issue 18, docs/data-sources.md "Comments and attachments"):
 * `<dataDir>/media/attachments/<sourceId>/<recordId>/<attachmentId>`, beside the media store
 * (so backups carry them; the store's sweeps only walk its hash folders). Paths are made
 * here from ids only. A leaf file: the source and record delete paths import it.
 */

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function checked(id: string): string {
  const lower = id.toLowerCase();
  if (!ID.test(lower)) throw new Error(`not an id: ${JSON.stringify(id.slice(0, 60))}`);
  return lower;
}

type Dirs = Pick<AppDeps, 'config'>;

export function attachmentsRoot(deps: Dirs): string {
  return path.join(deps.config.dataDir, 'media', 'attachments');
}

/** Where uploads wait while they are received and sniffed (media/tmp: the media prune removes stale leftovers). */
export function attachmentsTmpDir(deps: Dirs): string {
  return path.join(deps.config.dataDir, 'media', 'tmp');
}

/** The storage key of an attachment: its path under media/ (stored in the row). */
export function storageKeyOf(sourceId: string, recordId: string, attachmentId: string): string {
  return ['attachments', checked(sourceId), checked(recordId), checked(attachmentId)].join('/');
}

/** The file of a storage key (made by storageKeyOf; anything else is refused). */
export function fileOfKey(deps: Dirs, key: string): string {
  const parts = key.split('/');
  if (parts.length !== 4 || parts[0] !== 'attachments') throw new Error('not an attachment storage key');
  return path.join(attachmentsRoot(deps), checked(parts[1]!), checked(parts[2]!), checked(parts[3]!));
}

/**
 * Removes the attachment files of a table's records (`recordIds`), or of the whole table
 * (none given). Call it after the delete of the records (or the source) committed: the
 * rows go by cascade, the files with this. Missing files are fine.
 */
export async function deleteRecordFiles(deps: Dirs, sourceId: string, recordIds?: readonly string[]): Promise<void> {
  const dir = path.join(attachmentsRoot(deps), checked(sourceId));
  if (!recordIds) {
    await fs.rm(dir, { recursive: true, force: true });
    return;
  }
  for (const id of new Set(recordIds)) await fs.rm(path.join(dir, checked(id)), { recursive: true, force: true });
  // An emptied table folder goes too (rmdir refuses a folder that still holds records' files).
  await fs.rmdir(dir).catch(() => {});
}

/** Removes one attachment's file (and its record's folder when that is now empty). */
export async function deleteAttachmentFile(deps: Dirs, key: string): Promise<void> {
  const file = fileOfKey(deps, key);
  await fs.rm(file, { force: true });
  await fs.rmdir(path.dirname(file)).catch(() => {});
}
