import { useCallback, useState } from 'preact/hooks';
import { api, ApiError, atLeast } from '../../api';
import { useApprovalsRequired } from '../../ui/publishing';
import { ErrorNote, Notice, useAction, useLoad, useSession, useTitle } from '../../ui';
import {
  type Campaign,
  type ContentRef,
  type Draft,
  explain,
  fromLocalInput,
  type Lists,
  loadLists,
  nameOf,
  type Placement,
  type Preflight,
  stateOf,
  toLocalInput,
} from './model';
import { PlacementEditor } from './placements';
import { PreflightPanel, PublishPanel, ReleasesPanel } from './release';

/** One campaign: its draft (name, window, what plays, content, placements), the preflight checklist, publishing, releases. */
export function CampaignPage({ id }: { id: string }) {
  const { user } = useSession();
  const campaign = useLoad(() => api.get<Campaign>(`campaigns/${id}`), [id]);
  const lists = useLoad(loadLists);
  const preflight = useLoad(() => api.get<Preflight>(`campaigns/${id}/preflight`), [id]);
  const [releasesSeq, setReleasesSeq] = useState(0);
  const [notice, setNotice] = useState('');
  // Edits not saved yet: Publish releases the saved draft, so it waits for them.
  const [dirty, setDirty] = useState(false);
  useTitle(campaign.data?.name ?? 'Campaign');
  const approvalsRequired = useApprovalsRequired();
  // After every change of the draft or a release: the campaign as it is now, and the checklist again.
  const refreshAll = useCallback(
    async (next?: Campaign) => {
      setDirty(false);
      if (next) campaign.setData(next);
      else await campaign.reload();
      await preflight.reload();
      setReleasesSeq((n) => n + 1);
    },
    [campaign.setData, campaign.reload, preflight.reload],
  );
  if (campaign.error)
    return (
      <>
        <h1>Campaign</h1>
        <ErrorNote error={campaign.error} />
        <a href="/campaigns">All campaigns</a>
      </>
    );
  const c = campaign.data;
  if (!c || !lists.data)
    return (
      <>
        <ErrorNote error={lists.error} />
        <p aria-busy="true">Loading the campaign…</p>
      </>
    );
  const state = stateOf(c);
  return (
    <>
      <nav aria-label="Breadcrumb">
        <a href="/campaigns">Campaigns</a>
      </nav>
      <hgroup>
        <h1>{c.name}</h1>
        <p>
          <span class={`badge ${state.tone}`} data-testid="campaign-state">
            {state.label}
          </span>{' '}
          {c.publication ? `Screens play release ${c.publication.number}.` : 'Nothing plays until it is released.'}
        </p>
      </hgroup>
      <DraftForm
        key={c.revision}
        campaign={c}
        lists={lists.data}
        canEdit={atLeast(user, 'editor')}
        onEdit={() => {
          setNotice('');
          setDirty(true);
        }}
        onSaved={async (next) => {
          setNotice('Draft saved; the checklist below was run again.');
          await refreshAll(next);
        }}
        onReload={() => refreshAll()}
      />
      {notice && <Notice>{notice}</Notice>}
      <PreflightPanel preflight={preflight} lists={lists.data} draft={c.draft} />
      <PublishPanel
        campaign={c}
        preflight={preflight.data}
        approvalsRequired={approvalsRequired}
        canPublish={atLeast(user, 'publisher')}
        unsaved={dirty}
        onPublished={() => refreshAll()}
      />
      <ReleasesPanel
        campaign={c}
        seq={releasesSeq}
        canEdit={atLeast(user, 'editor')}
        unsaved={dirty}
        onRestored={async (next, number) => {
          setNotice(`Release ${number} is the draft again; screens keep the current release until the next one.`);
          await refreshAll(next);
        }}
      />
    </>
  );
}

/** The draft, edited whole and saved with If-Match (a stale save is refused and offers a reload). */
function DraftForm({
  campaign,
  lists,
  canEdit,
  onEdit,
  onSaved,
  onReload,
}: {
  campaign: Campaign;
  lists: Lists;
  canEdit: boolean;
  onEdit: () => void;
  onSaved: (c: Campaign) => Promise<void>;
  onReload: () => Promise<void>;
}) {
  const [draft, setDraft] = useState<Draft>(campaign.draft);
  const [starts, setStarts] = useState(toLocalInput(campaign.draft.window?.startsAt));
  const [ends, setEnds] = useState(toLocalInput(campaign.draft.window?.endsAt));
  const [addPick, setAddPick] = useState('');
  const change = (next: Partial<Draft>) => {
    setDraft((d) => ({ ...d, ...next }));
    onEdit();
    if (save.error) save.setError(null);
  };
  const save = useAction(async () => {
    const startsAt = fromLocalInput(starts);
    const endsAt = fromLocalInput(ends);
    if (Boolean(starts) !== Boolean(ends) || (starts && (!startsAt || !endsAt)))
      throw new ApiError(400, 'validation_failed', 'Set both the start and the end of the window (or neither).');
    if (startsAt && endsAt && Date.parse(endsAt) <= Date.parse(startsAt)) throw new ApiError(400, 'validation_failed', 'The window must end after it starts.');
    const body = {
      name: draft.name.trim(),
      description: draft.description,
      window: startsAt && endsAt ? { startsAt, endsAt } : null,
      show: draft.show,
      content: draft.content,
      placements: draft.placements,
    };
    try {
      const next = await api.patch<Campaign>(`campaigns/${campaign.id}/draft`, body, { headers: { 'if-match': `"${campaign.revision}"` } });
      await onSaved(next);
    } catch (err) {
      throw explain(err, 'save the draft');
    }
  });
  const stale = save.error instanceof ApiError && save.error.status === 412;
  const showValue = draft.show ? `${draft.show.type}:${draft.show.id}` : '';
  const addable = (type: ContentRef['type'], id: string) => !draft.content.some((i) => i.type === type && i.id === id);
  const issue = (path: (string | number)[]) => (save.error instanceof ApiError ? save.error.messageAt(path) : undefined);
  return (
    <form
      aria-label="Campaign draft"
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      <fieldset disabled={!canEdit}>
        <div class="grid">
          <label>
            Name
            <input required maxLength={200} value={draft.name} onInput={(e) => change({ name: e.currentTarget.value })} />
          </label>
          <label>
            Plays
            <select
              value={showValue}
              onChange={(e) => {
                const [type, showId] = e.currentTarget.value.split(':');
                change({ show: type && showId ? { type, id: showId } : null });
              }}
            >
              <option value="">Choose a playlist or layout…</option>
              <optgroup label="Playlists">
                {lists.playlists.map((p) => (
                  <option key={p.id} value={`playlist:${p.id}`}>
                    {p.name}
                  </option>
                ))}
              </optgroup>
              <optgroup label="Layouts">
                {lists.layouts.map((l) => (
                  <option key={l.id} value={`layout:${l.id}`}>
                    {l.name}
                  </option>
                ))}
              </optgroup>
            </select>
            {issue(['show', 'id']) && <small>{issue(['show', 'id'])}</small>}
          </label>
        </div>
        <label>
          Description
          <textarea rows={2} maxLength={2000} value={draft.description} onInput={(e) => change({ description: e.currentTarget.value })} />
        </label>
        <fieldset>
          <legend>Window (this browser’s time)</legend>
          <div class="grid">
            <label>
              Starts
              <input
                type="datetime-local"
                value={starts}
                onInput={(e) => {
                  setStarts(e.currentTarget.value);
                  change({});
                }}
              />
            </label>
            <label>
              Ends
              <input
                type="datetime-local"
                value={ends}
                onInput={(e) => {
                  setEnds(e.currentTarget.value);
                  change({});
                }}
              />
            </label>
          </div>
        </fieldset>
        <fieldset>
          <legend>Released with it</legend>
          <small class="muted">What plays is always released; add other playlists, layouts or widgets to publish them at the same moment.</small>
          {draft.content.length === 0 ? (
            <p class="muted">Nothing else.</p>
          ) : (
            <ul class="command-list" data-testid="campaign-content">
              {draft.content.map((item, n) => (
                <li key={`${item.type}:${item.id}`} class="row spread">
                  <span>{nameOf(lists, item.type, item.id)}</span>
                  <button
                    type="button"
                    class="secondary outline small"
                    onClick={() => change({ content: draft.content.filter((_, i) => i !== n) })}
                    aria-label={`Remove ${nameOf(lists, item.type, item.id)}`}
                  >
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          )}
          <div class="row">
            <label>
              Add content
              <select value={addPick} onChange={(e) => setAddPick(e.currentTarget.value)}>
                <option value="">Choose…</option>
                <optgroup label="Playlists">
                  {lists.playlists
                    .filter((p) => addable('playlist', p.id))
                    .map((p) => (
                      <option key={p.id} value={`playlist:${p.id}`}>
                        {p.name}
                      </option>
                    ))}
                </optgroup>
                <optgroup label="Layouts">
                  {lists.layouts
                    .filter((l) => addable('layout', l.id))
                    .map((l) => (
                      <option key={l.id} value={`layout:${l.id}`}>
                        {l.name}
                      </option>
                    ))}
                </optgroup>
                <optgroup label="Widgets">
                  {lists.widgets
                    .filter((w) => addable('widget', w.id))
                    .map((w) => (
                      <option key={w.id} value={`widget:${w.id}`}>
                        {w.name}
                      </option>
                    ))}
                </optgroup>
              </select>
            </label>
            <button
              type="button"
              class="secondary small"
              disabled={!addPick}
              onClick={() => {
                const [type, itemId] = addPick.split(':') as [ContentRef['type'], string];
                change({ content: [...draft.content, { type, id: itemId }] });
                setAddPick('');
              }}
            >
              Add
            </button>
          </div>
        </fieldset>
        <h2>Placements</h2>
        <p class="muted">Each placement becomes a schedule when the campaign is released: where it plays, with which priority, how it repeats.</p>
        {draft.placements.map((p, n) => (
          <PlacementEditor
            key={`${n}-${draft.placements.length}`}
            index={n}
            placement={p}
            lists={lists}
            disabled={!canEdit}
            onChange={(next: Placement) => change({ placements: draft.placements.map((x, i) => (i === n ? next : x)) })}
            onRemove={() => change({ placements: draft.placements.filter((_, i) => i !== n) })}
          />
        ))}
        <button
          type="button"
          class="secondary outline"
          disabled={draft.placements.length >= 20}
          onClick={() =>
            change({ placements: [...draft.placements, { name: '', targets: { screenIds: [], groupIds: [], locationIds: [] }, priority: 0, rrule: null }] })
          }
        >
          Add placement
        </button>
      </fieldset>
      <ErrorNote error={save.error} />
      {stale && (
        <button type="button" class="secondary" onClick={() => void onReload()}>
          Reload the campaign
        </button>
      )}
      {canEdit && (
        <button type="submit" aria-busy={save.busy}>
          Save draft
        </button>
      )}
    </form>
  );
}
