import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import type { Database } from './schema.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';

export type Db = Kysely<Database>;

export interface OpenedDatabase {
  db: Db;
  /** The raw handle, for pragmas, backups and the WAL checkpoint at shutdown (the current one after a restore). */
  readonly sqlite: SQLite.Database;
  file: string;
  close(): Promise<void>;
  /**
   * Puts the database file `replacement` in place of the live one while the process runs
   * (a restore): waits for the connection to be free (no transaction in flight), closes
   * the live handle, renames the live file aside to `<file>.pre-restore` (a crash after
   * this point is finished by the next start), drops its `-wal`/`-shm`, renames
   * `replacement` in, and opens it with the same pragmas. Queries after this see the new file.
   */
  replaceFile(replacement: string): Promise<void>;
}

function openHandle(file: string): SQLite.Database {
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  return sqlite;
}

const opened = new WeakMap<Db, OpenedDatabase>();

/** Most prepared statements kept per connection (the app's distinct queries are a few hundred). */
const STATEMENT_CACHE_SIZE = 1000;

/** The OpenedDatabase behind a Kysely instance made by openDatabase (for backup and restore). */
export function openedDatabaseOf(db: Db): OpenedDatabase | undefined {
  return opened.get(db);
}

/** Renames a file and makes the rename durable (fsync of the directory). */
export function durableRename(from: string, to: string): void {
  renameSync(from, to);
  try {
    const fd = openSync(path.dirname(to), 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // some filesystems cannot fsync a directory; the rename itself is atomic
  }
}

/**
 * Opens (creating if needed) the SQLite file with the pragmas of DESIGN.md section 9:
 * WAL, synchronous=FULL (an acknowledged commit survives power loss), foreign keys,
 * and a busy timeout.
 */
export function openDatabase(file: string): OpenedDatabase {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  let sqlite = openHandle(file);
  // Prepared statements by SQL text. Kysely prepares every query anew, which is a good part
  // of a small query's cost (the heartbeat runs several per request). Kysely only runs
  // statements to completion (all/run), never two at once on one statement, so reuse is
  // safe; SQLite re-prepares a statement by itself after a schema change. Bounded: texts
  // that vary (IN lists of many lengths) cannot grow it without end.
  let statements = new Map<string, SQLite.Statement>();
  const prepare = (source: string): SQLite.Statement => {
    let stmt = statements.get(source);
    if (!stmt) {
      stmt = sqlite.prepare(source);
      if (statements.size >= STATEMENT_CACHE_SIZE) statements = new Map();
      statements.set(source, stmt);
    }
    return stmt;
  };
  // Kysely holds this proxy, so the handle underneath can be swapped by a restore.
  const proxy = {
    prepare: (source: string) => {
      // SQLite rolls a transaction back by itself on some errors (SQLITE_FULL, SQLITE_IOERR,
      // ...); kysely's ROLLBACK would then fail and hide the error that caused it.
      if (source === 'rollback' && !sqlite.inTransaction) return prepare('select 1');
      return prepare(source);
    },
    close: () => {
      statements = new Map();
      sqlite.close();
    },
  };
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: proxy as unknown as SQLite.Database }) });
  let closed = false;
  const handle: OpenedDatabase = {
    db,
    get sqlite() {
      return sqlite;
    },
    file,
    async close() {
      if (closed) return;
      closed = true;
      // Fold the WAL back into the main file so the data directory is one file at rest.
      try {
        if (sqlite.open) sqlite.pragma('wal_checkpoint(TRUNCATE)');
      } finally {
        await db.destroy(); // closes the better-sqlite3 handle
      }
    },
    async replaceFile(replacement: string) {
      if (file === ':memory:') throw new Error('an in-memory database cannot be replaced');
      await db.connection().execute(async () => {
        if (sqlite.open) {
          sqlite.pragma('wal_checkpoint(TRUNCATE)');
          sqlite.close();
        }
        try {
          durableRename(file, `${file}.pre-restore`);
          for (const suffix of ['-wal', '-shm']) rmSync(file + suffix, { force: true });
          durableRename(replacement, file);
        } finally {
          statements = new Map(); // they belong to the closed handle
          sqlite = openHandle(file);
        }
      });
    },
  };
  opened.set(db, handle);
  return handle;
}

export class DatabaseTooNewError extends Error {
  constructor(
    readonly found: number,
    readonly known: number,
  ) {
    super(`the database is at schema version ${found} but this server knows only up to ${known}; run a newer Placard or restore a backup made by this version`);
    this.name = 'DatabaseTooNewError';
  }
}

/** The database records migrations this server never had (another build's schema): refused, not guessed at. */
export class UnknownMigrationError extends Error {
  constructor(readonly versions: number[]) {
    super(`the database records schema migration(s) ${versions.join(', ')} that this server does not know; restore a backup made by this version`);
    this.name = 'UnknownMigrationError';
  }
}

export interface MigrationReport {
  applied: number[];
  current: number;
}

/**
 * Brings the schema up to date: each pending migration runs in its own transaction
 * together with its schema_migrations row. Refuses a database newer than this server.
 */
export async function migrate(db: Db, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrationReport> {
  await db.schema
    .createTable('schema_migrations')
    .ifNotExists()
    .addColumn('version', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('applied_at', 'text', (c) => c.notNull())
    .execute();
  const rows = await db.selectFrom('schema_migrations').select('version').execute();
  const have = new Set(rows.map((r) => r.version));
  const known = migrations.at(-1)?.version ?? 0;
  const newest = Math.max(0, ...have);
  if (newest > known) throw new DatabaseTooNewError(newest, known);
  const knownVersions = new Set(migrations.map((m) => m.version));
  const strangers = [...have].filter((v) => !knownVersions.has(v)).sort((a, b) => a - b);
  if (strangers.length) throw new UnknownMigrationError(strangers);

  const applied: number[] = [];
  for (const m of migrations) {
    if (have.has(m.version)) continue;
    await db.transaction().execute(async (trx) => {
      await m.up(trx);
      await trx.insertInto('schema_migrations').values({ version: m.version, name: m.name, applied_at: new Date().toISOString() }).execute();
    });
    applied.push(m.version);
  }
  return { applied, current: known };
}

/** Answers whether the database responds (used by /readyz). */
export async function pingDatabase(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
