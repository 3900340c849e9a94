import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../../api';
import { ErrorNote, Notice, useAction, useLoad } from '../../ui';
import type { Cell, DataColumn, DataSource, Row, ViewPreview } from './model';
import { ScrollBox } from './table';

/**
 * A table's rows as a small editable grid (issue 17): the whole list is saved at once with
 * PATCH {rows} and If-Match. Records with their own history come with issue 18; until then a
 * table of more rows than the grid loads is edited through the API only.
 */

const GRID_MAX = 1000;

const INPUT: Partial<Record<DataColumn['type'], string>> = { number: 'number', date: 'date', url: 'url', image: 'url' };

function toCell(type: DataColumn['type'], text: string): Cell {
  if (text === '') return null;
  if (type === 'number') return Number.isFinite(Number(text)) ? Number(text) : text;
  return text;
}

export function RowsGrid({ source, onSaved }: { source: DataSource; onSaved: (s: DataSource) => void }) {
  const columns = source.columns;
  const loaded = useLoad(
    () => api.post<ViewPreview>(`data-sources/${source.id}/views/preview`, { limit: GRID_MAX }),
    [source.id, source.snapshot?.revision ?? 0],
  );
  const [rows, setRows] = useState<Row[] | null>(null);
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    if (loaded.data) setRows(loaded.data.rows);
  }, [loaded.data]);
  const save = useAction(async () => {
    // Every row as it stands (blank ones too), so the server's issue paths name the rows shown.
    const updated = await api.patch<DataSource>(`data-sources/${source.id}`, { rows: rows ?? [] }, { headers: { 'if-match': `"${source.revision}"` } });
    setSaved(true);
    onSaved(updated);
  });
  const set = (i: number, name: string, value: Cell) => {
    setSaved(false);
    setRows((rs) => (rs ?? []).map((r, j) => (j === i ? { ...r, [name]: value } : r)));
  };
  const issue = (i: number, name: string) => (save.error instanceof ApiError ? save.error.messageAt(['rows', i, name]) : undefined);
  if (columns.length === 0) return <p class="muted">Add columns in the settings below, then rows here.</p>;
  if (source.rowCount > GRID_MAX)
    return <p class="muted">This table has more than {GRID_MAX} rows: edit them through the API (records come with a later version).</p>;
  return (
    <section aria-labelledby="rows-h" data-testid="rows-grid">
      <h2 id="rows-h">Rows</h2>
      <ErrorNote error={loaded.error} />
      {rows && (
        <form
          aria-label="Rows of the table"
          onSubmit={(e) => {
            e.preventDefault();
            void save.run();
          }}
        >
          <ScrollBox label="Rows to edit">
            <table class="grid-table">
              <thead>
                <tr>
                  {columns.map((c) => (
                    <th key={c.name} scope="col">
                      {c.name}
                    </th>
                  ))}
                  <th scope="col">
                    <span class="visually-hidden">Remove</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r, i) => (
                  <tr key={i}>
                    {columns.map((c) => {
                      const v = r[c.name];
                      const err = issue(i, c.name);
                      const label = `${c.name}, row ${i + 1}`;
                      return (
                        <td key={c.name}>
                          {c.type === 'boolean' ? (
                            <input type="checkbox" aria-label={label} checked={v === true} onChange={(e) => set(i, c.name, e.currentTarget.checked)} />
                          ) : (
                            <input
                              type={(INPUT[c.type] ?? 'text') as 'text'}
                              aria-label={label}
                              aria-invalid={err ? true : undefined}
                              title={err}
                              step={c.type === 'number' ? 'any' : undefined}
                              placeholder={c.type === 'datetime' ? '2025-05-01T18:00:00Z' : undefined}
                              value={v === null || v === undefined ? '' : String(v)}
                              onInput={(e) => set(i, c.name, toCell(c.type, e.currentTarget.value))}
                            />
                          )}
                          {err && <small class="field-error">{err}</small>}
                        </td>
                      );
                    })}
                    <td>
                      <button
                        type="button"
                        class="secondary outline small"
                        aria-label={`Remove row ${i + 1}`}
                        onClick={() => {
                          setSaved(false);
                          setRows((rs) => (rs ?? []).filter((_, j) => j !== i));
                        }}
                      >
                        ×
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
          <div class="row">
            <button
              type="button"
              class="secondary outline"
              onClick={() => {
                setSaved(false);
                setRows((rs) => [...(rs ?? []), Object.fromEntries(columns.map((c) => [c.name, null]))]);
              }}
            >
              Add a row
            </button>
            <button type="submit" aria-busy={save.busy} disabled={save.busy}>
              Save the rows
            </button>
          </div>
          <ErrorNote error={save.error} />
          {saved && !save.error && <Notice>Rows saved.</Notice>}
        </form>
      )}
    </section>
  );
}
