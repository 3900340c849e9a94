import { existsSync } from 'node:fs';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { MIGRATIONS } from '../../platform/db/migrations/index.js';
import { migrate, openDatabase } from '../../platform/db/database.js';
import { isPostgresUrl, redactUrl, DATABASE_LOCK } from '../../platform/db/postgres.js';
import { checkMedia, orderBy, quote, type SourceTable, type TableCheck, verify } from './migrate-to-verify.js';

/**
 * `placard migrate-to postgres://...` (issue 25): copies a SQLite appliance's database into an
 * empty PostgreSQL database and proves the copy, table by table.
 *
 * - The target is migrated to this server's schema first (the same migrations, translated),
 *   then must hold no row in any table but `schema_migrations`: nothing is merged or overwritten.
 * - The copy runs in ONE transaction on the target, so a failure (a value PostgreSQL refuses,
 *   a lost connection) leaves it as empty as it was. Tables go in an order that respects
 *   their foreign keys (parents first, from SQLite's own `foreign_key_list`), and the rows of
 *   a table that references itself (content folders) parents first. Not
 *   `session_replication_role = replica` (it needs a superuser, and would let a dangling
 *   reference in unnoticed) nor deferred constraints (ours are not DEFERRABLE): every
 *   constraint is checked as the rows arrive, as the server itself would.
 * - Rows go in multi-row INSERTs of at most `batchRows` rows and PostgreSQL's 65,535
 *   parameters; SQLite's integers are read as BigInt (no precision lost above 2^53).
 * - Identity columns (`screens.num`) get their sequence past the highest copied value.
 * - Verification, after the commit, reads both sides again: per table the row count and a
 *   sha256 over the rows in primary-key order, every value normalised the same way
 *   (`tableChecksum`). Any difference is reported and the command fails.
 * - The media stay where they are (files under the data directory, shared by the instances);
 *   every `media_files` row is checked to have its file there, with its size.
 */

export { compareTable, normaliseValue, tableChecksum, type TableCheck } from './migrate-to-verify.js';

export class MigrateToError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrateToError';
  }
}

export interface MigrateToOptions {
  /** The SQLite file (the data directory's placard.db). */
  sqliteFile: string;
  /** The data directory (its media/ is checked, not moved). */
  dataDir: string;
  url: string;
  /** Only verify an earlier copy (counts and checksums); nothing is written. */
  verifyOnly?: boolean;
  /** Most rows in one INSERT. */
  batchRows?: number;
  /** A progress line every this many rows of a table. */
  progressEvery?: number;
  /** The report's lines (stdout). */
  out: (line: string) => void;
  /** Progress lines (stderr). */
  progress: (line: string) => void;
}

export interface MigrateToResult {
  ok: boolean;
  tables: TableCheck[];
  totalRows: number;
  mediaFiles: number;
  /** media_files rows whose file is missing (or of another size) under the data directory. */
  missingMedia: string[];
}

/** The tables migrate() fills itself: never copied, never counted as data. */
const MIGRATE_OWN = new Set(['schema_migrations']);
/** PostgreSQL's limit of parameters in one statement. */
const MAX_PARAMETERS = 65_535;

/** Checks the URL's form before anything connects: a clear word instead of a driver's error. */
export function checkTargetUrl(url: string): void {
  if (!isPostgresUrl(url))
    throw new MigrateToError(
      `not a PostgreSQL URL (${/^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? 'no scheme'}...): expected postgres://user:password@host:5432/database`,
    );
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new MigrateToError(`not a valid URL: ${redactUrl(url)} (expected postgres://user:password@host:5432/database)`);
  }
  if (!parsed.hostname) throw new MigrateToError('the URL names no host (expected postgres://user:password@host:5432/database)');
  if (parsed.pathname.replace(/^\//, '') === '') throw new MigrateToError('the URL names no database (expected postgres://user:password@host:5432/database)');
}

function sourceVersion(sqlite: SQLite.Database): number {
  const table = sqlite.prepare("select name from sqlite_master where type = 'table' and name = 'schema_migrations'").get();
  if (!table) return 0;
  return Number((sqlite.prepare('select max(version) as v from schema_migrations').get() as { v: number | null }).v ?? 0);
}

function sourceTables(sqlite: SQLite.Database): SourceTable[] {
  const names = (
    sqlite.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\' order by name").all() as { name: string }[]
  )
    .map((r) => r.name)
    .filter((n) => !MIGRATE_OWN.has(n));
  return names.map((name) => {
    const info = sqlite.prepare(`pragma table_info(${quote(name)})`).all() as { name: string; pk: number }[];
    const fks = sqlite.prepare(`pragma foreign_key_list(${quote(name)})`).all() as {
      id: number;
      seq: number;
      table: string;
      from: string;
      to: string | null;
    }[];
    const primaryKey = info
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name);
    const selfReferences = new Map<number, { from: string[]; to: string[] }>();
    for (const fk of fks.filter((f) => f.table === name).sort((a, b) => a.seq - b.seq)) {
      const ref = selfReferences.get(fk.id) ?? { from: [], to: [] };
      ref.from.push(fk.from);
      ref.to.push(fk.to ?? primaryKey[fk.seq]!);
      selfReferences.set(fk.id, ref);
    }
    return {
      name,
      columns: info.map((c) => c.name),
      primaryKey: primaryKey.length ? primaryKey : ['rowid'],
      parents: [...new Set(fks.map((f) => f.table).filter((t) => t !== name))],
      selfReferences: [...selfReferences.values()],
    };
  });
}

/** Parents before children; a cycle (none in this schema) is refused rather than guessed at. */
export function copyOrder<T extends { name: string; parents: string[] }>(tables: T[]): T[] {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const done = new Set<string>();
  const visiting = new Set<string>();
  const order: T[] = [];
  const visit = (t: T, path: string[]) => {
    if (done.has(t.name)) return;
    if (visiting.has(t.name)) throw new MigrateToError(`the tables' foreign keys form a cycle (${[...path, t.name].join(' -> ')}): cannot order the copy`);
    visiting.add(t.name);
    for (const p of t.parents) {
      const parent = byName.get(p);
      if (parent) visit(parent, [...path, t.name]);
    }
    visiting.delete(t.name);
    done.add(t.name);
    order.push(t);
  };
  for (const t of tables) visit(t, []);
  return order;
}

/** The rows of a table that references itself, each after the rows it references (cycles and dangling ones last: PostgreSQL then says what is wrong). */
function parentsFirst(table: SourceTable, rows: unknown[][]): unknown[][] {
  const index = new Map(table.columns.map((c, i) => [c, i]));
  const key = (row: unknown[], cols: string[]) => JSON.stringify(cols.map((c) => String(row[index.get(c)!])));
  const present = new Set<string>();
  const out: unknown[][] = [];
  let pending = rows;
  while (pending.length) {
    const next: unknown[][] = [];
    for (const row of pending) {
      const ready = table.selfReferences.every(
        (ref) =>
          ref.from.some((c) => row[index.get(c)!] === null) ||
          present.has(`${ref.to.join(',')}:${key(row, ref.from)}`) ||
          key(row, ref.from) === key(row, ref.to),
      );
      if (!ready) {
        next.push(row);
        continue;
      }
      out.push(row);
      for (const ref of table.selfReferences) present.add(`${ref.to.join(',')}:${key(row, ref.to)}`);
    }
    if (next.length === pending.length) return [...out, ...next];
    pending = next;
  }
  return out;
}

/** A SQLite value as a parameter for pg: BigInt as its decimal text (bigint columns take it exactly). */
function parameter(v: unknown): unknown {
  return typeof v === 'bigint' ? v.toString() : v;
}

interface TargetColumn {
  name: string;
  type: string;
}

async function targetColumns(client: pg.Client): Promise<Map<string, TargetColumn[]>> {
  const r = await client.query<{ table_name: string; column_name: string; data_type: string }>(
    `select table_name, column_name, data_type from information_schema.columns
      where table_schema = current_schema() order by table_name, ordinal_position`,
  );
  const out = new Map<string, TargetColumn[]>();
  for (const row of r.rows) {
    const list = out.get(row.table_name) ?? [];
    list.push({ name: row.column_name, type: row.data_type });
    out.set(row.table_name, list);
  }
  return out;
}

function describeError(err: unknown): string {
  const e = err as { message?: string; detail?: string; code?: string };
  return `${e.message ?? String(err)}${e.detail ? ` (${e.detail})` : ''}`;
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'placard migrate-to', connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw new MigrateToError(`cannot connect to ${redactUrl(url)}: ${describeError(err)}`);
  }
  return client;
}

/** Runs the migration (or, with verifyOnly, the verification alone); the result says whether every table matched. */
export async function migrateToPostgres(options: MigrateToOptions): Promise<MigrateToResult> {
  const { url, out } = options;
  checkTargetUrl(url);
  if (!existsSync(options.sqliteFile)) throw new MigrateToError(`no database at ${options.sqliteFile} (is PLACARD_DATA_DIR right?)`);
  const known = MIGRATIONS.at(-1)?.version ?? 0;
  const sqlite = new SQLite(options.sqliteFile, { readonly: true, fileMustExist: true });
  try {
    const version = sourceVersion(sqlite);
    if (version < known) {
      throw new MigrateToError(`the SQLite database is at schema ${version}, this server's is ${known}: run \`placard migrate\` first, then migrate-to again`);
    }
    if (version > known)
      throw new MigrateToError(`the SQLite database is at schema ${version}, newer than this server knows (${known}): use the Placard version that wrote it`);
    // One read transaction: the copy and its verification see the same rows.
    sqlite.exec('begin');
    const tables = copyOrder(sourceTables(sqlite));
    out(`source: ${options.sqliteFile} (schema ${version}, ${tables.length} tables)`);

    const client = await connect(url);
    try {
      if (!options.verifyOnly) {
        // Before migrate() touches it: a database holding data (even at an older schema) stays as it is.
        await refuseHoldingData(client);
        // migrate() makes the schema (or finds it current) and refuses a newer or foreign one.
        const opened = openDatabase(url, { poolSize: 1 });
        try {
          const report = await migrate(opened.db);
          out(
            `target: ${redactUrl(url)} (${report.applied.length ? `migrated to schema ${report.current}` : `schema ${report.current}, already current`}; empty)`,
          );
        } catch (err) {
          throw new MigrateToError(`cannot prepare the target ${redactUrl(url)}: ${describeError((err as { cause?: unknown }).cause ?? err)}`);
        } finally {
          await opened.close();
        }
      }
      const columns = await targetColumns(client);
      const types = new Map<string, Map<string, string>>();
      for (const t of tables) {
        const target = columns.get(t.name);
        if (!target) throw new MigrateToError(`the target has no table ${t.name}: its schema is not this server's`);
        const names = new Set(target.map((c) => c.name));
        const missing = t.columns.filter((c) => !names.has(c));
        if (missing.length) throw new MigrateToError(`the target's table ${t.name} lacks column(s) ${missing.join(', ')}: its schema is not this server's`);
        types.set(t.name, new Map(target.map((c) => [c.name, c.type])));
      }
      if (!options.verifyOnly) await copyAll(client, sqlite, tables, options);
      const checks = await verify(client, sqlite, tables, types, out, options.progress, options.progressEvery ?? 10_000);
      const totalRows = checks.reduce((n, c) => n + c.sourceRows, 0);
      const bad = checks.filter((c) => !c.ok);
      if (bad.length) out(`verification FAILED: ${bad.length} of ${checks.length} tables differ (${bad.map((c) => c.table).join(', ')})`);
      else out(`total: ${totalRows} rows in ${checks.length} tables; every row count and checksum matches`);
      const media = checkMedia(sqlite, options.dataDir, out);
      sqlite.exec('commit');
      return { ok: bad.length === 0, tables: checks, totalRows, mediaFiles: media.files, missingMedia: media.missing };
    } finally {
      await client.end().catch(() => undefined);
    }
  } finally {
    sqlite.close();
  }
}

/** Refuses a target where any table (but migrate()'s own) holds a row: nothing is merged or overwritten. */
async function refuseHoldingData(client: pg.Client): Promise<void> {
  const tables = await client.query<{ table_name: string }>(
    `select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`,
  );
  const holding: string[] = [];
  for (const { table_name: name } of tables.rows.filter((r) => !MIGRATE_OWN.has(r.table_name))) {
    const r = await client.query(`select count(*) as n from (select 1 from ${quote(name)} limit 1000) x`);
    const n = Number(r.rows[0].n);
    if (n > 0) holding.push(`${name} (${n === 1000 ? 'at least 1000' : n} ${n === 1 ? 'row' : 'rows'})`);
  }
  if (holding.length) {
    throw new MigrateToError(
      `the target database already holds data: ${holding.slice(0, 8).join(', ')}${holding.length > 8 ? `, and ${holding.length - 8} more tables` : ''}. ` +
        'migrate-to copies into an empty database only, and changed nothing: create a new database (createdb) or empty this one, then run it again',
    );
  }
}

async function copyAll(client: pg.Client, sqlite: SQLite.Database, tables: SourceTable[], options: MigrateToOptions): Promise<void> {
  const batchRows = options.batchRows ?? 500;
  const every = options.progressEvery ?? 10_000;
  await client.query('begin');
  let current = '';
  try {
    // Transactions of any server instance on the target wait (postgres.ts DATABASE_LOCK).
    await client.query(`select pg_advisory_xact_lock(${DATABASE_LOCK})`);
    await client.query('set local statement_timeout = 0');
    await refuseHoldingData(client);
    options.out(`copying ${tables.length} tables in one transaction (nothing is kept if any of it fails)`);
    let total = 0;
    for (const table of tables) {
      current = table.name;
      const count = Number((sqlite.prepare(`select count(*) as n from ${quote(table.name)}`).get() as { n: number }).n);
      if (count === 0) continue;
      const perBatch = Math.max(1, Math.min(batchRows, Math.floor(MAX_PARAMETERS / table.columns.length)));
      const select = sqlite.prepare(`select ${table.columns.map(quote).join(', ')} from ${quote(table.name)} order by ${orderBy(table, false)}`);
      select.raw(true).safeIntegers(true);
      const rows: Iterable<unknown[]> = table.selfReferences.length
        ? parentsFirst(table, select.all() as unknown[][])
        : (select.iterate() as Iterable<unknown[]>);
      const head = `insert into ${quote(table.name)} (${table.columns.map(quote).join(', ')}) values `;
      let batch: unknown[][] = [];
      let copied = 0;
      let reported = 0;
      const flush = async () => {
        if (!batch.length) return;
        const params: unknown[] = [];
        const tuples = batch.map((row) => {
          const placeholders = row.map((v) => {
            params.push(parameter(v));
            return `$${params.length}`;
          });
          return `(${placeholders.join(', ')})`;
        });
        await client.query(head + tuples.join(', '), params);
        copied += batch.length;
        batch = [];
        if (count >= every && copied - reported >= every) {
          reported = copied;
          options.progress(`migrate-to: ${table.name}: ${copied}/${count} rows`);
        }
      };
      for (const row of rows) {
        batch.push(row);
        if (batch.length >= perBatch) await flush();
      }
      await flush();
      if (count >= every && reported !== copied) options.progress(`migrate-to: ${table.name}: ${copied}/${count} rows`);
      total += copied;
    }
    current = '';
    // Identity columns (screens.num) continue after the highest number copied.
    const identities = await client.query<{ table_name: string; column_name: string }>(
      `select table_name, column_name from information_schema.columns
        where table_schema = current_schema() and (is_identity = 'YES' or column_default like 'nextval(%')`,
    );
    for (const { table_name, column_name } of identities.rows) {
      await client.query(`select setval(pg_get_serial_sequence($1, $2), coalesce(max(${quote(column_name)}), 0) + 1, false) from ${quote(table_name)}`, [
        quote(table_name),
        column_name,
      ]);
    }
    await client.query('commit');
    options.out(`committed: ${total} rows`);
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    if (err instanceof MigrateToError) throw err;
    throw new MigrateToError(
      `${current ? `copying ${current} failed` : 'the copy failed'}: ${describeError(err)}; the transaction was rolled back, the target holds no copied row`,
    );
  }
}
