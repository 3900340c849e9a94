import { UnpublishedBadge } from '../../ui/publishing';
import { useLocation } from 'preact-iso';
import { api, atLeast, type Page } from '../../api';
import type { LayoutSummary } from '../../types';
import { ErrorNote, formatTime, formValues, useAction, useLoad, useSession, useTitle } from '../../ui';
import { type Layout, RESOLUTIONS } from './model';

/** Layouts: zones on a canvas, each playing a playlist or one piece of media; draft, publish, revisions. */
export function LayoutsPage() {
  useTitle('Layouts');
  const { user } = useSession();
  const { route } = useLocation();
  const list = useLoad(() => api.get<Page<LayoutSummary>>('layouts?limit=500'));
  const create = useAction(async (form: HTMLFormElement) => {
    const v = formValues(form);
    const res = RESOLUTIONS[Number(v.resolution ?? 0)] ?? RESOLUTIONS[0]!;
    const l = await api.post<Layout>('layouts', {
      name: v.name,
      width: res.w,
      height: res.h,
      zones: [{ name: 'Main', x: 0, y: 0, width: res.w, height: res.h }],
    });
    route(`/layouts/${l.id}`);
  });
  return (
    <>
      <hgroup>
        <h1>Layouts</h1>
        <p>Split a screen into zones, each with its own playlist or picture. Edit a draft; publish it, then schedule it on screens.</p>
      </hgroup>
      {atLeast(user, 'editor') && (
        <form
          aria-label="New layout"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run(e.currentTarget);
          }}
        >
          <fieldset role="group">
            <input name="name" placeholder="New layout name" aria-label="New layout name" required maxLength={200} />
            <select name="resolution" aria-label="Canvas size">
              {RESOLUTIONS.map((r, i) => (
                <option key={r.label} value={i}>
                  {r.label}
                </option>
              ))}
            </select>
            <button type="submit" aria-busy={create.busy}>
              Create layout
            </button>
          </fieldset>
          <ErrorNote error={create.error} />
        </form>
      )}
      <ErrorNote error={list.error} />
      <div class="table-wrap">
        <table class="striped">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Canvas</th>
              <th scope="col">Zones</th>
              <th scope="col">Published</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.items ?? []).map((l) => (
              <tr key={l.id} data-layout={l.name}>
                <td>
                  <a href={`/layouts/${l.id}`}>{l.name}</a>
                </td>
                <td>
                  {l.width} × {l.height}
                </td>
                <td>{l.zoneCount}</td>
                <td>
                  {l.publishedRevisionNumber ? formatTime(l.publishedAt) : <span class="muted">not published yet</span>}
                  <UnpublishedBadge unpublished={l.hasUnpublishedChanges && Boolean(l.publishedRevisionNumber)} />
                </td>
              </tr>
            ))}
            {list.data && list.data.items.length === 0 && (
              <tr>
                <td colSpan={4} class="muted">
                  No layouts yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </>
  );
}
