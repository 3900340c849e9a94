import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ApiError, atLeast, type Page } from '../api';
import type { Asset, LayoutSummary, PlaylistSummary } from '../types';
import { ErrorNote, formatTime, formValues, Notice, useAction, useLoad, useSession, useTitle } from '../ui';
import { confirmAction, showToast } from '../ui/confirm';
import { LayoutLivePreview, usePlaylists, zoneThumbnail, type PreviewZone } from '../ui/preview';

interface Zone {
  id?: string;
  name: string;
  x: number;
  y: number;
  width: number;
  height: number;
  zIndex: number;
  fit: 'contain' | 'cover' | 'fill';
  muted: boolean;
  content:
    | { type: 'playlist'; playlistId: string }
    | { type: 'asset'; assetId: string; durationMs: number | null }
    | { type: string; [k: string]: unknown }
    | null;
}
interface Content {
  width: number;
  height: number;
  background: { color: string; assetId: string | null };
  zones: Zone[];
}
interface Layout extends LayoutSummary {
  draft: Content;
  published: Content | null;
}
interface Revision {
  id: string;
  number: number;
  note: string;
  createdAt: string;
  current: boolean;
}

const RESOLUTIONS = [
  { label: '1920 × 1080 (landscape)', w: 1920, h: 1080 },
  { label: '1080 × 1920 (portrait)', w: 1080, h: 1920 },
  { label: '3840 × 2160 (4K)', w: 3840, h: 2160 },
  { label: '1280 × 720', w: 1280, h: 720 },
];

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
                  {l.hasUnpublishedChanges && l.publishedRevisionNumber ? <span class="badge warn">changes not published</span> : null}
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

const stripIds = (c: Content): Content => c;

/** The editor: canvas with draggable zones, zone properties, save draft, publish, revisions. */
export function LayoutDetailPage({ id }: { id: string }) {
  const { user } = useSession();
  const canEdit = atLeast(user, 'editor');
  const canPublish = atLeast(user, 'publisher');
  const layout = useLoad(() => api.get<Layout>(`layouts/${id}`), [id]);
  const playlists = useLoad(() => api.get<Page<PlaylistSummary>>('playlists?limit=500'));
  const assets = useLoad(() => api.get<Page<Asset>>('assets?limit=500'));
  const revisions = useLoad(() => api.get<Page<Revision>>(`layouts/${id}/revisions?limit=20`), [id]);
  const [draft, setDraft] = useState<Content | null>(null);
  const [selected, setSelected] = useState(0);
  const [dirty, setDirty] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  useTitle(layout.data?.name ?? 'Layout');
  useEffect(() => {
    if (layout.data) {
      setDraft(structuredClone(layout.data.draft));
      setDirty(false);
    }
  }, [layout.data]);

  const edit = (fn: (c: Content) => void) => {
    setDraft((d) => {
      if (!d) return d;
      const next = structuredClone(d);
      fn(next);
      return next;
    });
    setDirty(true);
    setNotice(null);
  };
  const saveDraft = async (): Promise<Layout> => {
    try {
      const saved = await api.put<Layout>(`layouts/${id}/draft`, stripIds(draft!), { headers: { 'If-Match': String(layout.data!.revision) } });
      layout.setData(saved);
      setNotice('Draft saved.');
      return saved;
    } catch (err) {
      if (err instanceof ApiError && err.code === 'version_conflict')
        throw new ApiError(412, err.code, 'Someone else changed this layout meanwhile. Reload to see their version (your unsaved changes would be lost).');
      throw err;
    }
  };
  const save = useAction(saveDraft);
  const publish = useAction(async (note: string) => {
    const yes = await confirmAction({
      title: `Publish “${layout.data!.name}”?`,
      body: (
        <p>
          Screens showing this layout switch to what you see here within seconds{dirty ? ' (your unsaved changes are saved first)' : ''}. Earlier versions stay
          in the history below.
        </p>
      ),
      confirmLabel: 'Publish',
      impact: { layoutIds: [id] },
      screensLabel: 'These screens show it now and will change:',
      usedByLabel: 'Scheduled by:',
    });
    if (!yes) return;
    // Unsaved changes are saved first; the publish names the revision that save made.
    const revision = dirty ? (await saveDraft()).revision : layout.data!.revision;
    const res = await api.post<Layout>(`layouts/${id}/publish`, { note }, { headers: { 'If-Match': String(revision) } });
    layout.setData(res);
    await revisions.reload();
    setNotice('Published; screens showing this layout update now.');
  });
  const restore = useAction(async (rev: Revision) => {
    if (dirty || layout.data?.hasUnpublishedChanges) {
      const yes = await confirmAction({
        title: `Replace the draft with the version of ${formatTime(rev.createdAt)}?`,
        body: (
          <p>
            {dirty ? 'Your unsaved changes are lost' : 'The draft’s changes that are not published are lost'}. Screens keep showing the published version until
            you publish.
          </p>
        ),
        confirmLabel: 'Replace the draft',
        danger: true,
      });
      if (!yes) return;
    }
    layout.setData(await api.post<Layout>(`layouts/${id}/revisions/${rev.id}/restore`));
    setNotice(`The version of ${formatTime(rev.createdAt)} is the draft again; publish it to put it on screens.`);
  });
  const { route } = useLocation();
  const remove = useAction(async () => {
    const yes = await confirmAction({
      title: `Delete the layout “${layout.data!.name}”?`,
      body: <p>The layout and all its published versions go. This cannot be undone.</p>,
      confirmLabel: 'Delete layout',
      danger: true,
      impact: { layoutIds: [id] },
      screensLabel: 'These screens show it now:',
      usedByLabel: 'Scheduled by (change these first):',
    });
    if (!yes) return;
    await api.del(`layouts/${id}`);
    showToast(`Deleted the layout “${layout.data!.name}”.`);
    route('/layouts');
  });
  const [live, setLive] = useState(false);
  const zonePlaylists = usePlaylists(
    (draft?.zones ?? []).filter((z) => z.content?.type === 'playlist').map((z) => (z.content as { playlistId: string }).playlistId),
  );

  if (layout.error) return <ErrorNote error={layout.error} />;
  const l = layout.data;
  if (!l || !draft) return <p aria-busy="true">Loading…</p>;
  const zone = draft.zones[selected];
  const playlistName = (z: Zone) => {
    const c = z.content;
    if (c?.type === 'playlist') return playlists.data?.items.find((p) => p.id === (c as { playlistId: string }).playlistId)?.name ?? 'playlist';
    if (c?.type === 'asset') return assets.data?.items.find((a) => a.id === (c as { assetId: string }).assetId)?.name ?? 'media';
    return c ? c.type : 'empty';
  };
  const zoneValue = (z: Zone) => {
    const c = z.content;
    if (c?.type === 'playlist') return `playlist:${(c as { playlistId: string }).playlistId}`;
    if (c?.type === 'asset') return `asset:${(c as { assetId: string }).assetId}`;
    return c ? 'keep' : '';
  };

  return (
    <>
      <nav aria-label="breadcrumb">
        <ul>
          <li>
            <a href="/layouts">Layouts</a>
          </li>
          <li>{l.name}</li>
        </ul>
      </nav>
      <hgroup>
        <h1>{l.name}</h1>
        <p>
          {draft.width} × {draft.height} · {l.publishedRevisionNumber ? `on screens since ${formatTime(l.publishedAt)}` : 'not published yet'}
          {/* "Draft differs from published" only means something once there is a published version. */}
          {dirty ? (
            <span class="badge warn">unsaved changes</span>
          ) : l.hasUnpublishedChanges && l.publishedRevisionNumber ? (
            <span class="badge warn">changes not published yet</span>
          ) : null}
        </p>
      </hgroup>
      <div class="layout-editor">
        <div>
          <div role="group" class="view-toggle" aria-label="Canvas view">
            <button type="button" class={`small ${live ? 'secondary outline' : ''}`} aria-pressed={!live} onClick={() => setLive(false)}>
              Edit zones
            </button>
            <button type="button" class={`small ${live ? '' : 'secondary outline'}`} aria-pressed={live} onClick={() => setLive(true)}>
              Live preview
            </button>
          </div>
          {live ? (
            <LayoutLivePreview
              width={draft.width}
              height={draft.height}
              background={draft.background.color}
              zones={draft.zones as unknown as PreviewZone[]}
              assets={assets.data?.items ?? []}
            />
          ) : (
            <Canvas
              content={draft}
              selected={selected}
              onSelect={setSelected}
              canEdit={canEdit}
              label={playlistName}
              thumb={(z) => zoneThumbnail(z as unknown as PreviewZone, zonePlaylists, assets.data?.items ?? [])}
              onMove={(i, x, y) => edit((c) => Object.assign(c.zones[i]!, { x, y }))}
            />
          )}
          <small class="muted">
            {live
              ? 'Playing the draft at its own size, scaled to fit: what a screen of this size shows.'
              : 'Each zone shows its content’s picture, fitted as it will be on screens.'}
          </small>
        </div>
        <div>
          {canEdit && (
            <div class="row">
              <button
                type="button"
                class="secondary outline small"
                onClick={() =>
                  edit(
                    (c) =>
                      void c.zones.push({
                        name: `Zone ${c.zones.length + 1}`,
                        x: 0,
                        y: 0,
                        width: Math.round(c.width / 2),
                        height: Math.round(c.height / 2),
                        zIndex: c.zones.length,
                        fit: 'contain',
                        muted: true,
                        content: null,
                      }),
                  )
                }
              >
                Add zone
              </button>
              <button
                type="button"
                class="secondary outline small"
                onClick={() =>
                  edit((c) => {
                    const side = Math.round(c.width * 0.3);
                    c.zones = [
                      { name: 'Main', x: 0, y: 0, width: c.width - side, height: c.height, zIndex: 0, fit: 'contain', muted: true, content: null },
                      { name: 'Sidebar', x: c.width - side, y: 0, width: side, height: c.height, zIndex: 0, fit: 'cover', muted: true, content: null },
                    ];
                    setSelected(0);
                  })
                }
              >
                Main + sidebar
              </button>
            </div>
          )}
          <ol class="zone-list" aria-label="Zones">
            {draft.zones.map((z, i) => (
              <li key={z.id ?? i}>
                <button type="button" class={`link-button${i === selected ? ' current' : ''}`} aria-pressed={i === selected} onClick={() => setSelected(i)}>
                  {z.name || `Zone ${i + 1}`}
                </button>{' '}
                <small class="muted">{playlistName(z)}</small>
              </li>
            ))}
          </ol>
          {zone && (
            <fieldset disabled={!canEdit} aria-label="Selected zone" class="zone-form">
              <label>
                Zone name
                <input value={zone.name} maxLength={100} onInput={(e) => edit((c) => void (c.zones[selected]!.name = e.currentTarget.value))} />
              </label>
              <div class="grid two">
                {(['x', 'y', 'width', 'height'] as const).map((k) => (
                  <label key={k}>
                    {k}
                    <input
                      type="number"
                      min={k === 'width' || k === 'height' ? 1 : 0}
                      value={zone[k]}
                      onChange={(e) => edit((c) => void (c.zones[selected]![k] = Math.max(0, Math.round(Number(e.currentTarget.value) || 0))))}
                    />
                  </label>
                ))}
              </div>
              <label>
                Plays
                <select
                  value={zoneValue(zone)}
                  onChange={(e) => {
                    const v = e.currentTarget.value;
                    if (v === 'keep') return;
                    const [kind, ref] = v.split(':');
                    edit((c) => {
                      const z = c.zones[selected]!;
                      const before = z.content;
                      z.content = !v
                        ? null
                        : kind === 'asset'
                          ? {
                              type: 'asset',
                              assetId: ref!,
                              durationMs: before?.type === 'asset' ? ((before as { durationMs: number | null }).durationMs ?? null) : null,
                            }
                          : { type: 'playlist', playlistId: ref! };
                    });
                  }}
                >
                  <option value="">Nothing</option>
                  {zone.content && zoneValue(zone) === 'keep' && <option value="keep">{zone.content.type} (kept as is)</option>}
                  <optgroup label="Playlists">
                    {(playlists.data?.items ?? []).map((p) => (
                      <option key={p.id} value={`playlist:${p.id}`}>
                        {p.name}
                      </option>
                    ))}
                  </optgroup>
                  <optgroup label="One piece of media">
                    {(assets.data?.items ?? []).map((a) => (
                      <option key={a.id} value={`asset:${a.id}`}>
                        {a.name}
                        {a.state === 'ready' ? '' : ` (${a.state})`}
                      </option>
                    ))}
                  </optgroup>
                </select>
              </label>
              {zone.content?.type === 'asset' && (
                <label>
                  Seconds per showing
                  <input
                    type="number"
                    min="0.5"
                    step="0.5"
                    placeholder="its own length, or 10"
                    value={(zone.content as { durationMs: number | null }).durationMs ? String((zone.content as { durationMs: number }).durationMs / 1000) : ''}
                    onChange={(e) => {
                      const sec = Number(e.currentTarget.value);
                      edit(
                        (c) =>
                          void ((c.zones[selected]!.content as { durationMs: number | null }).durationMs =
                            sec > 0 ? Math.max(500, Math.round(sec * 1000)) : null),
                      );
                    }}
                  />
                </label>
              )}
              <label>
                Fit
                <select value={zone.fit} onChange={(e) => edit((c) => void (c.zones[selected]!.fit = e.currentTarget.value as Zone['fit']))}>
                  <option value="contain">Contain (whole picture)</option>
                  <option value="cover">Cover (fill, crop)</option>
                  <option value="fill">Stretch</option>
                </select>
              </label>
              <button
                type="button"
                class="contrast outline small"
                onClick={() =>
                  edit((c) => {
                    c.zones.splice(selected, 1);
                    setSelected(0);
                  })
                }
              >
                Remove zone
              </button>
            </fieldset>
          )}
        </div>
      </div>
      <ErrorNote error={save.error ?? publish.error ?? restore.error ?? remove.error} />
      {notice && <Notice>{notice}</Notice>}
      {canEdit && (
        <form
          class="row"
          aria-label="Save and publish"
          onSubmit={(e) => {
            e.preventDefault();
            void publish.run(formValues(e.currentTarget).note ?? '');
          }}
        >
          <button type="button" disabled={!dirty || save.busy} aria-busy={save.busy} onClick={() => void save.run()}>
            Save draft
          </button>
          {canPublish && (
            <>
              <input name="note" placeholder="What changed (optional)" aria-label="Publish note" maxLength={500} class="grow" />
              <button type="submit" class="contrast" aria-busy={publish.busy}>
                Publish
              </button>
              {l.publishedRevisionNumber ? (
                <a href={`/schedules?layout=${id}`} role="button" class="secondary outline">
                  Schedule it
                </a>
              ) : (
                <small class="muted">Publish the layout to schedule it on screens.</small>
              )}
            </>
          )}
          <button type="button" class="contrast outline" disabled={remove.busy} onClick={() => void remove.run()}>
            Delete layout
          </button>
        </form>
      )}
      <article aria-labelledby="rev-h">
        <header>
          <h2 id="rev-h">Published versions</h2>
        </header>
        <ul class="command-list">
          {(revisions.data?.items ?? []).map((r) => (
            <li key={r.id}>
              <strong>Published {formatTime(r.createdAt)}</strong> {r.current && <span class="badge ok">on screens</span>} {r.note && <span>· {r.note}</span>}{' '}
              <small class="muted">version {r.number}</small>{' '}
              {canEdit && !r.current && (
                <button type="button" class="secondary outline small" onClick={() => void restore.run(r)}>
                  Restore as draft
                </button>
              )}
            </li>
          ))}
          {revisions.data && revisions.data.items.length === 0 && <li class="muted">Not published yet.</li>}
        </ul>
      </article>
    </>
  );
}

function Canvas({
  content,
  selected,
  onSelect,
  canEdit,
  label,
  thumb,
  onMove,
}: {
  content: Content;
  selected: number;
  onSelect: (i: number) => void;
  canEdit: boolean;
  label: (z: Zone) => string;
  thumb: (z: Zone) => { src: string; label: string } | null;
  onMove: (i: number, x: number, y: number) => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const drag = useRef<{ i: number; startX: number; startY: number; x: number; y: number; scale: number } | null>(null);
  const sorted = content.zones.map((z, i) => ({ z, i })).sort((a, b) => a.z.zIndex - b.z.zIndex);
  return (
    <div
      class="canvas"
      ref={box}
      style={{ aspectRatio: `${content.width} / ${content.height}`, background: content.background.color }}
      role="img"
      aria-label={`Canvas ${content.width} by ${content.height} with ${content.zones.length} zones`}
    >
      {sorted.map(({ z, i }) => (
        <div
          key={z.id ?? i}
          class={`zone${i === selected ? ' selected' : ''}`}
          data-zone={z.name}
          style={{
            left: `${(z.x / content.width) * 100}%`,
            top: `${(z.y / content.height) * 100}%`,
            width: `${(z.width / content.width) * 100}%`,
            height: `${(z.height / content.height) * 100}%`,
            zIndex: z.zIndex,
          }}
          onPointerDown={(e) => {
            onSelect(i);
            if (!canEdit || !box.current) return;
            (e.currentTarget as HTMLElement).setPointerCapture(e.pointerId);
            drag.current = { i, startX: e.clientX, startY: e.clientY, x: z.x, y: z.y, scale: content.width / box.current.clientWidth };
          }}
          onPointerMove={(e) => {
            const d = drag.current;
            if (!d) return;
            const x = Math.min(Math.max(0, Math.round(d.x + (e.clientX - d.startX) * d.scale)), content.width - z.width);
            const y = Math.min(Math.max(0, Math.round(d.y + (e.clientY - d.startY) * d.scale)), content.height - z.height);
            if (x !== z.x || y !== z.y) onMove(d.i, x, y);
          }}
          onPointerUp={() => (drag.current = null)}
        >
          {(() => {
            const th = thumb(z);
            return th ? <img class="zone-thumb" src={th.src} alt="" style={{ objectFit: z.fit === 'fill' ? 'fill' : z.fit }} /> : null;
          })()}
          <span class="zone-label">
            {z.name || `Zone ${i + 1}`} · {label(z)}
          </span>
        </div>
      ))}
    </div>
  );
}
