import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api, atLeast, type Page } from '../../api';
import { ErrorNote, useAction, useLoad, useSession, useTitle } from '../../ui';
import { Field } from '../../ui/fields';
import type { FormDto } from './form-model';
import type { DataSource, Provider } from './model';
import { healthOf, when } from './words';

/** The catalog of providers (it does not change while the server runs). */
let catalog: Promise<Provider[]> | null = null;
export function loadCatalog(): Promise<Provider[]> {
  catalog ??= api.get<{ providers: Provider[] }>('provider-catalog').then(
    (c) => c.providers,
    (err) => {
      catalog = null;
      throw err;
    },
  );
  return catalog;
}

export function HealthBadge({ source }: { source: DataSource }) {
  const h = healthOf(source);
  return (
    <span class={`badge ${h.tone}`} title={h.title} data-testid="health">
      {h.label}
    </span>
  );
}

/** Data: the sources widgets show (feeds, sheets, calendars, tables kept here). */
export function DataSourcesPage() {
  useTitle('Data');
  const { user } = useSession();
  const list = useLoad(() => api.get<Page<DataSource>>('data-sources?limit=500'));
  const providers = useLoad(loadCatalog);
  const nameOf = (id: string) => providers.data?.find((p) => p.id === id)?.name ?? id;
  return (
    <>
      <hgroup>
        <h1>Data</h1>
        <p>News feeds, spreadsheets, calendars, JSON documents and tables kept here: the rows widgets show on screens.</p>
      </hgroup>
      {atLeast(user, 'editor') && (
        <div class="row">
          <a href="/data/new" role="button">
            Add a data source
          </a>
          <NewForm />
        </div>
      )}
      <ErrorNote error={list.error} />
      <div class="table-wrap">
        <table class="striped">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Rows</th>
              <th scope="col">State</th>
              <th scope="col">Data</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.items ?? []).map((s) => (
              <tr key={s.id} data-source={s.name}>
                <td>
                  <a href={`/data/${s.id}`}>{s.name}</a>
                </td>
                <td>{nameOf(s.provider)}</td>
                <td>
                  {s.rowCount} row{s.rowCount === 1 ? '' : 's'}
                </td>
                <td>
                  <HealthBadge source={s} />
                </td>
                <td>{s.snapshot ? `data from ${when(s.snapshot.fetchedAt)}` : <span class="muted">no data yet</span>}</td>
              </tr>
            ))}
            {list.data && list.data.items.length === 0 && (
              <tr>
                <td colSpan={5} class="muted">
                  No data sources yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** "New form": a table and its form in one step (POST /forms), built on its page before it is published. */
function NewForm() {
  const { route } = useLocation();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const create = useAction(async () => {
    const form = await api.post<FormDto>('forms', { name, fields: [], publish: false });
    route(`/data/${form.sourceId}`);
  });
  if (!open)
    return (
      <button type="button" class="secondary" onClick={() => setOpen(true)}>
        New form
      </button>
    );
  return (
    <form
      class="new-form"
      aria-label="New form"
      onSubmit={(e) => {
        e.preventDefault();
        void create.run();
      }}
    >
      <Field label="Name of the form (and its table)" error={create.error instanceof ApiError ? create.error.fieldMessage('name') : undefined}>
        {(p) => <input {...p} required value={name} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <ErrorNote error={create.error} />
      <div class="row">
        <button type="submit" aria-busy={create.busy} disabled={create.busy}>
          Create the form
        </button>
        <button type="button" class="secondary outline" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
