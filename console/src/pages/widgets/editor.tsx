import { useMemo, useState } from 'preact/hooks';
import { api, ApiError } from '../../api';
import { ErrorNote, Notice, useAction } from '../../ui';
import { Field } from '../../ui/fields';
import type { Config } from '../data/model';
import { type JsonSchema, SchemaForm } from '../data/schema-form';
import type { DataSource } from '../data/shared';
import { BindingPicker } from './binding';
import { bodyOf, type Draft, templateErrorsOf, type Widget, type WidgetType } from './model';
import { useCompilePreview, WidgetPreview } from './preview';
import { TemplateEditor } from './template-editor';

/**
 * The widget editor (new or saved): name, the type's settings (its JSON Schema drawn by the
 * Data pages' schema form), the data it shows, a custom widget's template, and the live
 * preview compiled by the server ~400 ms after the last change. Save refuses while the
 * template has mistakes; a saved widget is changed with If-Match (a stale save offers a reload).
 */
export function WidgetEditor({
  widget,
  initial,
  type,
  sources,
  canEdit,
  onSaved,
  onReload,
}: {
  /** The saved widget (absent: a new one, created by Save). */
  widget?: Widget;
  initial: Draft;
  type: WidgetType | undefined;
  sources: DataSource[] | undefined;
  canEdit: boolean;
  onSaved: (w: Widget, created: boolean) => void;
  onReload?: () => void;
}) {
  const [draft, setDraft] = useState<Draft>(initial);
  const [dirty, setDirty] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const change = (fn: (d: Draft) => Draft) => {
    setDraft(fn);
    setDirty(true);
    setNotice(null);
  };
  const bodyJson = useMemo(() => JSON.stringify(bodyOf(draft)), [draft]);
  const preview = useCompilePreview(bodyJson);
  // The last Save's verdict holds while the body is the one refused.
  const [refused, setRefused] = useState<string | null>(null);

  const save = useAction(async () => {
    if (preview.errors.length > 0) {
      setRefused(bodyJson);
      throw new ApiError(400, 'validation_failed', 'Not saved: fix the template’s mistakes first (listed under the template).');
    }
    setRefused(bodyJson);
    try {
      const saved = widget
        ? await api.patch<Widget>(`widgets/${widget.id}`, JSON.parse(bodyJson), { headers: { 'if-match': `"${widget.revision}"` } })
        : await api.post<Widget>('widgets', JSON.parse(bodyJson));
      setDirty(false);
      setRefused(null);
      setNotice(widget ? 'Saved. Screens showing it get the new version within seconds.' : 'Widget created.');
      onSaved(saved, !widget);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'version_conflict')
        throw new ApiError(412, err.code, 'Someone else changed this widget meanwhile. Reload to see their version (your unsaved changes would be lost).');
      throw err;
    }
  });
  const saveError = refused === bodyJson ? save.error : null;
  const serverErrors = templateErrorsOf(saveError);
  const templateErrors = preview.errors.length ? preview.errors : serverErrors;
  // A refusal of the settings (400 naming settings.<path>) shows under its field.
  const settingsError = saveError ?? preview.error;
  const need = type?.usesData || draft.binding ? 'optional' : 'none';
  const bindingError = settingsError instanceof ApiError ? (settingsError.fieldMessage('binding') ?? undefined) : undefined;
  // The settings every type shares (colours, font, play time, language) fold away under the type's own.
  const [own, look] = useMemo(() => splitSchema(type?.settingsSchema), [type]);
  const schemaProps = {
    value: draft.settings,
    onChange: (settings: Config) => change((d) => ({ ...d, settings })),
    secretPaths: [],
    error: settingsError,
    disabled: !canEdit,
    root: 'settings',
  };
  const fieldChoices = useMemo(() => {
    const s = draft.binding ? sources?.find((x) => x.id === draft.binding!.sourceId) : undefined;
    if (!s) return undefined;
    const kept = draft.binding?.view?.fields;
    return s.columns.map((c) => c.name).filter((n) => !kept || kept.includes(n));
  }, [draft.binding, sources]);
  const settingsProps = { ...schemaProps, fieldChoices };

  return (
    <form
      class="widget-editor"
      aria-label={widget ? `Edit the widget ${widget.name}` : 'New widget'}
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      <div class="widget-columns">
        <div class="widget-form">
          <fieldset disabled={!canEdit} class="plain">
            <Field label="Name" error={settingsError instanceof ApiError ? settingsError.fieldMessage('name') : undefined}>
              {(f) => <input {...f} required maxLength={200} value={draft.name} onInput={(e) => change((d) => ({ ...d, name: e.currentTarget.value }))} />}
            </Field>
          </fieldset>
          <BindingPicker
            binding={draft.binding}
            need={need}
            sources={sources}
            onChange={(binding) => change((d) => ({ ...d, binding }))}
            disabled={!canEdit}
            error={bindingError}
          />
          {draft.type === 'custom' && (
            <section aria-labelledby="template-h">
              <h2 id="template-h">Template</h2>
              <p class="muted">
                Rows are in <code>rows</code> (each a row’s fields by name), their fields in <code>columns</code>, the source’s name in <code>source</code>, the
                settings in <code>settings</code>, the time in <code>now</code>. No scripts and no addresses outside Placard: the server takes them out.
              </p>
              <TemplateEditor value={draft.template} onChange={(template) => change((d) => ({ ...d, template }))} errors={templateErrors} disabled={!canEdit} />
            </section>
          )}
          {type && (
            <section aria-labelledby="settings-h">
              <h2 id="settings-h">Settings</h2>
              {own.properties && Object.keys(own.properties).length > 0 && <SchemaForm {...settingsProps} schema={own} />}
              <details class="look">
                <summary>Look and play time</summary>
                <SchemaForm {...settingsProps} schema={look} />
              </details>
            </section>
          )}
        </div>
        <div class="widget-side">
          <WidgetPreview html={preview.html} busy={preview.busy} error={preview.error} failed={preview.errors.length > 0} />
          {canEdit && (
            <div class="save-bar">
              {saveError instanceof ApiError && saveError.code === 'version_conflict' ? (
                <div class="error-note" role="alert" data-code="version_conflict">
                  <p>{saveError.message}</p>
                  <button type="button" class="secondary small" onClick={onReload}>
                    Reload
                  </button>
                </div>
              ) : (
                <ErrorNote error={saveError} />
              )}
              {notice && <Notice>{notice}</Notice>}
              <div class="row">
                <button type="submit" aria-busy={save.busy} disabled={save.busy}>
                  {widget ? 'Save' : 'Create the widget'}
                </button>
                {dirty && widget && <small class="muted">Unsaved changes</small>}
              </div>
            </div>
          )}
        </div>
      </div>
    </form>
  );
}

/** Settings every type shares (docs/widgets.md): shown apart from the type's own. */
const SHARED = new Set(['background', 'color', 'fontFamily', 'fontSizePx', 'durationMs', 'lang']);

function splitSchema(schema: JsonSchema | undefined): [JsonSchema, JsonSchema] {
  const entries = Object.entries(schema?.properties ?? {});
  const part = (shared: boolean): JsonSchema => ({
    ...schema,
    properties: Object.fromEntries(entries.filter(([k]) => SHARED.has(k) === shared)),
    required: schema?.required?.filter((k) => SHARED.has(k) === shared),
  });
  return [part(false), part(true)];
}
