import { useState } from 'preact/hooks';
import { api } from '../../api';
import { ErrorNote, useAction, useLoad } from '../../ui';
import type { Widget } from './model';

/** The widgets this user may read (the pickers' choices in playlists and layout zones). */
export function useWidgets() {
  return useLoad(() => api.get<{ items: Widget[] }>('widgets?limit=500').then((p) => p.items));
}

/** A playlist's "Add a widget": one of the widgets, added at the end (POST /playlists/{id}/items {widgetId}). */
export function AddWidgetItem({ playlistId, onAdded }: { playlistId: string; onAdded: () => Promise<void> }) {
  const widgets = useWidgets();
  const [chosen, setChosen] = useState('');
  const add = useAction(async () => {
    await api.post(`playlists/${playlistId}/items`, { widgetId: chosen });
    setChosen('');
    await onAdded();
  });
  if (!widgets.data?.length) return null;
  return (
    <section aria-labelledby="add-widget-h" class="add-widget">
      <h2 id="add-widget-h">Add a widget</h2>
      <div class="row">
        <select aria-label="Widget to add" value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
          <option value="">Choose a widget…</option>
          {widgets.data.map((w) => (
            <option key={w.id} value={w.id}>
              {w.name}
            </option>
          ))}
        </select>
        <button type="button" disabled={!chosen || add.busy} aria-busy={add.busy} onClick={() => void add.run()}>
          Add
        </button>
      </div>
      <ErrorNote error={add.error} />
      <p class="muted">
        Or <a href="/widgets/new">make a new widget</a>.
      </p>
    </section>
  );
}
