/** Reading a backup archive end to end: checks every entry against the manifest, extracts when asked. */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Worker } from 'node:worker_threads';
import tar from 'tar-stream';
import { decryptedStream, isEncryptedFile } from './backup-crypto.js';
import {
  BACKUP_FORMAT_VERSION,
  BackupError,
  BackupHeader,
  BackupManifest,
  DATABASE_ENTRY,
  databaseEntryOf,
  HEADER_ENTRY,
  knownSchemaVersion,
  MANIFEST_ENTRY,
  MEDIA_DIRS,
  PG_DUMP_ENTRY,
  SECRET_ENTRY,
  type Progress,
} from './backup-format.js';

/** Longest entry path accepted, and longest path segment (what Linux file systems take). */
const MAX_ENTRY_PATH_BYTES = 1024;
const MAX_SEGMENT_BYTES = 255;
/** placard-backup.json and manifest.json are read into memory: at most this large. */
const MAX_JSON_ENTRY_BYTES = 64 * 1024 * 1024;

/**
 * A relative archive path that may be written under the staging directory, or null: the
 * database (a SQLite file or a pg_dump), secret.key, or a file under one of MEDIA_DIRS; no empty, `.` or `..` segment,
 * no backslash or control character, bounded lengths.
 */
function safeEntryPath(name: string): string | null {
  if (name === DATABASE_ENTRY || name === PG_DUMP_ENTRY || name === SECRET_ENTRY) return name;
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
  // One database, the one its header's engine says (a SQLite file, or a pg_dump on PostgreSQL).
  const expected = databaseEntryOf(h.engine);
  if (!seen.has(expected)) throw new BackupError(`the backup holds no database (${expected} for its ${h.engine} header)`);
  if (seen.has(DATABASE_ENTRY) && seen.has(PG_DUMP_ENTRY)) throw new BackupError('the backup holds two databases');
  progress(1, 'backup verified');
  return { header: h, manifest: m, encrypted };
}
