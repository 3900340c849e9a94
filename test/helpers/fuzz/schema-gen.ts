import { REFUSED, WORST_ALLOWED } from './recurrence.js';
import { stringFromPattern } from './regex-gen.js';
import type { Rng } from './rng.js';

/**
 * Values from the OpenAPI document's JSON Schemas: valid ones (so requests reach handler
 * logic) and hostile ones (types, sizes, depth, unicode, prototype keys...). Seeded: the
 * same Rng state gives the same values.
 */

export type Schema = Record<string, any> | boolean;

export interface GenContext {
  rng: Rng;
  /** The whole document, for $ref. */
  doc: any;
  /** A known id for a field or parameter of this name (`screenId`, `id` of `/playlists/{id}`...). */
  idFor(name: string): string | undefined;
  /** A known value for a string field of this name (`action`, `code`, backup `name`...). */
  stringFor(name: string): string | undefined;
}

/** A piece of JSON text put into a body as is (nesting too deep for JSON.stringify, odd numbers). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON text of a value that may hold RawJson parts. */
export function toJsonText(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_k, v) => {
    if (v instanceof RawJson) {
      raws.push(v.text);
      return `\u0000raw${raws.length - 1}\u0000`;
    }
    return v;
  });
  if (text === undefined) return 'null';
  return raws.length ? text.replace(/"\\u0000raw(\d+)\\u0000"/g, (_m, i) => raws[Number(i)]!) : text;
}

export function deref(doc: any, schema: Schema | undefined): Schema {
  let s: Schema = schema ?? {};
  for (let i = 0; i < 20 && typeof s === 'object' && typeof s.$ref === 'string'; i++) {
    const parts = (s.$ref as string).replace(/^#\//, '').split('/');
    let target: any = doc;
    for (const p of parts) target = target?.[p.replace(/~1/g, '/').replace(/~0/g, '~')];
    s = target ?? {};
  }
  return s;
}

const TIME_ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Tokyo', 'Australia/Lord_Howe'];
const RRULES = [
  'FREQ=DAILY',
  'FREQ=WEEKLY;BYDAY=MO,WE,FR',
  'FREQ=DAILY;COUNT=5',
  'FREQ=MONTHLY;BYMONTHDAY=1',
  'FREQ=HOURLY;INTERVAL=6',
  // The worst rules allowed and ones that must be refused (issue 15).
  ...WORST_ALLOWED.map((w) => w.rrule),
  ...REFUSED,
];

function isoNear(rng: Rng): string {
  const dayMs = 86_400_000;
  return new Date(Date.now() + rng.int(-3, 30) * dayMs + rng.int(0, dayMs / 1000) * 1000).toISOString();
}

function word(rng: Rng, min: number, max: number): string {
  const n = rng.int(min, max);
  let s = '';
  for (let i = 0; i < n; i++) s += 'abcdefghijklmnopqrstuvwxyz0123456789 -'[rng.int(0, i === 0 || i === n - 1 ? 35 : 37)];
  return s;
}

function byName(name: string, ctx: GenContext): string | undefined {
  const known = ctx.stringFor(name);
  if (known !== undefined) return known;
  const { rng } = ctx;
  if (/timeZone$/i.test(name)) return rng.pick(TIME_ZONES);
  if (/^rrule$/i.test(name)) return rng.pick(RRULES);
  if (/password$/i.test(name)) return `Fuzz-pass-${rng.hex(12)}`;
  if (/url$/i.test(name)) return rng.pick(['https://example.com/', 'http://192.0.2.10/page', 'https://example.org/feed.xml']);
  return undefined;
}

function genString(s: Record<string, any>, name: string, ctx: GenContext): string {
  const { rng } = ctx;
  const min: number = s.minLength ?? 0;
  const max: number = Math.max(min, Math.min(s.maxLength ?? min + 24, min + 24));
  const fit = (v: string | undefined) => v !== undefined && v.length >= min && v.length <= (s.maxLength ?? Infinity) && (!s.pattern || safeTest(s.pattern, v));
  if (s.format === 'uuid') {
    const id = ctx.idFor(name);
    return id && rng.chance(0.9) ? id : rng.uuid();
  }
  const named = byName(name, ctx);
  if (fit(named)) return named!;
  if (s.format === 'date-time') return isoNear(rng);
  if (s.format === 'email') return `fuzz-${rng.hex(8)}@example.test`;
  if (s.format === 'uri' || s.format === 'url') return `https://example.com/${rng.hex(6)}`;
  if (s.pattern) {
    const made = stringFromPattern(s.pattern, rng);
    if (made !== null && made.length >= min && made.length <= (s.maxLength ?? Infinity)) return made;
  }
  return word(rng, Math.max(min, 1), Math.max(max, 1))
    .slice(0, s.maxLength ?? undefined)
    .padEnd(min, 'x');
}

function safeTest(pattern: string, v: string): boolean {
  try {
    return new RegExp(pattern).test(v);
  } catch {
    return true;
  }
}

function genNumber(s: Record<string, any>, integer: boolean, ctx: GenContext): number {
  const { rng } = ctx;
  let min: number = s.minimum ?? (typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + (integer ? 1 : 0.001) : rng.chance(0.2) ? -100 : 0);
  let max: number = s.maximum ?? (typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - (integer ? 1 : 0.001) : min + 1000);
  if (max - min > 10_000 && rng.chance(0.8)) max = min + rng.pick([1, 10, 100, 3600, 86_400_000].filter((d) => min + d <= max));
  if (integer) {
    min = Math.ceil(min);
    max = Math.floor(max);
    return rng.int(min, Math.max(min, max));
  }
  return rng.chance(0.5) ? Math.round(min + rng.next() * (max - min)) : min + rng.next() * (max - min);
}

function anyJson(ctx: GenContext, depth: number): unknown {
  const { rng } = ctx;
  const kind = rng.int(0, depth > 2 ? 3 : 5);
  if (kind === 0) return word(rng, 0, 12);
  if (kind === 1) return rng.int(-5, 1000);
  if (kind === 2) return rng.chance(0.5);
  if (kind === 3) return null;
  if (kind === 4) return [anyJson(ctx, depth + 1)];
  return { [word(rng, 1, 8)]: anyJson(ctx, depth + 1) };
}

/** A value the schema accepts (as far as this generator understands it). */
export function validValue(schema: Schema | undefined, ctx: GenContext, name = '', depth = 0): unknown {
  const { rng, doc } = ctx;
  const s = deref(doc, schema);
  if (s === true || s === false || Object.keys(s).length === 0) return anyJson(ctx, depth);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return rng.pick(s.enum);
  const branches = s.anyOf ?? s.oneOf;
  if (Array.isArray(branches)) {
    const nonNull = branches.filter((b: Schema) => (deref(doc, b) as any).type !== 'null');
    const pool = nonNull.length && rng.chance(0.85) ? nonNull : branches;
    return validValue(rng.pick(pool), ctx, name, depth + 1);
  }
  if (Array.isArray(s.allOf)) {
    const merged: Record<string, any> = { type: 'object', properties: {}, required: [] };
    for (const part of s.allOf) {
      const p = deref(doc, part) as Record<string, any>;
      Object.assign(merged.properties, p.properties ?? {});
      merged.required.push(...(p.required ?? []));
    }
    return validValue(merged, ctx, name, depth + 1);
  }
  let type = s.type;
  if (Array.isArray(type))
    type = type.filter((t: string) => t !== 'null').length && rng.chance(0.9) ? rng.pick(type.filter((t: string) => t !== 'null')) : rng.pick(type);
  if (!type) type = s.properties ? 'object' : s.items ? 'array' : undefined;
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return rng.chance(0.5);
    case 'integer':
      return genNumber(s, true, ctx);
    case 'number':
      return genNumber(s, false, ctx);
    case 'string':
      return genString(s, name, ctx);
    case 'array': {
      if (Array.isArray(s.prefixItems)) return s.prefixItems.map((p: Schema, i: number) => validValue(p, ctx, `${name}[${i}]`, depth + 1));
      const min = s.minItems ?? 0;
      const max = Math.min(s.maxItems ?? min + 3, min + (depth > 4 ? 0 : 3));
      const n = rng.int(min, Math.max(min, max));
      const itemName = name.endsWith('Ids') ? name.slice(0, -1) : name.endsWith('s') ? name.slice(0, -1) : name;
      const out: unknown[] = [];
      for (let i = 0; i < n; i++) out.push(validValue(s.items, ctx, itemName, depth + 1));
      return s.uniqueItems ? [...new Map(out.map((v) => [JSON.stringify(v), v])).values()] : out;
    }
    default: {
      const out: Record<string, unknown> = {};
      const required = new Set<string>(s.required ?? []);
      for (const [key, sub] of Object.entries<Schema>(s.properties ?? {})) {
        if (required.has(key) || (depth < 6 && rng.chance(0.6))) out[key] = validValue(sub, ctx, key, depth + 1);
      }
      const extra = s.additionalProperties;
      if (extra && typeof extra === 'object' && depth < 5) {
        const names = deref(doc, s.propertyNames) as Record<string, any>;
        const n = rng.int(0, 2);
        for (let i = 0; i < n; i++) {
          const key = Array.isArray(names?.enum)
            ? rng.pick(names.enum as string[])
            : names?.pattern
              ? (stringFromPattern(names.pattern, rng) ?? word(rng, 1, 8))
              : word(rng, 1, 10).replace(/ /g, '_');
          out[key] = validValue(extra, ctx, key, depth + 1);
        }
      }
      return out;
    }
  }
}

/** Nested `[[[...]]]` (or objects) `depth` deep, as raw JSON text (JSON.stringify would overflow). */
export function deepJson(depth: number, objects: boolean): RawJson {
  return new RawJson(objects ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : '['.repeat(depth) + ']'.repeat(depth));
}

/** One hostile JSON value. */
export function hostileValue(rng: Rng): unknown {
  return rng.pick<() => unknown>([
    () => '',
    () => ' ',
    () => 'x'.repeat(rng.pick([256, 5_000, 70_000, 300_000])),
    () => '\u0000\u0001\u001f',
    () => '\u202e\ud800\udfff\ud800 😀 \uffff\ufeff',
    () => 'Ω≈ç√∫˜µ≤≥÷ 田中さん 👩‍👩‍👧‍👦 مرحبا',
    () => '../../../../../etc/passwd',
    () => "'; drop table users; --",
    () => '%_\\%',
    () => '<script>alert(1)</script>',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, on purpose
    () => '${process.exit()}{{7*7}}',
    () => 'null',
    () => 'true',
    () => '0',
    () => '-1',
    () => 'NaN',
    () => '9999-12-31T23:59:59.999Z',
    () => '0000-01-01T00:00:00Z',
    () => '2024-02-30T25:61:00Z',
    () => '1970-01-01T00:00:00.000Z',
    () => '0190F5A2-7B3C-7DEF-8ABC-0123456789AB',
    () => '00000000-0000-0000-0000-000000000000',
    () => rng.uuid(),
    () => 'FREQ=SECONDLY',
    () => 'FREQ=MINUTELY;INTERVAL=1',
    () => 'FREQ=DAILY;BYHOUR=99',
    () => rng.pick(REFUSED),
    () => 'Not/A_Zone',
    () => 'http://127.0.0.1:1/',
    () => 'http://169.254.169.254/latest/meta-data/',
    () => 'file:///etc/passwd',
    () => 'javascript:alert(1)',
    () => 0,
    () => -1,
    () => 1.5,
    () => -0.000001,
    () => 2 ** 31,
    () => 2 ** 53 + 2,
    () => -(2 ** 63),
    () => 1e308,
    () => new RawJson('1e400'),
    () => new RawJson('-1e-400'),
    () => new RawJson('123456789012345678901234567890'),
    () => true,
    () => false,
    () => null,
    () => [],
    () => {},
    () => [null],
    () => [1, 'a', {}, []],
    () => Array.from({ length: rng.pick([1_000, 20_000]) }, (_, i) => i),
    () => Object.fromEntries(Array.from({ length: rng.pick([1_000, 20_000]) }, (_, i) => [`k${i}`, i])),
    () => deepJson(rng.pick([20, 65, 200, 1_000, 5_000, 50_000]), rng.chance(0.5)),
    () => new RawJson('{"__proto__":{"polluted":true,"role":"owner"}}'),
    () => new RawJson('{"constructor":{"prototype":{"polluted":true}}}'),
    () => ({ toString: 'x', valueOf: 1, hasOwnProperty: null }),
  ])();
}

/** Paths to every place inside a value (object keys and array indexes). */
function placesIn(value: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = [], depth = 0): (string | number)[][] {
  if (depth > 8) return out;
  if (Array.isArray(value)) value.slice(0, 20).forEach((v, i) => (out.push([...prefix, i]), placesIn(v, [...prefix, i], out, depth + 1)));
  else if (value && typeof value === 'object' && !(value instanceof RawJson)) {
    for (const [k, v] of Object.entries(value)) {
      out.push([...prefix, k]);
      placesIn(v, [...prefix, k], out, depth + 1);
    }
  }
  return out;
}

function setAt(root: any, path: (string | number)[], v: unknown, remove = false): void {
  let cur = root;
  for (const p of path.slice(0, -1)) cur = cur[p];
  const last = path[path.length - 1]!;
  if (remove) {
    if (Array.isArray(cur)) cur.splice(Number(last), 1);
    else delete cur[last];
  } else cur[last] = v;
}

/** A hostile variant of a valid body: a field broken, removed or added, or the whole body replaced. */
export function hostileBody(valid: unknown, rng: Rng): unknown {
  const copy = structuredClone(valid ?? {});
  const places = placesIn(copy);
  const how = rng.weighted<string>([
    [5, 'replace-field'],
    [2, 'remove-field'],
    [2, 'extra-field'],
    [2, 'replace-all'],
    [1, 'wrap'],
    [1, 'null-all-fields'],
  ]);
  if (how === 'replace-all' || (places.length === 0 && how !== 'extra-field')) return hostileValue(rng);
  if (how === 'wrap') return [copy];
  if (how === 'extra-field' && copy && typeof copy === 'object') {
    const key = rng.pick(['extra', '__proto__', 'constructor', 'id', 'revision', 'createdAt', 'x'.repeat(300)]);
    // Often a deeply nested extra field: accepted bodies are stored, and stored documents
    // are read back by later requests (a poisoned status document answers 500 forever).
    const value = rng.chance(0.35) ? deepJson(rng.pick([100, 1_000, 3_000]), rng.chance(0.5)) : hostileValue(rng);
    // An own key, even `__proto__` (assignment would set the prototype instead).
    Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
    return copy;
  }
  if (how === 'null-all-fields') {
    for (const p of places) if (p.length === 1) setAt(copy, p, null);
    return copy;
  }
  const place = rng.pick(places);
  if (how === 'remove-field') setAt(copy, place, undefined, true);
  else setAt(copy, place, hostileValue(rng));
  return copy;
}
