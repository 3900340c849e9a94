/**
 * Backups on PostgreSQL (issue 25): the database part of a backup is `pg_dump
 * --format=custom` of the app's database, restored with `pg_restore` (docs/operations.md,
 * "Backups on PostgreSQL"). The tools run as child processes; the URL's password reaches
 * them through PGPASSWORD in their environment, never on their command line.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { DATABASE_LOCK } from '../../platform/db/postgres.js';
import { BackupError, knownSchemaVersion } from './backup-format.js';

/** Most stderr kept from a tool (its last lines say what went wrong). */
const MAX_STDERR = 8 * 1024;

/**
 * What libpq tools are given for `url`: `--dbname` with the URL minus its password, and
 * the password (when the URL has one) in PGPASSWORD. A URL without one leaves the
 * environment's PGPASSWORD or ~/.pgpass to libpq, as psql would.
 */
export function libpqTarget(url: string): { dbname: string; env: NodeJS.ProcessEnv } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new BackupError('the PostgreSQL URL cannot be read', 'failed');
  }
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (u.password) {
    env.PGPASSWORD = decodeURIComponent(u.password);
    u.password = '';
  }
  return { dbname: u.toString(), env };
}

interface ToolResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a PostgreSQL client tool. `stdoutTo`: a file its output streams into (pg_dump);
 * else its output is collected (pg_restore --list, bounded by the dump's table of contents).
 */
async function runTool(tool: string, args: string[], env: NodeJS.ProcessEnv, stdoutTo?: string, onBytes?: (n: number) => void): Promise<ToolResult> {
  const child = spawn(tool, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'ENOENT'
          ? new BackupError(`${tool} is not installed (Debian: apt install postgresql-client, the version of the server or newer)`, 'failed')
          : new BackupError(`${tool} could not run: ${err.message}`, 'failed'),
      ),
    );
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-MAX_STDERR);
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  let stdout = '';
  let copying: Promise<unknown>;
  if (stdoutTo) {
    let bytes = 0;
    child.stdout.on('data', (c: Buffer) => {
      bytes += c.length;
      onBytes?.(bytes);
    });
    copying = pipeline(child.stdout, createWriteStream(stdoutTo, { mode: 0o600 }));
  } else {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c: string) => (stdout += c));
    copying = Promise.resolve();
  }
  try {
    await spawned;
  } catch (err) {
    child.stdout.destroy();
    await copying.catch(() => undefined);
    throw err;
  }
  const [code] = await Promise.all([exited, copying]);
  return { code, stdout, stderr: stderr.trim() };
}

/** What a tool said went wrong, for a message: its first `error:` line (else its last line), bounded. */
const lastLine = (stderr: string) => {
  const lines = stderr.split('\n').filter(Boolean);
  return (lines.find((l) => /\berror:/.test(l)) ?? lines.at(-1) ?? 'no message').slice(0, 500);
};

/**
 * `pg_dump --format=custom` of the database at `url` into `dest`: one repeatable-read
 * snapshot (pg_dump's own), taken while the server keeps writing. `onBytes` hears the
 * dump's size as it grows. Answers the dump's size, and the schema version and instance id
 * read from the database (for the backup's header).
 */
export async function dumpPostgres(
  url: string,
  dest: string,
  onBytes?: (n: number) => void,
): Promise<{ sizeBytes: number; schemaVersion: number; instanceId: string | null }> {
  const { schemaVersion, instanceId } = await describeDatabase(url);
  const { dbname, env } = libpqTarget(url);
  const r = await runTool('pg_dump', ['--format=custom', '--no-password', `--dbname=${dbname}`], env, dest, onBytes);
  if (r.code !== 0) throw new BackupError(`database dump failed (pg_dump exited with ${r.code}): ${lastLine(r.stderr)}`, 'failed');
  // The equivalent of the SQLite copy's integrity_check: pg_restore reads the dump back.
  await checkDump(dest, 'failed');
  return { sizeBytes: (await stat(dest)).size, schemaVersion, instanceId };
}

async function describeDatabase(url: string): Promise<{ schemaVersion: number; instanceId: string | null }> {
  const client = new pg.Client({ connectionString: url, application_name: 'placard-backup' });
  try {
    await client.connect();
  } catch (err) {
    throw new BackupError(`database dump failed: no connection to PostgreSQL: ${(err as Error).message}`, 'failed');
  }
  try {
    const v = await client.query<{ v: number | null }>('select max(version) as v from schema_migrations').catch(() => ({ rows: [{ v: 0 }] }));
    const i = await client.query<{ value: string }>("select value from meta where key = 'instance_id'").catch(() => ({ rows: [] as { value: string }[] }));
    return { schemaVersion: Number(v.rows[0]?.v ?? 0), instanceId: i.rows[0]?.value ?? null };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Checks that `file` is a pg_dump archive pg_restore can read (`pg_restore --list`: its
 * header and table of contents) and answers that table of contents.
 */
export async function checkDump(file: string, kind: 'invalid' | 'failed' = 'invalid'): Promise<string> {
  const r = await runTool('pg_restore', ['--list', file], process.env);
  if (r.code !== 0) throw new BackupError(`the backup's database dump is not readable by pg_restore: ${lastLine(r.stderr)}`, kind);
  return r.stdout;
}

/** The tables a dump's table of contents creates (`pg_restore --list` lines `...; 1259 ... TABLE public name owner`). */
export function tablesInDump(list: string): Set<string> {
  const out = new Set<string>();
  for (const line of list.split('\n')) {
    const m = /^\d+; \d+ \d+ TABLE (\S+) (\S+) /.exec(line);
    if (m) out.add(`${m[1]}.${m[2]}`);
  }
  return out;
}

/**
 * The schema versions the dump's `schema_migrations` holds (its rows, read by pg_restore
 * from the dump itself, not from the backup's header). Refuses a dump newer than this
 * server, or one with migrations it does not know, as `migrate` refuses such a database.
 */
export async function checkDumpSchema(file: string, known: readonly number[]): Promise<number> {
  const r = await runTool('pg_restore', ['--data-only', '--table=schema_migrations', '--file=-', file], process.env);
  if (r.code !== 0) throw new BackupError(`the backup's database dump cannot be read: ${lastLine(r.stderr)}`);
  const versions: number[] = [];
  let inCopy = false;
  for (const line of r.stdout.split('\n')) {
    if (/^COPY \S*schema_migrations /.test(line)) inCopy = true;
    else if (inCopy && line === '\\.') inCopy = false;
    else if (inCopy) versions.push(Number(line.split('\t')[0]));
  }
  if (versions.length === 0 || versions.some((v) => !Number.isInteger(v))) throw new BackupError("the backup's database dump holds no Placard schema");
  const newest = Math.max(...versions);
  if (newest > knownSchemaVersion())
    throw new BackupError(`the backup's database is at schema ${newest}; this server knows up to ${knownSchemaVersion()}: upgrade Placard first`, 'newer');
  const strangers = versions.filter((v) => !known.includes(v));
  if (strangers.length) throw new BackupError(`the backup's database records schema migration(s) ${strangers.join(', ')} that this server does not know`);
  return newest;
}

/** How long a restore waits for the transactions in flight (of every instance) before it gives up. */
const WRITERS_TIMEOUT = '60s';

/**
 * Restores `file` into the database at `url`: `pg_restore --clean --if-exists --no-owner
 * --no-privileges --single-transaction`, so the objects of the dump are dropped and
 * re-created in one transaction: a dump that fails half-way leaves the database as it
 * was. Tables the live database has and the dump does not (a newer schema's) are dropped
 * afterwards, so that the migrations bring the restored schema forward cleanly.
 *
 * Meanwhile a session of its own holds the database lock (`DATABASE_LOCK`, postgres.ts)
 * exclusively, which every transaction of every instance takes shared first: the restore
 * waits for the transactions in flight to finish (as SQLite's `replaceFile` waits for the
 * connection), and none starts until the restored data is in place. Released before the migrations, which take it too.
 */
export async function restorePostgres(url: string, file: string, toc: string): Promise<void> {
  const { dbname, env } = libpqTarget(url);
  const client = new pg.Client({ connectionString: url, application_name: 'placard-restore' });
  try {
    await client.connect();
  } catch (err) {
    throw new BackupError(`no connection to PostgreSQL: ${(err as Error).message}`, 'failed');
  }
  client.on('error', () => undefined);
  try {
    await client.query(`set lock_timeout = '${WRITERS_TIMEOUT}'`);
    try {
      await client.query(`select pg_advisory_lock(${DATABASE_LOCK})`);
    } catch (err) {
      throw new BackupError(`the transactions in flight did not finish within ${WRITERS_TIMEOUT}: ${(err as Error).message}`, 'failed');
    }
    await client.query('set lock_timeout = 0');
    const r = await runTool(
      'pg_restore',
      ['--clean', '--if-exists', '--no-owner', '--no-privileges', '--single-transaction', '--exit-on-error', '--no-password', `--dbname=${dbname}`, file],
      env,
    );
    if (r.code !== 0) throw new BackupError(`pg_restore refused the backup's database dump (the database is unchanged): ${lastLine(r.stderr)}`);
    const inDump = tablesInDump(toc);
    const live = await client.query<{ name: string }>(
      "select table_schema || '.' || table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'",
    );
    const extra = live.rows.map((r) => r.name).filter((n) => !inDump.has(n));
    if (extra.length) {
      const quoted = extra.map((n) =>
        n
          .split('.')
          .map((p) => `"${p.replaceAll('"', '""')}"`)
          .join('.'),
      );
      await client.query(`drop table if exists ${quoted.join(', ')} cascade`);
    }
  } finally {
    // Ending the session releases the lock too.
    await client.end().catch(() => undefined);
  }
}
