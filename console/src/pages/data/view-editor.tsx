import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../../api';
import { ErrorNote } from '../../ui';
import type { DataColumn, DataSource, View, ViewPreview } from './model';
import { DataTable } from './table';
import { type FilterRow, KIND, type Kind, type Op, RELATIVE, type SortRow, stateOf, viewOf } from './view-state';
import { when } from './words';

/**
 * Views: filter rows (field, operator, value; dates also relative: today, this week, the next
 * N days), sort keys, a limit and the fields kept, with the rows they give now from the
 * source's current data (POST /data-sources/{id}/views/preview). The server's verdict on
 * each mistake shows under its control. docs/data-sources-providers.md, "Views".
 * The Data page tries views here; a layout's data zone keeps one (`initial`, `onChange`,
 * and the layout save's verdict as `problems`).
 */

export interface ViewEditorProps {
  source: DataSource;
  /** A saved view to start from (read back into the controls). */
  initial?: View | null;
  /** Told every view the controls make (not the first one). */
  onChange?: (view: View) => void;
  /** Issues found elsewhere (the layout's save), at their paths in the view. */
  problems?: { path: (string | number)[]; message: string }[];
  title?: string;
  intro?: string;
  /** The heading's level: 2 on the Data page, 3 inside the layout editor's zone form. */
  level?: 2 | 3;
}

const OPERATORS: Record<Kind, Op[]> = {
  text: ['eq', 'ne', 'contains', 'startsWith', 'in', 'isEmpty', 'isNotEmpty'],
  number: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'between', 'in', 'isEmpty', 'isNotEmpty'],
  boolean: ['eq', 'ne', 'isEmpty', 'isNotEmpty'],
  time: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'between', 'in', 'isEmpty', 'isNotEmpty'],
};
const OP_WORDS: Record<Kind, Partial<Record<Op, string>>> = {
  text: { eq: 'is', ne: 'is not', contains: 'contains', startsWith: 'starts with', in: 'is one of', isEmpty: 'is empty', isNotEmpty: 'is not empty' },
  number: { eq: '=', ne: '≠', lt: '<', lte: '≤', gt: '>', gte: '≥', between: 'between', in: 'is one of', isEmpty: 'is empty', isNotEmpty: 'is not empty' },
  boolean: { eq: 'is', ne: 'is not', isEmpty: 'is empty', isNotEmpty: 'is not empty' },
  time: {
    eq: 'is on',
    ne: 'is not on',
    lt: 'is before',
    lte: 'is on or before',
    gt: 'is after',
    gte: 'is on or after',
    between: 'is within',
    in: 'is on one of',
    isEmpty: 'is empty',
    isNotEmpty: 'is not empty',
  },
};
export function ViewEditor({
  source,
  initial,
  onChange,
  problems = [],
  title = 'Data and views',
  intro = 'A view picks rows and fields for a widget. Try one here: the table below follows it. Nothing is saved; a widget keeps its own view.',
  level = 2,
}: ViewEditorProps) {
  const columns = source.columns;
  const typeOf = (field: string) => columns.find((c) => c.name === field)?.type;
  const [start] = useState(() => stateOf(initial, columns));
  const [filters, setFilters] = useState<FilterRow[]>(start.filters);
  const [sorts, setSorts] = useState<SortRow[]>(start.sorts);
  const [limit, setLimit] = useState(start.limit);
  const [hidden, setHidden] = useState<string[]>(start.hidden);
  const [result, setResult] = useState<ViewPreview | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const seq = useRef(0);

  const view: View = viewOf({ filters, sorts, limit, hidden }, columns);
  const shown = 100;
  const viewJson = JSON.stringify(view);
  const key = JSON.stringify([view, source.snapshot?.revision, source.revision]);
  // The first view is the one it started from: only later ones are news.
  const told = useRef(viewJson);
  useEffect(() => {
    if (viewJson === told.current) return;
    told.current = viewJson;
    onChange?.(view);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [viewJson]);
  useEffect(() => {
    const mine = ++seq.current;
    const t = setTimeout(async () => {
      setBusy(true);
      try {
        const r = await api.post<ViewPreview>(`data-sources/${source.id}/views/preview`, { ...view, limit: view.limit ?? shown });
        if (mine !== seq.current) return;
        setResult(r);
        setError(null);
      } catch (err) {
        if (mine === seq.current) setError(err);
      } finally {
        if (mine === seq.current) setBusy(false);
      }
    }, 300);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);

  const issue = (...path: (string | number)[]) =>
    (error instanceof ApiError ? error.messageAt(path) : undefined) ??
    problems.find((p) => p.path.length === path.length && path.every((x, n) => String(p.path[n]) === String(x)))?.message;
  const setFilter = (i: number, patch: Partial<FilterRow>) => setFilters((fs) => fs.map((f, j) => (j === i ? { ...f, ...patch } : f)));
  const first = columns[0]?.name ?? '';
  const capped = !view.limit && result?.rows.length === shown;

  return (
    <section aria-labelledby="view-h" data-testid="view-editor">
      {level === 2 ? <h2 id="view-h">{title}</h2> : <h3 id="view-h">{title}</h3>}
      <p class="muted">{intro}</p>
      <fieldset class="view-part">
        <legend>Rows where</legend>
        {filters.map((f, i) => {
          const type = typeOf(f.field);
          const kind = type ? KIND[type] : 'text';
          const noValue = f.op === 'isEmpty' || f.op === 'isNotEmpty';
          const two = f.op === 'between' && (kind === 'number' || f.rel === 'date');
          const valueError = issue('filter', i, 'value');
          const inputType = kind === 'number' ? 'number' : kind === 'time' ? (type === 'date' ? 'date' : 'datetime-local') : 'text';
          return (
            <fieldset key={i} class="row view-row">
              <legend class="visually-hidden">Condition {i + 1}</legend>
              <select aria-label="Field" value={f.field} onChange={(e) => setFilter(i, { field: e.currentTarget.value, op: 'eq', value: '', value2: '' })}>
                {columns.map((c) => (
                  <option key={c.name} value={c.name}>
                    {c.name}
                  </option>
                ))}
              </select>
              <select aria-label="Operator" value={f.op} onChange={(e) => setFilter(i, { op: e.currentTarget.value as Op })}>
                {OPERATORS[kind].map((op) => (
                  <option key={op} value={op}>
                    {OP_WORDS[kind][op]}
                  </option>
                ))}
              </select>
              {!noValue && kind === 'boolean' && (
                <select aria-label="Value" value={f.value || 'true'} onChange={(e) => setFilter(i, { value: e.currentTarget.value })}>
                  <option value="true">yes</option>
                  <option value="false">no</option>
                </select>
              )}
              {!noValue && kind === 'time' && (
                <select aria-label="When" value={f.rel} onChange={(e) => setFilter(i, { rel: e.currentTarget.value })}>
                  {RELATIVE.map(([v, label]) => (
                    <option key={v} value={v}>
                      {label}
                    </option>
                  ))}
                </select>
              )}
              {!noValue && kind === 'time' && (f.rel === 'next' || f.rel === 'last') && (
                <input
                  aria-label="Days"
                  type="number"
                  min="0"
                  step="1"
                  class="short"
                  value={f.days}
                  onInput={(e) => setFilter(i, { days: e.currentTarget.value })}
                />
              )}
              {!noValue && kind !== 'boolean' && (kind !== 'time' || f.rel === 'date') && (
                <input
                  aria-label={two ? 'From' : 'Value'}
                  type={(f.op === 'in' ? 'text' : inputType) as 'text'}
                  placeholder={f.op === 'in' ? 'values, separated by commas' : ''}
                  aria-invalid={valueError ? true : undefined}
                  value={f.value}
                  onInput={(e) => setFilter(i, { value: e.currentTarget.value })}
                />
              )}
              {!noValue && two && (
                <input aria-label="To" type={inputType as 'text'} value={f.value2} onInput={(e) => setFilter(i, { value2: e.currentTarget.value })} />
              )}
              <button
                type="button"
                class="secondary outline small"
                aria-label={`Remove condition ${i + 1}`}
                onClick={() => setFilters((fs) => fs.filter((_, j) => j !== i))}
              >
                ×
              </button>
              {(valueError ?? issue('filter', i, 'op') ?? issue('filter', i, 'field')) && (
                <small class="field-error">{valueError ?? issue('filter', i, 'op') ?? issue('filter', i, 'field')}</small>
              )}
            </fieldset>
          );
        })}
        <button
          type="button"
          class="secondary outline small"
          disabled={!first}
          onClick={() => setFilters((fs) => [...fs, { field: first, op: 'eq', value: '', value2: '', rel: 'today', days: '7' }])}
        >
          Add a condition
        </button>
      </fieldset>
      <fieldset class="view-part">
        <legend>Sorted by</legend>
        {sorts.map((s, i) => (
          <fieldset key={i} class="row view-row">
            <legend class="visually-hidden">Sort {i + 1}</legend>
            <select
              aria-label="Sort field"
              value={s.field}
              onChange={(e) => setSorts((ss) => ss.map((x, j) => (j === i ? { ...x, field: e.currentTarget.value } : x)))}
            >
              {columns.map((c) => (
                <option key={c.name} value={c.name}>
                  {c.name}
                </option>
              ))}
            </select>
            <select
              aria-label="Direction"
              value={s.direction}
              onChange={(e) => setSorts((ss) => ss.map((x, j) => (j === i ? { ...x, direction: e.currentTarget.value as SortRow['direction'] } : x)))}
            >
              <option value="asc">A–Z, 1–9, oldest first</option>
              <option value="desc">Z–A, 9–1, newest first</option>
            </select>
            <button
              type="button"
              class="secondary outline small"
              aria-label={`Remove sort ${i + 1}`}
              onClick={() => setSorts((ss) => ss.filter((_, j) => j !== i))}
            >
              ×
            </button>
          </fieldset>
        ))}
        <button type="button" class="secondary outline small" disabled={!first} onClick={() => setSorts((ss) => [...ss, { field: first, direction: 'asc' }])}>
          {sorts.length ? 'Then by…' : 'Sort by…'}
        </button>
      </fieldset>
      <div class="grid view-grid">
        <fieldset class="view-part view-fields">
          <legend>Fields</legend>
          {columns.map((c) => (
            <label key={c.name}>
              <input
                type="checkbox"
                checked={!hidden.includes(c.name)}
                onChange={(e) => {
                  const on = e.currentTarget.checked;
                  setHidden((h) => (on ? h.filter((x) => x !== c.name) : [...h, c.name]));
                }}
              />{' '}
              {c.name}
            </label>
          ))}
          {issue('fields') && <small class="field-error">{issue('fields')}</small>}
        </fieldset>
        <label>
          Rows at most
          <input type="number" min="1" max="1000" step="1" placeholder="all" value={limit} onInput={(e) => setLimit(e.currentTarget.value)} />
        </label>
      </div>
      <ErrorNote error={error} />
      <details class="expert">
        <summary>The view as JSON</summary>
        <pre class="json" data-testid="view-json">
          {JSON.stringify(view, null, 2)}
        </pre>
      </details>
      <div aria-live="polite" aria-busy={busy}>
        {result && (
          <p data-testid="view-summary">
            {result.rows.length} row{result.rows.length === 1 ? '' : 's'}
            {capped ? ` (the first ${shown})` : ''} of {source.rowCount}
            {result.fetchedAt ? `, from the data of ${when(result.fetchedAt)}` : ''}.
          </p>
        )}
      </div>
      {result && (
        <DataTable
          columns={result.columns as DataColumn[]}
          rows={result.rows}
          label="Rows of the view"
          testId="view-rows"
          empty={source.snapshot ? 'No row matches.' : 'No data yet.'}
        />
      )}
    </section>
  );
}
