import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { ErrorNote } from '../ui';

/**
 * A modal on the native <dialog>: focus stays inside, Escape closes (unless `busy`), the
 * page behind is inert. `initialFocus` names the element to focus when it opens.
 */
export function Modal({
  open,
  title,
  children,
  busy = false,
  onClose,
  testId,
}: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  busy?: boolean;
  onClose: () => void;
  testId?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    else if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      data-testid={testId}
      onCancel={(e) => {
        e.preventDefault();
        if (!busy) onClose();
      }}
    >
      {open && (
        <article>
          <header class="modal-header">
            <h2 id={titleId} class="dialog-title">
              {title}
            </h2>
            <button type="button" class="secondary outline small" aria-label="Close" disabled={busy} onClick={onClose}>
              ✕
            </button>
          </header>
          {children}
        </article>
      )}
    </dialog>
  );
}

/**
 * A modal confirmation on the native <dialog> (focus kept inside, Escape cancels, the page
 * behind inert). Focus starts on Cancel, so Enter never confirms something destructive by
 * accident. The body says what will happen in plain words.
 */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  cancelLabel = 'Cancel',
  danger = false,
  busy = false,
  error,
  onConfirm,
  onClose,
}: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  cancelLabel?: string;
  danger?: boolean;
  busy?: boolean;
  error?: unknown;
  onConfirm: () => void;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      d.showModal();
      cancelRef.current?.focus();
    } else if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        if (!busy) onClose();
      }}
    >
      <article>
        <header>
          <h2 id={titleId} class="dialog-title">
            {title}
          </h2>
        </header>
        <div class="dialog-body">{children}</div>
        <ErrorNote error={error} />
        <footer class="row dialog-actions">
          <button ref={cancelRef} type="button" class="secondary" disabled={busy} onClick={onClose}>
            {cancelLabel}
          </button>
          <button type="button" class={danger ? 'danger' : undefined} aria-busy={busy} disabled={busy} onClick={onConfirm}>
            {confirmLabel}
          </button>
        </footer>
      </article>
    </dialog>
  );
}

/** Copies `text` to the clipboard; falls back to selecting `input` and execCommand (plain-HTTP LAN addresses have no Clipboard API). */
export async function copyText(text: string, input?: HTMLInputElement | null): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    /* fall back below */
  }
  if (!input) return false;
  input.focus();
  input.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  }
}

/**
 * A secret or link shown once: read-only field (selected on focus) and a Copy button that
 * says whether copying worked.
 */
export function CopyField({ label, value, help, testId }: { label: string; value: string; help?: ComponentChildren; testId?: string }) {
  const inputRef = useRef<HTMLInputElement>(null);
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const id = useId();
  const helpId = `${id}-help`;
  return (
    <div class="copy-field">
      <label for={id}>{label}</label>
      <div class="copy-row">
        <input
          ref={inputRef}
          id={id}
          type="text"
          readOnly
          value={value}
          data-testid={testId}
          aria-describedby={help ? helpId : undefined}
          onFocus={(e) => e.currentTarget.select()}
          spellcheck={false}
          autocomplete="off"
        />
        <button
          type="button"
          class="secondary"
          onClick={async () => {
            setState((await copyText(value, inputRef.current)) ? 'copied' : 'failed');
          }}
        >
          Copy
        </button>
      </div>
      <small id={helpId} class="copy-help">
        <span role="status">{state === 'copied' ? 'Copied. ' : state === 'failed' ? 'Could not copy here: select the text and copy it yourself. ' : ''}</span>
        {help}
      </small>
    </div>
  );
}
