import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, atLeast } from '../../api';
import { ErrorNote, Notice, useAction, useLoad, useSession, useTitle } from '../../ui';
import { confirmAction, showToast, UsageList } from '../../ui/confirm';
import { AccessPanel } from './access';
import { DiagnosticsPanel } from './diagnostics';
import { HealthBadge, loadCatalog } from './list';
import { can, type DataSource, type Diagnostics, type Inspect, type Provider } from './model';
import { FormBuilder } from './form-builder';
import type { FormDto } from './form-model';
import { RecordsPanel } from './records';
import { OutputsPanel } from './outputs';
import { RowsGrid } from './rows-grid';
import { bodyOf, draftOf, ProbeResults, SettingsFields, useProbe } from './settings';
import { FieldsTable, Warnings } from './table';
import { ViewEditor } from './view-editor';
import { every, failureWords } from './words';

/** How often the page asks again while it is in view: a fetch that fails shows up by itself. */
const LIVE_MS = 5000;

/** One data source: its health, its data through a view, a table's rows, settings, access. */
export function DataSourcePage({ id }: { id: string }) {
  const { user } = useSession();
  const { route } = useLocation();
  const source = useLoad(() => api.get<DataSource>(`data-sources/${id}`), [id]);
  const diagnostics = useLoad(() => api.get<Diagnostics>(`data-sources/${id}/diagnostics`), [id]);
  const providers = useLoad(loadCatalog);
  // A table's form: once published, the table's rows are records (issue 18).
  const form = useLoad(
    () => (source.data?.provider === 'manual-table' ? api.get<FormDto>(`data-sources/${id}/form`) : Promise.resolve(null)),
    [id, source.data?.provider],
  );
  const { query } = useLocation();
  useTitle(source.data?.name ?? 'Data source');
  useEffect(() => {
    const t = setInterval(() => {
      if (document.visibilityState !== 'visible') return;
      void source.reload();
      void diagnostics.reload();
    }, LIVE_MS);
    return () => clearInterval(t);
  }, [source.reload, diagnostics.reload]);
  // A save made here bumps the settings form's key, so it starts again from what was saved.
  const [saves, setSaves] = useState(0);

  const s = source.data;
  const provider = providers.data?.find((p) => p.id === s?.provider);
  const duplicate = useAction(async () => {
    const copy = await api.post<DataSource>(`data-sources/${id}/duplicate`, {});
    showToast(`Made “${copy.name}”.`);
    route(`/data/${copy.id}`);
  });
  const remove = useAction(async () => {
    const yes = await confirmAction({
      title: `Delete the data source “${s!.name}”?`,
      body: (
        <>
          <p>Its settings and its data go; this cannot be undone. A source something still uses is not deleted: change those first.</p>
          <UsageList usages={diagnostics.data?.usedBy ?? []} label="It is used by:" />
        </>
      ),
      confirmLabel: 'Delete data source',
      danger: true,
    });
    if (!yes) return;
    await api.del(`data-sources/${id}`, { headers: { 'if-match': `"${s!.revision}"` } });
    showToast(`Deleted the data source “${s!.name}”.`);
    route('/data');
  });

  if (source.error && !s) return <ErrorNote error={source.error} />;
  if (!s) return <p aria-busy="true">Loading…</p>;
  const canEdit = can(s, 'editor');
  return (
    <>
      <nav aria-label="breadcrumb">
        <ul>
          <li>
            <a href="/data">Data</a>
          </li>
          <li>{s.name}</li>
        </ul>
      </nav>
      <hgroup>
        <h1>
          {s.name} <HealthBadge source={s} />
        </h1>
        <p>
          {provider?.name ?? s.provider} · {s.rowCount} row{s.rowCount === 1 ? '' : 's'} ·{' '}
          {s.refreshIntervalSec ? `fetched ${every(s.refreshIntervalSec)}` : 'kept in Placard'}
          {!canEdit && ' · you can read it'}
        </p>
      </hgroup>
      {(canEdit || can(s, 'owner')) && (
        <div class="row source-actions">
          {canEdit && atLeast(user, 'editor') && (
            <button type="button" class="secondary outline" aria-busy={duplicate.busy} disabled={duplicate.busy} onClick={() => void duplicate.run()}>
              Duplicate
            </button>
          )}
          {can(s, 'owner') && (
            <button type="button" class="contrast outline" disabled={remove.busy} onClick={() => void remove.run()}>
              Delete
            </button>
          )}
        </div>
      )}
      <ErrorNote error={duplicate.error ?? remove.error} />
      {diagnostics.data && <DiagnosticsPanel source={s} diagnostics={diagnostics.data} />}
      <ErrorNote error={diagnostics.error} />
      <CheckNow source={s} />
      {s.provider === 'manual-table' && (
        <FormBuilder
          sourceId={s.id}
          onPublished={() => {
            void source.reload();
            void form.reload();
          }}
        />
      )}
      {form.data && form.data.publishedVersion > 0 ? (
        <RecordsPanel form={form.data} initialRecord={query.record} onChanged={() => void source.reload()} />
      ) : (
        s.provider === 'manual-table' && canEdit && <RowsGrid source={s} onSaved={(next) => source.setData(next)} />
      )}
      <ViewEditor source={s} />
      <OutputsPanel source={s} />
      {provider && (
        <SettingsEditor
          key={`${s.id}:${saves}`}
          source={s}
          provider={provider}
          canEdit={canEdit}
          justSaved={saves > 0}
          onSaved={(next) => {
            source.setData(next);
            setSaves((n) => n + 1);
            void diagnostics.reload();
          }}
        />
      )}
      {canEdit && <AccessPanel source={s} />}
    </>
  );
}

/** Fetches the saved source now and says what it finds (nothing is stored): for "why is it empty?". */
function CheckNow({ source }: { source: DataSource }) {
  const [result, setResult] = useState<Inspect | null>(null);
  const check = useAction(async () => setResult(await api.get<Inspect>(`data-sources/${source.id}/inspect`)));
  return (
    <details class="check-now" data-testid="check-now">
      <summary>{source.refreshIntervalSec ? 'Fetch it now and list its fields' : 'List its fields'}</summary>
      <p class="muted">{source.refreshIntervalSec ? 'Fetches the document once to see what it holds now; the data shown on screens does not change.' : ''}</p>
      <button type="button" class="secondary small" aria-busy={check.busy} disabled={check.busy} onClick={() => void check.run()}>
        {source.refreshIntervalSec ? 'Fetch now' : 'List the fields'}
      </button>
      <ErrorNote error={check.error} />
      {result?.error && (
        <p class="error-note" role="alert">
          {result.attempt ? failureWords(source.provider, result.attempt) : result.error.message}.
        </p>
      )}
      {result && !result.error && (
        <>
          <p>
            {result.rowCount} row{result.rowCount === 1 ? '' : 's'} now.
          </p>
          <Warnings warnings={result.warnings} />
          <FieldsTable inspect={result} />
        </>
      )}
    </details>
  );
}

/** The settings form filled with the source (read-only below editor access); saves with If-Match. */
function SettingsEditor({
  source,
  provider,
  canEdit,
  justSaved,
  onSaved,
}: {
  source: DataSource;
  provider: Provider;
  canEdit: boolean;
  /** Made again after a save here: it says "Saved." until the next change. */
  justSaved: boolean;
  onSaved: (s: DataSource) => void;
}) {
  const [draft, setDraftState] = useState(() => draftOf(source));
  const [dirty, setDirty] = useState(false);
  const setDraft = (d: typeof draft) => {
    setDraftState(d);
    setDirty(true);
  };
  const saved = justSaved && !dirty;
  const initial = JSON.stringify(bodyOf(provider, draftOf(source)).config);
  const configChanged = JSON.stringify(bodyOf(provider, draft).config) !== initial;
  const probe = useProbe(configChanged ? provider : undefined, draft, source.id);
  const save = useAction(async () => {
    const updated = await api.patch<DataSource>(`data-sources/${source.id}`, bodyOf(provider, draft), { headers: { 'if-match': `"${source.revision}"` } });
    onSaved(updated);
  });
  return (
    <details class="settings" open={saved || undefined} data-testid="settings">
      <summary role="button" class="outline secondary">
        {canEdit ? 'Settings' : 'Settings (read only)'}
      </summary>
      <form
        aria-label="Settings of the data source"
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <SettingsFields provider={provider} draft={draft} onChange={setDraft} error={save.error ?? probe.error} disabled={!canEdit} />
        {configChanged && provider.fetches && <ProbeResults provider={provider} probe={probe} />}
        <ErrorNote error={save.error} />
        {saved && !save.error && <Notice>Saved.</Notice>}
        {canEdit && (
          <button type="submit" aria-busy={save.busy} disabled={save.busy}>
            Save settings
          </button>
        )}
      </form>
    </details>
  );
}
