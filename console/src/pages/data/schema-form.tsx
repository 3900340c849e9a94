import { useState } from 'preact/hooks';
import { CheckField, Field } from '../../ui/fields';
import type { Config, Json } from './model';
import {
  type Change,
  type Ctx,
  cleanConfig,
  enumWord,
  errorAt,
  holdsSecret,
  isKept,
  isObject,
  isSecret,
  type JsonSchema,
  labelOf,
  namesField,
  type Path,
  typeOf,
  withKey,
  words,
} from './schema-util';

export { cleanConfig, type JsonSchema } from './schema-util';

/**
 * A small form renderer for the JSON Schemas the provider catalog answers (z.toJSONSchema of
 * each provider's config): strings, numbers, booleans, enums, arrays of objects (json's and a
 * table's columns), string maps (headers) and a oneOf of objects told apart by a const
 * property (auth). Secret paths (`headers.*`, `auth.token`) are password fields; a stored
 * secret comes as `{"set": true}` and stays so until something is typed over it. The server's
 * issue at `config.<path>` shows under its field. Anything else falls back to JSON text.
 */

export function SchemaForm({
  schema,
  value,
  onChange,
  secretPaths,
  error,
  disabled = false,
  root,
  fieldChoices,
}: {
  schema: JsonSchema;
  value: Config;
  onChange: (next: Config) => void;
  secretPaths: string[];
  error?: unknown;
  disabled?: boolean;
  root?: string;
  fieldChoices?: string[];
}) {
  const ctx: Ctx = { secretPaths, error, disabled, root, fieldChoices };
  const props = Object.entries(schema.properties ?? {});
  const node = ([name, s]: [string, JsonSchema]) => (
    <Node
      key={name}
      schema={s}
      path={[name]}
      label={labelOf(name)}
      required={schema.required?.includes(name) ?? false}
      value={value[name]}
      onChange={(v) => onChange(withKey(value, name, v))}
      ctx={ctx}
    />
  );
  const plain = props.filter(([name]) => !holdsSecret(ctx, name));
  const secret = props.filter(([name]) => holdsSecret(ctx, name));
  const secretSet = secret.some(([name]) => cleanConfig(value[name]) !== undefined);
  return (
    <div class="schema-form">
      {plain.map(node)}
      {secret.length > 0 && (
        <details class="credentials" open={secretSet || Boolean(secret.some(([n]) => errorAt(ctx, [n])))}>
          <summary>Credentials and headers{secretSet ? ' (set)' : ' (optional)'}</summary>
          <p class="muted">Kept secret: sealed on the server and never shown again, not even to you.</p>
          {secret.map(node)}
        </details>
      )}
    </div>
  );
}

interface NodeProps {
  schema: JsonSchema;
  path: Path;
  label: string;
  required: boolean;
  value: Json | undefined;
  onChange: Change;
  ctx: Ctx;
}

function Node(p: NodeProps) {
  const { schema } = p;
  // `X or null` (a nullable setting): the control of X, empty meaning null.
  const variants = schema.oneOf ?? schema.anyOf;
  const plain = variants?.filter((v) => v.type !== 'null');
  if (variants && plain?.length === 1 && variants.length === 2)
    return <Node {...p} schema={{ ...plain[0]!, description: schema.description ?? plain[0]!.description, default: schema.default ?? plain[0]!.default }} />;
  if (variants) return <OneOfField {...p} />;
  if (schema.enum) return <EnumField {...p} />;
  const type = typeOf(schema);
  if (type === 'boolean') {
    const checked = typeof p.value === 'boolean' ? p.value : schema.default === true;
    return (
      <CheckField label={p.label} help={schema.description} error={errorAt(p.ctx, p.path)} checked={checked} disabled={p.ctx.disabled} onChange={p.onChange} />
    );
  }
  if (type === 'integer' || type === 'number') return <NumberField {...p} integer={type === 'integer'} />;
  if (type === 'string' && p.ctx.fieldChoices && namesField(p.path)) return <FieldChoice {...p} />;
  if (type === 'string') return <TextField {...p} />;
  if (type === 'array' && schema.items && typeOf(schema.items) === 'object') return <ListField {...p} />;
  if (type === 'object' && isObject(schema.additionalProperties) && !schema.properties) return <MapField {...p} />;
  if (type === 'object' && schema.properties) return <ObjectField {...p} />;
  return <JsonField {...p} />;
}

function TextField({ schema, path, label, required, value, onChange, ctx }: NodeProps) {
  const secret = isSecret(ctx, path);
  const kept = isKept(value);
  // A stored secret: clearing what was typed over it keeps the stored one again.
  const [stored] = useState(kept);
  // Long text (a widget's text, its CSS) gets a box with room.
  if (!secret && (schema.maxLength ?? 0) >= 10_000)
    return (
      <Field label={label} help={schema.description} error={errorAt(ctx, path)}>
        {(f) => (
          <textarea
            {...f}
            rows={4}
            spellcheck={false}
            required={required}
            maxLength={schema.maxLength}
            disabled={ctx.disabled}
            value={typeof value === 'string' ? value : ''}
            onInput={(e) => onChange(e.currentTarget.value === '' ? undefined : e.currentTarget.value)}
          />
        )}
      </Field>
    );
  return (
    <Field label={label} help={schema.description} error={errorAt(ctx, path)}>
      {(f) => (
        <input
          {...f}
          type={(secret ? 'password' : schema.format === 'uri' ? 'url' : 'text') as 'text'}
          autocomplete={secret ? 'new-password' : 'off'}
          spellcheck={false}
          required={required && !kept}
          maxLength={schema.maxLength}
          disabled={ctx.disabled}
          placeholder={kept ? 'Kept secret: type to replace it' : typeof schema.default === 'string' ? schema.default : undefined}
          value={typeof value === 'string' ? value : ''}
          onInput={(e) => {
            const v = e.currentTarget.value;
            onChange(v === '' ? (stored ? { set: true } : undefined) : v);
          }}
        />
      )}
    </Field>
  );
}

function NumberField({ schema, path, label, required, value, onChange, ctx, integer }: NodeProps & { integer: boolean }) {
  return (
    <Field label={label} help={schema.description} error={errorAt(ctx, path)}>
      {(f) => (
        <input
          {...f}
          type="number"
          inputMode={integer ? 'numeric' : 'decimal'}
          step={integer ? 1 : 'any'}
          min={schema.minimum}
          max={schema.maximum}
          required={required}
          disabled={ctx.disabled}
          placeholder={typeof schema.default === 'number' ? String(schema.default) : undefined}
          value={typeof value === 'number' ? String(value) : ''}
          onInput={(e) => {
            const v = e.currentTarget.value;
            onChange(v === '' || Number.isNaN(Number(v)) ? undefined : Number(v));
          }}
        />
      )}
    </Field>
  );
}

function EnumField({ schema, path, label, required, value, onChange, ctx }: NodeProps) {
  const options = schema.enum ?? [];
  const current = value ?? schema.default ?? '';
  return (
    <Field label={label} help={schema.description} error={errorAt(ctx, path)}>
      {(f) => (
        <select
          {...f}
          disabled={ctx.disabled}
          value={options.indexOf(current)}
          onChange={(e) => {
            const i = Number(e.currentTarget.value);
            onChange(i < 0 ? undefined : options[i]);
          }}
        >
          {!required && schema.default === undefined && <option value={-1}>{label === 'Type' ? 'Detect' : '—'}</option>}
          {options.map((o, i) => (
            <option key={String(o)} value={i}>
              {enumWord(o)}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** A column of the bound data source, by name (a name the source no longer has stays shown). */
function FieldChoice({ schema, path, label, required, value, onChange, ctx }: NodeProps) {
  const choices = ctx.fieldChoices ?? [];
  const current = typeof value === 'string' ? value : '';
  return (
    <Field label={label} help={schema.description} error={errorAt(ctx, path)}>
      {(f) => (
        <select {...f} disabled={ctx.disabled} required={required} value={current} onChange={(e) => onChange(e.currentTarget.value || undefined)}>
          <option value="">{required ? 'Choose a field…' : '—'}</option>
          {choices.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
          {current && !choices.includes(current) && <option value={current}>{current} (not in the data)</option>}
        </select>
      )}
    </Field>
  );
}

/** One of several object shapes told apart by a const property (auth: basic or bearer), or none. */
function OneOfField({ schema, path, label, required, value, onChange, ctx }: NodeProps) {
  const variants = (schema.oneOf ?? schema.anyOf ?? []).filter((v) => v.properties);
  const key = Object.keys(variants[0]?.properties ?? {}).find((k) => variants.every((v) => v.properties?.[k]?.const !== undefined));
  if (!key) return <JsonField schema={schema} path={path} label={label} required={required} value={value} onChange={onChange} ctx={ctx} />;
  const current = isObject(value) ? variants.findIndex((v) => v.properties?.[key]?.const === value[key]) : -1;
  const variant = variants[current];
  return (
    <fieldset class="schema-group">
      <Field label={label} help={schema.description} error={errorAt(ctx, path)}>
        {(f) => (
          <select
            {...f}
            disabled={ctx.disabled}
            value={current}
            onChange={(e) => {
              const i = Number(e.currentTarget.value);
              onChange(i < 0 ? undefined : { [key]: variants[i]!.properties![key]!.const! });
            }}
          >
            {!required && <option value={-1}>None</option>}
            {variants.map((v, i) => (
              <option key={String(v.properties![key]!.const)} value={i}>
                {enumWord(v.properties![key]!.const!)}
              </option>
            ))}
          </select>
        )}
      </Field>
      {variant && isObject(value) && <ObjectFields schema={variant} path={path} value={value} onChange={onChange} ctx={ctx} skip={key} />}
    </fieldset>
  );
}

function ObjectFields({
  schema,
  path,
  value,
  onChange,
  ctx,
  skip,
}: {
  schema: JsonSchema;
  path: Path;
  value: Record<string, Json>;
  onChange: Change;
  ctx: Ctx;
  skip?: string;
}) {
  return (
    <>
      {Object.entries(schema.properties ?? {})
        .filter(([name]) => name !== skip)
        .map(([name, s]) => (
          <Node
            key={name}
            schema={s}
            path={[...path, name]}
            label={labelOf(name)}
            required={schema.required?.includes(name) ?? false}
            value={value[name]}
            onChange={(v) => onChange(withKey(value, name, v))}
            ctx={ctx}
          />
        ))}
    </>
  );
}

function ObjectField({ schema, path, label, value, onChange, ctx }: NodeProps) {
  return (
    <fieldset class="schema-group">
      <legend>{label}</legend>
      {schema.description && <small class="field-help">{schema.description}</small>}
      <ObjectFields schema={schema} path={path} value={isObject(value) ? value : {}} onChange={onChange} ctx={ctx} />
    </fieldset>
  );
}

const singular = (label: string) => label.toLowerCase().replace(/s$/, '');

/** A list of objects (columns): one row of fields each, add and remove. */
function ListField({ schema, path, label, value, onChange, ctx }: NodeProps) {
  const items = Array.isArray(value) ? value : [];
  const noun = singular(label);
  const item = schema.items!;
  const set = (next: Json[]) => onChange(next);
  const blank = () =>
    Object.fromEntries(Object.entries(item.properties ?? {}).flatMap(([k, s]) => (s.enum && item.required?.includes(k) ? [[k, s.enum[0]!]] : [])));
  return (
    <fieldset class="schema-group schema-list">
      <legend>{label}</legend>
      {schema.description && <small class="field-help">{schema.description}</small>}
      {errorAt(ctx, path) && <small class="field-error">{errorAt(ctx, path)}</small>}
      {items.map((it, i) => (
        <fieldset key={i} class="schema-item" aria-label={`${label.replace(/s$/, '')} ${i + 1}`}>
          <ObjectFields
            schema={item}
            path={[...path, i]}
            value={isObject(it) ? it : {}}
            onChange={(v) => set(items.map((x, j) => (j === i ? (v ?? {}) : x)))}
            ctx={ctx}
          />
          {!ctx.disabled && (
            <button type="button" class="secondary outline small" aria-label={`Remove ${noun} ${i + 1}`} onClick={() => set(items.filter((_, j) => j !== i))}>
              Remove
            </button>
          )}
        </fieldset>
      ))}
      {!ctx.disabled && (schema.maxItems === undefined || items.length < schema.maxItems) && (
        <button type="button" class="secondary outline small" onClick={() => set([...items, blank()])}>
          Add a {noun}
        </button>
      )}
    </fieldset>
  );
}

/** A map of names to text (headers): a name and a value per row. */
function MapField({ schema, path, label, value, onChange, ctx }: NodeProps) {
  const [entries, setEntries] = useState<[string, Json][]>(() => (isObject(value) ? Object.entries(value) : []));
  const [stored] = useState(() => new Set(entries.filter(([, v]) => isKept(v)).map(([k]) => k)));
  const noun = singular(label).replace(/^request /, '');
  const commit = (next: [string, Json][]) => {
    setEntries(next);
    const obj = Object.fromEntries(next.filter(([k]) => k.trim() !== '').map(([k, v]) => [k.trim(), v]));
    onChange(Object.keys(obj).length ? obj : undefined);
  };
  return (
    <fieldset class="schema-group schema-map">
      <legend>{label}</legend>
      {schema.description && <small class="field-help">{schema.description}</small>}
      {errorAt(ctx, path) && <small class="field-error">{errorAt(ctx, path)}</small>}
      {entries.map(([k, v], i) => {
        const secret = isSecret(ctx, [...path, k || '*']);
        const kept = isKept(v);
        const err = errorAt(ctx, [...path, k]);
        return (
          <div key={i} class="row schema-map-row">
            <input
              aria-label={`${words(noun)} ${i + 1} name`}
              value={k}
              disabled={ctx.disabled}
              placeholder="Name (e.g. X-Api-Key)"
              onInput={(e) => commit(entries.map((x, j) => (j === i ? [e.currentTarget.value, x[1]] : x)))}
            />
            <input
              aria-label={`${words(noun)} ${i + 1} value`}
              type={(secret ? 'password' : 'text') as 'text'}
              autocomplete="new-password"
              value={typeof v === 'string' ? v : ''}
              disabled={ctx.disabled}
              placeholder={kept ? 'Kept secret: type to replace it' : 'Value'}
              aria-invalid={err ? true : undefined}
              onInput={(e) => {
                const t = e.currentTarget.value;
                commit(entries.map((x, j) => (j === i ? [x[0], t === '' && stored.has(x[0]) ? { set: true } : t] : x)));
              }}
            />
            {!ctx.disabled && (
              <button
                type="button"
                class="secondary outline small"
                aria-label={`Remove ${noun} ${i + 1}`}
                onClick={() => commit(entries.filter((_, j) => j !== i))}
              >
                Remove
              </button>
            )}
            {err && <small class="field-error">{err}</small>}
          </div>
        );
      })}
      {!ctx.disabled && (
        <button type="button" class="secondary outline small" onClick={() => commit([...entries, ['', '']])}>
          Add a {noun}
        </button>
      )}
    </fieldset>
  );
}

/** Anything the renderer has no control for: its JSON, checked as it is typed. */
function JsonField({ schema, path, label, value, onChange, ctx }: NodeProps) {
  const [text, setText] = useState(value === undefined ? '' : JSON.stringify(value, null, 2));
  const [bad, setBad] = useState(false);
  return (
    <Field label={`${label} (JSON)`} help={schema.description} error={bad ? 'Not valid JSON' : errorAt(ctx, path)}>
      {(f) => (
        <textarea
          {...f}
          rows={3}
          disabled={ctx.disabled}
          value={text}
          onInput={(e) => {
            const t = e.currentTarget.value;
            setText(t);
            try {
              onChange(t.trim() === '' ? undefined : (JSON.parse(t) as Json));
              setBad(false);
            } catch {
              setBad(true);
            }
          }}
        />
      )}
    </Field>
  );
}
