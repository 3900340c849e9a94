import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api';

/**
 * Confirmations that say what an action touches, and toasts that can undo it. One host
 * (`<FeedbackHost/>`, mounted once by the signed-in app) draws both; pages call
 * `confirmAction(...)` (a promise of the answer) and `showToast(...)`.
 */

/** What to ask the server about (POST /content/impact): screens showing these now, and what uses them. */
export interface ImpactQuery {
  assetIds?: string[];
  playlistIds?: string[];
  layoutIds?: string[];
  scheduleIds?: string[];
}

export interface Usage {
  type: string;
  id: string;
  name: string | null;
}

interface Impact {
  screens: { id: string; name: string }[];
  usedBy: Usage[];
}

export interface ConfirmOptions {
  title: string;
  /** What happens, in plain words. */
  body: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  /** Lists the screens and playlists (layouts, schedules...) the action touches. */
  impact?: ImpactQuery;
  /** Said above the screens list, e.g. "These screens show it now and stop showing it:". */
  screensLabel?: string;
  usedByLabel?: string;
  /** Screens known without asking the server (e.g. the screen itself). */
  screens?: { id: string; name: string }[];
}

interface Toast {
  id: number;
  at: number;
  message: string;
  undo?: () => Promise<unknown>;
  undoLabel?: string;
}

type Listener = () => void;
let pending: { options: ConfirmOptions; resolve: (yes: boolean) => void } | null = null;
let toasts: Toast[] = [];
let toastSeq = 0;
const listeners = new Set<Listener>();
const notify = () => {
  for (const l of listeners) l();
};

/** Asks before an action; resolves true when the person confirms. */
export function confirmAction(options: ConfirmOptions): Promise<boolean> {
  pending?.resolve(false);
  return new Promise<boolean>((resolve) => {
    pending = { options, resolve };
    notify();
  });
}

/** A short message at the bottom of the page (announced), with an optional Undo. Goes after 10 s. */
export function showToast(message: string, undo?: () => Promise<unknown>, undoLabel = 'Undo'): void {
  const t: Toast = { id: ++toastSeq, at: Date.now(), message, undo, undoLabel };
  toasts = [...toasts.slice(-2), t];
  notify();
  setTimeout(() => dismiss(t.id), undo ? 12_000 : 6_000);
}

function dismiss(id: number) {
  const before = toasts.length;
  toasts = toasts.filter((t) => t.id !== id);
  if (toasts.length !== before) notify();
}

/** Where a usage lives in the console. */
export function usageHref(u: Usage): string | null {
  switch (u.type) {
    case 'playlist':
      return `/playlists/${u.id}`;
    case 'layout':
      return `/layouts/${u.id}`;
    case 'schedule':
      return `/schedules?edit=${u.id}`;
    case 'screen':
    case 'screen-assignment':
      return `/screens/${u.id}`;
    case 'group-assignment':
      return `/groups#group-${u.id}`;
    default:
      return null;
  }
}

const USAGE_WORD: Record<string, string> = {
  playlist: 'Playlist',
  layout: 'Layout',
  schedule: 'Schedule',
  'screen-assignment': 'Default playlist of screen',
  'group-assignment': 'Default playlist of group',
  screen: 'Screen',
  widget: 'Widget',
};

/** A list of what uses something, each a link to where it can be changed. */
export function UsageList({ usages, label }: { usages: Usage[]; label?: string }) {
  if (usages.length === 0) return null;
  return (
    <div class="usage-list">
      {label && <p>{label}</p>}
      <ul>
        {usages.map((u) => {
          const href = usageHref(u);
          const name = u.name || u.id.slice(0, 8);
          return (
            <li key={`${u.type}:${u.id}`} data-usage={u.type}>
              {USAGE_WORD[u.type] ?? u.type} {href ? <a href={href}>{name}</a> : <strong>{name}</strong>}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

function ImpactView({ options }: { options: ConfirmOptions }) {
  const [impact, setImpact] = useState<Impact | null>(options.impact ? null : { screens: [], usedBy: [] });
  const [error, setError] = useState(false);
  useEffect(() => {
    if (!options.impact) return;
    let live = true;
    api
      .post<Impact>('content/impact', options.impact)
      .then((r) => live && setImpact(r))
      .catch(() => live && setError(true));
    return () => void (live = false);
  }, [options]);
  if (error) return <p class="muted">Which screens show it could not be checked; the action still asks the server.</p>;
  if (!impact) return <p aria-busy="true">Checking which screens and playlists this touches…</p>;
  const screens = [...(options.screens ?? []), ...impact.screens.filter((s) => !options.screens?.some((x) => x.id === s.id))];
  return (
    <div data-testid="impact">
      {screens.length > 0 ? (
        <div class="usage-list">
          <p>{options.screensLabel ?? 'Screens showing it now:'}</p>
          <ul>
            {screens.map((s) => (
              <li key={s.id} data-impact-screen={s.name}>
                <a href={`/screens/${s.id}`}>{s.name}</a>
              </li>
            ))}
          </ul>
        </div>
      ) : (
        options.impact && (
          <p class="muted" data-testid="no-screens">
            No screen shows it now.
          </p>
        )
      )}
      <UsageList usages={impact.usedBy} label={options.usedByLabel ?? 'Used by:'} />
    </div>
  );
}

/** The one confirmation dialog and the toasts. Mount once. */
export function FeedbackHost() {
  const [, setTick] = useState(0);
  // Toasts belong to the page they were said on: a new page clears them (they would cover its buttons).
  const { path } = useLocation();
  useEffect(() => {
    // ...but one said just before the move (a delete that then leaves the page) stays.
    const kept = toasts.filter((x) => Date.now() - x.at < 1500);
    if (kept.length !== toasts.length) {
      toasts = kept;
      notify();
    }
  }, [path]);
  useEffect(() => {
    const l = () => setTick((n) => n + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return (
    <>
      <ConfirmDialog key={pending ? `${toastSeq}:${pending.options.title}` : 'none'} />
      <div class="toasts" role="status" aria-live="polite">
        {toasts.map((t) => (
          <ToastView key={t.id} toast={t} />
        ))}
      </div>
    </>
  );
}

function ToastView({ toast }: { toast: Toast }) {
  const [busy, setBusy] = useState(false);
  const [failed, setFailed] = useState<string | null>(null);
  return (
    <div class="toast" data-testid="toast">
      <span>{failed ?? toast.message}</span>
      {toast.undo && !failed && (
        <button
          type="button"
          class="small"
          aria-busy={busy}
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            try {
              await toast.undo!();
              dismiss(toast.id);
            } catch (err) {
              setFailed(`Could not undo: ${(err as Error).message}`);
            } finally {
              setBusy(false);
            }
          }}
        >
          {toast.undoLabel}
        </button>
      )}
      <button type="button" class="secondary outline small" aria-label="Dismiss" onClick={() => dismiss(toast.id)}>
        ✕
      </button>
    </div>
  );
}

function ConfirmDialog() {
  const ref = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  const current = pending;
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (current && !d.open) {
      d.showModal();
      cancelRef.current?.focus();
    }
  }, [current]);
  if (!current) return null;
  const answer = (yes: boolean) => {
    ref.current?.close();
    pending = null;
    current.resolve(yes);
    notify();
  };
  const o = current.options;
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      class="confirm-dialog"
      onCancel={(e) => {
        e.preventDefault();
        answer(false);
      }}
    >
      <article>
        <header>
          <h2 id={titleId} class="dialog-title">
            {o.title}
          </h2>
        </header>
        <div class="dialog-body">{o.body}</div>
        {(o.impact || o.screens) && <ImpactView options={o} />}
        <footer class="row dialog-actions">
          <button ref={cancelRef} type="button" class="secondary" onClick={() => answer(false)}>
            Cancel
          </button>
          <button type="button" class={o.danger ? 'danger' : undefined} onClick={() => answer(true)}>
            {o.confirmLabel}
          </button>
        </footer>
      </article>
    </dialog>
  );
}
