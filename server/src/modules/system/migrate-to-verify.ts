import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import type SQLite from 'better-sqlite3';
import type pg from 'pg';
import { MediaStore } from '../../platform/media/store.js';

/**
 * The verification of `placard migrate-to` (migrate-to.ts): each table read back from both
 * databases in primary-key order, counted and hashed the same way; and the media files the
 * database records, checked on disk.
 */
export interface TableCheck {
  table: string;
  sourceRows: number;
  targetRows: number;
  sourceChecksum: string;
  targetChecksum: string;
  ok: boolean;
}

export interface SourceTable {
  name: string;
  columns: string[];
  primaryKey: string[];
  /** Tables it references (not itself). */
  parents: string[];
  /** Its references to itself: [from column, to column][] per foreign key. */
  selfReferences: { from: string[]; to: string[] }[];
}

export const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The numeric types of PostgreSQL whose values the checksum reads as numbers (int8 arrives as text from pg). */
const NUMERIC_TYPES = new Set(['bigint', 'integer', 'smallint', 'double precision', 'real', 'numeric']);

/**
 * One value, normalised the same way whichever database it came from: null as a marker,
 * numbers as their decimal text (an integral real as an integer: SQLite answers 5.0 as 5),
 * text as is, blobs as hex; each tagged and length-prefixed, so no two rows share a text.
 */
export function normaliseValue(v: unknown, numeric = false): string {
  let tag: string;
  let text: string;
  if (v === null || v === undefined) return 'N;';
  if (typeof v === 'bigint') [tag, text] = ['n', v.toString()];
  else if (typeof v === 'number') [tag, text] = ['n', Number.isInteger(v) && Math.abs(v) < 2 ** 53 ? BigInt(v).toString() : String(v)];
  else if (Buffer.isBuffer(v) || v instanceof Uint8Array) [tag, text] = ['x', Buffer.from(v).toString('hex')];
  else if (typeof v === 'string' && numeric) return normaliseValue(/^-?\d+$/.test(v) ? BigInt(v) : Number(v));
  else [tag, text] = ['s', String(v)];
  return `${tag}${text.length}:${text}`;
}

/**
 * The checksum of a table's rows (in primary-key order): sha256 over the normalised values.
 * `numeric[i]` says column i is numeric on PostgreSQL (where 64-bit integers arrive as text).
 */
export async function tableChecksum(
  rows: Iterable<readonly unknown[]> | AsyncIterable<readonly unknown[]>,
  numeric: readonly boolean[] = [],
): Promise<{ rows: number; checksum: string }> {
  const hash = createHash('sha256');
  let count = 0;
  for await (const row of rows) {
    count++;
    for (let i = 0; i < row.length; i++) hash.update(normaliseValue(row[i], numeric[i] ?? false));
    hash.update('\n');
  }
  return { rows: count, checksum: hash.digest('hex') };
}

/** Compares the two sides of one table: equal counts and checksums, or a mismatch. */
export function compareTable(table: string, source: { rows: number; checksum: string }, target: { rows: number; checksum: string }): TableCheck {
  return {
    table,
    sourceRows: source.rows,
    targetRows: target.rows,
    sourceChecksum: source.checksum,
    targetChecksum: target.checksum,
    ok: source.rows === target.rows && source.checksum === target.checksum,
  };
}

/** Rows of a PostgreSQL query through a cursor (a few thousand at a time), as arrays. */
async function* cursorRows(client: pg.Client, text: string, batch = 2000): AsyncGenerator<unknown[]> {
  await client.query('begin read only');
  try {
    await client.query(`declare placard_verify no scroll cursor for ${text}`);
    for (;;) {
      const r = await client.query({ text: `fetch ${batch} from placard_verify`, rowMode: 'array' });
      for (const row of r.rows as unknown[][]) yield row;
      if (r.rows.length < batch) break;
    }
  } finally {
    await client.query('rollback');
  }
}

export function orderBy(table: SourceTable, postgres: boolean, types?: Map<string, string>): string {
  if (table.primaryKey[0] === 'rowid') return table.columns.map(quote).join(', ');
  // Text keys compare byte by byte on both sides (SQLite's BINARY, PostgreSQL's "C").
  return table.primaryKey.map((c) => (postgres ? (types?.get(c) === 'text' ? `${quote(c)} collate "C"` : quote(c)) : `${quote(c)} collate binary`)).join(', ');
}

/** The rows as they go by, with a call every `every` of them (progress on large tables). */
async function* counted<T>(rows: Iterable<T> | AsyncIterable<T>, every: number, report: (n: number) => void): AsyncGenerator<T> {
  let n = 0;
  for await (const row of rows) {
    yield row;
    if (++n % every === 0) report(n);
  }
}

export async function verify(
  client: pg.Client,
  sqlite: SQLite.Database,
  tables: SourceTable[],
  types: Map<string, Map<string, string>>,
  out: (line: string) => void,
  progress: (line: string) => void,
  every: number,
): Promise<TableCheck[]> {
  out('verifying: row counts and sha256 checksums, each table read back from both databases');
  const width = Math.max(...tables.map((t) => t.name.length), 5);
  out(`  ${'table'.padEnd(width)}  ${'rows'.padStart(9)}  checksum`);
  const checks: TableCheck[] = [];
  let empty = 0;
  for (const table of [...tables].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const columnTypes = types.get(table.name)!;
    const list = table.columns.map(quote).join(', ');
    const select = sqlite.prepare(`select ${list} from ${quote(table.name)} order by ${orderBy(table, false)}`);
    select.raw(true).safeIntegers(true);
    const source = await tableChecksum(
      counted(select.iterate() as Iterable<unknown[]>, every, (n) => progress(`migrate-to: verifying ${table.name}: ${n} rows read from SQLite`)),
    );
    const numeric = table.columns.map((c) => NUMERIC_TYPES.has(columnTypes.get(c) ?? ''));
    const rows = cursorRows(client, `select ${list} from ${quote(table.name)} order by ${orderBy(table, true, columnTypes)}`);
    const target = await tableChecksum(
      counted(rows, every, (n) => progress(`migrate-to: verifying ${table.name}: ${n} rows read from PostgreSQL`)),
      numeric,
    );
    const check = compareTable(table.name, source, target);
    checks.push(check);
    const verdict = check.ok
      ? 'ok'
      : `MISMATCH (PostgreSQL: ${check.targetRows} rows, ${check.targetChecksum.slice(0, 16)}${check.sourceRows === check.targetRows ? '; same count, different values' : ''})`;
    if (check.ok && check.sourceRows === 0) empty++;
    else out(`  ${table.name.padEnd(width)}  ${String(check.sourceRows).padStart(9)}  ${check.sourceChecksum.slice(0, 16)}  ${verdict}`);
  }
  if (empty) out(`  (${empty} more tables are empty on both sides)`);
  return checks;
}

export function checkMedia(sqlite: SQLite.Database, dataDir: string, out: (line: string) => void): { files: number; missing: string[] } {
  const store = new MediaStore(dataDir);
  const rows = sqlite.prepare('select sha256, size_bytes from media_files order by sha256').all() as { sha256: string; size_bytes: number }[];
  const missing: string[] = [];
  for (const r of rows) {
    let size = -1;
    try {
      size = statSync(store.pathOf(r.sha256)).size;
    } catch {
      // missing (or not a sha256): reported below
    }
    if (size !== Number(r.size_bytes)) missing.push(r.sha256);
  }
  out(`media: ${rows.length} files stay in ${store.root} (not copied: every instance uses this directory, PLACARD_DATA_DIR on a shared filesystem)`);
  if (missing.length) {
    out(`warning: ${missing.length} media file(s) recorded in the database are missing or of another size under ${store.root}:`);
    for (const sha of missing.slice(0, 20)) out(`  ${sha}`);
    if (missing.length > 20) out(`  ... and ${missing.length - 20} more`);
  } else {
    out('media: every recorded file is present, with its size');
  }
  return { files: rows.length, missing };
}
