import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, atLeast } from '../../api';
import { ErrorNote, useAction, useLoad, useSession, useTitle } from '../../ui';
import { confirmAction, showToast } from '../../ui/confirm';
import { type Targets, TargetPicker } from '../../ui/targets';
import { BrandBugFields, CountdownFields, NoiseMeterFields } from './config-forms';
import {
  type BrandBugConfig,
  type CatalogEntry,
  type ConfigOf,
  type CountdownConfig,
  defaultConfig,
  ifMatch,
  type Instance,
  type InstancePluginId,
  instancesPath,
  isInstancePlugin,
  loadChoices,
  type NoiseMeterConfig,
} from './model';
import { OverlayPreview } from './preview';

/** One overlay instance: its name, config, targets and a live preview; new (`id` absent) or stored. */
export function InstanceEditorPage({ pluginId, id }: { pluginId: string; id?: string }) {
  if (!isInstancePlugin(pluginId)) return <ErrorNote error={new ApiError(404, 'plugin_not_found', `There is no plugin “${pluginId}” with overlays.`)} />;
  return <Editor key={`${pluginId}:${id ?? 'new'}`} plugin={pluginId} id={id} />;
}

interface Draft<P extends InstancePluginId> {
  name: string;
  targets: Targets;
  config: ConfigOf[P];
}

function Editor<P extends InstancePluginId>({ plugin, id }: { plugin: P; id?: string }) {
  const { user } = useSession();
  const canEdit = atLeast(user, 'editor');
  const { route } = useLocation();
  const catalog = useLoad(() => api.get<CatalogEntry[]>('plugins'));
  const entry = catalog.data?.find((p) => p.id === plugin);
  const stored = useLoad(() => (id ? api.get<Instance<P>>(`${instancesPath(plugin)}/${id}`) : Promise.resolve(null)), [id]);
  const choices = useLoad(() => loadChoices(plugin === 'brand-bug'));
  const [draft, setDraft] = useState<Draft<P> | null>(id ? null : { name: '', targets: { all: true }, config: defaultConfig(plugin) });
  const [missing, setMissing] = useState('');
  useEffect(() => {
    if (stored.data) setDraft({ name: stored.data.name, targets: stored.data.targets, config: stored.data.config });
  }, [stored.data]);
  const title = id ? (stored.data?.name ?? 'Overlay') : `New ${entry?.name.toLowerCase() ?? 'overlay'}`;
  useTitle(title);

  const save = useAction(async (d: Draft<P>) => {
    if (!d.name.trim()) return setMissing('Give it a name.');
    const t = d.targets;
    if (!t.all && !(t.screenIds?.length || t.groupIds?.length || t.locationIds?.length)) return setMissing('Choose where it shows.');
    if (plugin === 'brand-bug' && !(d.config as BrandBugConfig).assetId) return setMissing('Choose the logo.');
    if (plugin === 'countdown-bar') {
      const target = (d.config as CountdownConfig).target;
      if (target.type === 'at' && !target.at) return setMissing('Choose the date and time it counts down to.');
    }
    setMissing('');
    const body = {
      name: d.name.trim(),
      targets: t.all ? { all: true } : { screenIds: t.screenIds ?? [], groupIds: t.groupIds ?? [], locationIds: t.locationIds ?? [] },
      config: d.config,
    };
    if (stored.data) {
      const saved = await api.put<Instance<P>>(`${instancesPath(plugin)}/${stored.data.id}`, body, ifMatch(stored.data));
      stored.setData(saved);
      showToast('Saved. Connected screens show the change within a second.');
    } else {
      const made = await api.post<Instance<P>>(instancesPath(plugin), body);
      showToast(`“${made.name}” created. Connected screens show it within a second.`);
      route(`/plugins/${plugin}`);
    }
  });
  const remove = useAction(async (x: Instance<P>) => {
    const yes = await confirmAction({
      title: `Delete “${x.name}”?`,
      body: (
        <p>
          It goes from the screens it shows on.
          {plugin === 'noise-meter' ? ' Its noise history stays stored and can be read again by a new meter on the same screens.' : ''}
        </p>
      ),
      confirmLabel: 'Delete',
      danger: true,
    });
    if (!yes) return;
    await api.del(`${instancesPath(plugin)}/${x.id}`);
    showToast(`“${x.name}” deleted.`);
    route(`/plugins/${plugin}`);
  });

  const err = save.error instanceof ApiError ? save.error : null;
  return (
    <>
      <p>
        <a href={`/plugins/${plugin}`}>← {entry?.name ?? plugin}</a>
      </p>
      <h1>{title}</h1>
      <ErrorNote error={stored.error ?? choices.error ?? catalog.error} />
      {entry && !entry.installed && (
        <p class="notice warn-note" role="status">
          {entry.name} is not installed: this overlay is kept but not shown, and cannot be changed until an admin installs the plugin again.
        </p>
      )}
      {draft && choices.data && (
        <div class="plugin-columns">
          <form
            aria-label={id ? 'Edit overlay' : 'New overlay'}
            onSubmit={(e) => {
              e.preventDefault();
              void save.run(draft);
            }}
          >
            <fieldset disabled={!canEdit}>
              <label>
                Name
                <input
                  value={draft.name}
                  maxLength={200}
                  aria-required="true"
                  placeholder="e.g. Lunch countdown"
                  onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })}
                />
                {err?.fieldMessage('name') && <small class="field-error">{err.fieldMessage('name')}</small>}
              </label>
              {plugin === 'countdown-bar' && (
                <CountdownFields
                  value={draft.config as CountdownConfig}
                  error={err}
                  onChange={(config) => setDraft({ ...draft, config: config as ConfigOf[P] })}
                />
              )}
              {plugin === 'brand-bug' && (
                <BrandBugFields
                  value={draft.config as BrandBugConfig}
                  error={err}
                  choices={choices.data}
                  onChange={(config) => setDraft({ ...draft, config: config as ConfigOf[P] })}
                />
              )}
              {plugin === 'noise-meter' && (
                <NoiseMeterFields
                  value={draft.config as NoiseMeterConfig}
                  error={err}
                  onChange={(config) => setDraft({ ...draft, config: config as ConfigOf[P] })}
                />
              )}
              <TargetPicker legend="Shows on" allowAll lists={choices.data} value={draft.targets} onChange={(targets) => setDraft({ ...draft, targets })} />
            </fieldset>
            {missing && (
              <p class="field-error" role="alert">
                {missing}
              </p>
            )}
            <ErrorNote error={save.error ?? remove.error} />
            {canEdit && (
              <div class="row">
                <button type="submit" aria-busy={save.busy}>
                  {id ? 'Save' : 'Create overlay'}
                </button>
                {stored.data && (
                  <button type="button" class="danger outline" onClick={() => void remove.run(stored.data!)}>
                    Delete
                  </button>
                )}
                {stored.data && plugin === 'noise-meter' && (
                  <a href={`/plugins/noise-meter/instances/${stored.data.id}/report`} role="button" class="secondary outline">
                    Noise report
                  </a>
                )}
              </div>
            )}
          </form>
          <aside class="plugin-side">
            <OverlayPreview plugin={plugin} config={draft.config} choices={choices.data} />
          </aside>
        </div>
      )}
    </>
  );
}
