import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, fsyncSync, openSync, closeSync, readSync, readFileSync, type Dirent } from 'node:fs';
import { access, constants as fsConstants, lstat, mkdir, readdir, rm, stat, unlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { once } from 'node:events';
import { PassThrough, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Worker } from 'node:worker_threads';
import tar from 'tar-stream';
import { z } from 'zod';
import { durableRename } from '../../platform/db/database.js';
import { MIGRATIONS } from '../../platform/db/migrations/index.js';
import { SERVER_VERSION } from '../../version.js';

const require = createRequire(import.meta.url);

/** Backup archive format (docs/operations.md): a plain tar, header first, manifest last. */
export const BACKUP_FORMAT = 'placard-backup';
export const BACKUP_FORMAT_VERSION = 1;
export const HEADER_ENTRY = 'placard-backup.json';
export const MANIFEST_ENTRY = 'manifest.json';
export const DATABASE_ENTRY = 'placard.db';
export const SECRET_ENTRY = 'secret.key';
/** Data directories a backup carries when it includes media. */
export const MEDIA_DIRS = ['media', 'releases'] as const;

export const BACKUP_KINDS = ['manual', 'scheduled', 'cli', 'pre-upgrade', 'uploaded'] as const;
export type BackupKind = (typeof BACKUP_KINDS)[number];

/** `placard-backup-20261122T221530123Z-manual-1a2b.tar`; `.tar.age` when encrypted (age, passphrase). */
export const BACKUP_NAME = /^placard-backup-\d{8}T\d{9}Z-(manual|scheduled|cli|pre-upgrade|uploaded)(?:-[a-z0-9]{4})?\.tar(?:\.age)?$/;
/** An encrypted backup: the plain tar inside an age file (https://age-encryption.org/v1), scrypt passphrase recipient. */
export const ENCRYPTED_SUFFIX = '.age';
const AGE_MAGIC = 'age-encryption.org/v1\n';
/** Passphrases shorter than this are refused: the backup holds secret.key. */
export const MIN_PASSPHRASE_LENGTH = 12;
/** The file in a backup copy directory that says the drive is mounted (install.sh --backup-copy-dir writes it). */
export const COPY_TARGET_MARKER = '.placard-backup-target';
/**
 * Files being written in backups/ are `.partial-<pid>-<name>` (the writer's process id):
 * `discardPartialBackups` removes those whose writer is gone, never one being written.
 */
export const PARTIAL_PREFIX = '.partial-';
const PARTIAL_PID = /^\.partial-(\d+)-/;
/** A partial file untouched this long is abandoned whoever wrote it (a reused pid, an old format). */
export const PARTIAL_MAX_AGE_MS = 60 * 60_000;

/** The name this process writes `name` under until it is complete. */
export function partialName(name: string): string {
  return `${PARTIAL_PREFIX}${process.pid}-${name}`;
}

/**
 * Retention (`backups.keep`) counts the backups this server makes on its own or when asked:
 * manual, scheduled and cli. The newest PRE_UPGRADE_KEEP pre-upgrade backups are kept apart
 * (a rollback needs the latest), and uploaded backups are never deleted automatically (one
 * uploaded to be restored is usually older than every local one).
 */
export const RETAINED_KINDS: readonly BackupKind[] = ['manual', 'scheduled', 'cli'];
export const PRE_UPGRADE_KEEP = 2;

/** The kind in a backup's file name: how it came to be here (`uploaded` whatever its header says). */
export function backupKindOf(name: string): BackupKind | null {
  return (BACKUP_NAME.exec(name)?.[1] as BackupKind | undefined) ?? null;
}

export const BackupHeader = z.object({
  format: z.literal(BACKUP_FORMAT),
  formatVersion: z.int().min(1),
  serverVersion: z.string().max(100),
  schemaVersion: z.int().min(0),
  instanceId: z.string().max(100).nullable(),
  createdAt: z.string().max(40),
  kind: z.string().max(40),
  includesMedia: z.boolean(),
});
export type BackupHeader = z.output<typeof BackupHeader>;

const ManifestFile = z.object({ path: z.string().min(1).max(4096), sizeBytes: z.int().min(0), sha256: z.string().regex(/^[0-9a-f]{64}$/) });
export const BackupManifest = z.object({ files: z.array(ManifestFile), totalBytes: z.int().min(0) });
export type BackupManifest = z.output<typeof BackupManifest>;

export class BackupError extends Error {
  constructor(
    message: string,
    readonly kind: 'invalid' | 'newer' | 'failed' = 'invalid',
  ) {
    super(message);
    this.name = 'BackupError';
  }
}

export type Progress = (fraction: number, message: string) => void;

export function backupsDir(dataDir: string): string {
  return path.join(dataDir, 'backups');
}

export function backupName(kind: BackupKind, at = new Date(), encrypted = false): string {
  const stamp = at.toISOString().replace(/[-:.]/g, '');
  return `placard-backup-${stamp}-${kind}-${randomBytes(3).toString('hex').slice(0, 4)}.tar${encrypted ? ENCRYPTED_SUFFIX : ''}`;
}

/** Is `file` an age-encrypted file (by its first bytes)? */
export function isEncryptedFile(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return false;
  }
  try {
    const buf = Buffer.alloc(AGE_MAGIC.length);
    return readSync(fd, buf, 0, buf.length, 0) === buf.length && buf.toString('latin1') === AGE_MAGIC;
  } finally {
    closeSync(fd);
  }
}

/** A passphrase someone gave: long enough, one line. */
export function checkPassphrase(passphrase: string): string {
  if (passphrase.length < MIN_PASSPHRASE_LENGTH) throw new BackupError(`the passphrase must be at least ${MIN_PASSPHRASE_LENGTH} characters`);
  if (passphrase.length > 1024 || /[\r\n\0]/.test(passphrase)) throw new BackupError('the passphrase must be one line of at most 1024 characters');
  return passphrase;
}

/**
 * The server's backup passphrase: the first line of PLACARD_BACKUP_PASSPHRASE_FILE (kept
 * outside the data directory, so never inside a backup), or null when none is configured.
 */
export function configuredPassphrase(file: string | null | undefined): string | null {
  if (!file) return null;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new BackupError(
      `cannot read the backup passphrase file ${file} (PLACARD_BACKUP_PASSPHRASE_FILE): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      'failed',
    );
  }
  const line = text.split(/\r?\n/)[0] ?? '';
  try {
    return checkPassphrase(line);
  } catch (err) {
    throw new BackupError(`the backup passphrase file ${file}: ${(err as Error).message}`, 'failed');
  }
}

/**
 * age (typage, by the age author) encrypts and decrypts in a worker thread: its scrypt and
 * ChaCha20-Poly1305 are JavaScript, and scrypt alone holds a CPU for seconds, which the
 * server's event loop must not. The plain tar crosses as a transferred web stream.
 */
const AGE_WORKER = `
  const { parentPort, workerData } = require('node:worker_threads');
  const { createReadStream, createWriteStream, fsyncSync, openSync, closeSync } = require('node:fs');
  const { Readable } = require('node:stream');
  const { pipeline } = require('node:stream/promises');
  parentPort.once('message', async (msg) => {
    try {
      const age = await import(workerData.age);
      if (workerData.mode === 'encrypt') {
        const e = new age.Encrypter();
        e.setPassphrase(workerData.passphrase);
        const out = await e.encrypt(msg.stream);
        await pipeline(Readable.fromWeb(out), createWriteStream(workerData.file, { flags: 'a', mode: 0o600 }));
        const fd = openSync(workerData.file, 'r+'); fsyncSync(fd); closeSync(fd);
        parentPort.postMessage({ ok: true });
      } else {
        const d = new age.Decrypter();
        d.addPassphrase(workerData.passphrase);
        let plain;
        try {
          plain = await d.decrypt(Readable.toWeb(createReadStream(workerData.file)));
        } catch (err) {
          parentPort.postMessage({ ok: false, message: String(err && err.message || err) });
          return;
        }
        parentPort.postMessage({ ok: true, stream: plain }, [plain]);
        // Stay alive (a listening port) while the main thread reads: it terminates this worker.
        parentPort.once('message', () => {});
      }
    } catch (err) {
      parentPort.postMessage({ ok: false, message: String(err && err.message || err) });
    }
  });
`;

function ageWorker(mode: 'encrypt' | 'decrypt', file: string, passphrase: string): Worker {
  return new Worker(AGE_WORKER, { eval: true, workerData: { mode, file, passphrase, age: import.meta.resolve('age-encryption') } });
}

/** Encrypts the plain stream `source` into `file` (appended; fsynced). */
async function encryptTo(source: NodeJS.ReadableStream, file: string, passphrase: string): Promise<void> {
  const worker = ageWorker('encrypt', file, passphrase);
  // tar-stream's pack is a streamx stream: a Node stream in between for toWeb.
  const plain = new PassThrough();
  const feeding = pipeline(source, plain).catch((err: Error) => plain.destroy(err));
  try {
    const web = Readable.toWeb(plain);
    const answer = new Promise<{ ok: boolean; message?: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the encryption worker exited with ${code}`)));
    });
    worker.postMessage({ stream: web }, [web as unknown as import('node:worker_threads').TransferListItem]);
    const msg = await answer;
    await feeding;
    if (!msg.ok) throw new BackupError(`encryption failed: ${msg.message}`, 'failed');
  } finally {
    await worker.terminate();
  }
}

/** The plain tar of an encrypted backup, as a stream; a wrong passphrase is a BackupError. */
async function decryptedStream(file: string, passphrase: string): Promise<{ stream: Readable; worker: Worker }> {
  const worker = ageWorker('decrypt', file, passphrase);
  worker.postMessage({});
  const msg = await new Promise<{ ok: boolean; message?: string; stream?: ReadableStream }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the decryption worker exited with ${code}`)));
  }).catch(async (err: Error) => {
    await worker.terminate();
    throw new BackupError(`the encrypted backup cannot be read: ${err.message}`);
  });
  if (!msg.ok || !msg.stream) {
    await worker.terminate();
    const wrong = /no identity matched|incorrect|passphrase/i.test(msg.message ?? '');
    throw new BackupError(wrong ? 'the passphrase does not open this encrypted backup' : `the encrypted backup cannot be read: ${msg.message}`);
  }
  // Buffers for tar-stream (the web stream yields Uint8Arrays). A failure of the decryption
  // (a tampered or cut chunk) reaches whoever reads `buffers`: pipeline destroys it with the error.
  const web = Readable.fromWeb(msg.stream as import('node:stream/web').ReadableStream);
  const buffers = new Transform({ transform: (chunk: Uint8Array, _enc, done) => done(null, Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)) });
  pipeline(web, buffers).catch(() => {});
  return { stream: buffers, worker };
}

export const knownSchemaVersion = (): number => MIGRATIONS.at(-1)?.version ?? 0;

function fsyncFile(file: string): void {
  const fd = openSync(file, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

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
  /** The live database file. */
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

export interface BackupInfo {
  name: string;
  sizeBytes: number;
  createdAt: string;
  kind: string;
  /** null for an encrypted backup: its header is inside the encryption. */
  serverVersion: string | null;
  schemaVersion: number | null;
  includesMedia: boolean | null;
  encrypted: boolean;
  /** The copy to PLACARD_BACKUP_COPY_DIR, when one is configured (createBackup only). */
  copy?: CopyResult;
}

export type CopyResult = { ok: true; path: string; pruned: string[] } | { ok: false; dir: string; error: string };

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
  const snapshot = `${partial}.db`;
  const createdAt = new Date().toISOString();
  try {
    progress(0.01, 'snapshotting the database');
    const snap = await snapshotDatabase(options.databaseFile, snapshot);
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
    files.push({ path: DATABASE_ENTRY, sizeBytes: snap.sizeBytes, sha256: await addEntry(pack, DATABASE_ENTRY, snap.sizeBytes, createReadStream(snapshot)) });
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

/** Longest entry path accepted, and longest path segment (what Linux file systems take). */
const MAX_ENTRY_PATH_BYTES = 1024;
const MAX_SEGMENT_BYTES = 255;
/** placard-backup.json and manifest.json are read into memory: at most this large. */
const MAX_JSON_ENTRY_BYTES = 64 * 1024 * 1024;

/**
 * A relative archive path that may be written under the staging directory, or null: the
 * database, secret.key, or a file under one of MEDIA_DIRS; no empty, `.` or `..` segment,
 * no backslash or control character, bounded lengths.
 */
function safeEntryPath(name: string): string | null {
  if (name === DATABASE_ENTRY || name === SECRET_ENTRY) return name;
  if (Buffer.byteLength(name) > MAX_ENTRY_PATH_BYTES || /[\\\u0000-\u001f\u007f]/.test(name)) return null;
  const parts = name.split('/');
  if (!(MEDIA_DIRS as readonly string[]).includes(parts[0]!) || parts.length < 2) return null;
  if (parts.some((p) => p === '' || p === '.' || p === '..' || Buffer.byteLength(p) > MAX_SEGMENT_BYTES)) return null;
  return name;
}

/** An entry name as a message may quote it: bounded, control characters escaped. */
const quoteName = (name: string) => JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}…` : name);

/** Reads a small entry whole (refused above `max` bytes). */
async function readEntry(entry: AsyncIterable<Buffer>, name: string, size: number, max: number): Promise<Buffer> {
  if (size > max) throw new BackupError(`${name} is too large`);
  const chunks: Buffer[] = [];
  let got = 0;
  for await (const chunk of entry) {
    got += chunk.length;
    if (got > max) throw new BackupError(`${name} is too large`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export interface VerifiedBackup {
  header: BackupHeader;
  manifest: BackupManifest;
}

/**
 * Reads a backup archive end to end: the header must come first and be a format this
 * server reads, every entry must be a known, safe path, each file's sha256 and size must
 * match the manifest (the last entry: an archive cut short has none), and the schema must
 * not be newer than this server's. With `extractTo`, files are written there as they pass.
 * Nothing outside `extractTo` is touched.
 */
export async function verifyBackup(
  file: string,
  options: { extractTo?: string; progress?: Progress; passphrase?: string | null } = {},
): Promise<VerifiedBackup & { encrypted: boolean }> {
  const progress = options.progress ?? (() => {});
  const totalSize = (await stat(file).catch(() => null))?.size;
  if (totalSize === undefined) throw new BackupError('the backup file does not exist');
  const encrypted = isEncryptedFile(file);
  if (encrypted && !options.passphrase) throw new BackupError('the backup is encrypted: give its passphrase', 'invalid');
  let header: BackupHeader | null = null;
  let manifest: BackupManifest | null = null;
  const seen = new Map<string, { sizeBytes: number; sha256: string }>();
  // Every directory an entry implies: a file may not sit where another entry needs a directory.
  const dirs = new Set<string>();
  let readBytes = 0;
  let lastReport = 0;

  const readHeader = (json: unknown): BackupHeader => {
    const parsed = BackupHeader.safeParse(json);
    if (!parsed.success) throw new BackupError('placard-backup.json is not a backup header this server reads');
    if (parsed.data.formatVersion > BACKUP_FORMAT_VERSION) {
      throw new BackupError(
        `the backup format ${parsed.data.formatVersion} is newer than this server reads (${BACKUP_FORMAT_VERSION}); upgrade Placard first`,
        'newer',
      );
    }
    if (parsed.data.schemaVersion > knownSchemaVersion()) {
      throw new BackupError(
        `the backup was made by a newer Placard (${parsed.data.serverVersion}, schema ${parsed.data.schemaVersion}; this server knows up to ${knownSchemaVersion()}); upgrade Placard first`,
        'newer',
      );
    }
    return parsed.data;
  };

  /** One entry, read to its end (or a BackupError thrown). */
  const onEntry = async (entry: AsyncIterable<unknown> & { header: tar.Header }, index: number): Promise<void> => {
    const h = entry.header;
    const size = h.size ?? 0;
    if (index === 0 && h.name !== HEADER_ENTRY) throw new BackupError('this is not a Placard backup (no placard-backup.json first)');
    if (h.type !== 'file') throw new BackupError(`the archive holds a ${h.type} entry (${quoteName(h.name)}); backups hold regular files only`);
    if (h.name === HEADER_ENTRY || h.name === MANIFEST_ENTRY) {
      if (h.name === HEADER_ENTRY && index !== 0) throw new BackupError('placard-backup.json appears twice');
      if (h.name === MANIFEST_ENTRY && manifest) throw new BackupError('manifest.json appears twice');
      const bytes = await readEntry(entry as AsyncIterable<Buffer>, h.name, size, MAX_JSON_ENTRY_BYTES);
      let json: unknown;
      try {
        json = JSON.parse(bytes.toString('utf8'));
      } catch {
        throw new BackupError(`${h.name} is not valid JSON`);
      }
      if (h.name === HEADER_ENTRY) {
        header = readHeader(json);
      } else {
        const parsed = BackupManifest.safeParse(json);
        if (!parsed.success) throw new BackupError('manifest.json is malformed');
        manifest = parsed.data;
      }
      return;
    }
    if (manifest) throw new BackupError('entries after manifest.json');
    const rel = safeEntryPath(h.name);
    if (!rel) throw new BackupError(`unexpected entry ${quoteName(h.name)} in the backup`);
    if (seen.has(rel)) throw new BackupError(`${rel} appears twice`);
    const parts = rel.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (seen.has(dir)) throw new BackupError(`${quoteName(rel)} needs ${quoteName(dir)} to be a directory, but the backup holds it as a file`);
      dirs.add(dir);
    }
    if (dirs.has(rel)) throw new BackupError(`${quoteName(rel)} is a file in the backup and a directory of other entries`);
    const hash = createHash('sha256');
    let bytes = 0;
    async function* counted(): AsyncGenerator<Buffer> {
      for await (const chunk of entry as AsyncIterable<Buffer>) {
        hash.update(chunk);
        bytes += chunk.length;
        readBytes += chunk.length;
        if (totalSize && Date.now() - lastReport > 250) {
          lastReport = Date.now();
          progress(readBytes / totalSize, `checking ${rel}`);
        }
        yield chunk;
      }
    }
    if (options.extractTo) {
      const target = path.join(options.extractTo, rel);
      await mkdir(path.dirname(target), { recursive: true });
      // 'wx': a new file, never one (or a link) already there.
      await pipeline(counted(), createWriteStream(target, { flags: 'wx', mode: rel === SECRET_ENTRY ? 0o600 : 0o644 }));
    } else {
      for await (const _chunk of counted()) {
        // hashed and counted on the way
      }
    }
    seen.set(rel, { sizeBytes: bytes, sha256: hash.digest('hex') });
  };

  const extract = tar.extract();
  let decrypting: Worker | null = null;
  let source: Readable | null = null;
  try {
    if (encrypted) {
      const opened = await decryptedStream(file, options.passphrase!);
      source = opened.stream;
      decrypting = opened.worker;
    } else {
      source = createReadStream(file);
    }
    // The archive flows into `extract` while the loop takes its entries one by one; a
    // failure on either side ends both, and both are awaited.
    const feeding = pipeline(source, extract).then(
      () => null,
      (err: unknown) => err,
    );
    try {
      let index = 0;
      for await (const entry of extract) await onEntry(entry, index++);
    } catch (err) {
      extract.destroy();
      source.destroy();
      await feeding;
      throw err;
    }
    const fed = await feeding;
    if (fed) throw fed;
  } catch (err) {
    if (err instanceof BackupError) throw err;
    // What the system refused on our side (a full disk, a read error): not the archive's fault.
    if (typeof (err as NodeJS.ErrnoException).syscall === 'string') throw err;
    throw new BackupError(`the archive is damaged or cut short${encrypted ? ' (or its encryption is)' : ''}: ${(err as Error).message}`);
  } finally {
    if (decrypting) await decrypting.terminate();
  }
  const h = header as BackupHeader | null;
  const m = manifest as BackupManifest | null;
  if (!h) throw new BackupError('this is not a Placard backup (no header)');
  if (!m) throw new BackupError('the backup is incomplete (no manifest at its end)');
  for (const f of m.files) {
    const got = seen.get(f.path);
    if (!got) throw new BackupError(`the backup lacks ${f.path}, which its manifest lists`);
    if (got.sha256 !== f.sha256 || got.sizeBytes !== f.sizeBytes) throw new BackupError(`${f.path} in the backup does not match its checksum (damaged)`);
  }
  if (seen.size !== m.files.length) throw new BackupError('the backup holds files its manifest does not list');
  if (!seen.has(DATABASE_ENTRY)) throw new BackupError('the backup holds no database');
  progress(1, 'backup verified');
  return { header: h, manifest: m, encrypted };
}
