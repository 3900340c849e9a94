import { useEffect, useState } from 'preact/hooks';
import { api, type User } from './api';
import { ErrorNote, formatTime, useAction } from './ui';

/** GET /api/v1/demo (docs/demo.md). */
interface Named {
  count: number;
  names: string[];
}
export interface DemoStatus {
  enabled: boolean;
  seeding: boolean;
  seededAt: string | null;
  lastResetAt: string | null;
  lastError: string | null;
  contents: { screens: Named; locations: Named; groups: Named; assets: Named; playlists: Named; layouts: Named; schedules: Named } | null;
  resetsAllowedFor: string[];
}

const bar = {
  display: 'flex',
  flexWrap: 'wrap',
  alignItems: 'center',
  gap: '0.5rem 1rem',
  padding: '0.35rem 1rem',
  fontSize: '0.9rem',
  background: 'var(--pico-primary-background)',
  color: 'var(--pico-primary-inverse)',
} as const;
const small = { margin: 0, padding: '0.2rem 0.75rem', fontSize: '0.85rem', width: 'auto' } as const;

function summary(s: DemoStatus): string {
  const c = s.contents;
  if (!c) return 'Demo data restored.';
  const n = (x: Named, one: string, many: string) => `${x.count} ${x.count === 1 ? one : many}`;
  return `Demo data restored: ${n(c.screens, 'screen', 'screens')}, ${n(c.assets, 'asset', 'assets')}, ${n(c.playlists, 'playlist', 'playlists')}, ${n(c.layouts, 'layout', 'layouts')}, ${n(c.schedules, 'schedule', 'schedules')}. Media thumbnails follow in a moment.`;
}

/**
 * A slim banner on every page (sign-in included) when the server runs in demo mode, with a
 * "Reset demo data" button for the roles the server allows (owners and admins).
 */
export function DemoBanner({ user }: { user: User | null }) {
  const [status, setStatus] = useState<DemoStatus | null>(null);
  const [result, setResult] = useState<string | null>(null);

  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const s = await api.get<DemoStatus>('demo', { quiet401: true });
        if (stop) return;
        setStatus(s);
        // While the first seed runs, look again until it is done.
        if (s.enabled && s.seeding) timer = setTimeout(() => void load(), 2000);
      } catch {
        /* an older server or a network hiccup: no banner */
      }
    };
    void load();
    return () => {
      stop = true;
      if (timer) clearTimeout(timer);
    };
  }, []);

  const reset = useAction(async () => {
    setResult(null);
    const s = await api.post<DemoStatus>('demo/reset');
    setStatus(s);
    setResult(`${summary(s)} (${formatTime(s.lastResetAt)})`);
  });

  if (!status?.enabled) return null;
  const canReset = Boolean(user && status.resetsAllowedFor.includes(user.role));
  return (
    <aside class="demo-banner" aria-label="Demo mode" style={bar}>
      <span>
        <strong>Demo mode:</strong> sample data, reset any time.
      </span>
      {status.seeding && !reset.busy && <span aria-busy="true">Preparing the sample data…</span>}
      {status.lastError && !reset.busy && <span role="alert">{status.lastError}</span>}
      {canReset && (
        <button
          type="button"
          class="secondary"
          style={small}
          disabled={reset.busy || status.seeding}
          aria-busy={reset.busy ? 'true' : undefined}
          onClick={() => {
            if (
              confirm(
                'Reset the demo data? Screens, media, playlists, layouts and schedules go back to the sample set; changes made since are lost. Users and settings stay.',
              )
            )
              void reset.run();
          }}
        >
          {reset.busy ? 'Resetting demo data…' : 'Reset demo data'}
        </button>
      )}
      {result && (
        <span role="status">
          {result}{' '}
          <a href={window.location.pathname} style={{ color: 'inherit', textDecoration: 'underline' }}>
            Reload the page
          </a>
        </span>
      )}
      {reset.error ? (
        <div style={{ background: 'var(--pico-background-color)', padding: '0.25rem 0.5rem 0', borderRadius: '4px' }}>
          <ErrorNote error={reset.error} />
        </div>
      ) : null}
    </aside>
  );
}
