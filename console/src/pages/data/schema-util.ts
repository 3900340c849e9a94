import { ApiError } from '../../api';
import { COLUMN_TYPE_WORDS, type Json } from './model';

/** The schema form's vocabulary: the JSON Schema shapes it reads, labels in words, secret paths, the config to send. */

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  enum?: Json[];
  const?: Json;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  default?: Json;
  description?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  format?: string;
  maxItems?: number;
}

export type Path = (string | number)[];
export type Change = (value: Json | undefined) => void;

export interface Ctx {
  secretPaths: string[];
  error: unknown;
  disabled: boolean;
  /** Where the body holds the form's value, for the server's issues (default `config`; a widget's `settings`). */
  root?: string;
  /** A bound data source's column names: a property naming a field (`field`, `…Field`, `groupBy`) picks one of them. */
  fieldChoices?: string[];
}

/** Labels for the catalog's property names (the rest are the name in words). */
export const LABELS: Record<string, string> = {
  url: 'Address (URL)',
  rowsPath: 'Rows (JSONPath)',
  maxItems: 'Items kept at most',
  maxRows: 'Rows kept at most',
  maxOccurrences: 'Events kept at most',
  hasHeader: 'The first row names the columns',
  decimalSeparator: 'Decimal mark',
  daysAhead: 'Days ahead',
  daysBehind: 'Days back',
  headers: 'Request headers',
  auth: 'Sign-in',
  username: 'User name',
  path: 'Path (JSONPath)',
  css: 'CSS',
  fontSizePx: 'Font size (px)',
  durationMs: 'Play time in a playlist (ms)',
  lang: 'Language',
  pageMs: 'Time per page (ms)',
  intervalMs: 'Time per image (ms)',
  speedPxPerSec: 'Speed (pixels per second)',
  groupBy: 'Group by',
};
export const ENUM_WORDS: Record<string, string> = {
  auto: 'Detect',
  ',': 'Comma (,)',
  ';': 'Semicolon (;)',
  '\t': 'Tab',
  '|': 'Pipe (|)',
  '.': 'Point (1.5)',
  basic: 'User name and password',
  bearer: 'Token (Bearer)',
  'utf-8': 'UTF-8',
  'utf-16le': 'UTF-16 (little-endian)',
  'utf-16be': 'UTF-16 (big-endian)',
  'windows-1252': 'Windows-1252 (Latin-1)',
  ...COLUMN_TYPE_WORDS,
};

export const words = (name: string) => {
  const s = name.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return s.charAt(0).toUpperCase() + s.slice(1);
};
export const labelOf = (name: string) => LABELS[name] ?? words(name);
export const enumWord = (v: Json) => (typeof v === 'string' ? (ENUM_WORDS[v] ?? v) : String(v));
export const typeOf = (s: JsonSchema) => (Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type);
export const isObject = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isKept = (v: unknown) => isObject(v) && v.set === true;

export function isSecret(ctx: Ctx, path: Path): boolean {
  return ctx.secretPaths.some((pattern) => {
    const parts = pattern.split('.');
    return parts.length === path.length && parts.every((p, i) => p === '*' || p === String(path[i]));
  });
}

export function errorAt(ctx: Ctx, path: Path): string | undefined {
  return ctx.error instanceof ApiError ? ctx.error.messageAt([ctx.root ?? 'config', ...path]) : undefined;
}

/** A string property that names a column of the bound data (widget settings: `column`, `imageColumn`, `groupBy`, `fields.title`, `columns[i].name`). */
export function namesField(path: Path): boolean {
  const [last, parent, grand] = [path.at(-1), path.at(-2), path.at(-3)].map(String);
  return /^(field|column|groupBy)$|(Field|Column)$/.test(last!) || parent === 'fields' || (grand === 'columns' && last === 'name');
}

/** `obj` with `key` set, or removed when `value` is undefined. */
export function withKey(obj: Record<string, Json> | undefined, key: string, value: Json | undefined): Record<string, Json> {
  const next = { ...(obj ?? {}) };
  if (value === undefined) delete next[key];
  else next[key] = value;
  return next;
}

/** The config to send: empty text, lists and maps left out (the provider's defaults apply). */
export function cleanConfig(value: Json | undefined): Json | undefined {
  if (value === '' || value === undefined) return undefined;
  if (Array.isArray(value)) {
    const items = value.map(cleanConfig).filter((v) => v !== undefined) as Json[];
    return items.length ? items : undefined;
  }
  if (isObject(value)) {
    if (isKept(value)) return value;
    const out: Record<string, Json> = {};
    for (const [k, v] of Object.entries(value)) {
      const c = cleanConfig(v);
      if (c !== undefined) out[k] = c;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return value;
}

/** Paths that hold secrets, shown in a disclosure of their own ("Credentials"). */
export const holdsSecret = (ctx: Ctx, name: string) => ctx.secretPaths.some((p) => p.split('.')[0] === name);
