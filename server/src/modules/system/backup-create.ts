/** Writing a backup: the database snapshot, the media walk and the tar (encrypted when asked). */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, type Dirent } from 'node:fs';
import { lstat, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { once } from 'node:events';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Worker } from 'node:worker_threads';
import tar from 'tar-stream';
import { durableRename } from '../../platform/db/database.js';
import { isPostgresUrl } from '../../platform/db/postgres.js';
import { SERVER_VERSION } from '../../version.js';
import { encryptTo } from './backup-crypto.js';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  BackupError,
  backupName,
  backupsDir,
  databaseEntryOf,
  fsyncFile,
  HEADER_ENTRY,
  MANIFEST_ENTRY,
  MEDIA_DIRS,
  partialName,
  SECRET_ENTRY,
  type BackupHeader,
  type BackupInfo,
  type BackupKind,
  type BackupManifest,
  type CopyResult,
  type Progress,
} from './backup-format.js';
import { dumpPostgres } from './backup-postgres.js';
import { copyBackup, pruneBackups } from './backup-store.js';

const require = createRequire(import.meta.url);

/**
 * A consistent copy of the live database without blocking the server: a worker thread
 * opens its own connection and runs `VACUUM INTO` (one read transaction: in WAL mode it
 * sees a snapshot while the server keeps writing), then checks the copy's integrity.
 */
export function snapshotDatabase(source: string, dest: string): Promise<{ sizeBytes: number; schemaVersion: number; instanceId: string | null }> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const Database = require(workerData.module);
    try {
      const src = new Database(workerData.source, { fileMustExist: true });
      src.pragma('busy_timeout = 30000');
      src.prepare('VACUUM INTO ?').run(workerData.dest);
      src.close();
      const copy = new Database(workerData.dest, { fileMustExist: true });
      const check = copy.pragma('integrity_check', { simple: true });
      if (check !== 'ok') throw new Error('the copy fails integrity_check: ' + check);
      let schemaVersion = 0, instanceId = null;
      try { schemaVersion = copy.prepare('select max(version) as v from schema_migrations').get().v || 0; } catch {}
      try { const row = copy.prepare("select value from meta where key = 'instance_id'").get(); instanceId = row ? row.value : null; } catch {}
      copy.close();
      parentPort.postMessage({ ok: true, schemaVersion, instanceId });
    } catch (err) {
      parentPort.postMessage({ ok: false, message: String(err && err.message || err) });
    }
  `;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { module: require.resolve('better-sqlite3'), source, dest } });
    let answered = false;
    worker.once('message', (msg: { ok: boolean; message?: string; schemaVersion?: number; instanceId?: string | null }) => {
      answered = true;
      if (!msg.ok) return reject(new BackupError(`database snapshot failed: ${msg.message}`, 'failed'));
      stat(dest).then((s) => resolve({ sizeBytes: s.size, schemaVersion: msg.schemaVersion ?? 0, instanceId: msg.instanceId ?? null }), reject);
    });
    worker.once('error', (err) => reject(new BackupError(`database snapshot failed: ${err.message}`, 'failed')));
    worker.once('exit', (code) => {
      if (!answered) reject(new BackupError(`database snapshot worker exited with ${code}`, 'failed'));
    });
  });
}

/** Regular files under `root` (relative paths with '/'), skipping temp files (dot-names, *.tmp, *.partial). */
export async function listFiles(root: string): Promise<{ rel: string; size: number }[]> {
  const out: { rel: string; size: number }[] = [];
  async function walk(dir: string, prefix: string): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name.startsWith('.') || e.name.endsWith('.tmp') || e.name.endsWith('.partial')) continue;
      const full = path.join(dir, e.name);
      const rel = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(full, rel);
      else if (e.isFile()) {
        try {
          out.push({ rel, size: (await lstat(full)).size });
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
      }
    }
  }
  await walk(root, '');
  return out;
}

/**
 * Appends one file entry to `pack` and answers its sha256. Every failure (the source, the
 * entry, the pack destroyed because its output failed) rejects the promise; none is left
 * as an `error` event nobody listens to. Exported for test/hostile-archives.test.ts.
 */
export async function addEntry(pack: tar.Pack, name: string, size: number, source: Readable | Buffer, mode = 0o600): Promise<string> {
  const hash = createHash('sha256');
  let entry!: ReturnType<tar.Pack['entry']>;
  const finished = new Promise<void>((resolve, reject) => {
    entry = pack.entry({ name, size, mode, mtime: new Date(), type: 'file' }, (err) => (err ? reject(err) : resolve()));
  });
  // A destroyed entry reports through the callback above; its 'error' event must not go unheard.
  entry.on('error', () => {});
  // The callback may fail while the loop below awaits the source rather than `finished` (the sink filled up between two
  // reads): that rejection is still thrown by the `await finished` below, but must not count as unhandled meanwhile.
  finished.catch(() => {});
  if (Buffer.isBuffer(source)) {
    hash.update(source);
    entry.end(source);
    await finished;
    return hash.digest('hex');
  }
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      hash.update(chunk);
      if (!entry.write(chunk)) await Promise.race([once(entry, 'drain'), finished]);
    }
    entry.end(undefined);
    await finished;
  } catch (err) {
    entry.destroy(err as Error);
    source.destroy();
    throw err;
  }
  return hash.digest('hex');
}

export interface CreateBackupOptions {
  dataDir: string;
  /**
   * The live database: its SQLite file, or on PostgreSQL the URL it was opened with
   * (password included: `postgresUrlOf`), which pg_dump dumps.
   */
  databaseFile: string;
  kind: BackupKind;
  includeMedia: boolean;
  /** Retention after success: keep this many manual/scheduled/cli backups (see RETAINED_KINDS); undefined deletes none. */
  keep?: number;
  progress?: Progress;
  /** Encrypt with this passphrase (age, scrypt): the file is `<name>.tar.age`. */
  passphrase?: string | null;
  /** Copy the finished backup to this directory (a mounted NAS or USB drive; see copyBackup). */
  copyTo?: string | null;
}

/**
 * Writes `backups/.partial-<name>`, fsyncs it and renames it to `<name>`: a backup that
 * did not finish (a crash, SIGKILL, a full disk) never looks like one and is swept by
 * `discardPartialBackups` at the next start.
 */
export async function createBackup(options: CreateBackupOptions): Promise<BackupInfo> {
  const progress = options.progress ?? (() => {});
  const dir = backupsDir(options.dataDir);
  await mkdir(dir, { recursive: true });
  const encrypted = Boolean(options.passphrase);
  const name = backupName(options.kind, new Date(), encrypted);
  const partial = path.join(dir, partialName(name));
  const engine = isPostgresUrl(options.databaseFile) ? 'postgres' : 'sqlite';
  const snapshot = engine === 'postgres' ? `${partial}.pgdump` : `${partial}.db`;
  const databaseEntry = databaseEntryOf(engine);
  const createdAt = new Date().toISOString();
  try {
    progress(0.01, 'snapshotting the database');
    let lastDumpReport = 0;
    const snap =
      engine === 'postgres'
        ? await dumpPostgres(options.databaseFile, snapshot, (bytes) => {
            if (Date.now() - lastDumpReport < 250) return;
            lastDumpReport = Date.now();
            progress(0.05, `dumping the database (pg_dump: ${(bytes / 1048576).toFixed(1)} MB)`);
          })
        : await snapshotDatabase(options.databaseFile, snapshot);
    const mediaFiles: { rel: string; size: number }[] = [];
    if (options.includeMedia) {
      for (const d of MEDIA_DIRS) for (const f of await listFiles(path.join(options.dataDir, d))) mediaFiles.push({ rel: `${d}/${f.rel}`, size: f.size });
    }
    const secretFile = path.join(options.dataDir, 'secret.key');
    const hasSecret = existsSync(secretFile);
    const totalBytes = snap.sizeBytes + mediaFiles.reduce((n, f) => n + f.size, 0);
    let doneBytes = 0;
    const report = (message: string) => progress(0.1 + 0.88 * (totalBytes ? doneBytes / totalBytes : 1), message);
    report('database copied; archiving');

    const header: BackupHeader = {
      format: BACKUP_FORMAT,
      formatVersion: BACKUP_FORMAT_VERSION,
      serverVersion: SERVER_VERSION,
      schemaVersion: snap.schemaVersion,
      instanceId: snap.instanceId,
      createdAt,
      kind: options.kind,
      includesMedia: options.includeMedia,
      engine,
    };
    const pack = tar.pack();
    const written = encrypted
      ? encryptTo(pack as unknown as NodeJS.ReadableStream, partial, options.passphrase!)
      : pipeline(pack, createWriteStream(partial, { mode: 0o600 }));
    // Awaited below. An early failure (a full disk, the encryption worker gone) must not go
    // unhandled meanwhile, and stops the entry being written (it would wait for a drain forever).
    written.catch((err: Error) => pack.destroy(err));
    const files: BackupManifest['files'] = [];
    const headerBuf = Buffer.from(JSON.stringify(header, null, 2));
    await addEntry(pack, HEADER_ENTRY, headerBuf.length, headerBuf);
    files.push({ path: databaseEntry, sizeBytes: snap.sizeBytes, sha256: await addEntry(pack, databaseEntry, snap.sizeBytes, createReadStream(snapshot)) });
    doneBytes += snap.sizeBytes;
    if (hasSecret) {
      const size = (await stat(secretFile)).size;
      files.push({ path: SECRET_ENTRY, sizeBytes: size, sha256: await addEntry(pack, SECRET_ENTRY, size, createReadStream(secretFile)) });
    }
    let lastReport = Date.now();
    let lastFraction = 0;
    for (const f of mediaFiles) {
      const full = path.join(options.dataDir, f.rel);
      // Media files are written once and renamed into place; one deleted since listing is skipped.
      let size: number;
      try {
        size = (await stat(full)).size;
      } catch {
        continue;
      }
      if (size !== f.size) f.size = size;
      const sha256 = await addEntry(pack, f.rel, size, size === 0 ? Buffer.alloc(0) : createReadStream(full, { end: size - 1 }), 0o644);
      files.push({ path: f.rel, sizeBytes: size, sha256 });
      doneBytes += size;
      // Every 250 ms, and at each 5 % of the bytes (a small backup shows its progress too).
      const fraction = totalBytes ? doneBytes / totalBytes : 1;
      if (Date.now() - lastReport > 250 || fraction - lastFraction >= 0.05) {
        lastReport = Date.now();
        lastFraction = fraction;
        report(`archiving ${f.rel}`);
      }
    }
    const manifest: BackupManifest = { files, totalBytes: files.reduce((n, f) => n + f.sizeBytes, 0) };
    const manifestBuf = Buffer.from(JSON.stringify(manifest));
    await addEntry(pack, MANIFEST_ENTRY, manifestBuf.length, manifestBuf);
    pack.finalize();
    await written;
    fsyncFile(partial);
    progress(0.99, 'finishing');
    const final = path.join(dir, name);
    durableRename(partial, final);
    await rm(snapshot, { force: true });
    if (options.keep !== undefined) await pruneBackups(options.dataDir, options.keep);
    const size = (await stat(final)).size;
    const info: BackupInfo = {
      name,
      sizeBytes: size,
      createdAt,
      kind: options.kind,
      serverVersion: SERVER_VERSION,
      schemaVersion: snap.schemaVersion,
      includesMedia: options.includeMedia,
      engine,
      encrypted,
    };
    if (options.copyTo) {
      progress(0.995, `copying ${name} to ${options.copyTo}`);
      info.copy = await copyBackup(final, options.copyTo, options.keep).then(
        (r): CopyResult => ({ ok: true, ...r }),
        (err: Error): CopyResult => ({ ok: false, dir: options.copyTo!, error: err.message }),
      );
    }
    progress(
      1,
      `backup ${name} written${info.copy ? (info.copy.ok ? `, copied to ${options.copyTo}` : `; the copy to ${options.copyTo} failed: ${info.copy.error}`) : ''}`,
    );
    return info;
  } catch (err) {
    await rm(partial, { force: true });
    await rm(snapshot, { force: true });
    throw err;
  }
}
