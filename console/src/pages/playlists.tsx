import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, atLeast, qs, type Page } from '../api';
import { formatDuration, type Asset, type Daypart, type Playlist, type PlaylistItem, type PlaylistSummary } from '../types';
import { DraftBar, HistoryPanel, UnpublishedBadge } from '../ui/publishing';
import { ErrorNote, formatTime, formValues, Notice, useAction, useLoad, useSession, useTitle } from '../ui';
import { confirmAction, showToast } from '../ui/confirm';
import { PlaylistPlayer } from '../ui/preview';
import { AddWidgetItem } from './widgets';

/** Playlists: what plays, in order, for how long. */
export function PlaylistsPage() {
  useTitle('Playlists');
  const { user } = useSession();
  const { route } = useLocation();
  const list = useLoad(() => api.get<Page<PlaylistSummary>>('playlists?limit=500'));
  const create = useAction(async (form: HTMLFormElement) => {
    const p = await api.post<Playlist>('playlists', { name: formValues(form).name });
    route(`/playlists/${p.id}`);
  });
  return (
    <>
      <hgroup>
        <h1>Playlists</h1>
        <p>Sequences of media with durations; assign them to screens or groups, or schedule them.</p>
      </hgroup>
      {atLeast(user, 'editor') && (
        <form
          aria-label="New playlist"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run(e.currentTarget);
          }}
        >
          <fieldset role="group">
            <input name="name" placeholder="New playlist name" aria-label="New playlist name" required maxLength={200} />
            <button type="submit" aria-busy={create.busy}>
              Create playlist
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
              <th scope="col">Items</th>
              <th scope="col">Changed</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.items ?? []).map((p) => (
              <tr key={p.id} data-playlist={p.name}>
                <td>
                  <a href={`/playlists/${p.id}`}>{p.name}</a> <UnpublishedBadge unpublished={p.unpublishedChanges} />
                </td>
                <td>{p.itemCount}</td>
                <td>{formatTime(p.updatedAt)}</td>
              </tr>
            ))}
            {list.data && list.data.items.length === 0 && (
              <tr>
                <td colSpan={3} class="muted">
                  No playlists yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** One playlist: items (drag or move buttons to reorder), durations, add from the library. */
export function PlaylistDetailPage({ id }: { id: string }) {
  const { user } = useSession();
  const canEdit = atLeast(user, 'editor');
  const playlist = useLoad(() => api.get<Playlist>(`playlists/${id}`), [id]);
  useTitle(playlist.data?.name ?? 'Playlist');
  const [dragging, setDragging] = useState<string | null>(null);
  const p = playlist.data;
  const reorder = useAction(async (itemIds: string[]) => {
    const updated = await api.put<Playlist>(`playlists/${id}/items/order`, { itemIds }, { headers: { 'If-Match': String(p!.revision) } });
    playlist.setData(updated);
  });
  const rename = useAction(async (name: string) => {
    playlist.setData(await api.patch<Playlist>(`playlists/${id}`, { name }));
  });
  const { route } = useLocation();
  const remove = useAction(async () => {
    const yes = await confirmAction({
      title: `Delete the playlist “${p!.name}”?`,
      body: <p>The playlist and its list of items go; the media stays in the library. This cannot be undone.</p>,
      confirmLabel: 'Delete playlist',
      danger: true,
      impact: { playlistIds: [id] },
      screensLabel: 'These screens play it now:',
      usedByLabel: 'It is used by (change these first):',
    });
    if (!yes) return;
    await api.del(`playlists/${id}`);
    showToast(`Deleted the playlist “${p!.name}”.`);
    route('/playlists');
  });
  if (playlist.error) return <ErrorNote error={playlist.error} />;
  if (!p) return <p aria-busy="true">Loading…</p>;
  const ids = p.items.map((i) => i.id);
  const move = (from: number, to: number) => {
    if (to < 0 || to >= ids.length || from === to) return;
    const next = [...ids];
    const [moved] = next.splice(from, 1);
    next.splice(to, 0, moved!);
    void reorder.run(next).then((ok) => !ok && void playlist.reload());
  };
  return (
    <>
      <nav aria-label="breadcrumb">
        <ul>
          <li>
            <a href="/playlists">Playlists</a>
          </li>
          <li>{p.name}</li>
        </ul>
      </nav>
      <hgroup>
        <h1>{p.name}</h1>
        <p>
          {p.items.length} item{p.items.length === 1 ? '' : 's'} · {formatDuration(p.durationMs)} per loop · changed {formatTime(p.updatedAt)}{' '}
          <UnpublishedBadge unpublished={p.unpublishedChanges} />
        </p>
      </hgroup>
      <DraftBar type="playlist" id={id} publication={p.publication} canEdit={canEdit} onDone={() => void playlist.reload()} />
      {atLeast(user, 'publisher') && (
        <p>
          <a href={`/schedules?playlist=${id}`} role="button" class="secondary outline small">
            Schedule it
          </a>{' '}
          <small class="muted">or assign it as a screen’s or group’s default playlist on its page.</small>
        </p>
      )}
      {canEdit && (
        <details>
          <summary>Rename or delete</summary>
          <form
            aria-label="Rename playlist"
            onSubmit={(e) => {
              e.preventDefault();
              void rename.run(formValues(e.currentTarget).name ?? '');
            }}
          >
            <fieldset role="group">
              <input name="name" defaultValue={p.name} aria-label="Playlist name" required maxLength={200} />
              <button type="submit" aria-busy={rename.busy}>
                Rename
              </button>
              <button type="button" class="contrast outline" disabled={remove.busy} onClick={() => void remove.run()}>
                Delete
              </button>
            </fieldset>
            <ErrorNote error={rename.error ?? remove.error} />
          </form>
        </details>
      )}
      <ErrorNote error={reorder.error} />
      <ol class="playlist-items" aria-label="Items">
        {p.items.map((item, index) => (
          <li
            key={item.id}
            data-item={item.label ?? item.id}
            data-window={windowState(item, Date.now())}
            draggable={canEdit}
            class={
              [dragging === item.id ? 'dragging' : '', ['ended', 'upcoming'].includes(windowState(item, Date.now())) ? 'outside-window' : '']
                .filter(Boolean)
                .join(' ') || undefined
            }
            onDragStart={(e) => {
              setDragging(item.id);
              e.dataTransfer?.setData('text/plain', item.id);
            }}
            onDragEnd={() => setDragging(null)}
            onDragOver={(e) => e.preventDefault()}
            onDrop={(e) => {
              e.preventDefault();
              const from = ids.indexOf(e.dataTransfer?.getData('text/plain') ?? '');
              if (from >= 0) move(from, index);
              setDragging(null);
            }}
          >
            <ItemRow playlistId={id} item={item} index={index} count={p.items.length} canEdit={canEdit} move={move} onChanged={playlist.reload} />
          </li>
        ))}
        {p.items.length === 0 && <li class="muted">Empty: add media from the library below.</li>}
      </ol>
      {p.items.length > 0 && (
        <details class="preview-box" data-testid="playlist-preview">
          <summary>Preview: play it here</summary>
          <PlaylistPlayer playlist={p} />
        </details>
      )}
      {canEdit && <AddItems playlistId={id} onAdded={playlist.reload} />}
      {canEdit && <AddWidgetItem playlistId={id} onAdded={playlist.reload} />}
      <HistoryPanel type="playlist" id={id} refresh={p.publication?.number} onChange={() => void playlist.reload()} />
    </>
  );
}

function ItemRow({
  playlistId,
  item,
  index,
  count,
  canEdit,
  move,
  onChanged,
}: {
  playlistId: string;
  item: PlaylistItem;
  index: number;
  count: number;
  canEdit: boolean;
  move: (a: number, b: number) => void;
  onChanged: () => Promise<void>;
}) {
  const patch = useAction(async (body: Record<string, unknown>) => {
    await api.patch(`playlists/${playlistId}/items/${item.id}`, body);
    await onChanged();
  });
  const remove = useAction(async () => {
    const yes = await confirmAction({
      title: `Remove “${item.label ?? 'this item'}” from the playlist?`,
      body: <p>Screens playing this playlist stop showing it. The media stays in the library.</p>,
      confirmLabel: 'Remove',
      danger: true,
      impact: { playlistIds: [playlistId] },
      screensLabel: 'These screens play this playlist now:',
      usedByLabel: 'The playlist is used by:',
    });
    if (!yes) return;
    await api.del(`playlists/${playlistId}/items/${item.id}`);
    await onChanged();
  });
  const thumb = item.assetId ? `/api/v1/assets/${item.assetId}/thumbnail` : null;
  const [on, setOn] = useState(item.enabled);
  useEffect(() => setOn(item.enabled), [item.enabled]);
  return (
    <div class="item-row">
      {canEdit && (
        <span class="drag-handle" aria-hidden="true" title="Drag to reorder">
          ⋮⋮
        </span>
      )}
      {thumb ? <img src={thumb} alt="" class="item-thumb" onError={(e) => (e.currentTarget.style.visibility = 'hidden')} /> : <span class="item-thumb" />}
      <span class="item-label">
        {item.label ?? item.type} <small class="muted">{item.assetKind ?? item.type}</small>
        {item.assetState && item.assetState !== 'ready' && <span class="badge warn">{item.assetState}</span>}
        {!item.enabled && <span class="badge">skipped</span>}
        <WindowBadge item={item} />
      </span>
      {canEdit && item.type !== 'playlist' ? (
        <form
          class="inline duration"
          aria-label={`Duration of ${item.label ?? 'item'}`}
          onSubmit={(e) => {
            e.preventDefault();
            const sec = Number(formValues(e.currentTarget).seconds);
            void patch.run({ durationMs: sec > 0 ? Math.round(sec * 1000) : null });
          }}
        >
          <input
            name="seconds"
            type="number"
            min="0.5"
            step="0.5"
            aria-label={`Seconds for ${item.label ?? 'item'}`}
            placeholder={item.assetKind === 'video' || item.assetKind === 'audio' ? `${item.assetKind} length` : item.assetKind === 'website' ? '30' : '10'}
            defaultValue={item.durationMs ? String(item.durationMs / 1000) : ''}
            onChange={(e) => e.currentTarget.form?.requestSubmit()}
          />
          <small>s</small>
        </form>
      ) : (
        // A nested playlist plays one pass of its own items: its length is theirs, not set here.
        <span title={item.type === 'playlist' ? 'One pass of the nested playlist' : undefined}>{formatDuration(item.effectiveDurationMs)}</span>
      )}
      {canEdit && (
        <span class="item-actions">
          <button
            type="button"
            class="secondary outline small"
            aria-label={`Move ${item.label} up`}
            disabled={index === 0}
            onClick={() => move(index, index - 1)}
          >
            ↑
          </button>
          <button
            type="button"
            class="secondary outline small"
            aria-label={`Move ${item.label} down`}
            disabled={index === count - 1}
            onClick={() => move(index, index + 1)}
          >
            ↓
          </button>
          {/* A switch shows the state it is in; the old "On" button read as the action and turned the item off. */}
          <label class="switch-label" title={item.enabled ? 'Plays: screens show this item' : 'Skipped: screens do not show this item'}>
            <input
              type="checkbox"
              role="switch"
              checked={on}
              aria-label={`${item.label ?? 'Item'} plays`}
              onChange={(e) => {
                const next = e.currentTarget.checked;
                setOn(next); // follows the hand at once; the server's answer confirms it (or puts it back)
                void patch.run({ enabled: next }).then((ok) => !ok && setOn(item.enabled));
              }}
            />
            {on ? 'Plays' : 'Skipped'}
          </label>
          <button type="button" class="contrast outline small" aria-label={`Remove ${item.label}`} onClick={() => void remove.run()}>
            ×
          </button>
        </span>
      )}
      <ErrorNote error={patch.error ?? remove.error} />
      <ItemWhen playlistId={playlistId} item={item} canEdit={canEdit} onChanged={onChanged} />
    </div>
  );
}

/** Where an item stands against its validity window now: `ended` and `upcoming` items are skipped by screens. */
function windowState(item: PlaylistItem, now: number): 'always' | 'current' | 'ended' | 'upcoming' {
  if (!item.validFrom && !item.validUntil) return 'always';
  if (item.validUntil && Date.parse(item.validUntil) <= now) return 'ended';
  if (item.validFrom && Date.parse(item.validFrom) > now) return 'upcoming';
  return 'current';
}

function WindowBadge({ item }: { item: PlaylistItem }) {
  const state = windowState(item, Date.now());
  if (state === 'ended')
    return (
      <span class="badge bad" title="Screens skip it">
        ended {formatTime(item.validUntil)}
      </span>
    );
  if (state === 'upcoming')
    return (
      <span class="badge warn" title="Screens skip it until then">
        from {formatTime(item.validFrom)}
      </span>
    );
  return null;
}

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/** "Mon–Fri 07:00–11:00" for a day-part. */
export function describeDaypart(d: Daypart): string {
  const days = [...d.days].sort((a, b) => a - b);
  const run = days.length > 2 && days.every((v, i) => i === 0 || v === days[i - 1]! + 1);
  const dayText =
    days.length === 7 ? 'Every day' : run ? `${WEEKDAYS[days[0]! - 1]}–${WEEKDAYS[days[days.length - 1]! - 1]}` : days.map((x) => WEEKDAYS[x - 1]).join(', ');
  return `${dayText} ${d.from}–${d.to}`;
}

function describeWhen(item: PlaylistItem): string {
  const parts: string[] = [];
  if (item.validFrom) parts.push(`from ${formatTime(item.validFrom)}`);
  if (item.validUntil) parts.push(`until ${formatTime(item.validUntil)}`);
  if (item.dayparts.length) parts.push(item.dayparts.map(describeDaypart).join('; '));
  return parts.length ? parts.join(' · ') : 'always';
}

/** A datetime-local value (this browser's zone) for an instant, and back. */
const toLocalInput = (iso: string | null) => {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
};
const fromLocalInput = (v: string | undefined) => (v ? new Date(v).toISOString() : null);

/**
 * When an item plays: a validity window (instants, typed in this browser's zone), times of
 * day on chosen weekdays (in each screen's own zone), and its transition.
 */
function ItemWhen({ playlistId, item, canEdit, onChanged }: { playlistId: string; item: PlaylistItem; canEdit: boolean; onChanged: () => Promise<void> }) {
  const label = item.label ?? 'item';
  const [parts, setParts] = useState<Daypart[]>(item.dayparts);
  const [saved, setSaved] = useState(false);
  // The seconds shown are the ones stored (a cut has none); picking a fade or slide offers 0.7 s.
  const [transition, setTransition] = useState(item.transition.type);
  const [transitionSec, setTransitionSec] = useState(item.transition.type === 'none' ? '' : String(item.transition.durationMs / 1000));
  const save = useAction(async (form: HTMLFormElement) => {
    const v = formValues(form);
    setSaved(false);
    for (const [i, d] of parts.entries()) if (d.days.length === 0) throw new Error(`Time of day ${i + 1}: choose at least one day.`);
    await api.patch(`playlists/${playlistId}/items/${item.id}`, {
      validFrom: fromLocalInput(v.validFrom),
      validUntil: fromLocalInput(v.validUntil),
      dayparts: parts,
      transition: { type: transition, durationMs: transition === 'none' ? 0 : Math.round(Number(transitionSec || 0) * 1000) },
    });
    await onChanged();
    setSaved(true);
  });
  const setPart = (i: number, fn: (d: Daypart) => Daypart) => setParts((ps) => ps.map((d, j) => (j === i ? fn(d) : d)));
  return (
    <details class="item-when">
      <summary>
        When: <span data-testid="item-when">{describeWhen(item)}</span>
        {item.transition.type !== 'none' && (
          <small class="muted">
            {' '}
            · {item.transition.type} {item.transition.durationMs / 1000} s
          </small>
        )}
      </summary>
      <form
        aria-label={`When ${label} plays`}
        onSubmit={(e) => {
          e.preventDefault();
          void save.run(e.currentTarget);
        }}
      >
        <fieldset disabled={!canEdit}>
          <div class="grid">
            <label>
              Plays from
              <input name="validFrom" type="datetime-local" defaultValue={toLocalInput(item.validFrom)} />
            </label>
            <label>
              Plays until
              <input name="validUntil" type="datetime-local" defaultValue={toLocalInput(item.validUntil)} />
            </label>
          </div>
          <small class="muted">Blank: no limit. Dates are in this browser’s time zone; outside them screens skip the item.</small>
          <fieldset>
            <legend>Times of day</legend>
            {parts.length === 0 && <p class="muted">All day, every day.</p>}
            {parts.map((d, i) => (
              <fieldset key={i} class="daypart" aria-label={`Time of day ${i + 1}`}>
                <div class="checks">
                  {WEEKDAYS.map((name, k) => (
                    <label key={name}>
                      <input
                        type="checkbox"
                        checked={d.days.includes(k + 1)}
                        onChange={(e) => {
                          const on = e.currentTarget.checked;
                          setPart(i, (x) => ({ ...x, days: on ? [...x.days, k + 1].sort((a, b) => a - b) : x.days.filter((y) => y !== k + 1) }));
                        }}
                      />{' '}
                      {name}
                    </label>
                  ))}
                </div>
                <div class="row">
                  <label>
                    From
                    <input type="time" required value={d.from} onChange={(e) => setPart(i, (x) => ({ ...x, from: e.currentTarget.value }))} />
                  </label>
                  <label>
                    To
                    <input
                      type="time"
                      required
                      value={d.to === '24:00' ? '00:00' : d.to}
                      onChange={(e) => setPart(i, (x) => ({ ...x, to: e.currentTarget.value }))}
                    />
                  </label>
                  <button type="button" class="secondary outline small" onClick={() => setParts((ps) => ps.filter((_, j) => j !== i))}>
                    Remove
                  </button>
                </div>
              </fieldset>
            ))}
            <button
              type="button"
              class="secondary outline small"
              onClick={() => setParts((ps) => [...ps, { days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' }])}
            >
              Add a time of day
            </button>
            <small class="muted"> In each screen’s own time zone; a “to” at or before “from” runs past midnight.</small>
          </fieldset>
          <div class="row">
            <label>
              Transition
              <select
                name="transition"
                aria-label="Transition"
                value={transition}
                onChange={(e) => {
                  const next = e.currentTarget.value as PlaylistItem['transition']['type'];
                  setTransition(next);
                  if (next === 'none') setTransitionSec('');
                  else if (!Number(transitionSec)) setTransitionSec('0.7');
                }}
              >
                {(['fade', 'slide', 'none'] as const).map((k) => (
                  <option key={k} value={k}>
                    {k === 'none' ? 'None (cut)' : k === 'fade' ? 'Fade' : 'Slide'}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Seconds
              <input
                name="transitionSec"
                type="number"
                min="0"
                max="10"
                step="0.1"
                value={transitionSec}
                disabled={transition === 'none'}
                placeholder={transition === 'none' ? 'no transition' : ''}
                onInput={(e) => setTransitionSec(e.currentTarget.value)}
                aria-label="Transition seconds"
              />
            </label>
          </div>
          <ErrorNote error={save.error} />
          {saved && !save.error && <Notice>Saved.</Notice>}
          <button type="submit" class="small" aria-busy={save.busy}>
            Save when it plays
          </button>
        </fieldset>
      </form>
    </details>
  );
}

function AddItems({ playlistId, onAdded }: { playlistId: string; onAdded: () => Promise<void> }) {
  const [q, setQ] = useState('');
  const assets = useLoad(() => api.get<Page<Asset>>(`assets${qs({ q, limit: 60 })}`), [q]);
  const add = useAction(async (asset: Asset) => {
    await api.post(`playlists/${playlistId}/items`, { assetId: asset.id });
    await onAdded();
  });
  return (
    <section aria-labelledby="add-h">
      <h2 id="add-h">Add from the library</h2>
      <input type="search" placeholder="Search the library" aria-label="Search media to add" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
      <ErrorNote error={add.error ?? assets.error} />
      <ul class="asset-grid compact">
        {(assets.data?.items ?? []).map((a) => (
          <li key={a.id} class="asset-card" data-asset={a.name}>
            <button type="button" class="asset-open" aria-label={`Add ${a.name}`} disabled={add.busy} onClick={() => void add.run(a)}>
              {a.variants.some((v) => v.purpose === 'thumbnail') ? (
                <img src={`/api/v1/assets/${a.id}/thumbnail`} alt="" loading="lazy" />
              ) : (
                <span class="asset-placeholder">{a.kind}</span>
              )}
            </button>
            <span class="asset-name" title={a.name}>
              {a.name}
            </span>
          </li>
        ))}
      </ul>
      {assets.data && assets.data.items.length === 0 && (
        <p class="muted">
          No media{q ? ' matches' : ''}. <a href="/library">Upload some in the library</a>.
        </p>
      )}
    </section>
  );
}
