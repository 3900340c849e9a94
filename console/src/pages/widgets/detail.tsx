import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, atLeast } from '../../api';
import { DraftBar, HistoryPanel, UnpublishedBadge } from '../../ui/publishing';
import { ErrorNote, formatTime, useAction, useLoad, useSession, useTitle } from '../../ui';
import { confirmAction, showToast } from '../../ui/confirm';
import type { Config, Json } from '../data/model';
import type { JsonSchema } from '../data/schema-form';
import { useSources } from './binding';
import { WidgetEditor } from './editor';
import { type Draft, draftOf, loadTypes, typeName, type Widget, type WidgetType } from './model';

function Crumbs({ name }: { name: string }) {
  return (
    <nav aria-label="breadcrumb">
      <ul>
        <li>
          <a href="/widgets">Widgets</a>
        </li>
        <li>{name}</li>
      </ul>
    </nav>
  );
}

/** One widget: its editor, its built state, duplicate and delete. */
export function WidgetPage({ id }: { id: string }) {
  const { user } = useSession();
  const { route } = useLocation();
  const widget = useLoad(() => api.get<Widget>(`widgets/${id}`), [id]);
  const types = useLoad(loadTypes);
  const sources = useSources();
  // Bumped when the widget comes from the server again (reload after a conflict): the editor starts from it.
  const [generation, setGeneration] = useState(0);
  useTitle(widget.data?.name ?? 'Widget');
  const w = widget.data;
  const duplicate = useAction(async () => {
    const copy = await api.post<Widget>(`widgets/${id}/duplicate`, {});
    showToast(`Made “${copy.name}”.`);
    route(`/widgets/${copy.id}`);
  });
  const remove = useAction(async () => {
    const yes = await confirmAction({
      title: `Delete the widget “${w!.name}”?`,
      body: <p>Its settings and template go; this cannot be undone. A widget a playlist or a layout still shows is not deleted: remove it there first.</p>,
      confirmLabel: 'Delete widget',
      danger: true,
    });
    if (!yes) return;
    await api.del(`widgets/${id}`, { headers: { 'if-match': `"${w!.revision}"` } });
    showToast(`Deleted the widget “${w!.name}”.`);
    route('/widgets');
  });

  if (widget.error && !w) return <ErrorNote error={widget.error} />;
  if (!w || !types.data) return <p aria-busy="true">Loading…</p>;
  const canEdit = atLeast(user, 'editor');
  return (
    <>
      <Crumbs name={w.name} />
      <hgroup>
        <h1>{w.name}</h1>
        <p data-testid="widget-state">
          {typeName(types.data, w.type)} ·{' '}
          {w.bundle ? `ready for screens since ${formatTime(w.bundle.builtAt)}` : w.errors?.length ? 'does not build (see the preview)' : 'not built yet'} ·
          changed {formatTime(w.updatedAt)} <UnpublishedBadge unpublished={w.unpublishedChanges} />
        </p>
      </hgroup>
      <DraftBar type="widget" id={id} publication={w.publication} canEdit={canEdit} onDone={() => void widget.reload()} />
      {canEdit && (
        <div class="row">
          <button type="button" class="secondary outline" aria-busy={duplicate.busy} onClick={() => void duplicate.run()}>
            Duplicate
          </button>
          <button type="button" class="contrast outline" aria-busy={remove.busy} onClick={() => void remove.run()}>
            Delete
          </button>
        </div>
      )}
      <ErrorNote error={duplicate.error} />
      <ErrorNote error={remove.error} />
      <WidgetEditor
        key={`${w.id}:${generation}`}
        widget={w}
        initial={draftOf(w)}
        type={types.data.find((t) => t.type === w.type)}
        sources={sources.data}
        canEdit={canEdit}
        onSaved={(saved) => widget.setData(saved)}
        onReload={() => {
          void widget.reload().then(() => setGeneration((g) => g + 1));
        }}
      />
      <HistoryPanel type="widget" id={id} refresh={w.publication?.number} onChange={() => void widget.reload().then(() => setGeneration((g) => g + 1))} />
    </>
  );
}

/** The settings a type starts with: its schema's defaults. */
function defaultsOf(schema: JsonSchema): Config {
  const out: Config = {};
  for (const [k, s] of Object.entries(schema.properties ?? {})) if (s.default !== undefined) out[k] = s.default as Json;
  return out;
}

/** A new widget: its kind first, then the editor (Create saves it and opens its page). */
export function NewWidgetPage() {
  useTitle('New widget');
  const { query, route } = useLocation();
  const types = useLoad(loadTypes);
  const sources = useSources();
  const type = types.data?.find((t) => t.type === query.type);
  if (types.error) return <ErrorNote error={types.error} />;
  if (!types.data) return <p aria-busy="true">Loading…</p>;
  if (!type)
    return (
      <>
        <Crumbs name="New widget" />
        <h1>New widget</h1>
        <TypeChoice types={types.data} onChoose={(t) => route(`/widgets/new?type=${encodeURIComponent(t)}`)} />
      </>
    );
  const initial: Draft = {
    name: type.title,
    type: type.type,
    settings: defaultsOf(type.settingsSchema),
    template: type.template ?? (type.type === 'custom' ? STARTER : ''),
    binding: null,
  };
  return (
    <>
      <Crumbs name={`New ${type.title.toLowerCase()}`} />
      <hgroup>
        <h1>New {type.title.toLowerCase()}</h1>
        <p>{type.description}</p>
      </hgroup>
      <WidgetEditor
        key={type.type}
        initial={initial}
        type={type}
        sources={sources.data}
        canEdit
        onSaved={(w) => {
          showToast(`Created the widget “${w.name}”.`);
          route(`/widgets/${w.id}`, true);
        }}
      />
    </>
  );
}

const STARTER = `<div class="board">
  <h1>{{ settings.title | default: "Today" }}</h1>
  <ul>
  {% for row in rows %}
    <li>{{ row | json }}</li>
  {% endfor %}
  </ul>
</div>`;

function TypeChoice({ types, onChoose }: { types: WidgetType[]; onChoose: (type: string) => void }) {
  return (
    <fieldset class="type-choice">
      <legend>What kind of widget?</legend>
      <ul class="type-cards">
        {types.map((t) => (
          <li key={t.type}>
            <button type="button" class="secondary outline" data-type={t.type} onClick={() => onChoose(t.type)}>
              <strong>{t.title}</strong>
              {t.description && <small>{t.description}</small>}
            </button>
          </li>
        ))}
      </ul>
    </fieldset>
  );
}
