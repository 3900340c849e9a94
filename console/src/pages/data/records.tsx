import { useEffect, useState } from 'preact/hooks';
import { api, type Page, qs } from '../../api';
import { ErrorNote, formatTime, useAction, useLoad } from '../../ui';
import { showToast } from '../../ui/confirm';
import { Field as FieldBox } from '../../ui/fields';
import { type FormDto, initialValues, problemsOf, type Values } from './form-model';
import { RecordForm } from './record-form';
import { RecordPanel } from './record-detail';
import { type DataRecord, stateTone, titleOf, valueText, words } from './records-model';
import { ScrollBox } from './table';
import { isWindowError, type WindowDraft, WindowFields, windowBody, windowHint } from './record-window';

/**
 * A table's records (issue 18), for tables with a published form: the list with state badges,
 * filtered by state and searched; "New record" through the entry form; a record opened below
 * the list (edit, workflow, history: record-detail.tsx). `?record=<id>` opens one (the
 * approvals inbox links here). Viewers read.
 */

const LIST_COLUMNS = 3;

export function RecordsPanel({ form, initialRecord, onChanged }: { form: FormDto; initialRecord?: string; onChanged: () => void }) {
  const sourceId = form.sourceId;
  const fields = form.published?.fields ?? [];
  const shown = fields.filter((f) => f.showOnScreens).slice(0, LIST_COLUMNS);
  const [state, setState] = useState('');
  const [q, setQ] = useState('');
  const [search, setSearch] = useState('');
  useEffect(() => {
    const t = setTimeout(() => setSearch(q.trim()), 300);
    return () => clearTimeout(t);
  }, [q]);
  const list = useLoad(() => api.get<Page<DataRecord>>(`data-sources/${sourceId}/records${qs({ state, q: search, limit: 200 })}`), [sourceId, state, search]);
  const [open, setOpen] = useState<string | null>(initialRecord ?? null);
  const [adding, setAdding] = useState(false);
  const canEdit = form.myAccess !== 'viewer';
  const changed = () => {
    void list.reload();
    onChanged();
  };
  return (
    <section aria-labelledby="records-h" data-testid="records">
      <h2 id="records-h">Records</h2>
      <div class="grid records-filters">
        <FieldBox label="State">
          {(p) => (
            <select {...p} value={state} onChange={(e) => setState(e.currentTarget.value)}>
              <option value="">all</option>
              {form.workflow.states.map((s) => (
                <option key={s} value={s}>
                  {words(s)}
                </option>
              ))}
            </select>
          )}
        </FieldBox>
        <FieldBox label="Search">{(p) => <input {...p} type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} />}</FieldBox>
      </div>
      <ErrorNote error={list.error} />
      <ScrollBox label="Records of the table" testId="records-list">
        <table class="striped">
          <thead>
            <tr>
              {shown.map((f) => (
                <th key={f.key} scope="col">
                  {f.label}
                </th>
              ))}
              <th scope="col">State</th>
              <th scope="col">Changed</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.items ?? []).map((r) => (
              <tr key={r.id} data-record={r.id} aria-current={open === r.id ? 'true' : undefined}>
                {shown.map((f, i) => (
                  <td key={f.key}>
                    {i === 0 ? (
                      <button type="button" class="link-button" onClick={() => setOpen(r.id)}>
                        {valueText(f, r.values[f.key])}
                      </button>
                    ) : (
                      valueText(f, r.values[f.key])
                    )}
                  </td>
                ))}
                <td>
                  <span class={`badge ${stateTone(r.state, r.live)}`} data-testid="record-state">
                    {words(r.state)}
                  </span>
                  {r.state === 'published' && !r.live && (
                    <small class="muted" data-testid="record-window">
                      {' '}
                      {windowHint(r) ?? 'not shown now'}
                    </small>
                  )}
                </td>
                <td>{formatTime(r.updatedAt)}</td>
              </tr>
            ))}
            {list.data && list.data.items.length === 0 && (
              <tr>
                <td colSpan={shown.length + 2} class="muted">
                  {state || search ? 'No records match.' : 'No records yet.'}
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </ScrollBox>
      {canEdit && !adding && (
        <button type="button" onClick={() => setAdding(true)}>
          New record
        </button>
      )}
      {adding && (
        <NewRecord
          form={form}
          onClose={() => setAdding(false)}
          onMade={(r) => {
            setAdding(false);
            setOpen(r.id);
            showToast(`Added “${titleOf(fields, r.values)}” as ${words(r.state).toLowerCase()}.`);
            changed();
          }}
        />
      )}
      {open && (
        <RecordPanel
          key={open}
          form={form}
          recordId={open}
          onChanged={changed}
          onClose={() => setOpen(null)}
          onDeleted={() => {
            setOpen(null);
            changed();
          }}
        />
      )}
    </section>
  );
}

function NewRecord({ form, onClose, onMade }: { form: FormDto; onClose: () => void; onMade: (r: DataRecord) => void }) {
  const fields = form.published?.fields ?? [];
  const [values, setValues] = useState<Values>(() => initialValues(fields));
  const [tried, setTried] = useState(false);
  const [span, setSpan] = useState<WindowDraft>({ publishAt: '', unpublishAt: '' });
  const create = useAction(async () => {
    setTried(true);
    if (Object.keys(problemsOf(fields, values)).length > 0) return;
    onMade(await api.post<DataRecord>(`data-sources/${form.sourceId}/records`, { values, ...windowBody(span) }));
  });
  return (
    <form
      class="record-entry"
      aria-label="New record"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void create.run();
      }}
    >
      <h3>New record</h3>
      <p class="muted">It starts as {words(form.workflow.initial).toLowerCase()}; screens show it once it is published.</p>
      <RecordForm fields={fields} values={values} onChange={setValues} error={create.error} showAll={tried} />
      <WindowFields value={span} onChange={setSpan} error={create.error} />
      <ErrorNote error={isWindowError(create.error) ? null : create.error} />
      <div class="row">
        <button type="submit" aria-busy={create.busy} disabled={create.busy}>
          Add the record
        </button>
        <button type="button" class="secondary outline" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
