import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { checkJsonValue, FORBIDDEN_JSON_KEYS, scanJsonText, type JsonLimitProblem } from '../json-limits.js';
import { ApiError } from './errors.js';

/** Why a body could not be read: 413 too large, 415 an unknown content coding, 400 anything else. */
export class BodyReadError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
    this.name = 'BodyReadError';
  }
}

/**
 * The text of a request body, read as koa-body's text parser (co-body with raw-body and
 * inflation) read it, without its per-request type checks and option copies: the content
 * coding identity, gzip, deflate or br (anything else 415, the header's value as sent); a
 * Content-Length over `limitBytes` refused before anything is read, and more than
 * `limitBytes` (decoded) as they arrive (413); a body shorter or longer than its
 * Content-Length 400; the bytes decoded as UTF-8 whatever the charset, a leading BOM dropped.
 * On a refusal the stream is left paused, unread. A request closed before its end never settles
 * (as with raw-body; the connection is gone).
 */
export function readBodyText(req: IncomingMessage, limitBytes: number): Promise<string> {
  const coding = req.headers['content-encoding'] || 'identity';
  let length: number | null = null;
  let stream: Readable = req;
  if (coding === 'identity') {
    const declared = req.headers['content-length'];
    if (declared) length = Number(declared) | 0; // as co-body's ~~len
  } else if (coding === 'gzip' || coding === 'deflate') {
    stream = req.pipe(zlib.createUnzip());
  } else if (coding === 'br') {
    stream = req.pipe(zlib.createBrotliDecompress());
  } else {
    return Promise.reject(new BodyReadError(415, `Unsupported Content-Encoding: ${coding}`));
  }
  if (length !== null && length > limitBytes) {
    halt(stream);
    return Promise.reject(new BodyReadError(413, 'request entity too large'));
  }
  if (!stream.readable) return Promise.reject(new BodyReadError(400, 'stream is not readable'));
  return new Promise<string>((resolve, reject) => new BodyText(stream, length, limitBytes, resolve, reject));
}

function halt(stream: Readable): void {
  stream.unpipe();
  stream.pause();
}

/** One body being read (a class, not closures: one object and its bound listeners per body). */
class BodyText {
  private readonly chunks: Buffer[] = [];
  private received = 0;
  private complete = false;
  private readonly onData = this.data.bind(this);
  private readonly onEnd = this.end.bind(this);
  private readonly onError = this.error.bind(this);
  private readonly onAborted = this.aborted.bind(this);
  private readonly onClose = this.cleanup.bind(this);

  constructor(
    private readonly stream: Readable,
    private readonly length: number | null,
    private readonly limitBytes: number,
    private readonly resolve: (text: string) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    stream.on('aborted', this.onAborted);
    stream.on('close', this.onClose);
    stream.on('data', this.onData);
    stream.on('end', this.onEnd);
    stream.on('error', this.onError);
  }

  private cleanup(): void {
    this.stream.off('aborted', this.onAborted);
    this.stream.off('close', this.onClose);
    this.stream.off('data', this.onData);
    this.stream.off('end', this.onEnd);
    this.stream.off('error', this.onError);
  }

  private fail(err: unknown): void {
    this.complete = true;
    this.cleanup();
    halt(this.stream);
    this.reject(err);
  }

  private data(chunk: Buffer): void {
    if (this.complete) return;
    this.received += chunk.length;
    if (this.received > this.limitBytes) this.fail(new BodyReadError(413, 'request entity too large'));
    else this.chunks.push(chunk);
  }

  private end(): void {
    if (this.complete) return;
    if (this.length !== null && this.received !== this.length) {
      this.fail(new BodyReadError(400, 'request size did not match content length'));
      return;
    }
    this.complete = true;
    this.cleanup();
    const bytes = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.received);
    const text = bytes.toString('utf8');
    this.resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  }

  private error(err: unknown): void {
    if (!this.complete) this.fail(err);
  }

  private aborted(): void {
    if (!this.complete) this.fail(new BodyReadError(400, 'request aborted'));
  }
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
