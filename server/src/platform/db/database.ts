import { closeSync, fsync, fsyncSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { type Driver, Kysely, type QueryResult, SqliteDialect, type SqliteDialectConfig, SqliteDriver, sql } from 'kysely';
import { checkpointer } from './checkpointer.js';
import type { Database } from './schema.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';
import { DdlTranslation, isPostgres, POSTGRES_PRELUDE } from './dialect.js';
import { isPostgresUrl, openPostgresPool, type PostgresOptions, ROW_LOCKED_ISOLATION, redactUrl } from './postgres.js';

export type Db = Kysely<Database>;

export interface OpenedDatabase {
  /** SQLite (a file in the data directory) or PostgreSQL (PLACARD_DATABASE_URL). */
  readonly kind: 'sqlite' | 'postgres';
  db: Db;
  /** The raw handle, for pragmas, backups and the WAL checkpoint at shutdown (the current one after a restore); SQLite only. */
  readonly sqlite: SQLite.Database;
  /** The SQLite file, or the PostgreSQL URL without its password. */
  file: string;
  /** PostgreSQL's connection pool (for /readyz); null on SQLite. */
  readonly pool: { totalCount: number; idleCount: number; waitingCount: number } | null;
  /** The fsyncs that make commits durable (null in memory). */
  readonly walSync: WalSync | null;
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
  // NORMAL: SQLite writes a commit to the WAL without an fsync; WalSync below makes every
  // commit durable before the code that made it goes on, off the event loop (see openDatabase).
  sqlite.pragma(file === ':memory:' ? 'synchronous = FULL' : 'synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  if (file !== ':memory:') {
    // Checkpoints run in the checkpointer's worker thread, not inside our commits (checkpointer.ts).
    sqlite.pragma('wal_autocheckpoint = 0');
    // A WAL that grew (a checkpoint held off by a long read) shrinks back when it restarts.
    sqlite.pragma('journal_size_limit = 67108864');
    const handle = sqlite;
    checkpointer.register(file, () => {
      if (handle.open) handle.pragma('wal_autocheckpoint = 1000');
    });
  }
  return sqlite;
}

/**
 * fsync of the database's WAL file on libuv's thread pool, shared by everyone waiting:
 * `sync()` resolves after an fsync that started after the call, so every write made
 * before it is on disk (an fsync flushes the file whatever descriptor wrote it). One runs
 * at a time; callers arriving meanwhile share the next one (a group commit of fsyncs).
 */
export class WalSync {
  private fd: number | null = null;
  private current: Promise<void> | null = null;
  private next: Promise<void> | null = null;
  /** fsyncs completed, for tests and benchmarks. */
  completed = 0;

  constructor(private readonly walFile: string) {}

  sync(): Promise<void> {
    if (!this.current) {
      this.current = this.fsyncOnce().finally(() => {
        this.current = null;
      });
      return this.current;
    }
    // The running fsync may have started before the caller's write: the next one serves it.
    this.next ??= this.current
      .catch(() => undefined)
      .then(() => {
        this.next = null;
        return this.sync();
      });
    return this.next;
  }

  private async fsyncOnce(): Promise<void> {
    if (this.fd === null) {
      this.fd = openSync(this.walFile, 'r');
      // The WAL's directory entry too, once: a new -wal file must survive as well.
      fsyncSync(this.fd);
      try {
        const dir = openSync(path.dirname(this.walFile), 'r');
        try {
          fsyncSync(dir);
        } finally {
          closeSync(dir);
        }
      } catch {
        // some filesystems cannot fsync a directory
      }
    }
    const fd = this.fd;
    await new Promise<void>((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));
    this.completed++;
  }

  /** Forgets the WAL file (it is being replaced or closed); an fsync in flight finishes on the old one first. */
  async release(): Promise<void> {
    await Promise.allSettled([this.current, this.next]);
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/**
 * Kysely's SQLite driver, with durability moved off the event loop. The handle runs
 * synchronous=NORMAL, so a commit costs no fsync on the JavaScript thread (1.7-2.2 ms a
 * commit on the disks measured, blocking every request meanwhile: issue 24). Instead,
 * whoever used the connection to write waits, after releasing it, for a WalSync fsync:
 * `await db.insertInto(...).execute()` and `await db.transaction().execute(...)` still
 * resolve only once the write is on disk, as with synchronous=FULL, while other requests
 * and queries go on during the fsync.
 */
interface Durability {
  takeWritten(): boolean;
  wal: WalSync | null;
  /** Set by deferDurability: the current holder's release starts the fsync and hands it over instead of waiting. */
  deferTo: { durable?: Promise<void> } | null;
}

class DurableSqliteDialect extends SqliteDialect {
  constructor(
    private readonly config: SqliteDialectConfig,
    private readonly durability: Durability,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    const durability = this.durability;
    return new (class extends SqliteDriver {
      override async releaseConnection(): Promise<void> {
        // Only the holder of the connection wrote since it was acquired, so the flag is its own.
        const written = durability.takeWritten();
        const deferTo = durability.deferTo;
        durability.deferTo = null;
        await super.releaseConnection();
        if (!written || !durability.wal) return;
        if (deferTo) deferTo.durable = durability.wal.sync();
        else await durability.wal.sync();
      }
    })(this.config);
  }
}

const opened = new WeakMap<Db, OpenedDatabase>();
const durabilityOf = new WeakMap<Db, Durability>();
const readersOf = new WeakMap<Db, (sql: string, parameters: readonly unknown[]) => unknown[] | undefined>();
type HeldRunner = (sql: string, parameters: readonly unknown[]) => QueryResult<unknown> | undefined;
/** Per database: runs a statement on the handle at once (for a transaction that holds the connection). */
const heldRunnersOf = new WeakMap<Db, HeldRunner>();
/** The transactions whose statements run at once (holdConnection), with their database's runner. */
const held = new WeakMap<object, HeldRunner>();

/**
 * Lets the statements that `trx` (a transaction of `db`, inside its callback) runs through
 * `runNow` (prepared.ts `executeText`) go to the handle at once, rather than through kysely's
 * executor: a transaction holds the connection until its callback returns, so nothing else
 * can run between its statements, and each statement through kysely costs more than SQLite
 * running it (issue 24: the heartbeats' group commit runs six small statements per
 * heartbeat). Answers the release, to call before the callback returns. A database not made
 * by openDatabase: nothing changes.
 */
export function holdConnection(db: Db, trx: Db): () => void {
  const runner = heldRunnersOf.get(db);
  if (!runner) return () => undefined;
  held.set(trx, runner);
  return () => held.delete(trx);
}

/**
 * A statement at once, when that is the same as queueing it for the connection: a read on the
 * database outside any transaction (`readNow`), or anything on a transaction that holds the
 * connection (`holdConnection`). Else undefined: the caller goes through kysely.
 */
export function runNow(db: Db, sql: string, parameters: readonly unknown[]): QueryResult<unknown> | undefined {
  const runner = held.get(db);
  if (runner) return runner(sql, parameters);
  const rows = readersOf.get(db)?.(sql, parameters);
  return rows ? { rows } : undefined;
}

/**
 * Runs a read-only statement at once, without kysely's executor and its connection lock,
 * when that is the same as waiting for the connection: `db` is the database itself (not a
 * transaction) and no transaction is open on the connection, so the statement sees exactly
 * what a queued one would (the committed state; nothing is held between statements outside
 * a transaction). Answers undefined when it cannot (a transaction is open, the statement
 * writes, a restore swapped the handle out): the caller then goes through kysely. For the
 * hot prepared reads (`prepared.ts`): device authentication, a screen's context, policies.
 */
export function readNow(db: Db, sql: string, parameters: readonly unknown[]): unknown[] | undefined {
  return readersOf.get(db)?.(sql, parameters);
}

/**
 * For a transaction that wants its commit's fsync handed over rather than waited for (the
 * heartbeats' group commit: the next batch may commit while this one's fsync runs). Called
 * inside the transaction's callback, as its last step; once the transaction resolves,
 * `holder.durable` (when it wrote anything) is the fsync to wait for before anyone is told
 * the writes are durable. Elsewhere every write waits for its fsync by itself.
 */
export function deferDurability(db: Db, holder: { durable?: Promise<void> }): void {
  const durability = durabilityOf.get(db);
  if (durability) durability.deferTo = holder;
}

/**
 * A transaction that declares its writes row-scoped: it locks the rows it reads to decide
 * its writes (`select ... for no key update`, PostgreSQL only) and writes nothing another
 * transaction reads to decide its own, so on PostgreSQL it does not take the writer lock
 * (postgres.ts) and runs alongside other transactions. On SQLite a transaction like any
 * other (one runs at a time there). For the heartbeats' and liveness pings' writes.
 */
export function rowLockedTransaction(db: Db) {
  return db.transaction().setIsolationLevel(ROW_LOCKED_ISOLATION);
}

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
 * Opens (creating if needed) the SQLite file with the guarantees of DESIGN.md section 9:
 * WAL, an acknowledged commit survives power loss (synchronous=FULL's promise, kept by
 * DurableSqliteDialect's fsync off the event loop), foreign keys, and a busy timeout.
 */
export function openDatabase(file: string, options: PostgresOptions = {}): OpenedDatabase {
  if (isPostgresUrl(file)) return openPostgres(file, options);
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  let sqlite = openHandle(file);
  // Prepared statements by SQL text. Kysely prepares every query anew, which is a good part
  // of a small query's cost (the heartbeat runs several per request). Kysely only runs
  // statements to completion (all/run), never two at once on one statement, so reuse is
  // safe; SQLite re-prepares a statement by itself after a schema change. Bounded: texts
  // that vary (IN lists of many lengths) cannot grow it without end.
  let statements = new Map<string, { stmt: SQLite.Statement; writes: boolean }>();
  // A statement that may write marks the connection's current holder as having written
  // (kysely runs what it prepares at once); DurableSqliteDialect waits for the fsync.
  let written = false;
  const wal = file === ':memory:' ? null : new WalSync(`${file}-wal`);
  const statement = (source: string) => {
    let entry = statements.get(source);
    if (!entry) {
      const stmt = sqlite.prepare(source);
      // SQLite's own answer: transaction control is read-only (a commit publishes writes that
      // already marked the holder); a write with RETURNING answers rows and still writes.
      entry = { stmt, writes: !stmt.readonly };
      if (statements.size >= STATEMENT_CACHE_SIZE) statements = new Map();
      statements.set(source, entry);
    }
    return entry;
  };
  const prepare = (source: string): SQLite.Statement => {
    const entry = statement(source);
    if (entry.writes) written = true;
    return entry.stmt;
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
  const durability: Durability = {
    wal,
    deferTo: null,
    takeWritten: () => {
      const w = written;
      written = false;
      return w;
    },
  };
  const db = new Kysely<Database>({ dialect: new DurableSqliteDialect({ database: proxy as unknown as SQLite.Database }, durability) });
  durabilityOf.set(db, durability);
  readersOf.set(db, (source, parameters) => {
    if (!sqlite.open || sqlite.inTransaction) return undefined;
    const { stmt, writes } = statement(source);
    return stmt.reader && !writes ? (stmt.all(parameters) as unknown[]) : undefined;
  });
  heldRunnersOf.set(db, (source, parameters) => {
    // SQLite rolls a transaction back by itself on some errors: then kysely's path answers.
    if (!sqlite.open || !sqlite.inTransaction) return undefined;
    const entry = statement(source);
    if (entry.writes) written = true;
    if (entry.stmt.reader) return { rows: entry.stmt.all(parameters) };
    const info = entry.stmt.run(parameters);
    return { rows: [], numAffectedRows: BigInt(info.changes), insertId: BigInt(info.lastInsertRowid) };
  });
  let closed = false;
  const handle: OpenedDatabase = {
    kind: 'sqlite',
    db,
    pool: null,
    walSync: wal,
    get sqlite() {
      return sqlite;
    },
    file,
    async close() {
      if (closed) return;
      closed = true;
      // Fold the WAL back into the main file so the data directory is one file at rest.
      try {
        await checkpointer.unregister(file);
        if (sqlite.open) sqlite.pragma('wal_checkpoint(TRUNCATE)');
      } finally {
        await db.destroy(); // closes the better-sqlite3 handle
        await wal?.release();
      }
    },
    async replaceFile(replacement: string) {
      if (file === ':memory:') throw new Error('an in-memory database cannot be replaced');
      await db.connection().execute(async () => {
        await checkpointer.unregister(file); // its connection must not hold the old file
        if (sqlite.open) {
          sqlite.pragma('wal_checkpoint(TRUNCATE)');
          sqlite.close();
        }
        await wal?.release(); // the -wal file goes with the old database
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

/**
 * The full URL a PostgreSQL database was opened with, password included (pg_dump and
 * pg_restore need it): kept here, off the OpenedDatabase object, so that logging or
 * serialising the handle never shows the password.
 */
const postgresUrls = new WeakMap<OpenedDatabase, string>();

/** The URL `opened` was opened with (password included: never log it); null on SQLite. */
export function postgresUrlOf(opened: OpenedDatabase): string | null {
  return postgresUrls.get(opened) ?? null;
}

/** PostgreSQL (issue 25): a pool; no file, no WAL of ours, no in-place replacement (a restore is pg_restore's). */
function openPostgres(url: string, options: PostgresOptions): OpenedDatabase {
  const { db, pool } = openPostgresPool(url, options);
  let closed = false;
  const handle: OpenedDatabase = {
    kind: 'postgres',
    db,
    get sqlite(): SQLite.Database {
      throw new Error('this is a PostgreSQL database, not a SQLite file');
    },
    file: redactUrl(url),
    pool,
    walSync: null,
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy(); // ends the pool
    },
    async replaceFile() {
      throw new Error('a PostgreSQL database is restored with pg_restore, not by replacing a file');
    },
  };
  postgresUrls.set(handle, url);
  opened.set(db, handle);
  return handle;
}

/** pg_advisory_lock's key held while one instance migrates ('plcm'): instances starting together migrate one after the other. */
const MIGRATION_LOCK = 0x706c636d;

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
  if (!isPostgres(db)) return migrateOn(db, migrations);
  // One connection for the whole run, holding a session lock: a second instance starting
  // meanwhile waits, then finds the schema current.
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${sql.lit(MIGRATION_LOCK)})`.execute(conn);
    try {
      return await migrateOn(conn, migrations);
    } finally {
      await sql`select pg_advisory_unlock(${sql.lit(MIGRATION_LOCK)})`.execute(conn);
    }
  });
}

async function migrateOn(db: Db, migrations: readonly Migration[]): Promise<MigrationReport> {
  const postgres = isPostgres(db);
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

  // Before the first pending migration only: a server whose role does not own the schema
  // starts on a database that is up to date (what the prelude makes came with the migrations).
  const pending = migrations.some((m) => !have.has(m.version));
  if (postgres && pending) for (const statement of POSTGRES_PRELUDE) await sql.raw(statement).execute(db);
  const applied: number[] = [];
  for (const m of migrations) {
    if (have.has(m.version)) continue;
    await db.transaction().execute(async (trx) => {
      // The migrations speak SQLite's DDL; on PostgreSQL it is translated (dialect.ts).
      await m.up(postgres ? trx.withPlugin(new DdlTranslation()) : trx);
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
