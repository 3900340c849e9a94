/**
 * Backups, the archive format and its names: entries, header and manifest schemas, file
 * names and kinds, retention constants, BackupError. The other backup-*.ts files build on it:
 * backup-create (writing), backup-verify (reading and extracting), backup-crypto (age
 * encryption), backup-store (listing, retention, copies, partial files); restore.ts restores.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { MIGRATIONS } from '../../platform/db/migrations/index.js';

/** Backup archive format (docs/operations.md): a plain tar, header first, manifest last. */
export const BACKUP_FORMAT = 'placard-backup';
export const BACKUP_FORMAT_VERSION = 1;
export const HEADER_ENTRY = 'placard-backup.json';
export const MANIFEST_ENTRY = 'manifest.json';
export const DATABASE_ENTRY = 'placard.db';
/** On PostgreSQL, the database entry is `pg_dump --format=custom` of the app's database (backup-postgres.ts). */
export const PG_DUMP_ENTRY = 'placard.pgdump';
/** The database engines a backup's database can come from (its header's `engine`). */
export type DatabaseEngine = 'sqlite' | 'postgres';
/** The archive entry that holds an engine's database. */
export const databaseEntryOf = (engine: DatabaseEngine): string => (engine === 'postgres' ? PG_DUMP_ENTRY : DATABASE_ENTRY);
export const SECRET_ENTRY = 'secret.key';
/** Data directories a backup carries when it includes media. */
export const MEDIA_DIRS = ['media', 'releases'] as const;

export const BACKUP_KINDS = ['manual', 'scheduled', 'cli', 'pre-upgrade', 'uploaded'] as const;
export type BackupKind = (typeof BACKUP_KINDS)[number];

/** `placard-backup-20261122T221530123Z-manual-1a2b.tar`; `.tar.age` when encrypted (age, passphrase). */
export const BACKUP_NAME = /^placard-backup-\d{8}T\d{9}Z-(manual|scheduled|cli|pre-upgrade|uploaded)(?:-[a-z0-9]{4})?\.tar(?:\.age)?$/;
/** An encrypted backup: the plain tar inside an age file (https://age-encryption.org/v1), scrypt passphrase recipient. */
export const ENCRYPTED_SUFFIX = '.age';
/** Passphrases shorter than this are refused: the backup holds secret.key. */
export const MIN_PASSPHRASE_LENGTH = 12;
/** The file in a backup copy directory that says the drive is mounted (install.sh --backup-copy-dir writes it). */
export const COPY_TARGET_MARKER = '.placard-backup-target';
/**
 * Files being written in backups/ are `.partial-<pid>-<name>` (the writer's process id):
 * `discardPartialBackups` removes those whose writer is gone, never one being written.
 */
export const PARTIAL_PREFIX = '.partial-';
export const PARTIAL_PID = /^\.partial-(\d+)-/;
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
  /** The engine the database entry comes from; absent in backups made before PostgreSQL (SQLite). */
  engine: z.enum(['sqlite', 'postgres']).default('sqlite'),
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

export const knownSchemaVersion = (): number => MIGRATIONS.at(-1)?.version ?? 0;

export interface BackupInfo {
  name: string;
  sizeBytes: number;
  createdAt: string;
  kind: string;
  /** null for an encrypted backup: its header is inside the encryption. */
  serverVersion: string | null;
  schemaVersion: number | null;
  includesMedia: boolean | null;
  /** The database engine it holds (null for an encrypted backup). */
  engine: DatabaseEngine | null;
  encrypted: boolean;
  /** The copy to PLACARD_BACKUP_COPY_DIR, when one is configured (createBackup only). */
  copy?: CopyResult;
}

export type CopyResult = { ok: true; path: string; pruned: string[] } | { ok: false; dir: string; error: string };

/** A backup of one engine's database offered to the other engine: refused, with the way across. */
export function engineMismatch(backup: DatabaseEngine, live: DatabaseEngine): BackupError {
  const name = (e: DatabaseEngine) => (e === 'postgres' ? 'PostgreSQL' : 'SQLite');
  return new BackupError(
    `the backup holds a ${name(backup)} database and this server runs on ${name(live)}: restore it on a ${name(backup)} server, then move the data with \`placard migrate-to\``,
  );
}

/** fsync of a file written by a stream (its data reaches the disk before a rename publishes it). */
export function fsyncFile(file: string): void {
  const fd = openSync(file, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
