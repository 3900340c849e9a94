import { type Compilable, CompiledQuery, type QueryResult } from 'kysely';
import { type Db, runNow } from './database.js';
import { type DialectName, dialectOf, isPostgres } from './dialect.js';

const MARK = '\u0000placard-arg-';

/**
 * A kysely query built and compiled once, then run with new arguments: for the hot path
 * (heartbeats, device authentication), where building and compiling a query with kysely
 * costs more than SQLite running it (issue 24's profile: 17% of a heartbeat's time).
 *
 * `build` receives a marker in place of each argument; the first call compiles it and
 * records which parameter is which argument, later calls only bind. So the query's shape
 * must not depend on the arguments' values (no `in` list of varying length, no condition
 * chosen by a value): an argument that does not come out as one parameter is refused at
 * the first call, as is a marker that ended up in the SQL text.
 *
 * A read run on the database itself while no transaction is open skips kysely's executor
 * and its connection lock (`readNow`): the same rows, without a dozen promises per query.
 */
export function prepared<A extends unknown[], R>(build: (db: Db, ...args: A) => Compilable<R>): (db: Db, ...args: A) => Promise<QueryResult<R>> {
  type Compiled = { sql: string; slots: ({ arg: number } | { value: unknown })[] };
  // By dialect: a process that opens both (migrate-to) compiles each query for each.
  const compiledFor: Partial<Record<DialectName, Compiled>> = {};
  const compile = (db: Db) => {
    const arity = build.length - 1;
    const marks = Array.from({ length: arity }, (_, i) => `${MARK}${i}`);
    const query = build(db, ...(marks as A)).compile();
    const slots = query.parameters.map((p) => (typeof p === 'string' && p.startsWith(MARK) ? { arg: Number(p.slice(MARK.length)) } : { value: p }));
    const used = slots.flatMap((s) => ('arg' in s ? [s.arg] : []));
    if (query.sql.includes(MARK) || used.length !== arity || new Set(used).size !== arity) {
      throw new Error(`prepared: every argument must be exactly one parameter of the query (${query.sql.slice(0, 120)})`);
    }
    return { sql: query.sql, slots };
  };
  return (db, ...args) => {
    const dialect = dialectOf(db);
    const compiled = (compiledFor[dialect] ??= compile(db));
    return executeText<R>(
      db,
      compiled.sql,
      compiled.slots.map((s) => ('arg' in s ? args[s.arg] : s.value)),
    );
  };
}

/**
 * Runs an SQL text with its parameters: at once when that is the same as queueing it (a read
 * on the database outside any transaction, or any statement of a transaction holding the
 * connection: database.ts `runNow`), else queued for the connection through kysely.
 */
export function executeText<R>(db: Db, sql: string, parameters: unknown[]): Promise<QueryResult<R>> {
  let result: QueryResult<unknown> | undefined;
  try {
    result = runNow(db, sql, parameters);
  } catch (err) {
    return Promise.reject(err);
  }
  if (result) return Promise.resolve(result as QueryResult<R>);
  return db.executeQuery<R>(CompiledQuery.raw(isPostgres(db) ? numberedPlaceholders(sql) : sql, parameters));
}

const numbered = new Map<string, string>();

/**
 * An SQL text written with SQLite's `?` placeholders, with PostgreSQL's `$1, $2...` instead
 * (a text compiled by kysely for PostgreSQL has none and comes back as it is). Outside
 * string literals and quoted names; the texts are the code's own, so they are few: kept.
 */
export function numberedPlaceholders(text: string): string {
  let out = numbered.get(text);
  if (out === undefined) {
    let n = 0;
    out = text.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|\?/g, (m) => (m === '?' ? `$${++n}` : m));
    numbered.set(text, out);
  }
  return out;
}
