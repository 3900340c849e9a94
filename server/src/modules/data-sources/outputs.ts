import { createHash } from 'node:crypto';
import { DateTime, IANAZone } from 'luxon';
import { datasetSha256 } from './data-sources.repo.js';
import type { Column, Row } from './providers/types.js';
import { applyView, RELATIVE_DAYS, type View, type ViewError } from './views.js';

/**
 * An output document (issue 17, docs/data-sources.md "Outputs"): what a player downloads
 * for a source, or for one view of it: `{sourceId, viewKey, revision, generatedAt, columns,
 * rows}` as JSON bytes with their sha256. Pure: the service stores and serves them.
 */

/** The whole source (no view) has view key ''; answered as null. */
export const WHOLE_SOURCE = '';

/** A view's key: the first 16 hex digits of the sha256 of its canonical JSON; '' for no view or an empty one. */
export function viewKeyOf(view: View | null | undefined): { key: string; json: string | null } {
  if (!view) return { key: WHOLE_SOURCE, json: null };
  const json = canonicalJson(view);
  if (json === '{}') return { key: WHOLE_SOURCE, json: null };
  return { key: createHash('sha256').update(json).digest('hex').slice(0, 16), json };
}

/** JSON with object keys sorted and undefined members left out: one text per meaning. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const RELATIVE = new Set<string>(RELATIVE_DAYS);
const relativeValue = (v: unknown): boolean =>
  Array.isArray(v) ? v.some(relativeValue) : typeof v === 'string' ? RELATIVE.has(v) : Boolean(v && typeof v === 'object' && ('next' in v || 'last' in v));

/** Whether the view's rows depend on the date (a filter with 'today', 'thisWeek', next N days...). */
export const dependsOnDate = (view: View | null): boolean => Boolean(view?.filter?.some((f) => relativeValue(f.value)));

export interface BuiltOutput {
  bytes: Buffer;
  sha256: string;
  /** sha256 of the columns and rows alone (a rebuild giving the same data keeps the current version). */
  dataSha256: string;
  rowCount: number;
  /** When a date-dependent view must be built again: the next midnight in the zone; null otherwise. */
  expiresAt: string | null;
}

export type BuildResult = ({ ok: true } & BuiltOutput) | { ok: false; errors: ViewError[] };

export interface OutputInput {
  sourceId: string;
  revision: number;
  columns: readonly Column[];
  rows: readonly Row[];
}

/** Builds the document of `data` through `view` (null: every row) at `now` in `timeZone`. */
export function buildOutput(data: OutputInput, view: View | null, options: { timeZone: string; now: Date }): BuildResult {
  let columns = data.columns;
  let rows = data.rows;
  if (view) {
    const result = applyView(data, view, options);
    if (!result.ok) return result;
    columns = result.columns;
    rows = result.rows;
  }
  const { sha256: dataSha256, columnsJson, rowsJson } = datasetSha256(columns, rows);
  const head = JSON.stringify({
    sourceId: data.sourceId,
    viewKey: viewKeyOf(view).key || null,
    revision: data.revision,
    generatedAt: options.now.toISOString(),
  });
  // The columns and rows are already serialised (canonically) for the hash: spliced in, not serialised twice.
  const bytes = Buffer.from(`${head.slice(0, -1)},"columns":${columnsJson},"rows":${rowsJson}}`);
  return {
    ok: true,
    bytes,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    dataSha256,
    rowCount: rows.length,
    expiresAt: dependsOnDate(view) ? nextMidnight(options.timeZone, options.now) : null,
  };
}

function nextMidnight(timeZone: string, now: Date): string {
  const zone = IANAZone.isValidZone(timeZone) ? timeZone : 'UTC';
  return DateTime.fromJSDate(now, { zone }).startOf('day').plus({ days: 1 }).toUTC().toISO()!;
}
