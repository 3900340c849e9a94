import { api } from '../../api';
import { ErrorNote, useAction, useLoad } from '../../ui';
import { showToast } from '../../ui/confirm';
import { formatBytes } from '../../ui/fields';
import { can, type DataSource, type Outputs, type View } from './model';
import { ScrollBox } from './table';
import { when } from './words';

/**
 * The documents screens download for a source (GET /data-sources/{id}/outputs): the whole
 * source and each view placed on a screen, the version screens get now and how many older
 * ones are kept; "Rebuild now" (editors) builds them again. docs/console.md, "Data".
 */

/** A view in a few words: "2 conditions, sorted by title, at most 10 rows, 3 fields". */
export function viewWords(view: View | null): string {
  if (!view) return 'The whole source';
  const parts: string[] = [];
  const n = view.filter?.length ?? 0;
  if (n) parts.push(`${n} condition${n === 1 ? '' : 's'}`);
  if (view.sort?.length) parts.push(`sorted by ${view.sort.map((s) => `${s.field}${s.direction === 'desc' ? ' (descending)' : ''}`).join(', ')}`);
  if (view.limit) parts.push(`at most ${view.limit} rows`);
  if (view.fields?.length) parts.push(`fields ${view.fields.join(', ')}`);
  return parts.length ? `A view: ${parts.join(', ')}` : 'A view of every row';
}

export function OutputsPanel({ source }: { source: DataSource }) {
  const outputs = useLoad(() => api.get<Outputs>(`data-sources/${source.id}/outputs`), [source.id, source.snapshot?.revision ?? 0]);
  const rebuild = useAction(async () => {
    const next = await api.post<Outputs>(`data-sources/${source.id}/outputs/rebuild`, {});
    outputs.setData(next);
    const n = next.outputs.filter((o) => o.current).length;
    showToast(`Built ${n} output${n === 1 ? '' : 's'} again; screens using them fetch the new version.`);
  });
  const o = outputs.data;
  const current = (o?.outputs ?? []).filter((x) => x.current);
  const older = (viewKey: string | null) => (o?.outputs ?? []).filter((x) => x.viewKey === viewKey && !x.current).length;
  const viewOf = (viewKey: string | null) => o?.keys.find((k) => k.viewKey === viewKey)?.view ?? null;
  return (
    <section aria-labelledby="outputs-h" data-testid="outputs">
      <div class="row spread">
        <h2 id="outputs-h">Outputs</h2>
        {can(source, 'editor') && (
          <button type="button" class="secondary outline small" aria-busy={rebuild.busy} disabled={rebuild.busy} onClick={() => void rebuild.run()}>
            Rebuild now
          </button>
        )}
      </div>
      <p class="muted">
        What screens download: the whole source and each view placed on a screen, built again when the data changes. Older versions stay a while for screens
        still on them.
      </p>
      <ErrorNote error={outputs.error ?? rebuild.error} />
      {o && current.length === 0 && <p class="muted">None yet: they are built once a screen uses this source (or with Rebuild now).</p>}
      {current.length > 0 && (
        <ScrollBox label="Outputs" testId="outputs-table">
          <table>
            <thead>
              <tr>
                <th scope="col">What</th>
                <th scope="col">Rows</th>
                <th scope="col">Size</th>
                <th scope="col">Built</th>
                <th scope="col">Older versions</th>
              </tr>
            </thead>
            <tbody>
              {current.map((x) => (
                <tr key={x.id} data-output={x.viewKey ?? 'whole'}>
                  <td>
                    {viewWords(viewOf(x.viewKey))}
                    {x.expiresAt && <small class="muted"> (its dates are relative: built again {when(x.expiresAt)})</small>}
                  </td>
                  <td>{x.rowCount}</td>
                  <td class="nowrap">{formatBytes(x.sizeBytes)}</td>
                  <td class="nowrap">{when(x.generatedAt)}</td>
                  <td>{older(x.viewKey) || '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </section>
  );
}
