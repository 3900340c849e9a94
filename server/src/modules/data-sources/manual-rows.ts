import type { Cell, Column, Row } from './providers/types.js';

/**
 * The rows of a manual table: a plain ordered list (records, forms and approvals come
 * later, on top). Each cell must fit its column's type; a missing cell is empty.
 */
export const MAX_MANUAL_ROWS = 10_000;

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Why a cell does not fit its column, or null when it does. */
function misfit(cell: Cell, column: Column): string | null {
  if (cell === null) return null;
  switch (column.type) {
    case 'number':
      return typeof cell === 'number' && Number.isFinite(cell) ? null : 'a number';
    case 'boolean':
      return typeof cell === 'boolean' ? null : 'true or false';
    case 'date':
      return typeof cell === 'string' && DATE.test(cell) && !Number.isNaN(Date.parse(cell)) ? null : 'a date (YYYY-MM-DD)';
    case 'datetime':
      return typeof cell === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(cell) && !Number.isNaN(Date.parse(cell)) ? null : 'a date and time (ISO 8601)';
    case 'url':
    case 'image': {
      if (typeof cell !== 'string') return 'an http(s) address';
      if (cell === '') return null;
      try {
        return /^https?:$/.test(new URL(cell).protocol) ? null : 'an http(s) address';
      } catch {
        return 'an http(s) address';
      }
    }
    default:
      return typeof cell === 'string' ? null : 'text';
  }
}

export interface RowIssue {
  path: (string | number)[];
  message: string;
}

/** Every cell that names no column or does not fit it (at most 50 issues). */
export function checkRows(columns: readonly Column[], rows: readonly Row[], field = 'rows'): RowIssue[] {
  const byName = new Map(columns.map((c) => [c.name, c]));
  const issues: RowIssue[] = [];
  for (const [i, row] of rows.entries()) {
    for (const [name, cell] of Object.entries(row)) {
      const column = byName.get(name);
      const why = column ? misfit(cell, column) : `not a column of this table (${columns.map((c) => c.name).join(', ') || 'it has none'})`;
      if (why) issues.push({ path: [field, i, name], message: column ? `must be ${why}` : why });
      if (issues.length >= 50) return issues;
    }
  }
  return issues;
}

/** Rows as the snapshot holds them: every column, in order; a cell that no longer fits (its column changed type) is empty. */
export function projectRows(columns: readonly Column[], rows: readonly Row[]): Row[] {
  return rows.map((row) => Object.fromEntries(columns.map((c) => [c.name, misfit(row[c.name] ?? null, c) === null ? (row[c.name] ?? null) : null])));
}
