import type { components } from '../../api-schema';

/**
 * Forms of manual tables (issue 18) on the console side: the server's shapes and a mirror of
 * server/src/modules/data-sources/fields.ts `validateValues`, so the entry form says what is
 * wrong as people type (the server checks again; its 400 issues are shown per field too).
 */

type Schemas = components['schemas'];
export type FormDto = Schemas['Form'];
export type Field = FormDto['draft']['fields'][number];
export type FieldType = Field['type'];
export type Value = string | number | boolean | string[] | null;
export type Values = Record<string, Value>;

export const FIELD_TYPE_WORDS: Record<FieldType, string> = {
  text: 'Text',
  longText: 'Long text',
  number: 'Number',
  money: 'Money',
  boolean: 'Yes / no',
  choice: 'Choice',
  multiChoice: 'Several choices',
  date: 'Date',
  time: 'Time',
  datetime: 'Date and time',
  url: 'Link',
  image: 'Image address',
  colour: 'Colour',
};
export const FIELD_TYPES = Object.keys(FIELD_TYPE_WORDS) as FieldType[];

const TEXT_MAX = 1000;
const LONG_TEXT_MAX = 65_536;
const URL_MAX = 2048;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIME = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const COLOUR = /^#[0-9a-fA-F]{6}$/;
export const KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

const isDate = (v: string) => DATE.test(v) && !Number.isNaN(Date.parse(v)) && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v);
const isDatetime = (v: string) => DATETIME.test(v) && !Number.isNaN(Date.parse(v));
const isHttp = (v: string) => {
  try {
    return /^https?:$/.test(new URL(v).protocol);
  } catch {
    return false;
  }
};
const seconds = (time: string) => {
  const [h, m, s] = time.split(':').map(Number);
  return h! * 3600 + m! * 60 + (s ?? 0);
};
/** A pattern the browser cannot compile is the builder's problem, not the value's. */
function matches(pattern: string, value: string): boolean {
  try {
    return new RegExp(`^(?:${pattern})$`, 'u').test(value);
  } catch {
    return true;
  }
}

/** Why a non-empty value does not fit the field, or null (the server's words, fields.ts). */
function valueProblem(field: Field, value: unknown): string | null {
  switch (field.type) {
    case 'text':
    case 'longText': {
      if (typeof value !== 'string') return 'must be text';
      const max = field.type === 'text' ? TEXT_MAX : LONG_TEXT_MAX;
      const { minLength, maxLength } = field.validation;
      const len = [...value].length;
      if (len > Math.min(max, maxLength ?? max)) return `must be at most ${Math.min(max, maxLength ?? max)} characters`;
      if (minLength !== undefined && len < minLength) return `must be at least ${minLength} characters`;
      if (field.type === 'text' && field.validation.pattern && !matches(field.validation.pattern, value))
        return `must match the pattern ${field.validation.pattern}`;
      return null;
    }
    case 'number':
    case 'money': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      const { min, max } = field.validation;
      if (min !== undefined && value < min) return `must be at least ${min}`;
      if (max !== undefined && value > max) return `must be at most ${max}`;
      if (Number(value.toFixed(field.precision)) !== value)
        return field.precision === 0 ? 'must be a whole number' : `may have at most ${field.precision} digits after the decimal point`;
      return null;
    }
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'choice':
      return typeof value === 'string' && field.options.includes(value) ? null : `must be one of: ${field.options.join(', ')}`;
    case 'multiChoice': {
      if (!Array.isArray(value)) return 'must be a list of options';
      const wrong = value.filter((o) => !field.options.includes(o));
      if (wrong.length) return `${wrong.map((o) => `"${String(o).slice(0, 50)}"`).join(', ')} not among the options (${field.options.join(', ')})`;
      const { min, max } = field.validation;
      if (min !== undefined && value.length < min) return `must choose at least ${min}`;
      if (max !== undefined && value.length > max) return `must choose at most ${max}`;
      return null;
    }
    case 'date':
    case 'time':
    case 'datetime': {
      const ok = typeof value === 'string' && (field.type === 'date' ? isDate(value) : field.type === 'time' ? TIME.test(value) : isDatetime(value));
      if (!ok)
        return `must be ${field.type === 'date' ? 'a date (YYYY-MM-DD)' : field.type === 'time' ? 'a time (HH:MM or HH:MM:SS)' : 'an ISO 8601 date and time with Z or an offset'}`;
      const at = (s: string) => (field.type === 'time' ? seconds(s) : field.type === 'datetime' ? Date.parse(s) : s);
      const { min, max } = field.validation;
      if (min !== undefined && at(value) < at(min)) return `must be ${min} or later`;
      if (max !== undefined && at(value) > at(max)) return `must be ${max} or earlier`;
      return null;
    }
    case 'url':
    case 'image': {
      if (typeof value !== 'string' || value.length > URL_MAX || !isHttp(value)) return 'must be an http(s) address';
      if (field.type === 'url') {
        const { minLength, maxLength } = field.validation;
        if (maxLength !== undefined && value.length > maxLength) return `must be at most ${maxLength} characters`;
        if (minLength !== undefined && value.length < minLength) return `must be at least ${minLength} characters`;
      }
      return null;
    }
    case 'colour':
      return typeof value === 'string' && COLOUR.test(value) ? null : 'must be a colour as #RRGGBB';
  }
}

const empty = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);

/** Per field key, why its value does not fit (required, type, bounds, pattern, options); empty: it fits. */
export function problemsOf(fields: readonly Field[], values: Values): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of fields) {
    const value = values[field.key];
    if (empty(value) || (typeof value === 'string' && value.trim() === '' && field.type !== 'boolean')) {
      if (field.required) out[field.key] = 'is required';
      continue;
    }
    const why = valueProblem(field, value);
    if (why) out[field.key] = why;
  }
  return out;
}

/** The values a new entry starts with: each field's default. */
export const initialValues = (fields: readonly Field[]): Values => Object.fromEntries(fields.map((f) => [f.key, (f.default ?? null) as Value]));

/** A key from a label: "Price (EUR)" -> "priceEur"; unique among `taken`. */
export function keyFromLabel(label: string, taken: ReadonlySet<string>): string {
  const words = label
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9 ]+/g, ' ')
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  let key = words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0]!.toUpperCase() + w.slice(1).toLowerCase())).join('');
  if (!/^[A-Za-z]/.test(key)) key = `field${key}`;
  key = key.slice(0, 60);
  let n = 2;
  let out = key;
  while (taken.has(out)) out = `${key}${n++}`;
  return out;
}

/** A new field of `type` with the settings the server would default. */
export function newField(type: FieldType, label: string, key: string): Field {
  const base = { key, label, help: '', required: false, showOnScreens: true, default: null };
  switch (type) {
    case 'text':
    case 'longText':
    case 'url':
    case 'date':
    case 'time':
    case 'datetime':
      return { ...base, type, validation: {} } as Field;
    case 'number':
      return { ...base, type, unit: '', precision: 0, validation: {} };
    case 'money':
      return { ...base, type, currency: 'EUR', precision: 2, validation: {} };
    case 'choice':
      return { ...base, type, options: ['First option'] };
    case 'multiChoice':
      return { ...base, type, options: ['First option'], validation: {} };
    default:
      return { ...base, type } as Field;
  }
}

/** The same field as another type: what both types have is kept (label, key, help, required, screens). */
export function changeType(field: Field, type: FieldType): Field {
  const next = newField(type, field.label, field.key);
  return { ...next, help: field.help, required: field.required, showOnScreens: field.showOnScreens };
}

/** Moves the item at `from` to `to` (a new array). */
export function moved<T>(list: readonly T[], from: number, to: number): T[] {
  const out = [...list];
  const [item] = out.splice(from, 1);
  out.splice(to, 0, item!);
  return out;
}
