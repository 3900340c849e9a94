import type { IncomingMessage } from 'node:http';
import inflate from 'inflation';
import getRawBody from 'raw-body';
import { checkJsonValue, FORBIDDEN_JSON_KEYS, scanJsonText, type JsonLimitProblem } from '../json-limits.js';
import { ApiError } from './errors.js';

/**
 * The text of a request body, read as koa-body's text parser reads it (co-body: inflation for
 * the content coding, raw-body for the limits), without koa-body's per-request type checks
 * and option copies: identity, gzip, deflate or br (anything else 415); a Content-Length over
 * `limitBytes` refused before anything is read, more than `limitBytes` (decoded) as they arrive
 * (413); a body shorter or longer than its Content-Length 400; the bytes decoded as UTF-8
 * whatever the charset, a leading BOM dropped. Errors carry their `status`.
 */
export async function readBodyText(req: IncomingMessage, limitBytes: number): Promise<string> {
  const coding = req.headers['content-encoding'] || 'identity';
  const declared = coding === 'identity' ? req.headers['content-length'] : undefined;
  const bytes = await getRawBody(inflate(req), { length: declared ? Number(declared) | 0 : undefined, limit: limitBytes });
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** The top level of a body: an object or an array (strict JSON bodies), after optional whitespace. */
const STRICT_START = /^[\x20\x09\x0a\x0d]*[[{]/;

function refused(problem: JsonLimitProblem): ApiError {
  const code = problem.limit === 'key' ? 'forbidden_key' : problem.limit === 'depth' ? 'too_deep' : 'too_many_entries';
  const path = problem.limit === 'key' ? problem.path : [];
  return new ApiError('validation_failed', problem.message, { details: { issues: [{ location: 'body', path, message: problem.message, code }] } });
}

/**
 * Parses the text of a JSON request body, for every route of the API:
 * - the nesting depth and the count of members and elements are checked on the text first
 *   (MAX_JSON_DEPTH, MAX_JSON_ENTRIES): beyond them, 400 `validation_failed` naming the limit,
 *   before anything is built;
 * - text that is not JSON, or a top level that is not an object or array, is 400 `malformed_json`;
 * - a `__proto__` key anywhere is 400 `validation_failed` naming the key and where it is:
 *   the JSON is valid, the API refuses the key.
 * An empty body is `{}`.
 */
export function parseJsonBody(text: string): unknown {
  if (text === '') return {};
  const tooBig = scanJsonText(text);
  if (tooBig) throw refused(tooBig);
  if (!STRICT_START.test(text)) {
    let valid = true;
    try {
      JSON.parse(text);
    } catch {
      valid = false;
    }
    throw new ApiError(
      'malformed_json',
      valid ? 'The body must be a JSON object or array, not a bare string, number, boolean or null' : 'The body is not valid JSON',
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ApiError('malformed_json', `The body is not valid JSON: ${(err as Error).message}`);
  }
  // The text was checked for depth and entries; the walk of the value adds the forbidden
  // keys, which a text holding none of them literally and no \u escape cannot have.
  if (!FORBIDDEN_JSON_KEYS.some((key) => text.includes(key)) && !text.includes('\\u')) return value;
  const problem = checkJsonValue(value, 'The body');
  if (problem) throw refused(problem);
  return value;
}
