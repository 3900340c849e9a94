import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import '../admin.css';

export interface FieldControlProps {
  id: string;
  'aria-describedby'?: string;
  'aria-invalid'?: boolean;
}

/**
 * A labelled form control with its help text and, when the server named this field, its
 * error under it (linked by aria-describedby, so screen readers read both).
 */
export function Field({
  label,
  help,
  error,
  children,
}: {
  label: ComponentChildren;
  help?: ComponentChildren;
  error?: string;
  children: (props: FieldControlProps) => ComponentChildren;
}) {
  const id = useId();
  const helpId = help ? `${id}-help` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [errorId, helpId].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children({ id, 'aria-describedby': describedBy, 'aria-invalid': error ? true : undefined })}
      {error && (
        <small id={errorId} class="field-error">
          {error}
        </small>
      )}
      {help && (
        <small id={helpId} class="field-help">
          {help}
        </small>
      )}
    </div>
  );
}

/** A checkbox (or switch) with its label beside it and help under it. */
export function CheckField({
  label,
  help,
  error,
  checked,
  disabled,
  name,
  role,
  onChange,
}: {
  label: ComponentChildren;
  help?: ComponentChildren;
  error?: string;
  checked: boolean;
  disabled?: boolean;
  name?: string;
  role?: 'switch';
  onChange: (checked: boolean) => void;
}) {
  const id = useId();
  const helpId = help ? `${id}-help` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  return (
    <div class="field check-field">
      <label for={id}>
        <input
          id={id}
          type="checkbox"
          name={name}
          role={role}
          checked={checked}
          disabled={disabled}
          aria-describedby={[errorId, helpId].filter(Boolean).join(' ') || undefined}
          aria-invalid={error ? true : undefined}
          onChange={(e) => onChange(e.currentTarget.checked)}
        />
        {label}
      </label>
      {error && (
        <small id={errorId} class="field-error">
          {error}
        </small>
      )}
      {help && (
        <small id={helpId} class="field-help">
          {help}
        </small>
      )}
    </div>
  );
}

/** Bytes in words: 1.5 GB, 320 MB, 12 kB (powers of 1024, the units people see in file managers). */
export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  const units = ['bytes', 'kB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} ${v === 1 ? 'byte' : 'bytes'}` : `${v >= 100 ? Math.round(v) : Math.round(v * 10) / 10} ${units[u]}`;
}

/** A duration in seconds in words: "3 days, 4 hours", "12 minutes". */
export function formatDuration(sec: number): string {
  const s = Math.max(0, Math.round(sec));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const part = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  if (d > 0) return h > 0 ? `${part(d, 'day')}, ${part(h, 'hour')}` : part(d, 'day');
  if (h > 0) return m > 0 ? `${part(h, 'hour')}, ${part(m, 'minute')}` : part(h, 'hour');
  if (m > 0) return part(m, 'minute');
  return part(s, 'second');
}

/**
 * A file upload's progress: the share sent and the bytes, then "Checking …" (an indeterminate bar) once every byte is
 * sent and the server is reading the file. `what` names the file in the checking line ("the backup", "the file").
 */
export function UploadProgress({ sent, checking, what, testId }: { sent: { sent: number; total: number }; checking: boolean; what: string; testId: string }) {
  return (
    <div class="progress-box" data-testid={testId}>
      <p>
        <strong>{checking ? `Checking ${what}…` : 'Uploading'}</strong> {checking ? '' : `${Math.round((sent.sent / Math.max(1, sent.total)) * 100)}%`}
      </p>
      <progress value={checking ? undefined : sent.sent} max={sent.total} aria-label={checking ? `Checking ${what}` : 'Upload progress'} />
      <p class="muted" role="status">
        {formatBytes(sent.sent)} of {formatBytes(sent.total)}
      </p>
    </div>
  );
}
