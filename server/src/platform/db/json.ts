import SQLite from 'better-sqlite3';
import { ApiError } from '../http/errors.js';
import { checkJsonValue } from '../json-limits.js';

/**
 * A statement of SQLite's own json_valid on a private in-memory handle: the same SQLite build
 * the database file runs (better-sqlite3's bundled one), so what passes here its JSON
 * functions read there, and the check needs no connection (it runs inside transactions too).
 */
let jsonValid: SQLite.Statement<[string], number> | null = null;
function sqliteReads(text: string): boolean {
  jsonValid ??= new SQLite(':memory:').prepare<[string], number>('select json_valid(?)').pluck();
  return jsonValid.get(text) === 1;
}

const UNREADABLE_ESCAPE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/;

/**
 * The JSON text to store for a document a client sent (a heartbeat's status, command params
 * and results, settings, layouts...): every write of such a document goes through here, so
 * the database never holds one its JSON functions (json_extract, json_each) cannot read,
 * which would break every later query over the row. Refused with 400 `validation_failed`
 * naming `what`: deeper than MAX_JSON_DEPTH or with more than MAX_JSON_ENTRIES entries
 * (checked without recursion, before JSON.stringify could overflow the stack), not
 * serialisable, or not read by SQLite's json_valid.
 */
export function storableJson(value: unknown, what: string): string {
  const problem = checkJsonValue(value, what);
  if (problem) throw new ApiError('validation_failed', `${problem.message}; it was not stored`);
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new ApiError('validation_failed', `${what} cannot be written as JSON (${(err as Error).message}); it was not stored`);
  }
  if (typeof text !== 'string') throw new ApiError('validation_failed', `${what} is not a JSON value; it was not stored`);
  if (!sqliteReads(text)) throw new ApiError('validation_failed', `${what} is JSON the database cannot read; it was not stored`);
  // PostgreSQL's jsonb refuses \u0000 and a lone surrogate's escape (JSON.stringify escapes only
  // those as \uXXXX, a pair stays as it is): refused on both databases, so a document stored on
  // one is readable on the other (an odd run of backslashes: an escape, not an escaped backslash).
  if (UNREADABLE_ESCAPE.test(text)) throw new ApiError('validation_failed', `${what} holds a NUL character or a broken UTF-16 surrogate; it was not stored`);
  return text;
}
