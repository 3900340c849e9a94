import { type Kysely, type KyselyPlugin, PostgresAdapter, type RootOperationNode, type UnknownRow, type QueryResult, type RawNode } from 'kysely';

/**
 * The one place where SQLite and PostgreSQL differ (issue 25). The schema is written once,
 * in SQLite's words (the migrations); on PostgreSQL `translateDdl` turns it into the same
 * tables. Repositories ask `isPostgres(db)` only where a statement cannot be written once
 * (JSON functions, upserts the query builder cannot say, time arithmetic), through the
 * helpers here, never by testing the dialect themselves.
 */
export type DialectName = 'sqlite' | 'postgres';

/** The dialect behind a database or a transaction of it. */
export function dialectOf(db: Pick<Kysely<unknown>, 'getExecutor'>): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

export function isPostgres(db: Pick<Kysely<unknown>, 'getExecutor'>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * SQLite's DDL as PostgreSQL reads it, for the migrations (a fragment of a `sql` template:
 * the text between its parameters). Outside string literals:
 * - `strict` and `without rowid` table options go (PostgreSQL types are strict anyway, and
 *   every table has its primary key index);
 * - `integer` is `bigint` (SQLite's integers are 64-bit: sizes, milliseconds), `real` is
 *   `double precision`, `blob` is `bytea`;
 * - in `create table` and `add column`, a `text` column without a collation gets
 *   `collate "C"`: text compares byte by byte, as SQLite's BINARY does, whatever the
 *   database's own locale (ordering and keyset pagination are the same on both);
 * - a sum of conditions in a check counts them (`(a is not null)::int + ...`);
 * - `collate nocase` stays: `ensureCollations` makes a case-insensitive collation of that name.
 */
export function translateDdl(fragment: string, statementIsTableDefinition: boolean): string {
  // Split on single-quoted literals ('' inside one is an escaped quote): odd parts are literals.
  const parts = fragment.split(/('(?:[^']|'')*')/);
  return parts
    .map((part, i) => {
      if (i % 2 === 1) return part;
      let out = part
        .replace(/\)\s*strict\s*,\s*without\s+rowid\b/gi, ')')
        .replace(/\)\s*without\s+rowid\s*,\s*strict\b/gi, ')')
        .replace(/\)\s*strict\b/gi, ')')
        .replace(/\)\s*without\s+rowid\b/gi, ')')
        .replace(/\binteger\b/gi, 'bigint')
        .replace(/\breal\b/gi, 'double precision')
        .replace(/\bblob\b/gi, 'bytea')
        // A sum of conditions (`(a is not null) + (b is not null) = 1`): SQLite's are integers.
        .replace(/\((\w+ is (?:not )?null)\)(?=\s*\+)|(?<=\+\s*)\((\w+ is (?:not )?null)\)/gi, (_, a, b) => `(${a ?? b})::int`);
      if (statementIsTableDefinition) out = out.replace(/\btext\b(?![^,()]*\bcollate\b)/gi, 'text collate "C"');
      return out;
    })
    .join('');
}

/**
 * SQL texts for what the two dialects say differently, for the statements the repositories
 * write by hand. Each takes the dialect and SQL texts of expressions (column references
 * written in the code, never a client's input: values go in as parameters) and answers a
 * text; `sql.raw(...)` puts it in a kysely template. JSON paths are constants like
 * `$.display.width` (object keys only).
 */
function pgPath(path: string): string {
  const m = /^\$((?:\.[A-Za-z_][A-Za-z0-9_]*)*)$/.exec(path);
  if (!m) throw new Error(`unsupported JSON path ${path}`);
  return `'{${m[1]!.slice(1).split('.').filter(Boolean).join(',')}}'`;
}

export const sqlText = {
  /**
   * The value at `path` of the JSON document `doc`: SQLite's json_extract (a number, text,
   * 1/0 for booleans, JSON text for an object or array); PostgreSQL answers text for every
   * kind (`#>>`). For strings and ids; `jsonNumber` where a number is wanted.
   */
  jsonValue(d: DialectName, doc: string, path: string): string {
    return d === 'postgres' ? `(${doc}::jsonb #>> ${pgPath(path)})` : `json_extract(${doc}, '${path}')`;
  },
  /** The number at `path` (PostgreSQL: null when it is not a number; SQLite: json_extract's value, as before). */
  jsonNumber(d: DialectName, doc: string, path: string): string {
    if (d === 'sqlite') return `json_extract(${doc}, '${path}')`;
    const p = pgPath(path);
    return `(case when jsonb_typeof(${doc}::jsonb #> ${p}) = 'number' then (${doc}::jsonb #>> ${p})::float8 end)`;
  },
  /** An aggregate of `value` into a JSON array's text, `[]` for no rows, in `orderBy`'s order. */
  jsonArrayAgg(d: DialectName, value: string, orderBy?: string): string {
    const order = orderBy ? ` order by ${orderBy}` : '';
    return d === 'postgres' ? `coalesce(json_agg(${value}${order})::text, '[]')` : `json_group_array(${value}${order})`;
  },
  /**
   * A FROM item: the elements of the JSON array at `path` of `doc` (whole document: null
   * path), as `alias.value`: JSON (an object's fields read with jsonValue) or, with `texts`,
   * scalars as text (strings unquoted), as SQLite's json_each answers both.
   */
  jsonArrayItems(d: DialectName, doc: string, path: string | null, alias: string, texts = false): string {
    if (d === 'sqlite') return `json_each(${doc}${path ? `, '${path}'` : ''}) ${alias}`;
    const array = path ? `${doc}::jsonb #> ${pgPath(path)}` : `${doc}::jsonb`;
    // Not an array (missing, null, an object): no rows, where jsonb_array_elements would fail.
    const guarded = `case when jsonb_typeof(${array}) = 'array' then ${array} else '[]'::jsonb end`;
    return `${texts ? 'jsonb_array_elements_text' : 'jsonb_array_elements'}(${guarded}) ${alias}(value)`;
  },
  /** The scalar function answering the largest of its arguments (SQLite's many-argument max). */
  greatest(d: DialectName): string {
    return d === 'postgres' ? 'greatest' : 'max';
  },
  /** A FROM item: the values of the JSON object `doc` as `alias.value`, text (an array or object as its JSON). */
  jsonObjectValues(d: DialectName, doc: string, alias: string): string {
    if (d === 'sqlite') return `json_each(${doc}) ${alias}`;
    return `jsonb_each_text(case when jsonb_typeof(${doc}::jsonb) = 'object' then ${doc}::jsonb else '{}'::jsonb end) ${alias}`;
  },
};

/**
 * What the translated schema and the shared statements need of a PostgreSQL database, made
 * (idempotently) before the server applies pending migrations: the collation the schema
 * names, and SQLite's scalar functions the statements use that PostgreSQL spells
 * differently, as SQL functions the planner inlines. Something added here later comes with
 * a migration too (a database with nothing pending does not run it).
 */
export const POSTGRES_PRELUDE = [
  // SQLite's NOCASE: equality and uniqueness ignoring case (ICU, secondary strength).
  `create collation if not exists nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false)`,
  // instr(haystack, needle): the 1-based position, 0 when absent (the listings' text search).
  `create or replace function instr(text, text) returns integer language sql immutable parallel safe return strpos($1, $2)`,
];

const TABLE_DEFINITION = /^\s*(create\s+table|alter\s+table\s+\S+\s+add\s+column)\b/i;

/** A raw statement and the raw pieces inside it (`sql.raw` column lists). */
function translateRaw(node: RawNode, tableDefinition: boolean): RawNode {
  return {
    ...node,
    sqlFragments: node.sqlFragments.map((f) => translateDdl(f, tableDefinition)),
    parameters: node.parameters.map((p) => (p.kind === 'RawNode' ? translateRaw(p as RawNode, tableDefinition) : p)),
  };
}

/**
 * Applies translateDdl to the raw statements (`sql` templates) a migration runs on
 * PostgreSQL; queries made with the builder are compiled for PostgreSQL by kysely already.
 */
export class DdlTranslation implements KyselyPlugin {
  transformQuery(args: { node: RootOperationNode }): RootOperationNode {
    if (args.node.kind === 'CreateTableNode') {
      // The builder's `.modifyEnd(sql\`strict\`)`: SQLite's table option, nothing on PostgreSQL.
      const endModifiers = args.node.endModifiers?.filter(
        (m) => !(m.kind === 'RawNode' && /^\s*(strict|without\s+rowid)\s*$/i.test((m as RawNode).sqlFragments.join(''))),
      );
      return { ...args.node, endModifiers };
    }
    const node = args.node as unknown as RawNode;
    if (node.kind !== 'RawNode') return args.node;
    return translateRaw(node, TABLE_DEFINITION.test(node.sqlFragments[0] ?? '')) as unknown as RootOperationNode;
  }

  async transformResult(args: { result: QueryResult<UnknownRow> }): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}
