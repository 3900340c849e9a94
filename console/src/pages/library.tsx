import { useEffect, useRef, useState } from 'preact/hooks';
import { api, atLeast, qs, type Page } from '../api';
import { formatBytes, formatDuration, type Asset, type Folder, type Tag } from '../types';
import { refusalOf, startUpload, unfinishedUploads, UploadError, type MediaCapabilities, type UploadItem } from '../uploads';
import { confirmAction, showToast } from '../ui/confirm';
import { ErrorNote, formatDate, formValues, messageOf, Notice, useAction, useLoad, useSession, useTitle } from '../ui';

const KINDS = ['image', 'video', 'audio', 'pdf', 'website', 'widget'] as const;

/** The media library: uploads (drag and drop, resumable), browse, organise, archive. */
export function LibraryPage() {
  useTitle('Library');
  const { user } = useSession();
  const canEdit = atLeast(user, 'editor');
  const [q, setQ] = useState('');
  const [kind, setKind] = useState('');
  const [folderId, setFolderId] = useState('');
  const [tag, setTag] = useState('');
  const [archived, setArchived] = useState<'exclude' | 'only'>('exclude');
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [open, setOpen] = useState<Asset | null>(null);

  const folders = useLoad(() => api.get<Page<Folder>>('content-folders?limit=500'));
  const tags = useLoad(() => api.get<Page<Tag>>('content-tags?limit=500'));
  const assets = useLoad(() => api.get<Page<Asset>>(`assets${qs({ q, kind, folderId, tag, archived, limit: 200 })}`), [q, kind, folderId, tag, archived]);

  // Processing is visible: poll while anything is being processed.
  // ...and for a minute after a website is added, until its thumbnail arrives.
  const processing = assets.data?.items.some(
    (a) =>
      a.state === 'processing' ||
      a.state === 'uploading' ||
      (a.kind === 'website' && !a.variants.some((v) => v.purpose === 'thumbnail') && Date.now() - Date.parse(a.createdAt) < 60_000),
  );
  useEffect(() => {
    if (!processing) return;
    const timer = setInterval(() => void assets.reload(), 2000);
    return () => clearInterval(timer);
  }, [processing, assets.reload]);

  const reloadAll = async () => {
    await Promise.all([assets.reload(), folders.reload(), tags.reload()]);
  };
  const items = assets.data?.items ?? [];
  const toggle = (id: string) =>
    setSelected((s) => {
      const n = new Set(s);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });

  return (
    <>
      <hgroup>
        <h1>Library</h1>
        <p>Images, videos, documents and websites to put on screens.</p>
      </hgroup>
      {canEdit && <Uploader folderId={folderId || null} onUploaded={reloadAll} />}
      <form class="filters" aria-label="Filter the library" onSubmit={(e) => e.preventDefault()}>
        <input type="search" placeholder="Search by name" aria-label="Search the library" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        <select aria-label="Kind" value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
          <option value="">Every kind</option>
          {KINDS.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
        <select aria-label="Folder" value={folderId} onChange={(e) => setFolderId(e.currentTarget.value)}>
          <option value="">Every folder</option>
          <option value="none">Top level only</option>
          {(folders.data?.items ?? []).map((f) => (
            <option key={f.id} value={f.id}>
              {[...f.path, f.name].join(' / ')} ({f.assetCount})
            </option>
          ))}
        </select>
        <select aria-label="Tag" value={tag} onChange={(e) => setTag(e.currentTarget.value)}>
          <option value="">Every tag</option>
          {(tags.data?.items ?? []).map((t) => (
            <option key={t.id} value={t.name}>
              {t.name} ({t.assetCount})
            </option>
          ))}
        </select>
        <select aria-label="Archive" value={archived} onChange={(e) => setArchived(e.currentTarget.value as 'exclude' | 'only')}>
          <option value="exclude">In use</option>
          <option value="only">Archived</option>
        </select>
      </form>
      {canEdit && (
        <div class="row">
          <NewFolder folders={folders.data?.items ?? []} onCreated={folders.reload} />
          <NewWebsite folderId={folderId && folderId !== 'none' ? folderId : null} onCreated={reloadAll} />
        </div>
      )}
      {canEdit && selected.size > 0 && (
        <BulkBar
          ids={[...selected]}
          folders={folders.data?.items ?? []}
          archived={archived === 'only'}
          onDone={async () => {
            setSelected(new Set());
            await reloadAll();
          }}
        />
      )}
      <ErrorNote error={assets.error} />
      {/* The empty-state hint only when the server said the library is empty (not when it could not be reached). */}
      {!assets.loading && !assets.error && assets.data && items.length === 0 && (
        <p class="muted">
          {q || kind || folderId || tag
            ? 'Nothing matches these filters.'
            : archived === 'only'
              ? 'Nothing is archived.'
              : `Nothing here yet${canEdit ? ': drop files above to upload them.' : '.'}`}
        </p>
      )}
      <ul class="asset-grid" aria-busy={assets.loading && !assets.data}>
        {items.map((a) => (
          <AssetCard key={a.id} asset={a} selectable={canEdit} selected={selected.has(a.id)} onToggle={() => toggle(a.id)} onOpen={() => setOpen(a)} />
        ))}
      </ul>
      {open && (
        <AssetDialog
          asset={open}
          canEdit={canEdit}
          onClose={() => setOpen(null)}
          onChanged={async (a) => {
            setOpen(a);
            await reloadAll();
          }}
          onGone={async () => {
            setOpen(null);
            await reloadAll();
          }}
        />
      )}
    </>
  );
}

function thumbnailOf(a: Asset): string | null {
  return a.variants.some((v) => v.purpose === 'thumbnail') ? `/api/v1/assets/${a.id}/thumbnail?v=${a.updatedAt}` : null;
}

function StateBadge({ asset }: { asset: Asset }) {
  if (asset.state === 'ready') return null;
  const cls = asset.state === 'failed' ? 'bad' : asset.state === 'archived' ? '' : 'warn';
  const pct = asset.state === 'processing' && asset.progress !== null ? ` ${Math.round(asset.progress * (asset.progress <= 1 ? 100 : 1))}%` : '';
  return (
    <span class={`badge ${cls}`}>
      {asset.state}
      {pct}
    </span>
  );
}

function AssetCard({
  asset,
  selectable,
  selected,
  onToggle,
  onOpen,
}: {
  asset: Asset;
  selectable: boolean;
  selected: boolean;
  onToggle: () => void;
  onOpen: () => void;
}) {
  const thumb = thumbnailOf(asset);
  return (
    <li class={`asset-card${selected ? ' selected' : ''}`} data-asset={asset.name} data-state={asset.state}>
      <button type="button" class="asset-open" onClick={onOpen} aria-label={`Open ${asset.name}`}>
        {thumb ? (
          <img src={thumb} alt="" loading="lazy" />
        ) : (
          <span class="asset-placeholder" aria-hidden="true">
            {asset.kind}
          </span>
        )}
      </button>
      <div class="asset-meta">
        {selectable && <input type="checkbox" checked={selected} onChange={onToggle} aria-label={`Select ${asset.name}`} />}
        <span class="asset-name" title={asset.name}>
          {asset.name}
        </span>
      </div>
      <small class="muted">
        {asset.kind}
        {asset.width && asset.height ? ` · ${asset.width}×${asset.height}` : ''}
        {asset.durationMs ? ` · ${formatDuration(asset.durationMs)}` : ''} <StateBadge asset={asset} />
      </small>
      {asset.state === 'failed' && asset.failureReason && <small class="error-text">{asset.failureReason}</small>}
    </li>
  );
}

function Uploader({ folderId, onUploaded }: { folderId: string | null; onUploaded: () => Promise<void> }) {
  const [items, setItems] = useState<UploadItem[]>([]);
  const [over, setOver] = useState(false);
  const [unfinished, setUnfinished] = useState<{ name: string; size: number }[]>([]);
  const input = useRef<HTMLInputElement>(null);
  const refreshUnfinished = () => void unfinishedUploads().then(setUnfinished);
  useEffect(refreshUnfinished, []);
  // What the server takes (types, size, kinds it can process): files it would refuse are refused here, before any byte is sent.
  // Files chosen before the answer came wait for it (the server checks its media tools, which can take a moment).
  const [caps, setCaps] = useState<MediaCapabilities | null>(null);
  const capsAnswer = useRef<Promise<MediaCapabilities | null> | null>(null);
  useEffect(() => {
    capsAnswer.current = api.get<MediaCapabilities>('media/capabilities').catch(() => null);
    void capsAnswer.current.then(setCaps);
  }, []);

  const changed = () => setItems((list) => [...list]);
  const run = (item: UploadItem) => {
    startUpload(item, { folderId: folderId && folderId !== 'none' ? folderId : null, tags: [] }, changed)
      .then(() => onUploaded())
      .catch((err) => {
        item.state = err instanceof UploadError && err.refused ? 'refused' : 'failed';
        item.error = messageOf(err);
        changed();
      })
      .finally(refreshUnfinished);
  };
  const add = async (files: FileList | File[]) => {
    const list = [...files];
    const fresh = list.map<UploadItem>((file) => ({
      key: `${file.name}-${file.size}-${file.lastModified}-${Math.random()}`,
      file,
      sentBytes: 0,
      totalBytes: file.size,
      state: 'uploading',
      resumed: false,
      error: null,
      asset: null,
      upload: null,
    }));
    const known = caps ?? (await capsAnswer.current);
    const refusals = await Promise.all(list.map((f) => refusalOf(f, known).catch(() => null)));
    fresh.forEach((item, i) => {
      if (refusals[i]) Object.assign(item, { state: 'refused', error: refusals[i] });
    });
    setItems((l) => [...fresh, ...l]);
    fresh.filter((i) => i.state === 'uploading').forEach(run);
  };
  const accept = caps
    ? ['image/*', 'video/*', 'audio/*', 'application/pdf', ...new Set(caps.accepted.flatMap((a) => a.extensions.map((e) => `.${e}`)))].join(',')
    : 'image/*,video/*,audio/*,application/pdf';

  return (
    <section aria-label="Upload">
      <div
        class={`dropzone${over ? ' over' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          if (e.dataTransfer?.files.length) void add(e.dataTransfer.files);
        }}
      >
        <p>
          Drop images, videos, audio or PDFs here, or{' '}
          <button type="button" class="outline small" onClick={() => input.current?.click()}>
            choose files
          </button>
        </p>
        <input
          ref={input}
          type="file"
          multiple
          hidden
          data-testid="file-input"
          accept={accept}
          onChange={(e) => {
            if (e.currentTarget.files?.length) void add(e.currentTarget.files);
            e.currentTarget.value = '';
          }}
        />
        <small class="muted">Uploads resume after a lost connection; after reloading the page, choose the same file again to continue.</small>
      </div>
      {unfinished.length > 0 && items.every((i) => i.state === 'done' || i.state === 'failed' || i.state === 'refused') && (
        <Notice>Unfinished uploads from before: {unfinished.map((u) => u.name).join(', ')}. Choose the same files again to resume them.</Notice>
      )}
      {items.some((i) => i.state === 'done' || i.state === 'refused') && (
        <button
          type="button"
          class="secondary outline small"
          onClick={() => setItems((list) => list.filter((i) => i.state !== 'done' && i.state !== 'refused'))}
        >
          Clear finished uploads
        </button>
      )}
      {items.length > 0 && (
        <ul class="upload-list" aria-label="Uploads">
          {items.map((i) => (
            <li key={i.key} data-upload={i.file.name} data-state={i.state}>
              <div class="row spread">
                <span>
                  {i.file.name} <small class="muted">{formatBytes(i.file.size)}</small> {i.resumed && <span class="badge">resumed</span>}
                </span>
                <span>
                  <small>
                    {i.state === 'uploading' && `${Math.floor((i.sentBytes / Math.max(1, i.totalBytes)) * 100)}%`}
                    {i.state === 'paused' && 'paused'}
                    {i.state === 'completing' && 'checking…'}
                    {i.state === 'done' && 'uploaded'}
                    {i.state === 'refused' && 'not uploaded'}
                  </small>
                  {i.state === 'uploading' && (
                    <button
                      type="button"
                      class="secondary outline small"
                      onClick={() =>
                        void i.upload?.abort().then(() => {
                          i.state = 'paused';
                          changed();
                        })
                      }
                    >
                      Pause
                    </button>
                  )}
                  {i.state === 'refused' && (
                    <button
                      type="button"
                      class="secondary outline small"
                      aria-label={`Remove ${i.file.name} from the list`}
                      onClick={() => setItems((list) => list.filter((x) => x !== i))}
                    >
                      Remove
                    </button>
                  )}
                  {(i.state === 'paused' || i.state === 'failed') && (
                    <button type="button" class="outline small" onClick={() => run(i)}>
                      {i.state === 'paused' ? 'Resume' : 'Retry'}
                    </button>
                  )}
                </span>
              </div>
              {i.state !== 'refused' && (
                <progress
                  value={i.state === 'done' ? 1 : i.sentBytes}
                  max={i.state === 'done' ? 1 : Math.max(1, i.totalBytes)}
                  aria-label={`Upload of ${i.file.name}`}
                />
              )}
              {i.error && (
                <p class="error-note" role="alert">
                  {i.error}
                </p>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function NewFolder({ folders, onCreated }: { folders: Folder[]; onCreated: () => Promise<void> }) {
  const create = useAction(async (form: HTMLFormElement) => {
    const v = formValues(form);
    await api.post('content-folders', { name: v.name, parentId: v.parentId || null });
    form.reset();
    await onCreated();
  });
  return (
    <details>
      <summary>New folder</summary>
      <form
        aria-label="New folder"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run(e.currentTarget);
        }}
      >
        <fieldset role="group">
          <input name="name" placeholder="Folder name" aria-label="Folder name" required maxLength={120} />
          <select name="parentId" aria-label="Inside">
            <option value="">Top level</option>
            {folders.map((f) => (
              <option key={f.id} value={f.id}>
                {[...f.path, f.name].join(' / ')}
              </option>
            ))}
          </select>
          <button type="submit" aria-busy={create.busy}>
            Create
          </button>
        </fieldset>
        <ErrorNote error={create.error} />
      </form>
    </details>
  );
}

function NewWebsite({ folderId, onCreated }: { folderId: string | null; onCreated: () => Promise<void> }) {
  const create = useAction(async (form: HTMLFormElement) => {
    const v = formValues(form);
    const site = await api.post<Asset>('assets/websites', { url: v.url, ...(v.name ? { name: v.name } : {}), ...(folderId ? { folderId } : {}) });
    form.reset();
    showToast(`Added ${site.name} (${site.website?.url ?? v.url}).`);
    await onCreated();
  });
  return (
    <details>
      <summary>Add a website</summary>
      <form
        aria-label="Add a website"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run(e.currentTarget);
        }}
      >
        <fieldset role="group">
          <input
            name="url"
            type="text"
            inputMode="url"
            autocomplete="url"
            spellcheck={false}
            placeholder="example.com/menu"
            aria-label="Website address"
            required
            maxLength={2048}
          />
          <input name="name" placeholder="Name (optional)" aria-label="Website name" maxLength={200} />
          <button type="submit" aria-busy={create.busy}>
            Add
          </button>
        </fieldset>
        <ErrorNote error={create.error} />
      </form>
    </details>
  );
}

function BulkBar({ ids, folders, archived, onDone }: { ids: string[]; folders: Folder[]; archived: boolean; onDone: () => Promise<void> }) {
  const act = useAction(async (what: () => Promise<unknown>) => {
    // A cancelled confirmation keeps the selection.
    if ((await what()) !== false) await onDone();
  });
  return (
    <div class="bulk-bar" role="region" aria-label="Selected assets">
      <strong>{ids.length} selected</strong>
      <select
        aria-label="Move selected to folder"
        value=""
        disabled={act.busy}
        onChange={(e) => {
          const v = e.currentTarget.value;
          if (v) void act.run(() => api.post('assets/bulk-organize', { assetIds: ids, moveTo: { folderId: v === 'none' ? null : v } }));
        }}
      >
        <option value="">Move to…</option>
        <option value="none">Top level</option>
        {folders.map((f) => (
          <option key={f.id} value={f.id}>
            {[...f.path, f.name].join(' / ')}
          </option>
        ))}
      </select>
      <form
        class="inline"
        aria-label="Tag selected"
        onSubmit={(e) => {
          e.preventDefault();
          const tagName = formValues(e.currentTarget).tag?.trim();
          if (tagName) void act.run(() => api.post('assets/bulk-organize', { assetIds: ids, addTags: [tagName] }));
        }}
      >
        <input name="tag" placeholder="Add tag" aria-label="Tag to add" maxLength={64} />
      </form>
      <button
        type="button"
        class="secondary outline small"
        disabled={act.busy}
        onClick={() => void act.run(() => (archived ? restoreAssets(ids) : archiveAssets(ids, onDone)))}
      >
        {archived ? 'Restore' : 'Archive'}
      </button>
      <ErrorNote error={act.error} />
    </div>
  );
}

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * Archive asks first, naming the screens that show them now and the playlists and layouts
 * they are in (screens stop showing archived media); then a toast offers Undo (restore).
 */
async function archiveAssets(ids: string[], onChanged: () => Promise<void>, name?: string): Promise<boolean> {
  const what = name ? `“${name}”` : count(ids.length, 'item');
  const yes = await confirmAction({
    title: `Archive ${what}?`,
    body: <p>Archived media leaves the library and stops playing: screens skip it in every playlist and layout. You can restore it from the Archived view.</p>,
    confirmLabel: 'Archive',
    danger: true,
    impact: { assetIds: ids },
    screensLabel: 'These screens show it now and will stop:',
    usedByLabel: 'It is in:',
  });
  if (!yes) return false;
  await api.post('assets/archive', { ids });
  showToast(`Archived ${what}.`, async () => {
    await api.post('assets/restore', { ids });
    await onChanged();
  });
  return true;
}

async function restoreAssets(ids: string[]): Promise<boolean> {
  const yes = await confirmAction({
    title: `Restore ${count(ids.length, 'item')}?`,
    body: <p>Restored media plays again wherever it is in a playlist or layout.</p>,
    confirmLabel: 'Restore',
    impact: { assetIds: ids },
    usedByLabel: 'It is in:',
    screensLabel: 'These screens will show it again:',
  });
  if (!yes) return false;
  await api.post('assets/restore', { ids });
  showToast(`Restored ${count(ids.length, 'item')}.`);
  return true;
}

function AssetDialog({
  asset,
  canEdit,
  onClose,
  onChanged,
  onGone,
}: {
  asset: Asset;
  canEdit: boolean;
  onClose: () => void;
  onChanged: (a: Asset) => Promise<void>;
  onGone: () => Promise<void>;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  const save = useAction(async (form: HTMLFormElement) => {
    const v = formValues(form);
    const tags = (v.tags ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    await onChanged(await api.patch<Asset>(`assets/${asset.id}`, { name: v.name, tags }));
  });
  const retry = useAction(async () => onChanged(await api.post<Asset>(`assets/${asset.id}/retry`)));
  const lifecycle = useAction(async (what: 'archive' | 'restore' | 'delete') => {
    if (what === 'archive') {
      if (await archiveAssets([asset.id], onGone, asset.name)) {
        ref.current?.close();
        await onGone();
      }
      return;
    }
    if (what === 'restore') {
      if (await restoreAssets([asset.id])) await onChanged(await api.get<Asset>(`assets/${asset.id}`));
      return;
    }
    const yes = await confirmAction({
      title: `Delete “${asset.name}” for good?`,
      body: <p>The file is removed from the server. This cannot be undone; archiving keeps it restorable.</p>,
      confirmLabel: 'Delete',
      danger: true,
      impact: { assetIds: [asset.id] },
      usedByLabel: 'It is in (remove it there first):',
    });
    if (!yes) return;
    await api.del(`assets/${asset.id}`);
    showToast(`Deleted “${asset.name}”.`);
    ref.current?.close();
    await onGone();
  });
  const preview = `/api/v1/assets/${asset.id}/preview`;
  return (
    <dialog ref={ref} onClose={onClose} aria-labelledby="asset-dialog-title">
      <article>
        <header>
          <button type="button" aria-label="Close" {...({ rel: 'prev' } as object)} onClick={() => ref.current?.close()} />
          <h2 id="asset-dialog-title">{asset.name}</h2>
        </header>
        <div class="asset-preview">
          {asset.state !== 'ready' && asset.state !== 'archived' ? (
            <p class="muted">
              <StateBadge asset={asset} /> {asset.failureReason}
            </p>
          ) : asset.kind === 'image' ? (
            <img src={preview} alt={asset.name} />
          ) : asset.kind === 'video' ? (
            <video src={preview} controls muted preload="metadata" poster={thumbnailOf(asset) ?? undefined} />
          ) : asset.kind === 'audio' ? (
            <audio src={preview} controls preload="metadata" />
          ) : asset.kind === 'website' && asset.website?.url ? (
            <iframe src={asset.website.url} title={`Preview of ${asset.name}`} sandbox="allow-scripts allow-same-origin" referrerpolicy="no-referrer" />
          ) : thumbnailOf(asset) ? (
            <img src={thumbnailOf(asset)!} alt={asset.name} />
          ) : null}
        </div>
        <p class="muted">
          {asset.kind} · {formatBytes(asset.sizeBytes)}
          {asset.width && asset.height ? ` · ${asset.width}×${asset.height}` : ''}
          {asset.durationMs ? ` · ${formatDuration(asset.durationMs)}` : ''} · added {formatDate(asset.createdAt)}
        </p>
        {canEdit && (
          <form
            aria-label="Edit asset"
            onSubmit={(e) => {
              e.preventDefault();
              void save.run(e.currentTarget);
            }}
          >
            <label>
              Name
              <input name="name" defaultValue={asset.name} required maxLength={200} />
            </label>
            <label>
              Tags (comma-separated)
              <input name="tags" defaultValue={asset.tags.join(', ')} />
            </label>
            <ErrorNote error={save.error ?? retry.error ?? lifecycle.error} />
            <div class="row">
              <button type="submit" aria-busy={save.busy}>
                Save
              </button>
              {asset.state === 'archived' ? (
                <button type="button" class="secondary outline" disabled={lifecycle.busy} onClick={() => void lifecycle.run('restore')}>
                  Restore
                </button>
              ) : (
                <button type="button" class="secondary outline" disabled={lifecycle.busy} onClick={() => void lifecycle.run('archive')}>
                  Archive
                </button>
              )}
              <button type="button" class="contrast outline" disabled={lifecycle.busy} onClick={() => void lifecycle.run('delete')}>
                Delete
              </button>
              {asset.state === 'failed' && (
                <button type="button" class="secondary" aria-busy={retry.busy} onClick={() => void retry.run()}>
                  Process again
                </button>
              )}
            </div>
          </form>
        )}
      </article>
    </dialog>
  );
}
