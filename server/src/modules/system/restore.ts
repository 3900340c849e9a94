import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { durableRename, migrate, openDatabase, type OpenedDatabase, postgresUrlOf } from '../../platform/db/database.js';
import { MIGRATIONS } from '../../platform/db/migrations/index.js';
import {
  BackupError,
  DATABASE_ENTRY,
  type DatabaseEngine,
  engineMismatch,
  MEDIA_DIRS,
  PG_DUMP_ENTRY,
  SECRET_ENTRY,
  type BackupHeader,
  type Progress,
} from './backup-format.js';
import { checkDump, checkDumpSchema, restorePostgres } from './backup-postgres.js';
import { verifyBackup } from './backup-verify.js';

const JOURNAL = 'restore-journal.json';
const STAGING_PREFIX = '.restore-staging-';

interface Journal {
  staging: string;
  includesMedia: boolean;
}

export interface RestoreResult {
  header: BackupHeader;
  files: number;
  bytes: number;
  migratedTo: number;
}

/**
 * Restores a backup archive into `dataDir`:
 *
 * 1. verify (decrypting an encrypted backup with `passphrase`) and extract into
 *    `dataDir/.restore-staging-*` (same filesystem: renames are
 *    atomic); the live data is not touched, so a corrupt, cut-short or newer backup is
 *    refused with the server unharmed;
 * 2. check the staged database's integrity and migrate it to this server's schema;
 * 3. write `restore-journal.json`, then swap: the database (through the live connection
 *    when `live` is given, else by renames), `secret.key`, and the media directories;
 * 4. remove the journal. A crash during 3 is finished forward by `recoverInterruptedRestore`
 *    at the next start (the staged copy was verified before the journal was written).
 *
 * On PostgreSQL (`live` a PostgreSQL database, or `postgresUrl` from the CLI), step 2 checks
 * the staged pg_dump instead (`pg_restore --list`, the schema versions it holds), and the
 * database is restored into the configured one with pg_restore in one transaction before
 * the journal is written; the journal then swaps `secret.key` and the media.
 * A backup of the other engine is refused before anything is touched.
 */
export async function restoreBackup(options: {
  dataDir: string;
  file: string;
  live?: OpenedDatabase;
  /** The PostgreSQL database to restore into when no `live` one is given (the CLI); else SQLite. */
  postgresUrl?: string | null;
  progress?: Progress;
  passphrase?: string | null;
}): Promise<RestoreResult> {
  const progress = options.progress ?? (() => {});
  const { dataDir } = options;
  const postgresUrl = options.live ? postgresUrlOf(options.live) : (options.postgresUrl ?? null);
  const engine: DatabaseEngine = options.live?.kind ?? (postgresUrl ? 'postgres' : 'sqlite');
  if (existsSync(path.join(dataDir, JOURNAL))) recoverInterruptedRestore(dataDir);
  const staging = path.join(dataDir, `${STAGING_PREFIX}${randomBytes(4).toString('hex')}`);
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true, mode: 0o700 });
  let journalWritten = false;
  try {
    progress(0.01, 'verifying the backup');
    const verified = await verifyBackup(options.file, { extractTo: staging, passphrase: options.passphrase, progress: (f, m) => progress(0.02 + f * 0.7, m) });
    if (verified.header.engine !== engine) throw engineMismatch(verified.header.engine, engine);
    if (engine === 'postgres') {
      if (!postgresUrl) throw new BackupError('this PostgreSQL database was not opened from a URL', 'failed');
      const dump = path.join(staging, PG_DUMP_ENTRY);
      progress(0.75, 'checking the database dump');
      const toc = await checkDump(dump);
      await checkDumpSchema(
        dump,
        MIGRATIONS.map((m) => m.version),
      );
      if (verified.header.includesMedia) for (const d of MEDIA_DIRS) await mkdir(path.join(staging, d), { recursive: true });
      progress(0.8, 'restoring the database (pg_restore)');
      await restorePostgres(postgresUrl, dump, toc);
      await rm(dump, { force: true });
      progress(0.85, 'migrating the restored database');
      const migratedTo = options.live ? (await migrate(options.live.db)).current : await migrateUrl(postgresUrl);
      progress(0.9, 'swapping the media in');
      const journal: Journal = { staging, includesMedia: verified.header.includesMedia };
      writeFileSync(path.join(dataDir, JOURNAL), JSON.stringify(journal), { mode: 0o600 });
      journalWritten = true;
      finishSwap(dataDir, journal);
      progress(1, 'restored');
      return { header: verified.header, files: verified.manifest.files.length, bytes: verified.manifest.totalBytes, migratedTo };
    }
    progress(0.75, 'checking and migrating the restored database');
    const stagedDb = path.join(staging, DATABASE_ENTRY);
    const staged = openDatabase(stagedDb);
    let migratedTo: number;
    try {
      const check = staged.sqlite.pragma('integrity_check', { simple: true });
      if (check !== 'ok') throw new BackupError(`the backup's database fails integrity_check: ${String(check)}`);
      migratedTo = (await migrate(staged.db)).current;
    } catch (err) {
      if (err instanceof BackupError) throw err;
      throw new BackupError(`the backup's database cannot be used: ${(err as Error).message}`);
    } finally {
      await staged.close();
    }
    for (const suffix of ['-wal', '-shm']) rmSync(stagedDb + suffix, { force: true });
    if (verified.header.includesMedia) for (const d of MEDIA_DIRS) await mkdir(path.join(staging, d), { recursive: true });

    progress(0.85, 'swapping the data in');
    const journal: Journal = { staging, includesMedia: verified.header.includesMedia };
    writeFileSync(path.join(dataDir, JOURNAL), JSON.stringify(journal), { mode: 0o600 });
    journalWritten = true;
    if (options.live) await options.live.replaceFile(stagedDb);
    finishSwap(dataDir, journal);
    progress(1, 'restored');
    return { header: verified.header, files: verified.manifest.files.length, bytes: verified.manifest.totalBytes, migratedTo };
  } finally {
    // Before the journal, the staging dir is just discarded; after, finishSwap consumed it.
    if (!journalWritten || !existsSync(path.join(dataDir, JOURNAL))) await rm(staging, { recursive: true, force: true });
  }
}

async function migrateUrl(url: string): Promise<number> {
  const opened = openDatabase(url, { poolSize: 1 });
  try {
    return (await migrate(opened.db)).current;
  } finally {
    await opened.close();
  }
}

/** Moves what is left in the staging directory into place, then drops the journal. */
function finishSwap(dataDir: string, journal: Journal): void {
  const stagedDb = path.join(journal.staging, DATABASE_ENTRY);
  const liveDb = path.join(dataDir, 'placard.db');
  if (existsSync(stagedDb)) {
    if (existsSync(liveDb)) durableRename(liveDb, `${liveDb}.pre-restore`);
    for (const suffix of ['-wal', '-shm']) rmSync(liveDb + suffix, { force: true });
    durableRename(stagedDb, liveDb);
  }
  const stagedSecret = path.join(journal.staging, SECRET_ENTRY);
  if (existsSync(stagedSecret)) durableRename(stagedSecret, path.join(dataDir, SECRET_ENTRY));
  if (journal.includesMedia) {
    for (const d of MEDIA_DIRS) {
      const stagedDir = path.join(journal.staging, d);
      if (!existsSync(stagedDir)) continue;
      const live = path.join(dataDir, d);
      const aside = path.join(dataDir, `.pre-restore-${d}`);
      rmSync(aside, { recursive: true, force: true });
      if (existsSync(live)) durableRename(live, aside);
      durableRename(stagedDir, live);
      rmSync(aside, { recursive: true, force: true });
    }
  }
  rmSync(path.join(dataDir, JOURNAL), { force: true });
  rmSync(journal.staging, { recursive: true, force: true });
}

/**
 * Called at start (main.ts, the CLI) before the database opens: finishes a restore that a
 * crash interrupted mid-swap, and removes staging directories of restores that never got
 * to the swap. Answers what it did, for the log.
 */
export function recoverInterruptedRestore(dataDir: string): string | null {
  const journalFile = path.join(dataDir, JOURNAL);
  let did: string | null = null;
  if (existsSync(journalFile)) {
    let journal: Journal | null = null;
    try {
      journal = JSON.parse(readFileSync(journalFile, 'utf8')) as Journal;
    } catch {
      journal = null;
    }
    if (journal && typeof journal.staging === 'string' && path.dirname(journal.staging) === dataDir) {
      finishSwap(dataDir, journal);
      did = 'finished a restore that was interrupted';
    } else {
      rmSync(journalFile, { force: true });
      did = 'dropped an unreadable restore journal';
    }
  }
  try {
    for (const name of readdirSync(dataDir)) {
      if (name.startsWith(STAGING_PREFIX)) rmSync(path.join(dataDir, name), { recursive: true, force: true });
    }
  } catch {
    // no data directory yet
  }
  return did;
}
