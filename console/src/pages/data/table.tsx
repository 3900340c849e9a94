import type { ComponentChildren } from 'preact';
import { displayLocale } from '../../locale';
import { formatTime } from '../../ui';
import type { Cell, DataColumn, Inspect, Row } from './model';
import { COLUMN_TYPE_WORDS } from './model';

/** Tables of data: rows as they come (a preview, a view's rows) and the fields inspect found. */

const MAX_CHARS = 160;

/** A cell as text: rich text without its tags (never rendered as HTML here), long text cut. */
export function cellText(value: Cell | undefined, type?: DataColumn['type']): string {
  if (value === null || value === undefined || value === '') return '';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  // Dates as people read them (the exact value is the cell's title).
  if (type === 'datetime' && typeof value === 'string' && !Number.isNaN(Date.parse(value))) return formatTime(value);
  if (type === 'date' && typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value))
    return new Date(`${value}T00:00:00Z`).toLocaleDateString(displayLocale(), { dateStyle: 'medium', timeZone: 'UTC' });
  let text = String(value);
  if (type === 'richtext') {
    const doc = new DOMParser().parseFromString(text, 'text/html');
    text = (doc.body.textContent ?? '').replace(/\s+/g, ' ').trim();
  }
  return text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS - 1)}…` : text;
}

/**
 * A box that scrolls sideways when its table is wider than the page. It is a named region
 * that takes focus, so keyboard users can scroll it too (axe: scrollable-region-focusable).
 */
export function ScrollBox({ label, testId, children }: { label: string; testId?: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard to be scrolled by it
    <div class="data-table" role="region" aria-label={label} tabIndex={0} data-testid={testId}>
      {children}
    </div>
  );
}

/**
 * Rows in a table that scrolls sideways inside its own box (a focusable region, so keyboards
 * scroll it too); the page itself never scrolls sideways, at phone width neither.
 */
export function DataTable({ columns, rows, label, testId, empty }: { columns: DataColumn[]; rows: Row[]; label: string; testId?: string; empty?: string }) {
  return (
    <ScrollBox label={label} testId={testId}>
      <table class="striped">
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.name} scope="col" title={COLUMN_TYPE_WORDS[c.type]}>
                {c.name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              {columns.map((c) => {
                const raw = r[c.name];
                const text = cellText(raw, c.type);
                const full = typeof raw === 'string' && (raw.length > MAX_CHARS || text !== raw) ? raw : undefined;
                return (
                  <td key={c.name} title={full} class={typeof raw === 'number' ? 'num' : undefined}>
                    {text === '' ? <span class="muted">—</span> : text}
                  </td>
                );
              })}
            </tr>
          ))}
          {rows.length === 0 && (
            <tr>
              <td colSpan={Math.max(1, columns.length)} class="muted">
                {empty ?? 'No rows.'}
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </ScrollBox>
  );
}

/** What inspect found: each field's type, a few example values and how often it is empty. */
export function FieldsTable({ inspect }: { inspect: Inspect }) {
  return (
    <ScrollBox label="Fields found" testId="fields">
      <table>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Type</th>
            <th scope="col">Examples</th>
            <th scope="col">Empty in</th>
          </tr>
        </thead>
        <tbody>
          {inspect.fields.map((f) => (
            <tr key={f.name} data-field={f.name}>
              <td>
                <code>{f.name}</code>
              </td>
              <td>{COLUMN_TYPE_WORDS[f.type]}</td>
              <td>
                {f.examples.length === 0 ? (
                  <span class="muted">always empty</span>
                ) : (
                  f.examples.map((e, i) => (
                    <span key={i} class="example">
                      {cellText(e, f.type).slice(0, 60) || '—'}
                    </span>
                  ))
                )}
              </td>
              <td>{f.emptyCount === 0 ? 'no row' : `${f.emptyCount} of ${inspect.rowCount} rows`}</td>
            </tr>
          ))}
          {inspect.fields.length === 0 && (
            <tr>
              <td colSpan={4} class="muted">
                No fields found.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </ScrollBox>
  );
}

/** Warnings a provider gave (cut rows, guessed encodings...), when there are any. */
export function Warnings({ warnings }: { warnings: string[] }) {
  if (warnings.length === 0) return null;
  return (
    <ul class="data-warnings" data-testid="warnings">
      {warnings.map((w) => (
        <li key={w}>
          <span class="badge warn">note</span> {w}
        </li>
      ))}
    </ul>
  );
}
