import type { ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type AuthStatus, type User } from './api';
import { displayLocale } from './locale';
import { UsageList, type Usage } from './ui/confirm';

/** The signed-in state every page reads; `refresh` re-asks /auth/status. */
export interface Session {
  status: AuthStatus;
  user: User;
  refresh(): Promise<void>;
  signOut(): Promise<void>;
}
export const SessionContext = createContext<Session | null>(null);
export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in page');
  return s;
}

export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  // WebAuthn failures (from @simplewebauthn/browser or the browser itself), in plain words.
  const name = (error as { name?: string; code?: string } | null)?.name;
  if (name === 'SecurityError' || (error as { code?: string })?.code === 'ERROR_INVALID_DOMAIN')
    return 'Passkeys work only when Placard is opened by its name over HTTPS (or on localhost), not by an IP address.';
  if (name === 'NotAllowedError') return 'The passkey request was cancelled or timed out. Try again.';
  if (name === 'InvalidStateError') return 'This authenticator already holds a passkey for your account.';
  if (error instanceof Error) return error.message;
  return String(error);
}

/** An error shown where the user acted, announced to screen readers. */
export function ErrorNote({ error, id }: { error: unknown; id?: string }) {
  if (!error) return null;
  // A refusal because something is in use (409) lists what uses it, each a link to it.
  const usedBy = error instanceof ApiError ? (error.details as { usedBy?: Usage[] } | undefined)?.usedBy : undefined;
  if (usedBy?.length)
    return (
      <div class="error-note" role="alert" id={id} data-code={(error as ApiError).code}>
        <p>{messageOf(error)}</p>
        <UsageList usages={usedBy} label="Used by:" />
      </div>
    );
  return (
    <p class="error-note" role="alert" id={id} data-code={error instanceof ApiError ? error.code : undefined}>
      {messageOf(error)}
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

/**
 * Runs an action, tracking busy state and the error to show next to the control.
 * `run` never throws: the error lands in `error`.
 */
export function useAction<A extends unknown[]>(fn: (...args: A) => Promise<unknown>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const mounted = useRef(true);
  useEffect(() => () => void (mounted.current = false), []);
  const run = useCallback(
    async (...args: A): Promise<boolean> => {
      setBusy(true);
      setError(null);
      try {
        await fn(...args);
        return true;
      } catch (err) {
        if (mounted.current) setError(err);
        return false;
      } finally {
        if (mounted.current) setBusy(false);
      }
    },
    [fn],
  );
  return { run, busy, error, setError };
}

/** Loads data for a page; `reload` fetches again. */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++seq.current;
    setLoading(true);
    try {
      const value = await fn();
      if (mine === seq.current) {
        setData(value);
        setError(null);
      }
    } catch (err) {
      if (mine === seq.current) setError(err);
    } finally {
      if (mine === seq.current) setLoading(false);
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, loading, reload, setData };
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(displayLocale(), { dateStyle: 'medium', timeStyle: 'short' });
}

/** Reads a form's named fields as strings. */
export function formValues(form: HTMLFormElement): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new FormData(form)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** Sets document.title for a page. */
export function useTitle(title: string) {
  useEffect(() => {
    document.title = `${title} · Placard`;
  }, [title]);
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleDateString(displayLocale(), { dateStyle: 'medium' });
}
