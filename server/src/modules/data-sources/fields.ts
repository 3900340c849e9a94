import safeRegex from 'safe-regex2';
import { z } from 'zod';
import type { Cell, Column, ColumnType, Row } from './providers/types.js';

/**
 * Form fields (issue 18, docs/data-sources.md "Forms"): the shape of a manual table's rows.
 * Pure: the zod schema drives request validation and the OpenAPI document, and
 * `validateValues` checks values against a form (records use it; publish checks the
 * table's rows with it).
 */

export const FIELD_TYPES = [
  'text',
  'longText',
  'number',
  'money',
  'boolean',
  'choice',
  'multiChoice',
  'date',
  'time',
  'datetime',
  'url',
  'image',
  'colour',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const MAX_FIELDS = 100;
export const MAX_PATTERN_LENGTH = 200;
const TEXT_MAX = 1000;
const LONG_TEXT_MAX = 65_536;
const URL_MAX = 2048;

/** The column a published field becomes (columns hold text, numbers, booleans, dates; see docs). */
export const COLUMN_OF: Record<FieldType, ColumnType> = {
  text: 'text',
  longText: 'text',
  number: 'number',
  money: 'number',
  boolean: 'boolean',
  choice: 'text',
  multiChoice: 'text',
  date: 'date',
  time: 'text',
  datetime: 'datetime',
  url: 'url',
  image: 'image',
  colour: 'text',
};

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIME = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const COLOUR = /^#[0-9a-fA-F]{6}$/;
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

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

// ---- the schema ----

const key = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'a letter, then letters, digits or _ (at most 64)')
  .describe('Stable and unique within the form: the column’s name on screens and the key of record values');
const base = {
  key,
  label: z.string().trim().min(1).max(200),
  help: z.string().max(1000).default(''),
  required: z.boolean().default(false),
  showOnScreens: z.boolean().default(true).describe('false: kept with records, never a column of the table, so never on screens'),
};
const length = { minLength: z.number().int().min(0).optional(), maxLength: z.number().int().min(1).optional() };
const range = <T extends z.ZodType>(value: T) => z.object({ min: value.optional(), max: value.optional() });
const option = z.string().trim().min(1).max(200);
const options = z.array(option).min(1).max(200);

const TextField = z
  .object({
    ...base,
    type: z.literal('text'),
    default: z.string().max(TEXT_MAX).nullable().default(null),
    validation: z
      .object({
        ...length,
        pattern: z
          .string()
          .min(1)
          .max(MAX_PATTERN_LENGTH)
          .optional()
          .describe('A JavaScript regular expression the whole value must match (anchored); catastrophic patterns are refused'),
      })
      .default({}),
  })
  .meta({ id: 'FormTextField' });
const LongTextField = z
  .object({ ...base, type: z.literal('longText'), default: z.string().max(LONG_TEXT_MAX).nullable().default(null), validation: z.object(length).default({}) })
  .meta({ id: 'FormLongTextField' });
const NumberField = z
  .object({
    ...base,
    type: z.literal('number'),
    unit: z.string().trim().max(20).default(''),
    precision: z.number().int().min(0).max(10).default(0).describe('Digits after the decimal point a value may have'),
    default: z.number().nullable().default(null),
    validation: range(z.number()).default({}),
  })
  .meta({ id: 'FormNumberField' });
const MoneyField = z
  .object({
    ...base,
    type: z.literal('money'),
    currency: z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code such as EUR'),
    precision: z.number().int().min(0).max(4).default(2),
    default: z.number().nullable().default(null),
    validation: range(z.number()).default({}),
  })
  .meta({ id: 'FormMoneyField' });
const BooleanField = z.object({ ...base, type: z.literal('boolean'), default: z.boolean().nullable().default(null) }).meta({ id: 'FormBooleanField' });
const ChoiceField = z.object({ ...base, type: z.literal('choice'), options, default: option.nullable().default(null) }).meta({ id: 'FormChoiceField' });
const MultiChoiceField = z
  .object({
    ...base,
    type: z.literal('multiChoice'),
    options,
    default: z.array(option).max(200).nullable().default(null),
    validation: range(z.number().int().min(0)).default({}).describe('How many options may be chosen'),
  })
  .meta({ id: 'FormMultiChoiceField' });
const dated = (type: 'date' | 'time' | 'datetime', id: string, what: string) =>
  z
    .object({ ...base, type: z.literal(type), default: z.string().max(40).nullable().default(null), validation: range(z.string().max(40)).default({}) })
    .describe(what)
    .meta({ id });
const DateField = dated('date', 'FormDateField', 'YYYY-MM-DD');
const TimeField = dated('time', 'FormTimeField', 'HH:MM or HH:MM:SS (24 h)');
const DatetimeField = dated('datetime', 'FormDatetimeField', 'ISO 8601 with Z or an offset');
const UrlField = z
  .object({ ...base, type: z.literal('url'), default: z.string().max(URL_MAX).nullable().default(null), validation: z.object(length).default({}) })
  .meta({ id: 'FormUrlField' });
const ImageField = z
  .object({ ...base, type: z.literal('image'), default: z.string().max(URL_MAX).nullable().default(null) })
  .describe('An http(s) address of an image (fetched and kept as media like any image cell)')
  .meta({ id: 'FormImageField' });
const ColourField = z
  .object({ ...base, type: z.literal('colour'), default: z.string().max(7).nullable().default(null) })
  .describe('#RRGGBB')
  .meta({ id: 'FormColourField' });

export const FieldSchema = z.discriminatedUnion('type', [
  TextField,
  LongTextField,
  NumberField,
  MoneyField,
  BooleanField,
  ChoiceField,
  MultiChoiceField,
  DateField,
  TimeField,
  DatetimeField,
  UrlField,
  ImageField,
  ColourField,
]);
export type Field = z.output<typeof FieldSchema>;

export interface FieldIssue {
  path: (string | number)[];
  message: string;
}

/** Why a pattern may not be used, or null: it must compile and not be catastrophic (safe-regex2's star-height check). */
export function patternProblem(pattern: string): string | null {
  try {
    new RegExp(`^(?:${pattern})$`, 'u');
  } catch (err) {
    return `does not compile: ${(err as Error).message}`;
  }
  if (!safeRegex(pattern)) return 'may take exponential time (nested repetition such as (a+)+); write it without a repeated group that repeats';
  return null;
}

/** What the schema alone cannot say about one field (indices relative to the field). */
function fieldProblems(field: Field): FieldIssue[] {
  const out: FieldIssue[] = [];
  const v = 'validation' in field ? (field.validation as Record<string, unknown>) : {};
  if (typeof v.minLength === 'number' && typeof v.maxLength === 'number' && v.minLength > v.maxLength)
    out.push({ path: ['validation', 'minLength'], message: 'minLength is above maxLength' });
  if (typeof v.pattern === 'string') {
    const why = patternProblem(v.pattern);
    if (why) out.push({ path: ['validation', 'pattern'], message: `The pattern ${why}` });
  }
  if (v.min !== undefined && v.max !== undefined) {
    const below =
      field.type === 'time'
        ? seconds(String(v.min)) > seconds(String(v.max))
        : field.type === 'datetime'
          ? Date.parse(String(v.min)) > Date.parse(String(v.max))
          : (v.min as number | string) > (v.max as number | string);
    if (below) out.push({ path: ['validation', 'min'], message: 'min is above max' });
  }
  for (const bound of ['min', 'max'] as const) {
    const b = v[bound];
    if (b === undefined) continue;
    if (field.type === 'date' && !isDate(String(b))) out.push({ path: ['validation', bound], message: 'must be a date (YYYY-MM-DD)' });
    if (field.type === 'time' && !TIME.test(String(b))) out.push({ path: ['validation', bound], message: 'must be a time (HH:MM or HH:MM:SS)' });
    if (field.type === 'datetime' && !isDatetime(String(b)))
      out.push({ path: ['validation', bound], message: 'must be an ISO 8601 date and time with Z or an offset' });
  }
  if (field.type === 'money' && !CURRENCIES.has(field.currency)) out.push({ path: ['currency'], message: `"${field.currency}" is not an ISO 4217 currency` });
  if (field.type === 'choice' || field.type === 'multiChoice') {
    const seen = new Set<string>();
    for (const [i, o] of field.options.entries()) {
      if (seen.has(o)) out.push({ path: ['options', i], message: `"${o}" is offered twice` });
      seen.add(o);
      if (field.type === 'multiChoice' && o.includes(','))
        out.push({ path: ['options', i], message: 'a multi-choice option may not contain a comma (cells list the chosen options with ", ")' });
    }
  }
  if (out.length === 0 && field.default !== null) {
    for (const issue of validateValues([{ ...field, required: false }], { [field.key]: field.default }))
      out.push({ path: ['default', ...issue.path.slice(1)], message: `The default ${issue.message}` });
  }
  return out;
}

/** Every problem of a list of fields: duplicate keys, bounds, patterns, currencies, defaults. */
export function fieldsProblems(fields: readonly Field[]): FieldIssue[] {
  const out: FieldIssue[] = [];
  const keys = new Set<string>();
  for (const [i, field] of fields.entries()) {
    if (keys.has(field.key)) out.push({ path: [i, 'key'], message: `Two fields have the key "${field.key}"` });
    keys.add(field.key);
    for (const issue of fieldProblems(field)) out.push({ path: [i, ...issue.path], message: issue.message });
  }
  return out;
}

export const FieldsSchema = z
  .array(FieldSchema)
  .max(MAX_FIELDS)
  .superRefine((fields, ctx) => {
    for (const issue of fieldsProblems(fields)) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  })
  .describe('The form’s fields, in order');

// ---- values ----

export type Value = string | number | boolean | string[] | null;

const empty = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);

/** Why a non-empty value does not fit the field, or null. */
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
      if (field.type === 'text' && field.validation.pattern && !new RegExp(`^(?:${field.validation.pattern})$`, 'u').test(value))
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
      if (!Array.isArray(value) || !value.every((o) => typeof o === 'string')) return 'must be a list of options';
      const wrong = value.filter((o) => !field.options.includes(o));
      if (wrong.length) return `${wrong.map((o) => `"${String(o).slice(0, 50)}"`).join(', ')} not among the options (${field.options.join(', ')})`;
      if (new Set(value).size !== value.length) return 'names an option twice';
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

/**
 * Every problem of `values` against the fields: each with the field's key as its path and a
 * sentence. Missing or empty values of required fields, values of the wrong type or out of
 * bounds, and keys that name no field. Empty: the values fit.
 */
export function validateValues(fields: readonly Field[], values: Record<string, unknown>): FieldIssue[] {
  const out: FieldIssue[] = [];
  const byKey = new Map(fields.map((f) => [f.key, f]));
  for (const k of Object.keys(values)) if (!byKey.has(k)) out.push({ path: [k], message: 'is not a field of this form' });
  for (const field of fields) {
    const value = values[field.key];
    if (empty(value) || (typeof value === 'string' && value.trim() === '' && field.type !== 'boolean')) {
      if (field.required) out.push({ path: [field.key], message: 'is required' });
      continue;
    }
    const why = valueProblem(field, value);
    if (why) out.push({ path: [field.key], message: why });
  }
  return out;
}

// ---- the table's columns and cells ----

/** The manual table's columns a form gives: its fields shown on screens, in order, named by key. */
export const columnsOf = (fields: readonly Field[]): Column[] => fields.filter((f) => f.showOnScreens).map((f) => ({ name: f.key, type: COLUMN_OF[f.type] }));

/** A value as a table cell (a multi-choice lists the chosen options with ", "). */
export function cellOf(_field: Field, value: Value): Cell {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.join(', ');
  return value;
}

/** A table cell as the field's value (the inverse of cellOf). */
export function valueOfCell(field: Field, cell: Cell | undefined): Value {
  if (cell === undefined || cell === null) return null;
  if (field.type === 'multiChoice' && typeof cell === 'string')
    return cell
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  return cell;
}

/** A row's cells as values of the fields that are columns (cells of other columns are left out). */
export function rowValues(fields: readonly Field[], row: Row): Record<string, Value> {
  return Object.fromEntries(fields.filter((f) => f.showOnScreens && f.key in row).map((f) => [f.key, valueOfCell(f, row[f.key])]));
}

/** A field for each column of a table that has no form yet (its draft starts from the columns). */
export function fieldsFromColumns(columns: readonly Column[]): Field[] {
  const TYPE: Record<ColumnType, FieldType> = {
    text: 'text',
    richtext: 'longText',
    number: 'number',
    boolean: 'boolean',
    date: 'date',
    datetime: 'datetime',
    url: 'url',
    image: 'image',
  };
  return columns.map((c, i) => {
    const key = /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(c.name) ? c.name : `field${i + 1}`;
    return FieldSchema.parse({ key, label: c.name.slice(0, 200) || key, type: TYPE[c.type], ...(c.type === 'number' ? { precision: 10 } : {}) });
  });
}
