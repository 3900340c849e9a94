/** The backups directory and copy targets: listing, retention, copies to another disk, partial files left behind. */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, createWriteStream, existsSync, openSync, readSync } from 'node:fs';
import { access, constants as fsConstants, readdir, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { durableRename } from '../../platform/db/database.js';
import { isEncryptedFile } from './backup-crypto.js';
import {
  BACKUP_NAME,
  BackupError,
  BackupHeader,
  backupKindOf,
  backupsDir,
  COPY_TARGET_MARKER,
  ENCRYPTED_SUFFIX,
  fsyncFile,
  HEADER_ENTRY,
  PARTIAL_MAX_AGE_MS,
  PARTIAL_PID,
  PARTIAL_PREFIX,
  partialName,
  PRE_UPGRADE_KEEP,
  RETAINED_KINDS,
  type BackupInfo,
} from './backup-format.js';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}

/**
 * Deletes what interrupted backups and uploads left in backups/: partial files whose writer
 * (the pid in the name) is gone, and any untouched for PARTIAL_MAX_AGE_MS. A backup or an
 * upload under way in this or another process (the server while `placard backup` runs, or
 * the other way round) is left alone. `atStart`: nothing of this process is under way yet,
 * so its own pid (a reused one, e.g. pid 1 in a container) counts as gone.
 */
export async function discardPartialBackups(dataDir: string, options: { atStart?: boolean; maxAgeMs?: number } = {}): Promise<string[]> {
  return discardPartialBackupsIn(backupsDir(dataDir), options);
}

async function discardPartialBackupsIn(dir: string, options: { atStart?: boolean; maxAgeMs?: number } = {}): Promise<string[]> {
  const removed: string[] = [];
  const maxAge = options.maxAgeMs ?? PARTIAL_MAX_AGE_MS;
  let names: string[] = [];
  try {
    names = await readdir(dir);
  } catch {
    return removed;
  }
  for (const n of names) {
    if (!n.startsWith(PARTIAL_PREFIX)) continue;
    const file = path.join(dir, n);
    const pidText = PARTIAL_PID.exec(n)?.[1];
    const pid = pidText ? Number(pidText) : null;
    let writerGone = false;
    if (pid !== null) writerGone = pid === process.pid ? Boolean(options.atStart) : !processAlive(pid);
    if (!writerGone) {
      const s = await stat(file).catch(() => null);
      if (!s || Date.now() - s.mtimeMs < maxAge) continue;
    }
    await rm(file, { force: true, recursive: true });
    removed.push(n);
  }
  return removed;
}

/** Reads the header entry of a backup archive (the first 512-byte tar block and its body). */
export function readBackupHeader(file: string): BackupHeader | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const buf = Buffer.alloc(512 + 8192);
    const n = readSync(fd, buf, 0, buf.length, 0);
    if (n < 512) return null;
    const name = buf.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
    if (name !== HEADER_ENTRY) return null;
    const size = parseInt(buf.subarray(124, 136).toString('ascii').replace(/\0.*$/s, '').trim() || 'x', 8);
    if (!Number.isFinite(size) || size <= 0 || 512 + size > n) return null;
    const parsed = BackupHeader.safeParse(JSON.parse(buf.subarray(512, 512 + size).toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** When a backup was made, from the stamp in its name. */
function createdAtOfName(name: string): string | null {
  const m = /^placard-backup-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z-/.exec(name);
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z` : null;
}

/** Finished backups in backups/, newest first. */
export async function listBackups(dataDir: string): Promise<BackupInfo[]> {
  return listBackupsIn(backupsDir(dataDir));
}

/** Finished backups in `dir` (backups/ or a copy directory), newest first. */
export async function listBackupsIn(dir: string): Promise<BackupInfo[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const out: BackupInfo[] = [];
  for (const name of names) {
    if (!BACKUP_NAME.test(name)) continue;
    const file = path.join(dir, name);
    if (name.endsWith(ENCRYPTED_SUFFIX)) {
      // The header is inside the encryption: what the name says, and its size.
      const createdAt = createdAtOfName(name);
      const s = await stat(file).catch(() => null);
      if (!createdAt || !s?.isFile() || !isEncryptedFile(file)) continue;
      out.push({
        name,
        sizeBytes: s.size,
        createdAt,
        kind: backupKindOf(name)!,
        serverVersion: null,
        schemaVersion: null,
        includesMedia: null,
        engine: null,
        encrypted: true,
      });
      continue;
    }
    const header = readBackupHeader(file);
    if (!header) continue;
    const s = await stat(file).catch(() => null);
    if (!s) continue;
    out.push({
      name,
      sizeBytes: s.size,
      createdAt: header.createdAt,
      kind: backupKindOf(name) ?? header.kind,
      serverVersion: header.serverVersion,
      schemaVersion: header.schemaVersion,
      includesMedia: header.includesMedia,
      engine: header.engine,
      encrypted: false,
    });
  }
  return out.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.name < b.name ? 1 : -1));
}

/**
 * Retention: keeps the newest `keep` manual/scheduled/cli backups and the newest
 * PRE_UPGRADE_KEEP pre-upgrade ones; uploaded backups stay until someone deletes them.
 */
export async function pruneBackups(dataDir: string, keep: number): Promise<string[]> {
  return pruneBackupsIn(backupsDir(dataDir), keep);
}

async function pruneBackupsIn(dir: string, keep: number): Promise<string[]> {
  const all = await listBackupsIn(dir);
  const regular = all.filter((b) => (RETAINED_KINDS as readonly string[]).includes(b.kind));
  const preUpgrade = all.filter((b) => b.kind === 'pre-upgrade');
  const removed: string[] = [];
  for (const b of [...regular.slice(keep), ...preUpgrade.slice(PRE_UPGRADE_KEEP)]) {
    await unlink(path.join(dir, b.name)).catch(() => {});
    removed.push(b.name);
  }
  return removed;
}

/**
 * Copies a finished backup to `dir`, a directory on another disk (a NAS or USB drive
 * mounted there): written as `.partial-<pid>-<name>`, fsynced, read back and compared by
 * sha256, then renamed. `dir` must hold COPY_TARGET_MARKER: an empty mount point (the
 * drive not mounted) lacks it, and nothing is written onto the system disk by mistake. The
 * same retention as backups/ applies there (`keep`). Answers the copy's path and what was pruned.
 */
export async function copyBackup(file: string, dir: string, keep?: number): Promise<{ path: string; pruned: string[] }> {
  const s = await stat(dir).catch(() => null);
  if (!s?.isDirectory()) throw new BackupError(`the backup copy directory ${dir} does not exist (is the drive mounted?)`, 'failed');
  if (!existsSync(path.join(dir, COPY_TARGET_MARKER))) {
    throw new BackupError(
      `${dir} has no ${COPY_TARGET_MARKER}: the drive is probably not mounted (install.sh --backup-copy-dir ${dir} marks a mounted one)`,
      'failed',
    );
  }
  try {
    await access(dir, fsConstants.W_OK);
  } catch {
    throw new BackupError(`the backup copy directory ${dir} is not writable by this user`, 'failed');
  }
  const name = path.basename(file);
  const partial = path.join(dir, partialName(name));
  const final = path.join(dir, name);
  const hashOf = async (f: string) => {
    const h = createHash('sha256');
    for await (const chunk of createReadStream(f)) h.update(chunk as Buffer);
    return h.digest('hex');
  };
  try {
    const hash = createHash('sha256');
    const source = createReadStream(file);
    source.on('data', (c) => hash.update(c as Buffer));
    await pipeline(source, createWriteStream(partial, { mode: 0o600 }));
    fsyncFile(partial);
    const expected = hash.digest('hex');
    if ((await hashOf(partial)) !== expected) throw new BackupError(`the copy in ${dir} does not read back as written`, 'failed');
    durableRename(partial, final);
  } catch (err) {
    await rm(partial, { force: true });
    if (err instanceof BackupError) throw err;
    throw new BackupError(`copying the backup to ${dir} failed: ${(err as Error).message}`, 'failed');
  }
  await discardPartialBackupsIn(dir).catch(() => []);
  const pruned = keep === undefined ? [] : await pruneBackupsIn(dir, keep);
  return { path: final, pruned };
}
