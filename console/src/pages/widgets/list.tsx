import { api, atLeast } from '../../api';
import { UnpublishedBadge } from '../../ui/publishing';
import { ErrorNote, formatTime, useLoad, useSession, useTitle } from '../../ui';
import { useSources } from './binding';
import { loadTypes, typeName, type Widget } from './model';

/** Widgets: clocks, tickers, menu boards, feeds and custom templates, with what data each shows. */
export function WidgetsPage() {
  useTitle('Widgets');
  const { user } = useSession();
  const list = useLoad(() => api.get<{ items: Widget[] }>('widgets?limit=500'));
  const types = useLoad(loadTypes);
  const sources = useSources();
  const sourceName = (id: string) => sources.data?.find((s) => s.id === id)?.name ?? 'a data source you cannot see';
  return (
    <>
      <hgroup>
        <h1>Widgets</h1>
        <p>Clocks, tickers, menu boards, feeds and your own templates, drawn from your data and shown in playlists and layout zones.</p>
      </hgroup>
      {atLeast(user, 'editor') && (
        <div class="row">
          <a href="/widgets/new" role="button">
            New widget
          </a>
        </div>
      )}
      <ErrorNote error={list.error} />
      <div class="table-wrap">
        <table class="striped">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Shows data from</th>
              <th scope="col">Changed</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.items ?? []).map((w) => (
              <tr key={w.id} data-widget={w.name}>
                <td data-label="Name">
                  <a href={`/widgets/${w.id}`}>{w.name}</a> <UnpublishedBadge unpublished={w.unpublishedChanges} />
                  {w.errors?.length > 0 && (
                    <>
                      {' '}
                      <span class="badge bad">does not build</span>
                    </>
                  )}
                </td>
                <td data-label="Kind">{typeName(types.data, w.type)}</td>
                <td data-label="Shows data from">{w.binding ? sourceName(w.binding.sourceId) : <span class="muted">no data</span>}</td>
                <td data-label="Changed">{formatTime(w.updatedAt)}</td>
              </tr>
            ))}
            {list.data && list.data.items.length === 0 && (
              <tr>
                <td colSpan={4} class="muted">
                  No widgets yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </>
  );
}
