import type { Cell, Column, ColumnType, Row } from './types.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const IMAGE_PATH = /\.(png|jpe?g|gif|webp|avif|svg)$/i;

/** The type one value suggests, or null for an empty cell. */
export function cellType(value: Cell): ColumnType | null {
  if (value === null || value === '') return null;
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (DATE.test(value)) return 'date';
  if (DATETIME.test(value) && !Number.isNaN(Date.parse(value))) return 'datetime';
  if (/^https?:\/\//i.test(value)) {
    try {
      return IMAGE_PATH.test(new URL(value).pathname) ? 'image' : 'url';
    } catch {
      return 'text';
    }
  }
  if (/<\/?[a-z][^>]*>/i.test(value)) return 'richtext';
  return 'text';
}

/** The narrowest type every non-empty value of a column fits (text when they disagree). */
function columnType(types: Set<ColumnType>): ColumnType {
  if (types.size === 0) return 'text';
  if (types.size === 1) return [...types][0]!;
  if ([...types].every((t) => t === 'date' || t === 'datetime')) return 'datetime';
  if ([...types].every((t) => t === 'url' || t === 'image')) return 'url';
  if ([...types].every((t) => t === 'text' || t === 'richtext')) return 'richtext';
  return 'text';
}

/** Columns of rows, in first-seen key order, each typed by its values. */
export function inferColumns(rows: readonly Row[]): Column[] {
  const seen = new Map<string, Set<ColumnType>>();
  for (const row of rows) {
    for (const [name, value] of Object.entries(row)) {
      let types = seen.get(name);
      if (!types) seen.set(name, (types = new Set()));
      const t = cellType(value);
      if (t) types.add(t);
    }
  }
  return [...seen].map(([name, types]) => ({ name, type: columnType(types) }));
}
