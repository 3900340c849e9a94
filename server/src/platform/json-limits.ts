/**
 * The bounds of every JSON document the API takes in and keeps (docs/api-conventions.md,
 * "JSON bodies"). One limit for the whole API: the body parser refuses a body beyond it
 * (platform/http/json-body.ts), and storableJson (platform/db/json.ts) refuses to store a
 * document beyond it. Both checks are loops over an explicit stack or over the text, never
 * recursion, so no input can overflow the call stack while being checked.
 */

/** Deepest nesting of objects and arrays: `{"a":{"b":1}}` is 2 deep. */
export const MAX_JSON_DEPTH = 64;

/**
 * Most object members and array elements in one document, counted together at every level.
 * A settings export of a large installation (thousands of locations and groups) holds tens
 * of thousands; this bounds the work of one body to about a hundred thousand values.
 */
export const MAX_JSON_ENTRIES = 100_000;

/** Keys refused anywhere in a body: assigning them can replace an object's prototype. */
export const FORBIDDEN_JSON_KEYS: readonly string[] = ['__proto__'];

export type JsonLimitProblem =
  | { limit: 'depth'; message: string }
  | { limit: 'entries'; message: string }
  | { limit: 'key'; message: string; path: (string | number)[] };

export const depthMessage = (what: string) => `${what} nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels, the limit for JSON documents`;
export const entriesMessage = (what: string) => `${what} holds more than ${MAX_JSON_ENTRIES} object members and array elements, the limit for JSON documents`;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * Checks JSON text against MAX_JSON_DEPTH and MAX_JSON_ENTRIES before it is parsed, in one
 * pass over the characters (strings skipped, escapes included), so a hostile body is refused
 * before JSON.parse builds anything. Text that is not JSON may pass or fail here: JSON.parse
 * has the last word on syntax.
 */
export function scanJsonText(text: string, what = 'The body'): JsonLimitProblem | null {
  let depth = 0;
  let entries = 0;
  // After `{` or `[`: the next value (or key) is the container's first entry, unless it closes at once.
  let opened = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) continue;
    if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      opened = false;
      continue;
    }
    if (c === COMMA) {
      if (++entries > MAX_JSON_ENTRIES) return { limit: 'entries', message: entriesMessage(what) };
      continue;
    }
    if (opened) {
      if (++entries > MAX_JSON_ENTRIES) return { limit: 'entries', message: entriesMessage(what) };
      opened = false;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > MAX_JSON_DEPTH) return { limit: 'depth', message: depthMessage(what) };
      opened = true;
    } else if (c === QUOTE) {
      // Skip the string: a backslash escapes the next character (\" and \\ included).
      for (i++; i < n; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    }
  }
  return null;
}

/**
 * Walks a parsed value with an explicit stack: the first forbidden key (with its path), or
 * a depth or entry count beyond the limits. Used where a value, not text, is at hand.
 */
export function checkJsonValue(value: unknown, what = 'The document'): JsonLimitProblem | null {
  if (value === null || typeof value !== 'object') return null;
  interface Frame {
    node: object;
    depth: number;
    key: string | number | null;
    parent: Frame | null;
  }
  const pathOf = (frame: Frame | null, last: string): (string | number)[] => {
    const out: (string | number)[] = [last];
    for (let f = frame; f && f.key !== null; f = f.parent) out.unshift(f.key);
    return out;
  };
  const stack: Frame[] = [{ node: value, depth: 1, key: null, parent: null }];
  let entries = 0;
  while (stack.length) {
    const frame = stack.pop()!;
    if (frame.depth > MAX_JSON_DEPTH) return { limit: 'depth', message: depthMessage(what) };
    const isArray = Array.isArray(frame.node);
    const keys = Object.keys(frame.node);
    entries += keys.length;
    if (entries > MAX_JSON_ENTRIES) return { limit: 'entries', message: entriesMessage(what) };
    for (const key of keys) {
      if (!isArray && FORBIDDEN_JSON_KEYS.includes(key)) {
        const path = pathOf(frame, key);
        return { limit: 'key', path, message: forbiddenKeyMessage(what, path) };
      }
      const child = (frame.node as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object') stack.push({ node: child, depth: frame.depth + 1, key: isArray ? Number(key) : key, parent: frame });
    }
  }
  return null;
}

export function forbiddenKeyMessage(what: string, path: (string | number)[]): string {
  const key = String(path[path.length - 1]);
  const where = path.length > 1 ? ` (at ${path.join('.')})` : '';
  return `${what} holds the key "${key}"${where}, which the API refuses: assigning it can replace an object's prototype. The JSON itself is valid; rename or drop the key`;
}
