import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import type { operations } from '../api-schema';
import { ErrorNote, formatTime } from '../ui';

/**
 * The header's bell (issue 20, docs/publishing.md "Notifications"): how many of the signed-in
 * person's notifications are unread (asked every 30 s and on each page change), and a popover
 * listing the latest with a link to the submission each tells of, and "Mark all read".
 * Escape or a click elsewhere closes it; focus goes back to the bell.
 */
type Notification = operations['getNotifications']['responses'][200]['content']['application/json']['data']['items'][number];

const POLL_MS = 30_000;

export function NotificationBell({ path }: { path: string }) {
  const [unread, setUnread] = useState<Page<Notification> | null>(null);
  const [open, setOpen] = useState(false);
  const [list, setList] = useState<Notification[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const button = useRef<HTMLButtonElement>(null);
  const box = useRef<HTMLDivElement>(null);

  const count = useCallback(() => {
    api.get<Page<Notification>>('notifications?unread=true&limit=100').then(setUnread, () => {});
  }, []);
  useEffect(() => {
    count();
    const timer = window.setInterval(count, POLL_MS);
    return () => window.clearInterval(timer);
  }, [count]);
  useEffect(() => {
    count();
    setOpen(false);
  }, [path, count]);

  const close = useCallback((refocus: boolean) => {
    setOpen(false);
    if (refocus) button.current?.focus();
  }, []);
  useEffect(() => {
    if (!open) return;
    setError(null);
    api.get<Page<Notification>>('notifications?limit=20').then(
      (p) => setList(p.items),
      (err) => setError(err),
    );
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') close(true);
    };
    const onClick = (e: MouseEvent) => {
      const target = e.target as Node;
      if (!box.current?.contains(target) && !button.current?.contains(target)) close(false);
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('mousedown', onClick);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('mousedown', onClick);
    };
  }, [open, close]);

  const markAll = async () => {
    try {
      await api.post('notifications/read', {});
      setList((l) => l?.map((n) => ({ ...n, readAt: n.readAt ?? new Date().toISOString() })) ?? null);
      count();
    } catch (err) {
      setError(err);
    }
  };

  const n = unread?.items.length ?? 0;
  const shown = unread?.nextCursor ? `${n}+` : String(n);
  return (
    <div class="bell">
      <button
        ref={button}
        type="button"
        class="bell-button secondary outline"
        aria-label={n ? `Notifications, ${shown} unread` : 'Notifications, none unread'}
        aria-expanded={open}
        aria-controls="notifications-popover"
        data-testid="bell"
        onClick={() => (open ? close(true) : setOpen(true))}
      >
        <svg
          aria-hidden="true"
          width="18"
          height="18"
          viewBox="0 0 24 24"
          fill="none"
          stroke="currentColor"
          stroke-width="2"
          stroke-linecap="round"
          stroke-linejoin="round"
        >
          <path d="M18 8a6 6 0 0 0-12 0c0 7-3 9-3 9h18s-3-2-3-9" />
          <path d="M13.7 21a2 2 0 0 1-3.4 0" />
        </svg>
        {n > 0 && (
          <span class="badge warn bell-count" aria-hidden="true" data-testid="bell-count">
            {shown}
          </span>
        )}
      </button>
      {open && (
        <div ref={box} class="bell-popover" id="notifications-popover" role="region" aria-label="Notifications">
          <div class="row bell-head">
            <strong>Notifications</strong>
            <button type="button" class="secondary outline small" onClick={() => void markAll()} disabled={!list?.some((x) => !x.readAt)}>
              Mark all read
            </button>
          </div>
          <ErrorNote error={error} />
          {list === null && !error && <p aria-busy="true">Loading…</p>}
          {list?.length === 0 && <p class="muted">Nothing yet.</p>}
          <ul class="bell-list">
            {list?.map((x) => (
              <li key={x.id} class={x.readAt ? 'read' : 'unread'} data-testid="notification">
                <a href={x.submissionId ? `/approvals?submission=${x.submissionId}` : '/approvals'} onClick={() => setOpen(false)}>
                  {!x.readAt && <span class="visually-hidden">Unread: </span>}
                  <strong>{x.title}</strong>
                </a>
                {x.body && <p>{x.body}</p>}
                <small class="muted">{formatTime(x.createdAt)}</small>
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
