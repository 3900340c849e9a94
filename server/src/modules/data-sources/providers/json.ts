import { JSONPath } from 'jsonpath-plus';
import { inferColumns } from './columns.js';
import { JSON_LIMITS, type JsonConfig } from './json.config.js';
import type { Cell, Column, ColumnType, Dataset, Row } from './types.js';

export { JSON_LIMITS, type JsonConfig, jsonColumn, jsonConfig } from './json.config.js';

/**
 * Every match of a JSONPath expression. Script filters (`?()`, `()`) are off (eval: false):
 * the server never runs an expression's code; views filter rows instead.
 */
function query(expression: string, json: unknown): unknown[] {
  const path = expression.startsWith('$') ? expression : `$.${expression}`;
  const out = JSONPath({ path, json: json as object, eval: false, wrap: true });
  return Array.isArray(out) ? out : [];
}

function clip(text: string): string {
  return text.length > JSON_LIMITS.maxCellChars ? text.slice(0, JSON_LIMITS.maxCellChars) : text;
}

/** A JSON value as a cell: scalars as they are, lists of scalars joined, anything else as JSON text. */
function toCell(value: unknown): Cell {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return clip(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'boolean') return value;
  if (Array.isArray(value) && value.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v))) return clip(value.join(', '));
  return clip(JSON.stringify(value));
}

/** A row of an unmapped document: nested objects flattened to `a.b` (three levels), a scalar row as `value`. */
function flatten(value: unknown): Row {
  const row: Row = {};
  const walk = (v: unknown, prefix: string, depth: number) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && depth < JSON_LIMITS.flattenDepth) {
      for (const [k, inner] of Object.entries(v)) walk(inner, prefix ? `${prefix}.${k}` : k, depth + 1);
      return;
    }
    row[prefix || 'value'] = toCell(v);
  };
  walk(value, '', 0);
  return row;
}

const DATE = /^(\d{4}-\d{2}-\d{2})/;
const TRUE = new Set(['true', 'yes', 'y', '1', 'on']);
const FALSE = new Set(['false', 'no', 'n', '0', 'off']);

/** A cell converted to a declared type, or undefined when it does not fit (null then, with a warning). */
function coerce(cell: Cell, type: ColumnType): Cell | undefined {
  if (cell === null || cell === '') return null;
  switch (type) {
    case 'number': {
      if (typeof cell === 'number') return cell;
      const n = typeof cell === 'string' && cell.trim() !== '' ? Number(cell.trim()) : Number.NaN;
      return Number.isFinite(n) ? n : undefined;
    }
    case 'boolean': {
      if (typeof cell === 'boolean') return cell;
      const s = String(cell).trim().toLowerCase();
      return TRUE.has(s) ? true : FALSE.has(s) ? false : undefined;
    }
    case 'date':
    case 'datetime': {
      let ms: number;
      if (typeof cell === 'number')
        ms = Math.abs(cell) < 1e11 ? cell * 1000 : cell; // epoch seconds or milliseconds
      else if (typeof cell === 'string') {
        if (type === 'date' && DATE.test(cell)) return DATE.exec(cell)![1]!;
        ms = Date.parse(cell);
      } else return undefined;
      if (!Number.isFinite(ms) || Number.isNaN(new Date(ms).getTime())) return undefined;
      const iso = new Date(ms).toISOString();
      return type === 'date' ? iso.slice(0, 10) : iso;
    }
    default:
      return typeof cell === 'string' ? cell : String(cell);
  }
}

/** The rows a rowsPath selects: a single match that is a list gives its elements. */
export function selectRows(doc: unknown, rowsPath: string): unknown[] {
  const matches = query(rowsPath, doc);
  if (matches.length === 1 && Array.isArray(matches[0])) return matches[0];
  return matches;
}

/** Maps a JSON document to a dataset (pure: the provider's fetch, tests, preview). */
export function parseJsonDocument(body: Buffer, _contentType: string | null, config: JsonConfig): Dataset {
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (!text.trim()) throw new Error('the document is empty');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new Error(`it is not JSON (${(err as Error).message})`);
  }
  const warnings: string[] = [];
  let selected = selectRows(doc, config.rowsPath);
  if (selected.length === 0) warnings.push(`The rows expression ${config.rowsPath} matched nothing in the document`);
  if (selected.length > config.maxRows) {
    warnings.push(`The document has ${selected.length} rows; the first ${config.maxRows} were kept`);
    selected = selected.slice(0, config.maxRows);
  }
  if (!config.columns) {
    const rows = selected.map(flatten);
    let columns = inferColumns(rows);
    if (columns.length > JSON_LIMITS.maxColumns) {
      warnings.push(`The rows have ${columns.length} fields; the first ${JSON_LIMITS.maxColumns} became columns (map columns to choose others)`);
      columns = columns.slice(0, JSON_LIMITS.maxColumns);
    }
    return { columns, rows: rows.map((r) => Object.fromEntries(columns.map((c) => [c.name, r[c.name] ?? null]))), warnings };
  }
  const mapped = config.columns;
  const misfits = new Map<string, number>();
  const raw = selected.map((item) => Object.fromEntries(mapped.map((c) => [c.name, toCell(query(c.path, item)[0])])) as Row);
  const inferred = new Map(inferColumns(raw).map((c) => [c.name, c.type]));
  const columns: Column[] = mapped.map((c) => ({ name: c.name, type: c.type ?? inferred.get(c.name) ?? 'text' }));
  const rows = raw.map((row) => {
    const out: Row = {};
    for (const column of columns) {
      const cell = coerce(row[column.name] ?? null, column.type);
      if (cell === undefined) misfits.set(column.name, (misfits.get(column.name) ?? 0) + 1);
      out[column.name] = cell ?? null;
    }
    return out;
  });
  for (const [name, count] of misfits) {
    const type = columns.find((c) => c.name === name)!.type;
    warnings.push(
      `${count} value${count === 1 ? '' : 's'} of column ${name} ${count === 1 ? 'is' : 'are'} not ${type === 'number' ? 'a number' : `a ${type}`}; left empty`,
    );
  }
  for (const c of mapped) if (selected.length > 0 && rows.every((r) => r[c.name] === null)) warnings.push(`Column ${c.name} (${c.path}) is empty in every row`);
  return { columns, rows, warnings };
}
