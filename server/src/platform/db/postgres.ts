import pg from 'pg';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresDialect,
  type PostgresDialectConfig,
  PostgresDriver,
  type TransactionSettings,
} from 'kysely';
import type { Database } from './schema.js';

/**
 * PostgreSQL behind the same Kysely<Database> as SQLite (issue 25), chosen by
 * PLACARD_DATABASE_URL. What the repositories rely on SQLite for, kept here:
 *
 * - **One writer at a time.** SQLite runs one transaction at a time: a transaction's reads
 *   and the writes it decides on them cannot be overtaken by another transaction. Every
 *   transaction here takes one transaction-scoped advisory lock first (`WRITER_LOCK`), so
 *   transactions of every instance sharing the database queue behind each other the same
 *   way; statements outside a transaction run concurrently, as they are atomic by
 *   themselves (a conditional UPDATE re-checks its condition on the row it locks).
 * - **Row-locked transactions** (`ROW_LOCKED_ISOLATION`, asked for with `rowLockedTransaction`,
 *   database.ts) skip the writer lock: the heartbeats' and liveness pings' writes, which
 *   touch one screen's rows after locking its `screens` row (`select ... for no key
 *   update`), so they run side by side, one per pooled connection, instead of taking turns
 *   with every other write (issue 25's fleet: 5,000 players' heartbeats queued behind one
 *   lock).
 * - **Whole-database work** (a restore, migrate-to's copy) holds `DATABASE_LOCK`
 *   exclusively; every transaction, row-locked or not, takes it shared first, so such work
 *   waits for the transactions in flight and none starts meanwhile.
 * - **Values as SQLite answers them.** 64-bit integers and numerics (counts, sums) come back
 *   as numbers, booleans (a comparison in a select list) as 1/0, JSON function results as
 *   text, as better-sqlite3 answers them.
 */

/** pg_advisory_xact_lock's key for "a transaction is running" (any constant; 'plcd' in ASCII). */
export const WRITER_LOCK = 0x706c6364;

/** The advisory lock every transaction takes shared and a restore or migrate-to's copy exclusively ('plcr'). */
export const DATABASE_LOCK = 0x706c6372;

/**
 * The isolation level that marks a row-locked transaction (database.ts rowLockedTransaction):
 * READ COMMITTED, PostgreSQL's default, asked for by name. Nothing else names an isolation level.
 */
export const ROW_LOCKED_ISOLATION = 'read committed';

/**
 * How a transaction begins, in one round trip (the simple query protocol runs the statements
 * in order): the database lock shared, then the writer lock unless the transaction is row-locked.
 */
const BEGIN = `begin; select pg_advisory_xact_lock_shared(${DATABASE_LOCK}); select pg_advisory_xact_lock(${WRITER_LOCK})`;
const BEGIN_ROW_LOCKED = `start transaction isolation level ${ROW_LOCKED_ISOLATION}; select pg_advisory_xact_lock_shared(${DATABASE_LOCK})`;

const asNumber = (v: string) => Number(v);
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    switch (oid) {
      case 20: // int8
      case 1700: // numeric
        return asNumber;
      case 16: // bool
        return (v: string) => (v === 't' ? 1 : 0);
      case 114: // json
      case 3802: // jsonb
        return (v: string) => v;
      default:
        return pg.types.getTypeParser(oid, format);
    }
  },
};

/** The code of the error a request meets when no connection to PostgreSQL can be had (platform/http/errors.ts: 503). */
export const DATABASE_UNAVAILABLE = 'DATABASE_UNAVAILABLE';

/**
 * The code of the error a statement meets when a text parameter holds a NUL character, which
 * PostgreSQL's text cannot (SQLite's can): answered 400 `validation_failed` (platform/http/errors.ts).
 */
export const NUL_IN_TEXT = 'NUL_IN_TEXT';

function refuseNul(parameters: readonly unknown[]): void {
  for (const p of parameters) {
    if (typeof p === 'string' && p.includes('\u0000')) {
      throw Object.assign(new Error('a text value holds a NUL character, which the database cannot store'), { code: NUL_IN_TEXT });
    }
  }
}

const checked = new WeakSet<DatabaseConnection>();

class SerialisedPostgresDriver extends PostgresDriver {
  override async acquireConnection(): Promise<DatabaseConnection> {
    let connection: DatabaseConnection;
    try {
      connection = await super.acquireConnection();
    } catch (err) {
      // Refused, unreachable, or the pool's wait for a free connection timed out.
      throw Object.assign(new Error(`no connection to PostgreSQL: ${(err as Error).message}`, { cause: err }), { code: DATABASE_UNAVAILABLE });
    }
    if (!checked.has(connection)) {
      // kysely keeps one connection object per pooled client: wrapped once.
      checked.add(connection);
      const execute = connection.executeQuery.bind(connection);
      connection.executeQuery = (query) => {
        refuseNul(query.parameters);
        return execute(query);
      };
    }
    return connection;
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (settings.accessMode || (settings.isolationLevel && settings.isolationLevel !== ROW_LOCKED_ISOLATION)) {
      throw new Error(`transactions are begun as the writer lock needs: ${settings.isolationLevel ?? settings.accessMode} is not supported`);
    }
    await connection.executeQuery(CompiledQuery.raw(settings.isolationLevel === ROW_LOCKED_ISOLATION ? BEGIN_ROW_LOCKED : BEGIN));
  }
}

class SerialisedPostgresDialect extends PostgresDialect {
  constructor(private readonly settings: PostgresDialectConfig) {
    super(settings);
  }

  override createDriver(): Driver {
    return new SerialisedPostgresDriver(this.settings);
  }
}

export interface PostgresOptions {
  /** Connections in the pool (PLACARD_DATABASE_POOL_SIZE). */
  poolSize?: number;
}

export interface OpenedPostgres {
  db: Kysely<Database>;
  pool: pg.Pool;
}

export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** The URL without its password, for logs and messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unreadable URL)';
  }
}

export function openPostgresPool(url: string, options: PostgresOptions = {}): OpenedPostgres {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    types,
    application_name: 'placard',
  });
  // An idle connection the server drops (a restart, a failover) must not crash the process.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new SerialisedPostgresDialect({ pool }) });
  return { db, pool };
}
