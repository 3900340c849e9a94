import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../../api';
import { ErrorNote, useAction, useLoad, useTitle } from '../../ui';
import { loadCatalog } from './list';
import type { DataSource, Provider } from './model';
import { bodyOf, type Draft, ProbeResults, SettingsFields, useProbe } from './settings';

const emptyDraft = (): Draft => ({ name: '', config: {}, refreshMin: '', timeZone: '' });

/** Add a data source: choose a provider, fill its form (from the catalog's schema), see what it gives, save. */
export function NewDataSourcePage() {
  useTitle('Add a data source');
  const { query, route } = useLocation();
  const providers = useLoad(loadCatalog);
  const [providerId, setProviderId] = useState<string>(query.provider ?? '');
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  const provider = providers.data?.find((p) => p.id === providerId);
  const probe = useProbe(provider, draft);
  const save = useAction(async () => {
    const made = await api.post<DataSource>('data-sources', { provider: provider!.id, ...bodyOf(provider!, draft) });
    route(`/data/${made.id}`);
  });
  const choose = (p: Provider) => {
    setProviderId(p.id);
    setDraft((d) => ({ ...emptyDraft(), name: d.name }));
    save.setError(null);
  };
  return (
    <>
      <nav aria-label="breadcrumb">
        <ul>
          <li>
            <a href="/data">Data</a>
          </li>
          <li>Add a data source</li>
        </ul>
      </nav>
      <h1>Add a data source</h1>
      <ErrorNote error={providers.error} />
      <fieldset class="provider-choice">
        <legend>What kind of data?</legend>
        {(providers.data ?? []).map((p) => (
          <label key={p.id} class={p.id === providerId ? 'chosen' : undefined}>
            <input type="radio" name="provider" value={p.id} checked={p.id === providerId} onChange={() => choose(p)} />
            <strong>{p.name}</strong>
            <small>
              {p.description} <span class="muted">Needs: {p.needs.join('; ')}.</span>
            </small>
          </label>
        ))}
      </fieldset>
      {provider && (
        <form
          key={provider.id}
          aria-label={`New ${provider.name} source`}
          class="source-form"
          onSubmit={(e) => {
            e.preventDefault();
            void save.run();
          }}
        >
          <SettingsFields provider={provider} draft={draft} onChange={setDraft} error={save.error ?? probe.error} />
          {provider.fetches ? (
            <ProbeResults provider={provider} probe={probe} />
          ) : (
            <p class="muted">Add the rows once the table is saved: its page has a grid for them.</p>
          )}
          <ErrorNote error={save.error} />
          <button type="submit" aria-busy={save.busy} disabled={save.busy}>
            Save the data source
          </button>
        </form>
      )}
    </>
  );
}
