import type { ColumnType, DataColumn, View, ViewFilter } from './model';

/**
 * A view as the view editor edits it (rows of conditions and sorts, a limit, the fields
 * left out) and back: `viewOf` makes the view the server takes, `stateOf` reads a saved one
 * (a layout's data zone) into the editor again. Shared by the Data page and the layout editor.
 */

export type Op = ViewFilter['op'];
export type Kind = 'text' | 'number' | 'boolean' | 'time';
export const KIND: Record<ColumnType, Kind> = {
  text: 'text',
  richtext: 'text',
  url: 'text',
  image: 'text',
  number: 'number',
  boolean: 'boolean',
  date: 'time',
  datetime: 'time',
};
/** Relative date values the server knows by name ('next'/'last' take days, 'date' is typed). */
export const RELATIVE: [string, string][] = [
  ['today', 'today'],
  ['tomorrow', 'tomorrow'],
  ['yesterday', 'yesterday'],
  ['thisWeek', 'this week'],
  ['startOfWeek', 'the start of this week'],
  ['endOfWeek', 'the end of this week'],
  ['next', 'the next … days'],
  ['last', 'the last … days'],
  ['date', 'a date'],
];
const NAMED = new Set(RELATIVE.map(([v]) => v).filter((v) => v !== 'next' && v !== 'last' && v !== 'date'));

export interface FilterRow {
  field: string;
  op: Op;
  value: string;
  value2: string;
  /** Dates: a relative value, or 'date' for the typed one. */
  rel: string;
  days: string;
}
export interface SortRow {
  field: string;
  direction: 'asc' | 'desc';
}
export interface ViewState {
  filters: FilterRow[];
  sorts: SortRow[];
  limit: string;
  /** Fields left out (the view keeps the others, in the source's order). */
  hidden: string[];
}
export const EMPTY_VIEW_STATE: ViewState = { filters: [], sorts: [], limit: '', hidden: [] };

const list = (v: string) =>
  v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
const num = (v: string): number | string => (v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v);

export function filterOf(r: FilterRow, type: ColumnType | undefined): ViewFilter {
  const kind = type ? KIND[type] : 'text';
  if (r.op === 'isEmpty' || r.op === 'isNotEmpty') return { field: r.field, op: r.op };
  if (kind === 'boolean') return { field: r.field, op: r.op, value: r.value === 'true' };
  if (kind === 'number') {
    if (r.op === 'in') return { field: r.field, op: r.op, value: list(r.value).map(num) };
    if (r.op === 'between') return { field: r.field, op: r.op, value: [num(r.value), num(r.value2)] };
    return { field: r.field, op: r.op, value: num(r.value) };
  }
  if (kind === 'time') {
    const days = { days: Math.max(0, Math.round(Number(r.days) || 0)) };
    const rel = r.rel === 'next' ? { next: days } : r.rel === 'last' ? { last: days } : r.rel === 'date' ? r.value : r.rel;
    if (r.op === 'in') return { field: r.field, op: r.op, value: r.rel === 'date' ? list(r.value) : [rel] };
    if (r.op === 'between') return { field: r.field, op: r.op, value: r.rel === 'date' ? [r.value, r.value2] : rel };
    return { field: r.field, op: r.op, value: rel };
  }
  return { field: r.field, op: r.op, value: r.op === 'in' ? list(r.value) : r.value };
}

/** The view the editor's state stands for (an empty object: the whole source). */
export function viewOf(state: ViewState, columns: readonly DataColumn[]): View {
  const typeOf = (field: string) => columns.find((c) => c.name === field)?.type;
  const fields = columns.map((c) => c.name).filter((n) => !state.hidden.includes(n));
  return {
    ...(state.filters.length ? { filter: state.filters.map((f) => filterOf(f, typeOf(f.field))) } : {}),
    ...(state.sorts.length ? { sort: state.sorts } : {}),
    ...(state.limit.trim() ? { limit: Number(state.limit) } : {}),
    ...(state.hidden.length ? { fields } : {}),
  };
}

const text = (v: unknown) => (v === null || v === undefined ? '' : String(v));
const isSpan = (v: unknown): v is { next?: { days: number }; last?: { days: number } } => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One saved condition as the editor's row (a date value: named, a span of days, or typed). */
function rowOf(f: ViewFilter, type: ColumnType | undefined): FilterRow {
  const row: FilterRow = { field: f.field, op: f.op, value: '', value2: '', rel: 'today', days: '7' };
  const v = (f as { value?: unknown }).value;
  if (f.op === 'isEmpty' || f.op === 'isNotEmpty' || v === undefined) return row;
  const kind = type ? KIND[type] : 'text';
  if (kind === 'time') {
    const one = (x: unknown) => {
      if (isSpan(x)) {
        const span = x.next ?? x.last;
        Object.assign(row, { rel: x.next ? 'next' : 'last', days: String(span?.days ?? 0) });
      } else if (typeof x === 'string' && NAMED.has(x)) row.rel = x;
      else Object.assign(row, { rel: 'date', value: text(x) });
    };
    if (f.op === 'in' && Array.isArray(v)) {
      if (v.length === 1 && (isSpan(v[0]) || NAMED.has(text(v[0])))) one(v[0]);
      else Object.assign(row, { rel: 'date', value: v.map(text).join(', ') });
    } else if (f.op === 'between' && Array.isArray(v)) Object.assign(row, { rel: 'date', value: text(v[0]), value2: text(v[1]) });
    else one(v);
    return row;
  }
  if (kind === 'boolean') return { ...row, value: v === false ? 'false' : 'true' };
  if (Array.isArray(v)) {
    if (f.op === 'between') return { ...row, value: text(v[0]), value2: text(v[1]) };
    return { ...row, value: v.map(text).join(', ') };
  }
  return { ...row, value: text(v) };
}

/** A saved view (a layout zone's) as the editor's state; null or {}: the whole source. */
export function stateOf(view: View | null | undefined, columns: readonly DataColumn[]): ViewState {
  if (!view) return EMPTY_VIEW_STATE;
  const typeOf = (field: string) => columns.find((c) => c.name === field)?.type;
  return {
    filters: (view.filter ?? []).map((f) => rowOf(f, typeOf(f.field))),
    sorts: (view.sort ?? []).map((s) => ({ field: s.field, direction: s.direction ?? 'asc' })),
    limit: view.limit === undefined ? '' : String(view.limit),
    hidden: view.fields ? columns.map((c) => c.name).filter((n) => !view.fields!.includes(n)) : [],
  };
}

/**
 * The server's words about a view placed somewhere else (a layout zone answers
 * "filter.0.value: not a number" at the zone's `view`) as issues at their place in the view.
 */
export function viewIssuesOf(messages: readonly string[]): { path: (string | number)[]; message: string }[] {
  return messages.map((m) => {
    const at = /^([A-Za-z]+(?:\.\d+)*(?:\.[A-Za-z]+)?): (.*)$/s.exec(m);
    if (!at) return { path: [], message: m };
    return { path: at[1]!.split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : p)), message: at[2]! };
  });
}
