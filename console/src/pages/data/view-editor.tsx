import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../../api';
import { ErrorNote } from '../../ui';
import type { ColumnType, DataColumn, DataSource, View, ViewFilter, ViewPreview } from './model';
import { DataTable } from './table';
import { when } from './words';

/**
 * Views: filter rows (field, operator, value; dates also relative: today, this week, the next
 * N days), sort keys, a limit and the fields kept, with the rows they give now from the
 * source's current data (POST /data-sources/{id}/views/preview). The server's verdict on
 * each mistake shows under its control. docs/data-sources-providers.md, "Views".
 */

type Op = ViewFilter['op'];
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
const RELATIVE: [string, string][] = [
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

interface FilterRow {
  field: string;
  op: Op;
  value: string;
  value2: string;
  /** Dates: a relative value, or 'date' for the typed one. */
  rel: string;
  days: string;
}
interface SortRow {
  field: string;
  direction: 'asc' | 'desc';
}

const list = (v: string) =>
  v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
const num = (v: string): number | string => (v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v);

function filterOf(r: FilterRow, type: ColumnType | undefined): ViewFilter {
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

export function ViewEditor({ source }: { source: DataSource }) {
  const columns = source.columns;
  const typeOf = (field: string) => columns.find((c) => c.name === field)?.type;
  const [filters, setFilters] = useState<FilterRow[]>([]);
  const [sorts, setSorts] = useState<SortRow[]>([]);
  const [limit, setLimit] = useState('');
  const [hidden, setHidden] = useState<string[]>([]);
  const [result, setResult] = useState<ViewPreview | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const seq = useRef(0);

  const fields = columns.map((c) => c.name).filter((n) => !hidden.includes(n));
  const view: View = {
    ...(filters.length ? { filter: filters.map((f) => filterOf(f, typeOf(f.field))) } : {}),
    ...(sorts.length ? { sort: sorts } : {}),
    ...(limit.trim() ? { limit: Number(limit) } : {}),
    ...(hidden.length ? { fields } : {}),
  };
  const shown = 100;
  const key = JSON.stringify([view, source.snapshot?.revision, source.revision]);
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

  const issue = (...path: (string | number)[]) => (error instanceof ApiError ? error.messageAt(path) : undefined);
  const setFilter = (i: number, patch: Partial<FilterRow>) => setFilters((fs) => fs.map((f, j) => (j === i ? { ...f, ...patch } : f)));
  const first = columns[0]?.name ?? '';
  const capped = !view.limit && result?.rows.length === shown;

  return (
    <section aria-labelledby="view-h" data-testid="view-editor">
      <h2 id="view-h">Data and views</h2>
      <p class="muted">A view picks rows and fields for a widget. Try one here: the table below follows it. Nothing is saved; a widget keeps its own view.</p>
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
