import type { ServerSecrets } from '../../platform/security/secrets.js';

/**
 * Secrets inside a source's config (a provider's `secretPaths`: API key headers, passwords,
 * tokens) are sealed at rest with the server's key, like TOTP seeds: the stored config holds
 * `{"$sealed": "v1...."}` where the value was. Answers show `{"set": true}` instead; a client
 * that sends `{"set": true}` back keeps the stored value.
 */
const PURPOSE = 'data-source-secret';

type Json = unknown;
type Path = string[];

export interface SealedValue {
  $sealed: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
export const isSealed = (v: unknown): v is SealedValue => isObject(v) && typeof v.$sealed === 'string' && Object.keys(v).length === 1;
/** `{"set": true}`: "keep what is stored". */
export const isKeepMarker = (v: unknown): boolean => isObject(v) && v.set === true && Object.keys(v).length === 1;

/** The concrete paths of `value` that match the patterns (dotted keys, `*` for every key of a map), where a value is present. */
export function secretLeaves(value: Json, patterns: readonly string[]): Path[] {
  const out: Path[] = [];
  const walk = (node: unknown, rest: string[], at: Path) => {
    if (rest.length === 0) {
      if (node !== undefined && node !== null) out.push(at);
      return;
    }
    if (!isObject(node)) return;
    const [head, ...tail] = rest as [string, ...string[]];
    const keys = head === '*' ? Object.keys(node) : Object.hasOwn(node, head) ? [head] : [];
    for (const key of keys) walk(node[key], tail, [...at, key]);
  };
  for (const pattern of patterns) walk(value, pattern.split('.'), []);
  return out;
}

function get(value: Json, path: Path): unknown {
  let node = value;
  for (const key of path) {
    if (!isObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

/** A deep copy of `value` (JSON data) with `fn` applied at each of `paths`. */
function mapAt(value: Json, paths: readonly Path[], fn: (leaf: unknown, path: Path) => unknown): Json {
  const copy = structuredClone(value) as Json;
  for (const path of paths) {
    let node = copy as Record<string, unknown>;
    for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
    const last = path[path.length - 1]!;
    node[last] = fn(node[last], path);
  }
  return copy;
}

/** The config as stored: every secret (a validated config's strings) sealed. */
export function sealSecrets(secrets: ServerSecrets, config: Json, patterns: readonly string[]): Json {
  return mapAt(config, secretLeaves(config, patterns), (leaf) => ({ $sealed: secrets.seal(PURPOSE, String(leaf)) }));
}

/**
 * The config as answered: every sealed value, wherever it is (the provider's secret paths
 * put them there; walking the whole tree means none can slip out), is `{set: true}`.
 */
export function maskSecrets(stored: Json): Json {
  const walk = (node: unknown, depth: number): unknown => {
    if (isSealed(node)) return { set: true };
    if (depth > 64) return null;
    if (Array.isArray(node)) return node.map((v) => walk(v, depth + 1));
    if (isObject(node)) return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, depth + 1)]));
    return node;
  };
  return walk(stored, 0);
}

/** A sealed secret that this server's key does not open (a data directory restored with another secret.key). */
export class SecretUnreadableError extends Error {
  constructor(readonly path: string[]) {
    super(`The secret at ${path.join('.')} cannot be read with this server’s key; enter it again`);
    this.name = 'SecretUnreadableError';
  }
}

function open(secrets: ServerSecrets, sealed: SealedValue, path: string[]): string {
  try {
    return secrets.open(PURPOSE, sealed.$sealed);
  } catch {
    throw new SecretUnreadableError(path);
  }
}

/** The config a fetch uses: every secret opened (SecretUnreadableError when one cannot be). */
export function openSecrets(secrets: ServerSecrets, stored: Json, patterns: readonly string[]): Json {
  return mapAt(stored, secretLeaves(stored, patterns), (leaf, path) => (isSealed(leaf) ? open(secrets, leaf, path) : leaf));
}

export interface KeptSecrets {
  /** The config with each `{set: true}` replaced by the stored secret (in plain text, to validate and seal again). */
  config: Json;
  /** Paths where `{set: true}` was sent but nothing is stored. */
  missing: Path[];
  /** Paths whose stored secret was kept. */
  kept: Path[];
}

/** Resolves `{set: true}` markers of an incoming config against the stored (sealed) one. */
export function keepSecrets(secrets: ServerSecrets, incoming: Json, stored: Json | null, patterns: readonly string[]): KeptSecrets {
  const missing: Path[] = [];
  const kept: Path[] = [];
  const markers = secretLeaves(incoming, patterns).filter((p) => isKeepMarker(get(incoming, p)));
  const config = mapAt(incoming, markers, (leaf, path) => {
    const old = stored === null ? undefined : get(stored, path);
    if (!isSealed(old)) {
      missing.push(path);
      return leaf;
    }
    kept.push(path);
    return open(secrets, old, path);
  });
  return { config, missing, kept };
}
