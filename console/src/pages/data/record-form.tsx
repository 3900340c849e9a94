import { useEffect, useId, useState } from 'preact/hooks';
import { ApiError } from '../../api';
import { CheckField, Field as FieldBox } from '../../ui/fields';
import { type Field, problemsOf, type Value, type Values } from './form-model';

/**
 * The entry form of a table's form (issue 18): one control per field, in the form's order,
 * checked as people type with the server's own rules (form-model.ts mirrors fields.ts). A
 * field's problem shows once it was touched, or all of them after a submit (`showAll`); the
 * server's 400 issues show under their fields until the field changes. Used by the form
 * builder's preview and by record entry.
 */

/** The server's 400 issues by field key (paths [key] or ['values', key]). */
export function serverIssues(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  const issues = (error.details as { issues?: { path?: unknown[]; message?: string }[] } | undefined)?.issues ?? [];
  const out: Record<string, string> = {};
  for (const i of issues) {
    const path = i.path ?? [];
    const key = path[0] === 'values' ? path[1] : path.length === 1 ? path[0] : undefined;
    if (typeof key === 'string' && i.message && !out[key]) out[key] = i.message;
  }
  return out;
}

/** Text typed into a number box as the value: a number when it reads as one, else the text (so the check says why). */
function numberOf(text: string): Value {
  const t = text.trim().replace(',', '.');
  if (t === '') return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : text;
}

const PLACEHOLDER: Partial<Record<Field['type'], string>> = {
  datetime: '2025-05-01T18:00:00Z',
  colour: '#RRGGBB',
  url: 'https://',
  image: 'https://',
};

export function RecordForm({
  fields,
  values,
  onChange,
  error,
  showAll = false,
  disabled = false,
}: {
  fields: readonly Field[];
  values: Values;
  onChange: (values: Values) => void;
  /** A failed save: its 400 issues show under their fields. */
  error?: unknown;
  /** Every problem shown (after a submit), not only those of touched fields. */
  showAll?: boolean;
  disabled?: boolean;
}) {
  const [touched, setTouched] = useState<ReadonlySet<string>>(new Set());
  const [changedSinceError, setChangedSinceError] = useState<ReadonlySet<string>>(new Set());
  // Typed text of number boxes ("2." while typing), so the box never fights the typist.
  const [typed, setTyped] = useState<Record<string, string>>({});
  useEffect(() => setChangedSinceError(new Set()), [error]);
  const problems = problemsOf(fields, values);
  const fromServer = serverIssues(error);
  const set = (key: string, value: Value) => {
    setTouched((s) => new Set(s).add(key));
    setChangedSinceError((s) => new Set(s).add(key));
    onChange({ ...values, [key]: value });
  };
  const messageOf = (f: Field) => {
    if (fromServer[f.key] && !changedSinceError.has(f.key)) return `${f.label} ${fromServer[f.key]}`;
    if (problems[f.key] && (showAll || touched.has(f.key))) return `${f.label} ${problems[f.key]}`;
    return undefined;
  };
  if (fields.length === 0) return <p class="muted">No fields yet.</p>;
  return (
    <div class="record-form" data-testid="record-form">
      {fields.map((f) => {
        const v = values[f.key];
        const error = messageOf(f);
        const label = (
          <>
            {f.label}
            {f.required && <span aria-hidden="true"> *</span>}
            {f.type === 'money' && <small class="muted"> ({f.currency})</small>}
            {f.type === 'number' && f.unit && <small class="muted"> ({f.unit})</small>}
            {!f.showOnScreens && <small class="muted"> · not on screens</small>}
          </>
        );
        const help = f.help || undefined;
        if (f.type === 'boolean')
          return (
            <div key={f.key} data-field={f.key}>
              <CheckField label={label} help={help} error={error} checked={v === true} disabled={disabled} onChange={(c) => set(f.key, c)} />
            </div>
          );
        if (f.type === 'multiChoice')
          return (
            <MultiChoice
              key={f.key}
              field={f}
              value={Array.isArray(v) ? v : []}
              label={label}
              error={error}
              disabled={disabled}
              onChange={(o) => set(f.key, o)}
            />
          );
        return (
          <div key={f.key} data-field={f.key}>
            <FieldBox label={label} help={help} error={error}>
              {(p) => {
                const common = { ...p, name: f.key, disabled, required: f.required, onBlur: () => setTouched((s) => new Set(s).add(f.key)) };
                const text = v === null || v === undefined ? '' : String(v);
                switch (f.type) {
                  case 'longText':
                    return <textarea {...common} rows={4} value={text} onInput={(e) => set(f.key, e.currentTarget.value)} />;
                  case 'choice':
                    return (
                      <select {...common} value={text} onChange={(e) => set(f.key, e.currentTarget.value || null)}>
                        <option value="">—</option>
                        {f.options.map((o) => (
                          <option key={o} value={o}>
                            {o}
                          </option>
                        ))}
                      </select>
                    );
                  case 'number':
                  case 'money':
                    return (
                      <input
                        {...common}
                        type="text"
                        inputMode="decimal"
                        value={typed[f.key] ?? text}
                        onInput={(e) => {
                          const t = e.currentTarget.value;
                          setTyped((m) => ({ ...m, [f.key]: t }));
                          set(f.key, numberOf(t));
                        }}
                      />
                    );
                  default:
                    return (
                      <input
                        {...common}
                        type={(f.type === 'date' ? 'date' : f.type === 'time' ? 'time' : f.type === 'url' || f.type === 'image' ? 'url' : 'text') as 'text'}
                        step={f.type === 'time' ? 1 : undefined}
                        placeholder={PLACEHOLDER[f.type]}
                        value={text}
                        onInput={(e) => set(f.key, e.currentTarget.value === '' ? null : e.currentTarget.value)}
                      />
                    );
                }
              }}
            </FieldBox>
          </div>
        );
      })}
    </div>
  );
}

function MultiChoice({
  field,
  value,
  label,
  error,
  disabled,
  onChange,
}: {
  field: Extract<Field, { type: 'multiChoice' }>;
  value: string[];
  label: preact.ComponentChildren;
  error?: string;
  disabled: boolean;
  onChange: (v: string[]) => void;
}) {
  const id = useId();
  return (
    <fieldset data-field={field.key} aria-describedby={error ? `${id}-error` : undefined}>
      <legend>{label}</legend>
      {field.options.map((o) => (
        <label key={o}>
          <input
            type="checkbox"
            disabled={disabled}
            checked={value.includes(o)}
            onChange={(e) => onChange(e.currentTarget.checked ? field.options.filter((x) => x === o || value.includes(x)) : value.filter((x) => x !== o))}
          />
          {o}
        </label>
      ))}
      {error && (
        <small id={`${id}-error`} class="field-error">
          {error}
        </small>
      )}
      {field.help && <small class="field-help">{field.help}</small>}
    </fieldset>
  );
}
