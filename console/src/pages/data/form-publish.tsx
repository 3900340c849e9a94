import { useState } from 'preact/hooks';
import { ErrorNote } from '../../ui';
import { Modal } from '../../ui/dialogs';
import { Field as FieldBox } from '../../ui/fields';
import type { Field } from './form-model';

/**
 * Publishing a form that rows of the table would not fit (the server's 409): which rows and
 * fields break and why, and per field what those rows get: emptied, or a value typed here.
 * Then publish again with `migrate` (values that fit are kept; the server checks the value).
 */

export interface Broken {
  rowCount: number;
  fields: string[];
  rows: { row: number; fields: { key: string; message: string }[] }[];
  message: string;
}

type How = { kind: 'clear' } | { kind: 'default'; text: string };

/** The typed replacement as the field's value (numbers as numbers, yes/no as booleans, options split). */
function replacementOf(field: Field | undefined, text: string): unknown {
  const t = text.trim();
  if (!field) return t;
  if (field.type === 'number' || field.type === 'money') return Number.isFinite(Number(t)) && t !== '' ? Number(t) : t;
  if (field.type === 'boolean') return /^(yes|true)$/i.test(t);
  if (field.type === 'multiChoice')
    return t
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  return t;
}

export function PublishConflict({
  broken,
  fields,
  busy,
  error,
  onPublish,
  onClose,
}: {
  broken: Broken;
  fields: readonly Field[];
  busy: boolean;
  error: unknown;
  onPublish: (migrate: Record<string, unknown>) => void;
  onClose: () => void;
}) {
  const [how, setHow] = useState<Record<string, How>>(() => Object.fromEntries(broken.fields.map((k) => [k, { kind: 'clear' } as How])));
  const fieldOf = (key: string) => fields.find((f) => f.key === key);
  const labelOf = (key: string) => fieldOf(key)?.label ?? key;
  return (
    <Modal open title="Some rows would not fit the new form" busy={busy} onClose={onClose} testId="publish-conflict">
      <p>
        {broken.rowCount} row{broken.rowCount === 1 ? '' : 's'} of the table would not fit. Nothing was published. Say what those rows get for each field, then
        publish again; values that fit stay as they are.
      </p>
      <ul class="broken-rows" data-testid="broken-rows">
        {broken.rows.map((r) => (
          <li key={r.row}>
            Row {r.row + 1}:{' '}
            {r.fields.map((x, i) => (
              <span key={x.key}>
                {i > 0 && '; '}
                <strong>{labelOf(x.key)}</strong> {x.message}
              </span>
            ))}
          </li>
        ))}
        {broken.rowCount > broken.rows.length && <li class="muted">and {broken.rowCount - broken.rows.length} more</li>}
      </ul>
      <form
        aria-label="What the rows get"
        onSubmit={(e) => {
          e.preventDefault();
          onPublish(
            Object.fromEntries(Object.entries(how).map(([k, h]) => [k, h.kind === 'clear' ? 'clear' : { default: replacementOf(fieldOf(k), h.text) }])),
          );
        }}
      >
        {broken.fields.map((key) => {
          const h = how[key] ?? { kind: 'clear' };
          return (
            <fieldset key={key} data-migrate={key}>
              <legend>{labelOf(key)}</legend>
              <label>
                <input type="radio" name={`how-${key}`} checked={h.kind === 'clear'} onChange={() => setHow({ ...how, [key]: { kind: 'clear' } })} />
                Empty the value
              </label>
              <label>
                <input
                  type="radio"
                  name={`how-${key}`}
                  checked={h.kind === 'default'}
                  onChange={() => setHow({ ...how, [key]: { kind: 'default', text: '' } })}
                />
                Put a value
              </label>
              {h.kind === 'default' && (
                <FieldBox label={`Value for ${labelOf(key)}`}>
                  {(p) => <input {...p} value={h.text} onInput={(e) => setHow({ ...how, [key]: { kind: 'default', text: e.currentTarget.value } })} />}
                </FieldBox>
              )}
            </fieldset>
          );
        })}
        <ErrorNote error={error} />
        <footer class="row">
          <button type="button" class="secondary" disabled={busy} onClick={onClose}>
            Cancel
          </button>
          <button type="submit" aria-busy={busy} disabled={busy}>
            Publish with these changes
          </button>
        </footer>
      </form>
    </Modal>
  );
}
