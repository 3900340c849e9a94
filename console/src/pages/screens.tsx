import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, atLeast, qs, type Page } from '../api';
import type { Group, Location, Screen } from '../types';
import { ErrorNote, formatTime, formValues, useAction, useLoad, useSession, useTitle } from '../ui';
import { TIME_ZONES } from './places';
import { zoneWords } from './schedule-rules';
import { CopyField } from '../ui/dialogs';

export const STATUS_LABEL: Record<Screen['status'], string> = { online: 'Online', stale: 'Stale', offline: 'Offline', pending: 'Never seen' };
export const STATUS_CLASS: Record<Screen['status'], string> = { online: 'ok', stale: 'warn', offline: 'bad', pending: '' };

export function ScreenStatus({ screen }: { screen: Screen }) {
  if (screen.revoked) return <span class="badge bad">revoked</span>;
  return (
    <>
      <span class={`badge ${STATUS_CLASS[screen.status]}`} data-status={screen.status}>
        <span class="dot" aria-hidden="true" /> {STATUS_LABEL[screen.status]}
      </span>
      {screen.disabled && <span class="badge warn">disabled</span>}
    </>
  );
}

/** What the screen shows, in words: "asset · playlist" (or the layout), from the server's `nowShowing`. */
export function nowShowingText(s: Screen): string {
  const n = s.nowShowing;
  if (!n) return '—';
  const short = (kind: string, id: string | null) => (id ? `${kind} ${id.slice(0, 8)}…` : null);
  const asset = n.assetName ?? short('asset', n.assetId);
  const container = n.layoutId ? (n.layoutName ?? short('layout', n.layoutId)) : (n.playlistName ?? short('playlist', n.playlistId));
  return [asset, container].filter(Boolean).join(' · ') || '—';
}

/** What the screen shows: reported by its player, or (in grey, marked) what the plan says should play now. */
export function NowShowingLabel({ screen }: { screen: Screen }) {
  const n = screen.nowShowing;
  const text = nowShowingText(screen);
  if (!n) return <span class="muted">—</span>;
  const via = n.scheduleName ? ` (schedule ${n.scheduleName})` : '';
  if (n.planned)
    return (
      <span class="muted now-showing" data-planned="true" title={`Not reported by the player: what the plan says plays now${via}`}>
        {text} <small>planned</small>
      </span>
    );
  return (
    <span class="now-showing" data-planned="false" title={`Reported by the player${n.reportedAt ? ` at ${formatTime(n.reportedAt)}` : ''}${via}`}>
      {text}
    </span>
  );
}

/**
 * A screen's picture: its last screenshot when it sent one, else the thumbnail of what it
 * shows now (reported or planned), else nothing.
 */
export function ScreenPicture({ screen, large = false }: { screen: Screen; large?: boolean }) {
  const [broken, setBroken] = useState(false);
  const shot = screen.lastScreenshot;
  const asset = screen.nowShowing?.assetId;
  const src = shot ? shot.url : asset ? `/api/v1/assets/${asset}/thumbnail` : null;
  const alt = shot
    ? `Screenshot of ${screen.name}, ${formatTime(shot.takenAt)}`
    : `${screen.nowShowing?.assetName ?? 'Picture'} ${screen.nowShowing?.planned ? 'planned for' : 'showing on'} ${screen.name}`;
  if (!src || broken) return <span class={`screen-thumb empty${large ? ' large' : ''}`} aria-hidden="true" />;
  return (
    <img
      class={`screen-thumb${large ? ' large' : ''}`}
      src={src}
      alt={alt}
      loading="lazy"
      onError={() => setBroken(true)}
      data-kind={shot ? 'screenshot' : 'now-showing'}
    />
  );
}

/** The fleet at a glance: online, stale, offline; what each shows; player version. */
export function ScreensPage() {
  useTitle('Screens');
  const { user } = useSession();
  // ?status= (links from the overview) preselects a status chip.
  const { query } = useLocation();
  const [status, setStatus] = useState(['online', 'stale', 'offline', 'pending'].includes(query.status ?? '') ? query.status! : '');
  const [groupId, setGroupId] = useState('');
  const [locationId, setLocationId] = useState('');
  const screens = useLoad(() => api.get<Page<Screen>>(`screens${qs({ status, groupId, locationId, limit: 500 })}`), [status, groupId, locationId]);
  const all = useLoad(() => api.get<Page<Screen>>('screens?limit=500'));
  const groups = useLoad(() => api.get<Page<Group>>('screen-groups?limit=500'));
  const locations = useLoad(() => api.get<Page<Location>>('locations?limit=500'));
  // Live-ish: refresh every 15 s while the page is open.
  useEffect(() => {
    const timer = setInterval(() => {
      void screens.reload();
      void all.reload();
    }, 15_000);
    return () => clearInterval(timer);
  }, [screens.reload, all.reload]);
  const counts = { online: 0, stale: 0, offline: 0, pending: 0 };
  for (const s of all.data?.items ?? []) if (!s.revoked) counts[s.status]++;
  const locName = (id: string | null) => locations.data?.items.find((l) => l.id === id)?.name ?? '—';
  const items = screens.data?.items ?? [];

  return (
    <>
      <div class="row spread">
        <hgroup>
          <h1>Screens</h1>
          <p>
            {(['online', 'stale', 'offline', 'pending'] as const).map((k) => (
              <button
                key={k}
                type="button"
                class={`chip ${status === k ? 'active' : ''}`}
                aria-pressed={status === k}
                onClick={() => setStatus(status === k ? '' : k)}
              >
                <span class={`badge ${STATUS_CLASS[k]}`}>
                  <span class="dot" aria-hidden="true" /> {counts[k]} {STATUS_LABEL[k].toLowerCase()}
                </span>
              </button>
            ))}
          </p>
        </hgroup>
        <div class="row">
          <a href="/groups">Groups</a>
          <a href="/locations">Locations</a>
          {atLeast(user, 'admin') && (
            <a href="/screens/add" role="button">
              Add screen
            </a>
          )}
        </div>
      </div>
      <form class="filters" aria-label="Filter screens" onSubmit={(e) => e.preventDefault()}>
        <select aria-label="Group" value={groupId} onChange={(e) => setGroupId(e.currentTarget.value)}>
          <option value="">Every group</option>
          {(groups.data?.items ?? []).map((g) => (
            <option key={g.id} value={g.id}>
              {g.name}
            </option>
          ))}
        </select>
        <select aria-label="Location" value={locationId} onChange={(e) => setLocationId(e.currentTarget.value)}>
          <option value="">Every location</option>
          {(locations.data?.items ?? []).map((l) => (
            <option key={l.id} value={l.id}>
              {l.name}
            </option>
          ))}
        </select>
      </form>
      <ErrorNote error={screens.error} />
      <div class="table-wrap">
        <table class="striped" aria-busy={screens.loading && !screens.data}>
          <thead>
            <tr>
              <th scope="col">
                <span class="visually-hidden">Picture</span>
              </th>
              <th scope="col">Screen</th>
              <th scope="col">Status</th>
              <th scope="col">Showing</th>
              <th scope="col">Location</th>
              <th scope="col">Player</th>
              <th scope="col">Last seen</th>
            </tr>
          </thead>
          <tbody>
            {items.map((s) => (
              <tr key={s.id} data-screen={s.name}>
                <td class="screen-thumb-cell">
                  <ScreenPicture screen={s} />
                </td>
                <td>
                  <a href={`/screens/${s.id}`}>{s.name}</a>
                </td>
                <td>
                  <ScreenStatus screen={s} />
                </td>
                <td>
                  <NowShowingLabel screen={s} />
                </td>
                <td>{locName(s.locationId)}</td>
                <td>
                  {s.lastSeenAt ? (s.playerFamily ?? 'web') : '—'} {s.playerVersion && <small class="muted">{s.playerVersion}</small>}
                </td>
                <td class="nowrap">{formatTime(s.lastSeenAt)}</td>
              </tr>
            ))}
            {!screens.loading && items.length === 0 && (
              <tr>
                <td colSpan={7} class="muted">
                  No screens{status || groupId || locationId ? ' match' : ' yet. Open /play on a screen and add it with the code it shows.'}
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </>
  );
}

/**
 * The name the approve form starts with: what the device calls itself when that is a real
 * name, never its pairing code or a generic "Browser player (...)"; else "Screen N".
 */
function suggestedName(p: { code: string; deviceName: string | null }, existing: number): string {
  const name = p.deviceName?.trim() ?? '';
  const code = p.code.replace(/[^A-Z0-9]/gi, '').toUpperCase();
  const generic =
    !name ||
    /\bplayer \(/i.test(name) ||
    name
      .replace(/[^A-Z0-9]/gi, '')
      .toUpperCase()
      .includes(code);
  return generic ? `Screen ${existing + 1}` : name;
}

interface Pending {
  id: string;
  code: string;
  status: string;
  playerFamily: string | null;
  deviceName: string | null;
  createdAt: string;
  expiresAt: string;
}

/** What `GET /api/v1/install/linux` answers that this page shows. */
interface LinuxInstall {
  installCommand: string;
  pin: string | null;
  serverUrl: string;
  tls: { source: 'generated' | 'provided'; fingerprintSha256: string; spkiSha256: string[]; notAfter: string } | null;
}

/**
 * The one line that turns a Linux box into a screen. With HTTPS it pins this server's keys,
 * so nobody on the network between can change what it installs (docs/trust.md).
 */
export function LinuxInstallCommand() {
  const info = useLoad(() => api.get<LinuxInstall>('install/linux'));
  if (info.error) return <ErrorNote error={info.error} />;
  const d = info.data;
  if (!d) return null;
  return (
    <section aria-labelledby="linux-install-h" class="narrow" data-testid="linux-install">
      <h2 id="linux-install-h">A Linux screen box</h2>
      <CopyField
        label="Run this on the box (Debian or Raspberry Pi OS, x86_64 or arm64)"
        value={d.installCommand}
        testId="install-command"
        help={
          d.pin && d.tls ? (
            <>
              It installs Chromium in kiosk mode and shows the code to enter here. It talks to this server over HTTPS and accepts only this server’s key, so
              nobody on the network between can change what it installs. Certificate fingerprint (SHA-256,{' '}
              {d.tls.source === 'provided' ? 'your certificate' : 'made by this server'}):{' '}
              <code class="fingerprint" data-testid="tls-fingerprint">
                {d.tls.fingerprintSha256}
              </code>
            </>
          ) : (
            <>
              This server has no HTTPS listener, so the installer travels unprotected: anyone on the network between could change it. Turn HTTPS on
              (PLACARD_HTTPS_PORT) to get a command that checks the server’s key.
            </>
          )
        }
      />
    </section>
  );
}

/** Add a screen by the code it shows. */
export function AddScreenPage() {
  useTitle('Add screen');
  const { route } = useLocation();
  const [pending, setPending] = useState<Pending | null>(null);
  const groups = useLoad(() => api.get<Page<Group>>('screen-groups?limit=500'));
  const locations = useLoad(() => api.get<Page<Location>>('locations?limit=500'));
  const resolve = useAction(async (code: string) => {
    setPending(await api.post<Pending>('screens/pairing/resolve', { code }));
  });
  const settings = useLoad(() => api.get<{ timeZone: string }>('settings'));
  const screenCount = useLoad(() => api.get<Page<Screen>>('screens?limit=500'));
  const [locationChoice, setLocationChoice] = useState<string | null>(null);
  const approve = useAction(async (form: HTMLFormElement) => {
    const fd = new FormData(form);
    const groupIds = fd.getAll('groupIds').map(String);
    const v = formValues(form);
    let locationId: string | null = v.locationId && v.locationId !== 'new' ? v.locationId : null;
    // "New location…": made first, then the screen is approved into it.
    if (v.locationId === 'new') {
      const made = await api.post<Location>('locations', { name: v.newLocationName, timeZone: v.newLocationZone });
      locationId = made.id;
      await locations.reload();
    }
    const res = await api.post<{ screen: Screen }>(`screens/pairing/${pending!.id}/approve`, { name: v.name, locationId, groupIds });
    route(`/screens/${res.screen.id}`);
  });
  const reject = useAction(async () => {
    await api.post(`screens/pairing/${pending!.id}/reject`);
    setPending(null);
  });
  return (
    <>
      <hgroup>
        <h1>Add screen</h1>
        <p>
          Open <code>{location.origin}/play</code> on the screen (or install the Linux player below); it shows a six-character code.
        </p>
      </hgroup>
      {!pending ? (
        // Keyed: without keys Preact reused the code's <input> for the name, so the code typed showed as the screen's name.
        <form
          key="code"
          aria-label="Pairing code"
          class="narrow"
          onSubmit={(e) => {
            e.preventDefault();
            void resolve.run(formValues(e.currentTarget).code ?? '');
          }}
        >
          <label>
            Code shown on the screen
            <input
              name="code"
              class="code-input"
              required
              autoFocus
              autocomplete="off"
              autocapitalize="characters"
              spellcheck={false}
              maxLength={12}
              placeholder="ABC-123"
            />
          </label>
          <ErrorNote error={resolve.error} />
          <button type="submit" aria-busy={resolve.busy}>
            Find screen
          </button>
        </form>
      ) : (
        <form
          key="approve"
          aria-label="Approve screen"
          class="narrow"
          onSubmit={(e) => {
            e.preventDefault();
            void approve.run(e.currentTarget);
          }}
        >
          <p>
            Found <strong>{pending.code}</strong>: {pending.deviceName ?? 'a screen'} ({pending.playerFamily ?? 'web browser'}), waiting since{' '}
            {formatTime(pending.createdAt)}.
          </p>
          <label>
            Name
            <input
              name="name"
              required
              maxLength={200}
              defaultValue={suggestedName(pending, screenCount.data?.items.length ?? 0)}
              placeholder="e.g. Counter, Window, Menu board"
              autoFocus
            />
          </label>
          {(() => {
            const list = locations.data?.items ?? [];
            const serverZone = settings.data?.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
            // No location yet: offer to make one (a screen's schedules run in its location's zone).
            const choice = locationChoice ?? (locations.data ? (list.length === 1 ? list[0]!.id : list.length === 0 ? 'new' : '') : '');
            return (
              <>
                <label for="approve-location">Location</label>
                <select
                  id="approve-location"
                  name="locationId"
                  value={choice}
                  aria-describedby="approve-location-help"
                  onChange={(e) => setLocationChoice(e.currentTarget.value)}
                >
                  <option value="">No location (runs in the server’s zone: {zoneWords(serverZone)})</option>
                  {list.map((l) => (
                    <option key={l.id} value={l.id}>
                      {l.name} ({zoneWords(l.timeZone)})
                    </option>
                  ))}
                  <option value="new">New location…</option>
                </select>
                <small id="approve-location-help" class="field-help">
                  Schedules run in the time zone of the screen’s location: 09:00 means 09:00 where the screen is.
                </small>
                {choice === 'new' && (
                  <fieldset class="new-location">
                    <legend>New location</legend>
                    <label>
                      Location name
                      <input name="newLocationName" required maxLength={200} placeholder="e.g. Café Rivoli" />
                    </label>
                    <label>
                      Its time zone
                      <select name="newLocationZone" defaultValue={serverZone}>
                        {TIME_ZONES.map((z) => (
                          <option key={z} value={z} selected={z === serverZone}>
                            {z}
                          </option>
                        ))}
                      </select>
                    </label>
                  </fieldset>
                )}
              </>
            );
          })()}
          {(groups.data?.items.length ?? 0) > 0 && (
            <fieldset>
              <legend>Groups</legend>
              {groups.data!.items.map((g) => (
                <label key={g.id}>
                  <input type="checkbox" name="groupIds" value={g.id} /> {g.name}
                </label>
              ))}
            </fieldset>
          )}
          <ErrorNote error={approve.error ?? reject.error} />
          <div class="row">
            <button type="submit" aria-busy={approve.busy}>
              Add screen
            </button>
            <button type="button" class="secondary outline" aria-busy={reject.busy} onClick={() => void reject.run()}>
              Reject
            </button>
          </div>
        </form>
      )}
      {!pending && <LinuxInstallCommand />}
    </>
  );
}
