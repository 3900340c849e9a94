import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, atLeast, qs, type Page } from '../api';
import { formatDuration, type Asset, type Playlist, type PlaylistItem, type PlaylistSummary } from '../types';
import { ErrorNote, formatTime, formValues, useAction, useLoad, useSession, useTitle } from '../ui';

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
                  <a href={`/playlists/${p.id}`}>{p.name}</a>
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
  const remove = useAction(async () => {
    await api.del(`playlists/${id}`);
    location.assign('/playlists');
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
          {p.items.length} item{p.items.length === 1 ? '' : 's'} · {formatDuration(p.durationMs)} per loop · revision {p.revision}
        </p>
      </hgroup>
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
              <button
                type="button"
                class="contrast outline"
                onClick={() => {
                  if (confirm(`Delete the playlist ${p.name}?`)) void remove.run();
                }}
              >
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
            draggable={canEdit}
            class={dragging === item.id ? 'dragging' : undefined}
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
      {canEdit && <AddItems playlistId={id} onAdded={playlist.reload} />}
    </>
  );
}

function ItemRow({ playlistId, item, index, count, canEdit, move, onChanged }: { playlistId: string; item: PlaylistItem; index: number; count: number; canEdit: boolean; move: (a: number, b: number) => void; onChanged: () => Promise<void> }) {
  const patch = useAction(async (body: Record<string, unknown>) => {
    await api.patch(`playlists/${playlistId}/items/${item.id}`, body);
    await onChanged();
  });
  const remove = useAction(async () => {
    await api.del(`playlists/${playlistId}/items/${item.id}`);
    await onChanged();
  });
  const thumb = item.assetId ? `/api/v1/assets/${item.assetId}/thumbnail` : null;
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
        {!item.enabled && <span class="badge">off</span>}
      </span>
      {canEdit ? (
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
            placeholder={item.assetKind === 'video' ? 'video length' : '10'}
            defaultValue={item.durationMs ? String(item.durationMs / 1000) : ''}
            onChange={(e) => e.currentTarget.form?.requestSubmit()}
          />
          <small>s</small>
        </form>
      ) : (
        <span>{formatDuration(item.effectiveDurationMs)}</span>
      )}
      {canEdit && (
        <span class="item-actions">
          <button type="button" class="secondary outline small" aria-label={`Move ${item.label} up`} disabled={index === 0} onClick={() => move(index, index - 1)}>
            ↑
          </button>
          <button type="button" class="secondary outline small" aria-label={`Move ${item.label} down`} disabled={index === count - 1} onClick={() => move(index, index + 1)}>
            ↓
          </button>
          <button type="button" class="secondary outline small" aria-label={`${item.enabled ? 'Turn off' : 'Turn on'} ${item.label}`} onClick={() => void patch.run({ enabled: !item.enabled })}>
            {item.enabled ? 'On' : 'Off'}
          </button>
          <button type="button" class="contrast outline small" aria-label={`Remove ${item.label}`} onClick={() => void remove.run()}>
            ×
          </button>
        </span>
      )}
      <ErrorNote error={patch.error ?? remove.error} />
    </div>
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
              {a.variants.some((v) => v.purpose === 'thumbnail') ? <img src={`/api/v1/assets/${a.id}/thumbnail`} alt="" loading="lazy" /> : <span class="asset-placeholder">{a.kind}</span>}
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
