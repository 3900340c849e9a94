import { useState } from 'preact/hooks';
import { api, ApiError, atLeast, type Page } from '../../api';
import { ErrorNote, formatTime, useAction, useLoad, useSession, useTitle } from '../../ui';
import { confirmAction, showToast } from '../../ui/confirm';
import { type CatalogEntry, describeConfig, describeTargets, type Instance, instancesPath, isInstancePlugin, loadChoices } from './model';

/**
 * The Plugins page (docs/console-plugins.md): the built-in catalog, install and uninstall
 * (admins), and each overlay plugin's instances (editors write, everyone reads).
 */

const nameOf = (catalog: CatalogEntry[] | undefined, id: string) => catalog?.find((p) => p.id === id)?.name ?? id;

/** A refusal to uninstall (409 plugin_required): which installed plugins need it, by name. */
function RequiredNote({ error, catalog, subject }: { error: unknown; catalog: CatalogEntry[] | undefined; subject: string }) {
  if (!(error instanceof ApiError) || error.code !== 'plugin_required') return <ErrorNote error={error} />;
  const d = error.details as { requiredBy?: unknown } | undefined;
  const raw = (Array.isArray(d?.requiredBy) ? d.requiredBy : []) as (string | { id?: string; name?: string })[];
  const names = raw.map((x) => (typeof x === 'string' ? nameOf(catalog, x) : (x.name ?? nameOf(catalog, x.id ?? '')))).filter(Boolean);
  if (names.length === 0) return <ErrorNote error={error} />;
  const list = names.join(', ');
  return (
    <div class="error-note" role="alert" data-code="plugin_required" data-testid="plugin-required">
      <p>
        <strong>
          {subject || 'This plugin'} cannot be uninstalled: {list} {names.length === 1 ? 'needs' : 'need'} it.
        </strong>{' '}
        Uninstall {list} first.
      </p>
    </div>
  );
}

export function PluginsPage() {
  useTitle('Plugins');
  const { user } = useSession();
  const isAdmin = atLeast(user, 'admin');
  const catalog = useLoad(() => api.get<CatalogEntry[]>('plugins'));
  const install = useAction(async (p: CatalogEntry) => {
    await api.post<CatalogEntry>(`plugins/${p.id}/install`, {});
    const needs = p.requires.filter((r) => !catalog.data?.find((x) => x.id === r)?.installed);
    showToast(`${p.name} installed${needs.length ? ` (with ${needs.map((r) => nameOf(catalog.data, r)).join(', ')}, which it needs)` : ''}.`);
    await catalog.reload();
  });
  const [subject, setSubject] = useState('');
  const uninstall = useAction(async (p: CatalogEntry) => {
    setSubject(p.name);
    let purge = false;
    const yes = await confirmAction({
      title: `Uninstall ${p.name}?`,
      body: (
        <>
          <p>
            Its overlays leave every screen within a second.{' '}
            {p.instanceCount > 0
              ? `Its ${p.instanceCount} overlay${p.instanceCount === 1 ? ' is' : 's are'} kept (listed, not shown, not editable) and come back if it is installed again.`
              : ''}
            {p.id === 'noise-meter' ? ' The noise history stays stored too.' : ''}
          </p>
          {(p.instanceCount > 0 || p.id === 'noise-meter') && (
            <label>
              <input type="checkbox" name="purge" onChange={(e) => (purge = e.currentTarget.checked)} /> Also delete its overlays
              {p.id === 'noise-meter' ? ' and all noise history' : ''} for good
            </label>
          )}
        </>
      ),
      confirmLabel: 'Uninstall',
      danger: true,
    });
    if (!yes) return;
    await api.del(`plugins/${p.id}/installation?purge=${purge}`);
    showToast(`${p.name} uninstalled${purge ? ', its overlays deleted' : ''}.`);
    await catalog.reload();
  });
  const busy = install.busy || uninstall.busy;
  return (
    <>
      <hgroup>
        <h1>Plugins</h1>
        <p>Overlays drawn above the content on the screens: a countdown bar, a logo in a corner, a noise meter.</p>
      </hgroup>
      <ErrorNote error={catalog.error ?? install.error} />
      <RequiredNote error={uninstall.error} catalog={catalog.data} subject={subject} />
      {!isAdmin && <p class="muted">Installing and uninstalling plugins needs the admin role.</p>}
      <div class="plugin-cards">
        {/* The overlay plugins first; the layer they need (no overlays of its own) last. */}
        {[...(catalog.data ?? [])]
          .sort((a, b) => Number(!isInstancePlugin(a.id)) - Number(!isInstancePlugin(b.id)))
          .map((p) => (
            <article key={p.id} class="plugin-card" data-plugin={p.id} aria-labelledby={`plugin-${p.id}`}>
              <header>
                <h2 id={`plugin-${p.id}`}>
                  {p.name} <small class="muted">{p.version}</small>
                </h2>
                <span class={`badge ${p.installed ? 'ok' : ''}`} data-testid="install-state">
                  {p.installed ? (p.asDependency ? 'Installed (needed by another)' : 'Installed') : 'Not installed'}
                </span>
              </header>
              <p>{p.description}</p>
              <dl class="plugin-facts">
                <dt>Needs</dt>
                <dd>{p.requires.length ? p.requires.map((r) => nameOf(catalog.data, r)).join(', ') : 'Nothing else'}</dd>
                <dt>Players</dt>
                <dd>{p.playerFamilies.join(', ') || '—'}</dd>
                {p.installedAt && (
                  <>
                    <dt>Installed</dt>
                    <dd>{formatTime(p.installedAt)}</dd>
                  </>
                )}
              </dl>
              <footer class="row">
                {isInstancePlugin(p.id) && (
                  <a href={`/plugins/${p.id}`} role="button" class="secondary outline">
                    Overlays ({p.instanceCount})
                  </a>
                )}
                {isAdmin &&
                  (p.installed ? (
                    <button type="button" class="secondary" disabled={busy} aria-label={`Uninstall ${p.name}`} onClick={() => void uninstall.run(p)}>
                      Uninstall
                    </button>
                  ) : (
                    <button type="button" disabled={busy} aria-label={`Install ${p.name}`} onClick={() => void install.run(p)}>
                      Install
                    </button>
                  ))}
              </footer>
            </article>
          ))}
      </div>
    </>
  );
}

/** One overlay plugin: its instances (a table), with New, Edit and (noise meter) Report. */
export function PluginInstancesPage({ pluginId }: { pluginId: string }) {
  const { user } = useSession();
  const canEdit = atLeast(user, 'editor');
  const catalog = useLoad(() => api.get<CatalogEntry[]>('plugins'));
  const entry = catalog.data?.find((p) => p.id === pluginId);
  useTitle(entry?.name ?? 'Plugin');
  const valid = isInstancePlugin(pluginId);
  const list = useLoad(() => (valid ? api.get<Page<Instance> | Instance[]>(`${instancesPath(pluginId)}?limit=500`) : Promise.resolve([])), [pluginId]);
  const choices = useLoad(() => loadChoices(pluginId === 'brand-bug'), [pluginId]);
  if (!valid) return <ErrorNote error={new ApiError(404, 'plugin_not_found', `There is no plugin “${pluginId}” with overlays.`)} />;
  const items = list.data ? (Array.isArray(list.data) ? list.data : list.data.items) : [];
  return (
    <>
      <p>
        <a href="/plugins">← Plugins</a>
      </p>
      <hgroup>
        <h1>{entry?.name ?? pluginId}</h1>
        <p>{entry?.description}</p>
      </hgroup>
      <ErrorNote error={catalog.error ?? list.error ?? choices.error} />
      {entry && !entry.installed && (
        <p class="notice warn-note" role="status">
          Not installed: {items.length ? 'these overlays are kept but not shown' : 'an admin installs it on the Plugins page'}.
        </p>
      )}
      {canEdit && entry?.installed && (
        <p>
          <a href={`/plugins/${pluginId}/new`} role="button">
            New {entry.name.toLowerCase()}
          </a>
        </p>
      )}
      {list.data && items.length === 0 && <p class="muted">No overlays yet.</p>}
      {items.length > 0 && (
        <div class="table-wrap">
          <table class="striped plugin-table" data-testid="instances">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Shows</th>
                <th scope="col">On</th>
                <th scope="col">Changed</th>
                {pluginId === 'noise-meter' && (
                  <th scope="col">
                    <span class="visually-hidden">Reports</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {items.map((x) => (
                <tr key={x.id} data-instance={x.name}>
                  <td>
                    <a href={`/plugins/${pluginId}/instances/${x.id}`}>{x.name}</a>
                  </td>
                  <td data-label="Shows">{describeConfig(x.pluginId, x.config, choices.data)}</td>
                  <td data-label="On">{describeTargets(x.targets, choices.data)}</td>
                  <td data-label="Changed">{formatTime(x.updatedAt)}</td>
                  {pluginId === 'noise-meter' && (
                    <td>
                      <a href={`/plugins/noise-meter/instances/${x.id}/report`}>Noise report</a>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
