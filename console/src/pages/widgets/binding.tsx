import { api, type Page } from '../../api';
import { useLoad } from '../../ui';
import { Field } from '../../ui/fields';
import { type DataSource, ViewEditor } from '../data/shared';
import type { Binding } from './model';

/**
 * The data a widget shows: a source (the ones this user may read), then which of its rows and
 * fields (a view, with the Data page's view editor and its live table). The fields a type
 * needs (a table's columns, a feed's title) are picked in its settings, from the source's columns.
 */
export function BindingPicker({
  binding,
  need,
  sources,
  onChange,
  disabled,
  error,
}: {
  binding: Binding | null;
  need: 'optional' | 'none';
  sources: DataSource[] | undefined;
  onChange: (next: Binding | null) => void;
  disabled: boolean;
  error?: string;
}) {
  if (need === 'none' && !binding) return null;
  const source = binding ? sources?.find((s) => s.id === binding.sourceId) : undefined;
  return (
    <section class="widget-binding" aria-labelledby="binding-h">
      <h2 id="binding-h">Data</h2>
      <Field label="Data source" error={error} help="The rows this widget shows (a table's rows, a feed's items, a calendar's events).">
        {(f) => (
          <select
            {...f}
            disabled={disabled}
            value={binding?.sourceId ?? ''}
            onChange={(e) => {
              const id = e.currentTarget.value;
              // Another source starts from all of it (a view names its source's fields).
              onChange(id ? { sourceId: id, view: id === binding?.sourceId ? binding.view : null } : null);
            }}
          >
            <option value="">None</option>
            {(sources ?? []).map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
            {binding && sources && !source && <option value={binding.sourceId}>a data source you cannot see</option>}
          </select>
        )}
      </Field>
      {source && (
        <fieldset disabled={disabled} class="plain">
          <ViewEditor
            key={source.id}
            source={source}
            initial={binding?.view ?? null}
            onChange={(v) => onChange({ sourceId: source.id, view: Object.keys(v).length ? v : null })}
            level={2}
            title="Rows the widget shows"
            intro={`From “${source.name}”. Conditions, a sort, a limit or fewer fields make a view; without any the widget gets every row. The table follows the view.`}
          />
        </fieldset>
      )}
    </section>
  );
}

/** The sources this user may read (the binding's choices). */
export function useSources() {
  return useLoad(() => api.get<Page<DataSource>>('data-sources?limit=500').then((p) => p.items));
}
