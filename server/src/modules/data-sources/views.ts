import { DateTime, IANAZone } from 'luxon';
import { z } from 'zod';
import type { Cell, Column, ColumnType, Row } from './providers/types.js';

/**
 * Views of a data source (issue 17, spec 4.5, DESIGN.md section 12): filters that must all
 * hold, a sort, a limit and the fields to keep, applied to a snapshot's rows. Dates may be
 * relative to now in a time zone (the source's, or the screen location's): 'today',
 * 'tomorrow', 'yesterday', 'startOfWeek', 'endOfWeek', 'thisWeek', {next: {days: N}},
 * {last: {days: N}}. Mistakes (an unknown field, an operator the column's type does not
 * have, a value of the wrong kind) come back as a list, every one of them, so a route can
 * answer 400 naming each. docs/data-sources-providers.md ("Views") has the rules.
 */

export const VIEW_OPERATORS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'contains', 'startsWith', 'in', 'isEmpty', 'isNotEmpty', 'between'] as const;
export type ViewOperator = (typeof VIEW_OPERATORS)[number];
export const RELATIVE_DAYS = ['today', 'tomorrow', 'yesterday', 'startOfWeek', 'endOfWeek', 'thisWeek'] as const;
export const VIEW_LIMITS = { maxLimit: 1000, maxFilters: 50, maxSorts: 10, maxFields: 200, maxInValues: 500, maxRelativeDays: 3660 } as const;

const fieldName = z.string().min(1).max(200);
const days = z.object({ days: z.number().int().min(0).max(VIEW_LIMITS.maxRelativeDays) }).strict();
const relativeSpan = z.union([z.object({ next: days }).strict(), z.object({ last: days }).strict()]);
const single = z.union([z.string().max(2000), z.number(), z.boolean(), z.null(), relativeSpan]);

export const viewFilterSchema = z
  .object({
    field: fieldName,
    op: z.enum(VIEW_OPERATORS),
    value: z.union([single, z.array(single).max(VIEW_LIMITS.maxInValues)]).optional(),
  })
  .strict()
  .describe(
    "A condition on one field. Dates and date-times also take 'today', 'tomorrow', 'yesterday', 'startOfWeek', 'endOfWeek', 'thisWeek', {next: {days}} and {last: {days}}; 'in' takes a list, 'between' a pair [from, to] (or one relative range), 'isEmpty' and 'isNotEmpty' nothing",
  );
export const viewSortSchema = z
  .object({ field: fieldName, direction: z.enum(['asc', 'desc']).default('asc') })
  .strict()
  .describe('Sort key; empty values always come last');
export const viewSchema = z
  .object({
    filter: z.array(viewFilterSchema).max(VIEW_LIMITS.maxFilters).optional().describe('Conditions that must all hold'),
    sort: z.array(viewSortSchema).max(VIEW_LIMITS.maxSorts).optional(),
    limit: z.number().int().min(1).max(VIEW_LIMITS.maxLimit).optional().describe('Rows kept at most, after filter and sort'),
    fields: z.array(fieldName).min(1).max(VIEW_LIMITS.maxFields).optional().describe('The columns to answer, in this order (default: all)'),
  })
  .strict();
export type View = z.infer<typeof viewSchema>;
export type ViewFilter = z.infer<typeof viewFilterSchema>;

export interface ViewError {
  /** Where in the view: ['filter', 0, 'value'], ['sort', 1, 'field'], ['fields', 2]. */
  path: (string | number)[];
  code: 'unknown_field' | 'invalid_operator' | 'invalid_value' | 'duplicate_field';
  message: string;
}

export interface ViewOptions {
  /** IANA zone relative dates and date cells are read in (UTC when not a zone). */
  timeZone: string;
  now: Date;
}

export type ViewResult = { ok: true; columns: Column[]; rows: Row[] } | { ok: false; errors: ViewError[] };

type Kind = 'text' | 'number' | 'boolean' | 'time';
const KIND: Record<ColumnType, Kind> = {
  text: 'text',
  richtext: 'text',
  url: 'text',
  image: 'text',
  number: 'number',
  boolean: 'boolean',
  date: 'time',
  datetime: 'time',
};
const OPERATORS: Record<Kind, readonly ViewOperator[]> = {
  text: ['eq', 'ne', 'contains', 'startsWith', 'in', 'isEmpty', 'isNotEmpty'],
  number: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'between', 'in', 'isEmpty', 'isNotEmpty'],
  boolean: ['eq', 'ne', 'isEmpty', 'isNotEmpty'],
  time: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'between', 'in', 'isEmpty', 'isNotEmpty'],
};

/** A half-open span of instants [start, end): a day, a week, or one millisecond for an instant. */
interface Span {
  start: number;
  end: number;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const WITH_OFFSET = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;
const isEmptyCell = (v: Cell | undefined) => v === null || v === undefined || (typeof v === 'string' && v.trim() === '');

/** Reads dates and relative values in one zone at one `now`. */
class Clock {
  readonly zone: string;
  private readonly now: DateTime;

  constructor(options: ViewOptions) {
    this.zone = IANAZone.isValidZone(options.timeZone) ? options.timeZone : 'UTC';
    this.now = DateTime.fromJSDate(options.now, { zone: this.zone });
  }

  private day(d: DateTime): Span {
    const start = d.startOf('day');
    return { start: start.toMillis(), end: start.plus({ days: 1 }).toMillis() };
  }

  private readonly dates = new Map<string, Span | null>();

  /** A cell of a date or date-time column as a span: a date is its whole day in the zone. */
  cell(value: Cell): Span | null {
    if (typeof value !== 'string') return null;
    const v = value.trim();
    if (DATE.test(v)) {
      let span = this.dates.get(v);
      if (span === undefined) {
        const d = DateTime.fromISO(v, { zone: this.zone });
        span = d.isValid ? this.day(d) : null;
        if (this.dates.size < 10_000) this.dates.set(v, span);
      }
      return span;
    }
    // With an offset the instant is the zone's business of nobody: Date.parse is exact and fast.
    const t = WITH_OFFSET.test(v) ? Date.parse(v.replace(' ', 'T')) : Number.NaN;
    if (!Number.isNaN(t)) return { start: t, end: t + 1 };
    const d = DateTime.fromISO(v.replace(' ', 'T'), { zone: this.zone });
    return d.isValid ? { start: d.toMillis(), end: d.toMillis() + 1 } : null;
  }

  /** A filter value for a date column: an absolute date, date-time or a relative value. */
  value(value: unknown): Span | null {
    const today = this.now.startOf('day');
    const week = today.startOf('week'); // ISO weeks: Monday
    if (typeof value === 'string') {
      switch (value) {
        case 'today':
          return this.day(today);
        case 'tomorrow':
          return this.day(today.plus({ days: 1 }));
        case 'yesterday':
          return this.day(today.minus({ days: 1 }));
        case 'startOfWeek':
          return this.day(week);
        case 'endOfWeek':
          return this.day(week.plus({ days: 6 }));
        case 'thisWeek':
          return { start: week.toMillis(), end: week.plus({ weeks: 1 }).toMillis() };
      }
      return this.cell(value);
    }
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const now = this.now.toMillis();
      if ('next' in value) return { start: now, end: this.now.plus({ days: (value as { next: { days: number } }).next.days }).toMillis() + 1 };
      if ('last' in value) return { start: this.now.minus({ days: (value as { last: { days: number } }).last.days }).toMillis(), end: now + 1 };
    }
    return null;
  }
}

type Test = (row: Row) => boolean;

const describe = (v: unknown) => (v === undefined ? 'nothing' : JSON.stringify(v)?.slice(0, 60));

/** The test one filter makes, or the errors it has. */
function compileFilter(f: ViewFilter, i: number, columns: ReadonlyMap<string, Column>, clock: Clock, errors: ViewError[]): Test | null {
  const column = columns.get(f.field);
  if (!column) {
    errors.push({
      path: ['filter', i, 'field'],
      code: 'unknown_field',
      message: `"${f.field}" is not a field of this source (fields: ${[...columns.keys()].join(', ').slice(0, 300)})`,
    });
    return null;
  }
  const kind = KIND[column.type];
  if (!OPERATORS[kind].includes(f.op)) {
    errors.push({
      path: ['filter', i, 'op'],
      code: 'invalid_operator',
      message: `"${f.op}" does not apply to "${f.field}", a ${column.type} field (it takes ${OPERATORS[kind].join(', ')})`,
    });
    return null;
  }
  const name = f.field;
  const bad = (message: string) => {
    errors.push({ path: ['filter', i, 'value'], code: 'invalid_value', message: `${f.op} on "${name}" (${column.type}): ${message}` });
    return null;
  };

  if (f.op === 'isEmpty' || f.op === 'isNotEmpty') {
    if (f.value !== undefined && f.value !== null) return bad(`takes no value (got ${describe(f.value)})`);
    return f.op === 'isEmpty' ? (row) => isEmptyCell(row[name]) : (row) => !isEmptyCell(row[name]);
  }
  if (f.value === undefined) return bad('needs a value');

  // The values the operator compares with: one, a list (in), or a pair (between).
  let items: unknown[];
  if (f.op === 'in') {
    if (!Array.isArray(f.value) || f.value.length === 0) return bad(`takes a non-empty list of values (got ${describe(f.value)})`);
    items = f.value;
  } else if (f.op === 'between') {
    if (Array.isArray(f.value)) {
      if (f.value.length !== 2) return bad(`takes a pair [from, to] (got ${f.value.length} values)`);
      items = f.value;
    } else if (kind === 'time') items = [f.value];
    else return bad(`takes a pair [from, to] (got ${describe(f.value)})`);
  } else {
    if (Array.isArray(f.value)) return bad(`takes one value, not a list (use "in" for several)`);
    items = [f.value];
  }

  switch (kind) {
    case 'text': {
      if (!items.every((v) => typeof v === 'string')) return bad(`takes text (got ${describe(items.find((v) => typeof v !== 'string'))})`);
      const values = items as string[];
      const text = (row: Row) => {
        const v = row[name];
        return v === null || v === undefined ? null : String(v);
      };
      const needle = values[0]!.toLocaleLowerCase();
      switch (f.op) {
        case 'eq':
          return (row) => text(row) === values[0];
        case 'ne':
          return (row) => text(row) !== values[0];
        case 'contains':
          return (row) => text(row)?.toLocaleLowerCase().includes(needle) ?? false;
        case 'startsWith':
          return (row) => text(row)?.toLocaleLowerCase().startsWith(needle) ?? false;
        case 'in': {
          const set = new Set(values);
          return (row) => {
            const t = text(row);
            return t !== null && set.has(t);
          };
        }
      }
      return null;
    }
    case 'boolean': {
      if (typeof items[0] !== 'boolean') return bad(`takes true or false (got ${describe(items[0])})`);
      const want = items[0];
      const value = (row: Row) => {
        const v = row[name];
        return typeof v === 'boolean' ? v : v === 'true' ? true : v === 'false' ? false : null;
      };
      return f.op === 'eq' ? (row) => value(row) === want : (row) => value(row) !== want;
    }
    case 'number': {
      if (!items.every((v) => typeof v === 'number' && Number.isFinite(v)))
        return bad(`takes numbers (got ${describe(items.find((v) => typeof v !== 'number' || !Number.isFinite(v)))})`);
      const values = items as number[];
      const num = (row: Row): number | null => {
        const v = row[name];
        if (typeof v === 'number') return v;
        if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
        return null;
      };
      const [a, b] = values as [number, number];
      const cmp = (test: (n: number) => boolean) => (row: Row) => {
        const n = num(row);
        return n !== null && test(n);
      };
      switch (f.op) {
        case 'eq':
          return cmp((n) => n === a);
        case 'ne':
          return (row) => num(row) !== a;
        case 'lt':
          return cmp((n) => n < a);
        case 'lte':
          return cmp((n) => n <= a);
        case 'gt':
          return cmp((n) => n > a);
        case 'gte':
          return cmp((n) => n >= a);
        case 'between':
          return cmp((n) => n >= Math.min(a, b) && n <= Math.max(a, b));
        case 'in': {
          const set = new Set(values);
          return cmp((n) => set.has(n));
        }
      }
      return null;
    }
    case 'time': {
      const spans: Span[] = [];
      for (const v of items) {
        const span = clock.value(v);
        if (!span)
          return bad(
            `takes a date (YYYY-MM-DD), an ISO date-time, ${RELATIVE_DAYS.map((r) => `'${r}'`).join(', ')}, {next: {days}} or {last: {days}} (got ${describe(v)})`,
          );
        spans.push(span);
      }
      const cell = (row: Row) => clock.cell(row[name] ?? null);
      const r = spans[0]!;
      const overlaps = (c: Span, s: Span) => c.start < s.end && c.end > s.start;
      const cmp = (test: (c: Span) => boolean) => (row: Row) => {
        const c = cell(row);
        return c !== null && test(c);
      };
      switch (f.op) {
        case 'eq':
          return cmp((c) => overlaps(c, r));
        case 'ne':
          return (row) => {
            const c = cell(row);
            return c === null || !overlaps(c, r);
          };
        case 'lt':
          return cmp((c) => c.end <= r.start);
        case 'lte':
          return cmp((c) => c.start < r.end);
        case 'gt':
          return cmp((c) => c.start >= r.end);
        case 'gte':
          return cmp((c) => c.end > r.start);
        case 'between': {
          const range = spans.length === 2 ? { start: spans[0]!.start, end: spans[1]!.end } : r;
          return cmp((c) => overlaps(c, range));
        }
        case 'in':
          return cmp((c) => spans.some((s) => overlaps(c, s)));
      }
      return null;
    }
  }
}

interface SortKey {
  sign: 1 | -1;
  key: (row: Row) => number | string | null;
}

function compileSort(view: View, columns: ReadonlyMap<string, Column>, clock: Clock, errors: ViewError[]): SortKey[] {
  const out: SortKey[] = [];
  for (const [i, s] of (view.sort ?? []).entries()) {
    const column = columns.get(s.field);
    if (!column) {
      errors.push({ path: ['sort', i, 'field'], code: 'unknown_field', message: `"${s.field}" is not a field of this source` });
      continue;
    }
    const name = s.field;
    const kind = KIND[column.type];
    out.push({
      sign: s.direction === 'desc' ? -1 : 1,
      key: (row) => {
        const v = row[name];
        if (isEmptyCell(v)) return null;
        if (kind === 'number') return typeof v === 'number' ? v : Number.isFinite(Number(v)) ? Number(v) : null;
        if (kind === 'boolean') return v === true || v === 'true' ? 1 : 0;
        if (kind === 'time') return clock.cell(v ?? null)?.start ?? null;
        return String(v);
      },
    });
  }
  return out;
}

/** Rows in the order of `sorts` (each key read once a row; empty values last whatever the direction; ties keep their order). */
function sortRows(rows: readonly Row[], sorts: readonly SortKey[]): Row[] {
  const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
  const keyed = rows.map((row, index) => ({ row, index, keys: sorts.map((s) => s.key(row)) }));
  keyed.sort((a, b) => {
    for (const [i, s] of sorts.entries()) {
      const x = a.keys[i]!;
      const y = b.keys[i]!;
      if (x === y) continue;
      if (x === null || y === null) return x === null ? 1 : -1;
      const d = typeof x === 'number' && typeof y === 'number' ? x - y : collator.compare(String(x), String(y));
      if (d !== 0) return s.sign * d;
    }
    return a.index - b.index;
  });
  return keyed.map((k) => k.row);
}

function checkFields(view: View, columns: ReadonlyMap<string, Column>, errors: ViewError[]): Column[] {
  if (!view.fields) return [...columns.values()];
  const seen = new Set<string>();
  const out: Column[] = [];
  for (const [i, name] of view.fields.entries()) {
    const column = columns.get(name);
    if (!column) errors.push({ path: ['fields', i], code: 'unknown_field', message: `"${name}" is not a field of this source` });
    else if (seen.has(name)) errors.push({ path: ['fields', i], code: 'duplicate_field', message: `"${name}" is listed twice` });
    else {
      seen.add(name);
      out.push(column);
    }
  }
  return out;
}

function compile(columnList: readonly Column[], view: View, options: ViewOptions) {
  const columns = new Map(columnList.map((c) => [c.name, c]));
  const clock = new Clock(options);
  const errors: ViewError[] = [];
  const tests = (view.filter ?? []).map((f, i) => compileFilter(f, i, columns, clock, errors));
  const sorts = compileSort(view, columns, clock, errors);
  const fields = checkFields(view, columns, errors);
  return { errors, tests: tests.filter((t): t is Test => t !== null), sorts, fields };
}

/** The mistakes of `view` against these columns (empty when it can be applied). */
export function checkView(columns: readonly Column[], view: View, options: ViewOptions): ViewError[] {
  return compile(columns, view, options).errors;
}

/** The rows `view` gives of `dataset` now: filtered, sorted (stable), limited, projected. */
export function applyView(dataset: { columns: readonly Column[]; rows: readonly Row[] }, view: View, options: ViewOptions): ViewResult {
  const { errors, tests, sorts, fields } = compile(dataset.columns, view, options);
  if (errors.length) return { ok: false, errors };
  let rows = tests.length ? dataset.rows.filter((row) => tests.every((t) => t(row))) : [...dataset.rows];
  if (sorts.length) rows = sortRows(rows, sorts);
  if (view.limit !== undefined) rows = rows.slice(0, view.limit);
  const projected = rows.map((row) => {
    const out: Row = {};
    for (const c of fields) out[c.name] = row[c.name] ?? null;
    return out;
  });
  return { ok: true, columns: fields.map((c) => ({ ...c })), rows: projected };
}
