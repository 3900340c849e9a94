import { api } from '../../api';
import { ErrorNote, useLoad } from '../../ui';
import { type DataSource, type View, ViewEditor, viewIssuesOf } from '../data/shared';
import type { DataContent, Zone } from './model';

/**
 * A data zone (issue 17): the rows of one data source, all of them or a view. The view is
 * edited with the Data page's view editor and its live preview (pages/data/view-editor.tsx);
 * what the layout's save refused about it (400 at `zones.<i>.content.view`) shows in place.
 */

/** What the last save refused about a zone's view: the view as it was then, and the server's words. */
export interface Refusal {
  viewJson: string;
  messages: string[];
}

export function DataZoneView({
  zone,
  index,
  generation,
  canEdit,
  refusal,
  onView,
}: {
  zone: Zone & { content: DataContent };
  index: number;
  /** Bumped when the draft comes from elsewhere (loaded, restored): the editor starts again from it. */
  generation: number;
  canEdit: boolean;
  refusal: Refusal | undefined;
  onView: (view: View | null) => void;
}) {
  const { sourceId, view } = zone.content;
  const source = useLoad(() => api.get<DataSource>(`data-sources/${sourceId}`), [sourceId]);
  // The refusal stands while the view is the one refused; any change is a new attempt.
  const refused = refusal && refusal.viewJson === JSON.stringify(view ?? null) ? refusal.messages : [];
  const name = zone.name || `Zone ${index + 1}`;
  return (
    <article class="data-zone-view" data-testid="zone-view">
      {refused.length > 0 && (
        <div role="alert" class="zone-view-error" data-testid="zone-view-error">
          <strong>The layout was not saved: this view does not fit its data source.</strong>
          <ul>
            {refused.map((m) => (
              <li key={m}>{m}</li>
            ))}
          </ul>
        </div>
      )}
      <ErrorNote error={source.error} />
      {source.data && (
        <fieldset disabled={!canEdit} class="plain">
          <ViewEditor
            key={`${index}:${sourceId}:${generation}`}
            source={source.data}
            initial={view}
            onChange={(v) => onView(Object.keys(v).length ? v : null)}
            problems={viewIssuesOf(refused)}
            level={2}
            title={`Rows the zone “${name}” shows`}
            intro={`From the data source “${source.data.name}”. Conditions, a sort, a limit or fewer fields make a view; without any the zone shows every row. The table follows the view; saving the layout keeps it.`}
          />
        </fieldset>
      )}
    </article>
  );
}

/** On the canvas: the source's name over the heads of the columns the zone shows. */
export function ZoneDataPreview({ source, view }: { source: DataSource | undefined; view: View | null }) {
  const fields = view?.fields ?? source?.columns.map((c) => c.name) ?? [];
  return (
    <div class="zone-data" aria-hidden="true">
      <table>
        <thead>
          <tr>
            {fields.slice(0, 4).map((f) => (
              <th key={f}>{f}</th>
            ))}
            {fields.length > 4 && <th>…</th>}
          </tr>
        </thead>
        <tbody>
          {[0, 1, 2].map((r) => (
            <tr key={r}>
              {fields.slice(0, Math.min(fields.length, 5)).map((f) => (
                <td key={f} />
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
