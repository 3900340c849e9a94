import { useLocation } from 'preact-iso';
import { api, atLeast, type Page } from '../../api';
import { ErrorNote, formatTime, formValues, useAction, useLoad, useSession, useTitle } from '../../ui';
import { confirmAction, showToast } from '../../ui/confirm';
import { type Campaign, explain, stateOf } from './model';

/** Campaigns: bundles of content and placements released together (docs/campaigns.md). */
export function CampaignsPage() {
  useTitle('Campaigns');
  const { user } = useSession();
  const canEdit = atLeast(user, 'editor');
  const { route } = useLocation();
  const list = useLoad(() => api.get<Page<Campaign>>('campaigns?limit=100'));
  const create = useAction(async (form: HTMLFormElement) => {
    const { name } = formValues(form);
    const c = await api.post<Campaign>('campaigns', { name: name?.trim() ?? '' });
    route(`/campaigns/${c.id}`);
  });
  const remove = useAction(async (c: Campaign) => {
    const yes = await confirmAction({
      title: `Delete the campaign “${c.name}”?`,
      body: (
        <p>
          {c.publication
            ? 'Screens playing it stop, and every schedule showing it is deleted with its releases. This cannot be undone.'
            : 'It was never released, so no screen plays it. This cannot be undone.'}
        </p>
      ),
      confirmLabel: 'Delete campaign',
      danger: true,
    });
    if (!yes) return;
    try {
      await api.del(`campaigns/${c.id}`, { headers: { 'if-match': `"${c.revision}"` } });
    } catch (err) {
      throw explain(err, `delete “${c.name}”`);
    }
    showToast(`Deleted “${c.name}”.`);
    await list.reload();
  });
  const items = list.data?.items ?? [];
  return (
    <>
      <hgroup>
        <h1>Campaigns</h1>
        <p>A campaign bundles what plays, where and when, checked before it goes out and released in one step.</p>
      </hgroup>
      {canEdit && (
        <form
          class="row"
          aria-label="New campaign"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run(e.currentTarget);
          }}
        >
          <label>
            New campaign name
            <input name="name" required maxLength={200} placeholder="e.g. Summer sale" />
          </label>
          <button type="submit" aria-busy={create.busy}>
            Create campaign
          </button>
          <ErrorNote error={create.error} />
        </form>
      )}
      <ErrorNote error={list.error} />
      <ErrorNote error={remove.error} />
      {list.loading && !list.data && <p aria-busy="true">Loading campaigns…</p>}
      {list.data && items.length === 0 && <p class="muted">No campaigns yet.</p>}
      {items.length > 0 && (
        <div class="table-wrap">
          <table class="striped">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Window</th>
                <th scope="col">State</th>
                <th scope="col">Last release</th>
                {canEdit && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {items.map((c) => {
                const state = stateOf(c);
                return (
                  <tr key={c.id} data-campaign={c.name}>
                    <td>
                      <a href={`/campaigns/${c.id}`}>{c.name}</a>
                    </td>
                    <td>{c.draft.window ? `${formatTime(c.draft.window.startsAt)} – ${formatTime(c.draft.window.endsAt)}` : 'Not set'}</td>
                    <td>
                      <span class={`badge ${state.tone}`}>{state.label}</span>
                    </td>
                    <td>{c.publication ? `Release ${c.publication.number}, ${formatTime(c.publication.publishedAt)}` : '—'}</td>
                    {canEdit && (
                      <td class="actions">
                        <button type="button" class="secondary outline small" onClick={() => void remove.run(c)} aria-label={`Delete ${c.name}`}>
                          Delete
                        </button>
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
