import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ApiError, atLeast, type Page } from '../../api';
import type { Asset, PlaylistSummary } from '../../types';
import { ErrorNote, formatTime, formValues, Notice, useAction, useLoad, useSession, useTitle } from '../../ui';
import { confirmAction, showToast } from '../../ui/confirm';
import { LayoutLivePreview, type PreviewZone, usePlaylists, zoneThumbnail } from '../../ui/preview';
import type { DataSource } from '../data/shared';
import { Canvas } from './canvas';
import { DataZoneView, type Refusal } from './data-zone';
import { type Content, type DataContent, isData, type Layout, type Zone } from './model';
import { ZoneForm } from './zone-form';
import { useWidgets } from '../widgets';
import { DraftNote, HistoryPanel, SubmitForApproval, UnpublishedBadge, useApprovalsRequired } from '../../ui/publishing';

/** The zones whose view the server refused (400 at zones.<i>.content.view), with its words. */
function refusalsOf(err: unknown, content: Content): Map<number, Refusal> {
  const out = new Map<number, Refusal>();
  if (!(err instanceof ApiError) || err.code !== 'validation_failed') return out;
  const issues = (err.details as { issues?: { path?: unknown[]; message?: string }[] } | undefined)?.issues ?? [];
  for (const i of issues) {
    const [zones, n, c, v] = i.path ?? [];
    if (zones !== 'zones' || c !== 'content' || v !== 'view' || i.path!.length !== 4) continue;
    const zone = content.zones[Number(n)];
    if (!zone || !isData(zone.content)) continue;
    const r = out.get(Number(n)) ?? { viewJson: JSON.stringify(zone.content.view ?? null), messages: [] };
    r.messages.push(i.message ?? 'does not fit');
    out.set(Number(n), r);
  }
  return out;
}

const stripIds = (c: Content): Content => c;

/** The editor: canvas with draggable zones, zone properties, save draft, publish, history. */
export function LayoutDetailPage({ id }: { id: string }) {
  const { user } = useSession();
  const canEdit = atLeast(user, 'editor');
  const approvals = useApprovalsRequired();
  // With approvals on the layout's own Publish answers 409: the way to screens is a submission.
  const canPublish = atLeast(user, 'publisher') && !approvals;
  const layout = useLoad(() => api.get<Layout>(`layouts/${id}`), [id]);
  const playlists = useLoad(() => api.get<Page<PlaylistSummary>>('playlists?limit=500'));
  const assets = useLoad(() => api.get<Page<Asset>>('assets?limit=500'));
  // The sources this user may read (a data zone's choices); a viewer of none gets an empty list.
  const sources = useLoad(() => api.get<Page<DataSource>>('data-sources?limit=500'));
  const widgets = useWidgets();
  const [refusals, setRefusals] = useState<Map<number, Refusal>>(new Map());
  const [draft, setDraft] = useState<Content | null>(null);
  const [selected, setSelected] = useState(0);
  const [dirty, setDirty] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  useTitle(layout.data?.name ?? 'Layout');
  // A draft from elsewhere (the first load, a restore) starts the zone's view editor again; our own save does not.
  const [generation, setGeneration] = useState(0);
  const ownSave = useRef(false);
  useEffect(() => {
    if (layout.data) {
      setDraft(structuredClone(layout.data.draft));
      setDirty(false);
      if (!ownSave.current) setGeneration((g) => g + 1);
      ownSave.current = false;
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
      ownSave.current = true;
      layout.setData(saved);
      setNotice(
        approvals
          ? saved.publishedRevisionNumber
            ? `Saved as a draft: screens keep playing publication ${saved.publishedRevisionNumber}.`
            : 'Saved as a draft: nothing is on screens until it is approved and published.'
          : 'Draft saved.',
      );
      setRefusals(new Map());
      return saved;
    } catch (err) {
      setRefusals(refusalsOf(err, draft!));
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
    ownSave.current = true;
    layout.setData(res);
    setNotice('Published; screens showing this layout update now.');
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
  const sourceOf = (z: Zone) => (isData(z.content) ? sources.data?.items.find((x) => x.id === (z.content as DataContent).sourceId) : undefined);
  const contentName = (z: Zone) => {
    const c = z.content;
    if (c?.type === 'playlist') return playlists.data?.items.find((p) => p.id === (c as { playlistId: string }).playlistId)?.name ?? 'playlist';
    if (c?.type === 'asset') return assets.data?.items.find((a) => a.id === (c as { assetId: string }).assetId)?.name ?? 'media';
    if (isData(c)) return `${sourceOf(z)?.name ?? 'a data source'} (${c.view ? 'data, a view' : 'data'})`;
    if (c?.type === 'widget') return `${widgets.data?.find((w) => w.id === c.widgetId)?.name ?? 'a widget'} (widget)`;
    return c ? c.type : 'empty';
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
          ) : (
            <UnpublishedBadge unpublished={l.hasUnpublishedChanges && Boolean(l.publishedRevisionNumber)} />
          )}
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
              label={contentName}
              source={sourceOf}
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
                <small class="muted">{contentName(z)}</small> {refusals.has(i) && <span class="badge warn">view does not fit</span>}
              </li>
            ))}
          </ol>
          {zone && (
            <ZoneForm
              key={selected}
              zone={zone}
              canEdit={canEdit}
              playlists={playlists.data?.items ?? []}
              assets={assets.data?.items ?? []}
              sources={sources.data?.items}
              widgets={widgets.data}
              edit={(fn) => edit((c) => fn(c.zones[selected]!, c))}
              onRemove={() =>
                edit((c) => {
                  c.zones.splice(selected, 1);
                  setSelected(0);
                  setRefusals(new Map());
                })
              }
            />
          )}
        </div>
      </div>
      {zone && isData(zone.content) && (
        <DataZoneView
          zone={zone as Zone & { content: DataContent }}
          index={selected}
          generation={generation}
          canEdit={canEdit}
          refusal={refusals.get(selected)}
          onView={(view) =>
            edit((c) => {
              const z = c.zones[selected]!;
              if (isData(z.content)) z.content.view = view;
            })
          }
        />
      )}
      <ErrorNote error={save.error ?? publish.error ?? remove.error} />
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
          <DraftNote publication={l.publishedRevisionNumber ? { number: l.publishedRevisionNumber } : null} />
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
      {canEdit && (
        <div class="row">
          <SubmitForApproval type="layout" id={id} onDone={() => void layout.reload()} />
        </div>
      )}
      <HistoryPanel type="layout" id={id} refresh={l.publishedRevisionNumber} onChange={() => void layout.reload()} />
    </>
  );
}
