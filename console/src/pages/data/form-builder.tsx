import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../../api';
import { ErrorNote, Notice, useAction, useLoad } from '../../ui';
import { Field as FieldBox } from '../../ui/fields';
import { FieldSettings } from './field-settings';
import {
  FIELD_TYPE_WORDS,
  FIELD_TYPES,
  type Field,
  type FieldType,
  type FormDto,
  initialValues,
  keyFromLabel,
  moved,
  newField,
  type Values,
} from './form-model';
import { PublishConflict, type Broken } from './form-publish';
import { RecordForm } from './record-form';

/**
 * A manual table's form (issue 18, docs/data-sources.md "Forms"): its fields in order (drag,
 * or the move buttons from the keyboard), each field's settings, a live preview of the entry
 * form, Save draft (If-Match; a stale form says so and offers a reload) and Publish (rows that
 * would break are listed, and the owner says per field what they get). Viewers read it.
 */

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function FormBuilder({ sourceId, onPublished }: { sourceId: string; onPublished: () => void }) {
  const form = useLoad(() => api.get<FormDto>(`data-sources/${sourceId}/form`), [sourceId]);
  const f = form.data;
  const [fields, setFieldsState] = useState<Field[]>([]);
  const [open, setOpen] = useState<number | null>(null);
  const [dragging, setDragging] = useState<number | null>(null);
  const [preview, setPreview] = useState<Values>({});
  const [said, setSaid] = useState<string | null>(null);
  const [broken, setBroken] = useState<Broken | null>(null);
  useEffect(() => {
    if (!f) return;
    setFieldsState(f.draft.fields);
    setPreview(initialValues(f.draft.fields));
  }, [f]);
  const setFields = (next: Field[]) => {
    setFieldsState(next);
    setSaid(null);
  };
  const ifMatch = () => ({ headers: { 'if-match': `"${f!.revision}"` } });
  const save = useAction(async () => {
    const next = await api.patch<FormDto>(`data-sources/${sourceId}/form/draft`, { fields }, ifMatch());
    form.setData(next);
    setSaid('Draft saved.');
  });
  const publish = useAction(async (migrate: Record<string, unknown> = {}) => {
    let current = f!;
    if (!same(fields, current.draft.fields)) current = await api.patch<FormDto>(`data-sources/${sourceId}/form/draft`, { fields }, ifMatch());
    form.setData(current);
    try {
      const next = await api.post<FormDto>(`data-sources/${sourceId}/form/publish`, { migrate }, { headers: { 'if-match': `"${current.revision}"` } });
      form.setData(next);
      setBroken(null);
      setSaid(`Published as version ${next.publishedVersion}: the table’s columns follow it.`);
      onPublished();
    } catch (err) {
      const details = err instanceof ApiError ? (err.details as Partial<Broken> | undefined) : undefined;
      if (err instanceof ApiError && err.status === 409 && details?.rows) {
        setBroken({ rowCount: details.rowCount ?? details.rows.length, fields: details.fields ?? [], rows: details.rows, message: err.message });
        return;
      }
      throw err;
    }
  });
  if (form.error && !f) return <ErrorNote error={form.error} />;
  if (!f) return <p aria-busy="true">Loading the form…</p>;

  const readOnly = f.myAccess === 'viewer';
  const dirty = !same(fields, f.draft.fields);
  const publishedKeys = new Set((f.published?.fields ?? []).map((x) => x.key));
  const stale = [save.error, publish.error].some((e) => e instanceof ApiError && e.status === 412);
  const failure = save.error ?? publish.error;
  const issueAt = (i: number) => (path: (string | number)[]) => (failure instanceof ApiError ? failure.messageAt(['fields', i, ...path]) : undefined);
  const fieldHasIssue = (i: number) =>
    failure instanceof ApiError &&
    ((failure.details as { issues?: { path?: unknown[] }[] } | undefined)?.issues ?? []).some((x) => x.path?.[0] === 'fields' && x.path[1] === i);
  const move = (from: number, to: number) => {
    if (to < 0 || to >= fields.length || from === to) return;
    setFields(moved(fields, from, to));
    if (open === from) setOpen(to);
  };
  const state = dirty
    ? 'Unsaved changes.'
    : f.publishedVersion === 0
      ? 'Not published yet: the table’s columns do not follow it until it is.'
      : same(f.draft.fields, f.published?.fields)
        ? `Published: version ${f.publishedVersion}.`
        : `The draft differs from the published version ${f.publishedVersion}.`;

  return (
    <section aria-labelledby="form-h" data-testid="form-builder" class="form-builder">
      <h2 id="form-h">Form</h2>
      <p class="muted" data-testid="form-state">
        {state}
        {readOnly && ' You can read it.'}
      </p>
      <div class="builder-columns">
        <div>
          <h3>Fields</h3>
          <ol class="form-fields" aria-label="Fields of the form">
            {fields.map((field, i) => (
              <li
                key={i}
                data-field={field.key}
                draggable={!readOnly}
                class={[dragging === i ? 'dragging' : '', fieldHasIssue(i) ? 'has-issue' : ''].filter(Boolean).join(' ') || undefined}
                onDragStart={(e) => {
                  setDragging(i);
                  e.dataTransfer?.setData('text/plain', String(i));
                }}
                onDragEnd={() => setDragging(null)}
                onDragOver={(e) => e.preventDefault()}
                onDrop={(e) => {
                  e.preventDefault();
                  const from = Number(e.dataTransfer?.getData('text/plain') ?? '');
                  if (Number.isInteger(from)) move(from, i);
                  setDragging(null);
                }}
              >
                <div class="field-row">
                  {!readOnly && (
                    <span class="drag-handle" aria-hidden="true" title="Drag to reorder">
                      ⋮⋮
                    </span>
                  )}
                  <span class="field-name">
                    {field.label || <em>no label</em>} <small class="muted">{FIELD_TYPE_WORDS[field.type]}</small>
                    {field.required && <span class="badge">required</span>}
                    {!field.showOnScreens && <span class="badge">not on screens</span>}
                  </span>
                  <span class="row-buttons">
                    {!readOnly && (
                      <>
                        <button
                          type="button"
                          class="secondary outline small"
                          aria-label={`Move ${field.label} up`}
                          disabled={i === 0}
                          onClick={() => move(i, i - 1)}
                        >
                          ↑
                        </button>
                        <button
                          type="button"
                          class="secondary outline small"
                          aria-label={`Move ${field.label} down`}
                          disabled={i === fields.length - 1}
                          onClick={() => move(i, i + 1)}
                        >
                          ↓
                        </button>
                      </>
                    )}
                    <button
                      type="button"
                      class="secondary outline small"
                      aria-expanded={open === i}
                      aria-label={`Settings of ${field.label}`}
                      onClick={() => setOpen(open === i ? null : i)}
                    >
                      ⚙
                    </button>
                    {!readOnly && (
                      <button
                        type="button"
                        class="contrast outline small"
                        aria-label={`Remove ${field.label}`}
                        onClick={() => {
                          setFields(fields.filter((_, j) => j !== i));
                          setOpen(null);
                        }}
                      >
                        ×
                      </button>
                    )}
                  </span>
                </div>
                {open === i && (
                  <FieldSettings
                    field={field}
                    index={i}
                    published={publishedKeys.has(field.key)}
                    disabled={readOnly}
                    issue={issueAt(i)}
                    onChange={(next) => setFields(fields.map((x, j) => (j === i ? next : x)))}
                  />
                )}
              </li>
            ))}
            {fields.length === 0 && <li class="muted">No fields yet.</li>}
          </ol>
          {!readOnly && (
            <AddField
              taken={new Set(fields.map((x) => x.key))}
              onAdd={(field) => {
                setFields([...fields, field]);
                setOpen(fields.length);
              }}
            />
          )}
        </div>
        <div class="form-preview" data-testid="form-preview">
          <h3>Preview</h3>
          <p class="muted">The entry form as people will fill it in; try it, nothing is saved.</p>
          <RecordForm fields={fields} values={preview} onChange={setPreview} />
        </div>
      </div>
      {stale ? (
        <div class="error-note" role="alert" data-code="version_conflict">
          <p>Someone changed this form meanwhile. Reload it to see their change (yours here are dropped), then apply yours again.</p>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              save.setError(null);
              publish.setError(null);
              void form.reload();
            }}
          >
            Reload the form
          </button>
        </div>
      ) : (
        <ErrorNote error={failure} />
      )}
      {said && !failure && <Notice>{said}</Notice>}
      {!readOnly && (
        <div class="row">
          <button type="button" class="secondary" aria-busy={save.busy} disabled={save.busy || !dirty} onClick={() => void save.run()}>
            Save draft
          </button>
          {f.myAccess === 'owner' && (
            <button type="button" aria-busy={publish.busy} disabled={publish.busy} onClick={() => void publish.run()}>
              Publish
            </button>
          )}
        </div>
      )}
      {broken && (
        <PublishConflict
          broken={broken}
          fields={fields}
          busy={publish.busy}
          error={publish.error}
          onPublish={(migrate) => void publish.run(migrate)}
          onClose={() => setBroken(null)}
        />
      )}
    </section>
  );
}

/** A new field: its label and type; the key comes from the label. */
function AddField({ taken, onAdd }: { taken: ReadonlySet<string>; onAdd: (f: Field) => void }) {
  const [label, setLabel] = useState('');
  const [type, setType] = useState<FieldType>('text');
  return (
    <form
      class="add-field"
      aria-label="Add a field"
      onSubmit={(e) => {
        e.preventDefault();
        const l = label.trim() || `Field ${taken.size + 1}`;
        onAdd(newField(type, l, keyFromLabel(l, taken)));
        setLabel('');
      }}
    >
      <div class="grid">
        <FieldBox label="New field’s label">{(p) => <input {...p} value={label} onInput={(e) => setLabel(e.currentTarget.value)} />}</FieldBox>
        <FieldBox label="Its type">
          {(p) => (
            <select {...p} value={type} onChange={(e) => setType(e.currentTarget.value as FieldType)}>
              {FIELD_TYPES.map((t) => (
                <option key={t} value={t}>
                  {FIELD_TYPE_WORDS[t]}
                </option>
              ))}
            </select>
          )}
        </FieldBox>
      </div>
      <button type="submit" class="secondary outline">
        Add the field
      </button>
    </form>
  );
}
