import { useState } from 'preact/hooks';
import { CheckField, Field as FieldBox } from '../../ui/fields';
import { changeType, FIELD_TYPE_WORDS, FIELD_TYPES, type Field, type FieldType } from './form-model';

/**
 * One field's settings in the form builder (issue 18): label, key, help, required, shown on
 * screens, the type's own settings (length, pattern, min/max, options, unit and precision,
 * currency) and the default. `issue(path)` is the server's word on a setting, when it has one.
 */

type Patch = (f: Field) => void;

const numOrUndef = (text: string): number | undefined => {
  const t = text.trim();
  if (t === '') return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
};

/** Validation without the keys set to undefined (the server sees only the bounds given). */
function withValidation<F extends Field>(f: F, key: string, value: unknown): F {
  const v = { ...(('validation' in f ? f.validation : {}) as Record<string, unknown>) };
  if (value === undefined || value === '') delete v[key];
  else v[key] = value;
  return { ...f, validation: v } as F;
}

export function FieldSettings({
  field,
  index,
  published,
  disabled,
  issue,
  onChange,
}: {
  field: Field;
  index: number;
  /** The key is published already: it names a column and record values, so it stays. */
  published: boolean;
  disabled: boolean;
  issue: (path: (string | number)[]) => string | undefined;
  onChange: Patch;
}) {
  const f = field;
  const v = ('validation' in f ? f.validation : {}) as Record<string, number | string | undefined>;
  const text = (label: string, path: string[], value: string | number | undefined, set: (t: string) => void, help?: string, type = 'text') => (
    <FieldBox label={label} help={help} error={issue(path)}>
      {(p) => <input {...p} type={type as 'text'} disabled={disabled} value={value ?? ''} onInput={(e) => set(e.currentTarget.value)} />}
    </FieldBox>
  );
  const bound = (name: string, label: string, kind: 'number' | 'text' = 'number') =>
    text(
      label,
      ['validation', name],
      v[name],
      (t) => onChange(withValidation(f, name, kind === 'number' ? numOrUndef(t) : t.trim() || undefined)),
      undefined,
      kind === 'number' ? 'number' : 'text',
    );
  return (
    <fieldset class="field-settings" aria-label={`Settings of ${f.label || `field ${index + 1}`}`}>
      <div class="grid">
        {text('Label', ['label'], f.label, (t) => onChange({ ...f, label: t }))}
        <FieldBox label="Type" error={issue(['type'])}>
          {(p) => (
            <select {...p} disabled={disabled} value={f.type} onChange={(e) => onChange(changeType(f, e.currentTarget.value as FieldType))}>
              {FIELD_TYPES.map((t) => (
                <option key={t} value={t}>
                  {FIELD_TYPE_WORDS[t]}
                </option>
              ))}
            </select>
          )}
        </FieldBox>
      </div>
      <FieldBox
        label="Key"
        help={published ? 'Published: the key names the column on screens and stays.' : 'The column’s name on screens: a letter, then letters, digits or _.'}
        error={issue(['key'])}
      >
        {(p) => <input {...p} disabled={disabled || published} value={f.key} onInput={(e) => onChange({ ...f, key: e.currentTarget.value })} />}
      </FieldBox>
      {text('Help', ['help'], f.help, (t) => onChange({ ...f, help: t }), 'Shown under the field when people fill it in.')}
      <div class="grid">
        <CheckField label="Required" checked={f.required} disabled={disabled} onChange={(c) => onChange({ ...f, required: c })} />
        <CheckField
          label="Shown on screens"
          help="Off: kept with each entry, never a column, never on screens."
          checked={f.showOnScreens}
          disabled={disabled}
          onChange={(c) => onChange({ ...f, showOnScreens: c })}
        />
      </div>
      {(f.type === 'text' || f.type === 'longText' || f.type === 'url') && (
        <div class="grid">
          {bound('minLength', 'At least (characters)')}
          {bound('maxLength', 'At most (characters)')}
        </div>
      )}
      {f.type === 'text' &&
        text(
          'Pattern',
          ['validation', 'pattern'],
          v.pattern,
          (t) => onChange(withValidation(f, 'pattern', t || undefined)),
          'A regular expression the whole value must match, e.g. [A-Z]{3}',
        )}
      {(f.type === 'number' || f.type === 'money') && (
        <div class="grid">
          {bound('min', 'Smallest')}
          {bound('max', 'Largest')}
          {text('Digits after the point', ['precision'], f.precision, (t) => onChange({ ...f, precision: numOrUndef(t) ?? 0 }), undefined, 'number')}
        </div>
      )}
      {f.type === 'number' && text('Unit', ['unit'], f.unit, (t) => onChange({ ...f, unit: t }), 'Shown beside the value, e.g. kg')}
      {f.type === 'money' &&
        text('Currency', ['currency'], f.currency, (t) => onChange({ ...f, currency: t.toUpperCase() }), 'An ISO 4217 code such as EUR, USD, GBP')}
      {(f.type === 'date' || f.type === 'time' || f.type === 'datetime') && (
        <div class="grid">
          {bound('min', 'Earliest', 'text')}
          {bound('max', 'Latest', 'text')}
        </div>
      )}
      {f.type === 'multiChoice' && (
        <div class="grid">
          {bound('min', 'Choose at least')}
          {bound('max', 'Choose at most')}
        </div>
      )}
      {(f.type === 'choice' || f.type === 'multiChoice') && (
        <FieldBox label="Options" help="One a line." error={issue(['options']) ?? f.options.map((_, i) => issue(['options', i])).find(Boolean)}>
          {(p) => (
            <textarea
              {...p}
              rows={Math.min(8, f.options.length + 1)}
              disabled={disabled}
              value={f.options.join('\n')}
              onInput={(e) => {
                const options = e.currentTarget.value.split('\n').map((o) => o.trim());
                onChange({ ...f, options: options.filter((o, i) => o !== '' || i === options.length - 1) } as Field);
              }}
            />
          )}
        </FieldBox>
      )}
      <DefaultSetting key={`${f.key}:${f.type}`} field={f} disabled={disabled} error={issue(['default'])} onChange={onChange} />
    </fieldset>
  );
}

/** The value a new entry starts with (empty: none). */
function DefaultSetting({ field: f, disabled, error, onChange }: { field: Field; disabled: boolean; error?: string; onChange: Patch }) {
  if (f.type === 'boolean')
    return (
      <FieldBox label="Default" error={error}>
        {(p) => (
          <select
            {...p}
            disabled={disabled}
            value={f.default === null ? '' : String(f.default)}
            onChange={(e) => onChange({ ...f, default: e.currentTarget.value === '' ? null : e.currentTarget.value === 'true' })}
          >
            <option value="">none</option>
            <option value="true">yes</option>
            <option value="false">no</option>
          </select>
        )}
      </FieldBox>
    );
  const shown = f.default === null || f.default === undefined ? '' : Array.isArray(f.default) ? f.default.join(', ') : String(f.default);
  const parse = (t: string): unknown => {
    if (t.trim() === '') return null;
    if (f.type === 'number' || f.type === 'money') return Number.isFinite(Number(t)) ? Number(t) : t;
    if (f.type === 'multiChoice')
      return t
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    return t;
  };
  // The typed text is kept ("2." while typing 2.5); the field gets what it reads as.
  const [typed, setTyped] = useState(shown);
  return (
    <FieldBox label="Default" help={f.type === 'multiChoice' ? 'Options separated by commas; empty: none.' : 'Empty: none.'} error={error}>
      {(p) => (
        <input
          {...p}
          disabled={disabled}
          value={typed}
          onInput={(e) => {
            setTyped(e.currentTarget.value);
            onChange({ ...f, default: parse(e.currentTarget.value) } as Field);
          }}
        />
      )}
    </FieldBox>
  );
}
