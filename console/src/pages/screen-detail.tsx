import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, atLeast, type Page } from '../api';
import type { Command, Group, Location, PlaylistSummary, Screen } from '../types';
import { ScreenNetworkPanel } from './networks';
import { ErrorNote, formatTime, formValues, Notice, useAction, useLoad, useSession, useTitle } from '../ui';
import { NowShowingLabel, ScreenStatus } from './screens';
import { zoneWords } from './schedule-rules';
import { confirmAction, showToast } from '../ui/confirm';
import { formatBytes } from '../types';

interface Assignment {
  playlistId: string | null;
  playlistName: string | null;
  inherited: { playlistId: string; playlistName: string; groupId: string } | null;
}
interface HistoryItem {
  id: string;
  at: string;
  kind: string;
  detail: Record<string, unknown>;
}

const COMMANDS: { type: string; label: string; confirm?: { title: string; body: string } }[] = [
  { type: 'screenshot', label: 'Take screenshot' },
  { type: 'identify', label: 'Identify' },
  {
    type: 'reload',
    label: 'Reload player',
    confirm: { title: 'Reload the player?', body: 'The screen restarts its page: a second or two of its idle slide, then it plays from its cache.' },
  },
  { type: 'sync_now', label: 'Sync now' },
  {
    type: 'clear_cache',
    label: 'Clear cache',
    confirm: {
      title: 'Clear the screen’s media cache?',
      body: 'It downloads all its media again; until then it shows what it already has, or its idle slide.',
    },
  },
  {
    type: 'display_off',
    label: 'Display off',
    confirm: { title: 'Turn the display off?', body: 'The screen goes dark until it is turned on again (a schedule does not turn it back on).' },
  },
  { type: 'display_on', label: 'Display on' },
  { type: 'reboot', label: 'Reboot', confirm: { title: 'Reboot the device?', body: 'The screen goes dark for a while, then starts playing again.' } },
];

/** Polls while the page is open: the screen is live (status, what it shows, its last screenshot). */
const LIVE_MS = 5_000;

/** One screen: status document, what it plays, commands with results, history, lifecycle. */
export function ScreenDetailPage({ id }: { id: string }) {
  const { user } = useSession();
  const admin = atLeast(user, 'admin');
  const screen = useLoad(() => api.get<Screen>(`screens/${id}`), [id]);
  useTitle(screen.data?.name ?? 'Screen');
  const s = screen.data;
  useEffect(() => {
    const timer = setInterval(() => void screen.reload(), LIVE_MS);
    return () => clearInterval(timer);
  }, [screen.reload]);
  const { route } = useLocation();
  const lifecycle = useAction(async (what: 'disable' | 'enable' | 'revoke' | 'delete') => {
    const cur = screen.data!;
    const asks = {
      disable: {
        title: `Disable ${cur.name}?`,
        body: 'It stays paired but stops playing (it shows a notice) and stops reporting until it is enabled again.',
        label: 'Disable',
        danger: false,
      },
      enable: null,
      revoke: {
        title: `Revoke ${cur.name}?`,
        body: 'Its credential stops working: it shows a new pairing code and must be added again. Its history stays.',
        label: 'Revoke',
        danger: true,
      },
      delete: {
        title: `Delete ${cur.name}?`,
        body: 'The screen, its history, screenshots and group memberships go, and its player shows a new pairing code. This cannot be undone.',
        label: 'Delete screen',
        danger: true,
      },
    }[what];
    if (
      asks &&
      !(await confirmAction({
        title: asks.title,
        body: <p>{asks.body}</p>,
        confirmLabel: asks.label,
        danger: asks.danger,
        screens: [{ id: cur.id, name: cur.name }],
        screensLabel: 'This screen:',
      }))
    )
      return;
    if (what === 'delete') {
      await api.del(`screens/${id}`);
      showToast(`Deleted ${cur.name}.`);
      route('/screens');
      return;
    }
    await api.post(`screens/${id}/${what}`);
    if (what === 'disable')
      showToast(`Disabled ${cur.name}.`, async () => {
        await api.post(`screens/${id}/enable`);
        await screen.reload();
      });
    await screen.reload();
  });
  if (screen.error && !s) return <ErrorNote error={screen.error} />;
  if (!s) return <p aria-busy="true">Loading…</p>;
  return (
    <>
      <nav aria-label="breadcrumb">
        <ul>
          <li>
            <a href="/screens">Screens</a>
          </li>
          <li>{s.name}</li>
        </ul>
      </nav>
      <hgroup>
        <h1>{s.name}</h1>
        <p aria-live="polite" data-testid="screen-status-line">
          <ScreenStatus screen={s} /> · last seen {formatTime(s.lastSeenAt)} · {s.lastSeenAt ? playerWords(s) : 'no player yet'}
          {s.socketConnected ? ' · connected live' : ''}
        </p>
      </hgroup>
      {screen.error && <ErrorNote error={screen.error} />}
      <NowCard screen={s} />
      <div class="two-col">
        <div>
          <AssignmentCard screenId={id} canEdit={atLeast(user, 'publisher')} />
          {admin && <EditCard screen={s} onSaved={screen.reload} />}
          {admin && (
            <article aria-labelledby="lifecycle-h">
              <header>
                <h2 id="lifecycle-h">Access</h2>
              </header>
              <p class="muted">
                Disabling keeps the screen paired but stops it playing and reporting. Revoking ends its credential: it must be paired again. Deleting removes it
                and its history.
              </p>
              <div class="row">
                {s.disabled ? (
                  <button type="button" class="secondary" disabled={lifecycle.busy || s.revoked} onClick={() => void lifecycle.run('enable')}>
                    Enable
                  </button>
                ) : (
                  <button type="button" class="secondary outline" disabled={lifecycle.busy || s.revoked} onClick={() => void lifecycle.run('disable')}>
                    Disable
                  </button>
                )}
                <button type="button" class="contrast outline" disabled={lifecycle.busy || s.revoked} onClick={() => void lifecycle.run('revoke')}>
                  {s.revoked ? 'Revoked' : 'Revoke'}
                </button>
                <button type="button" class="contrast outline" disabled={lifecycle.busy} onClick={() => void lifecycle.run('delete')}>
                  Delete screen
                </button>
              </div>
              <ErrorNote error={lifecycle.error} />
            </article>
          )}
        </div>
        <div>
          <CommandsCard screen={s} canSend={atLeast(user, 'publisher') && !s.disabled && !s.revoked} onDone={screen.reload} />
          <PlayerCard screen={s} />
          <ScreenNetworkPanel screenId={id} />
        </div>
      </div>
      <HistoryCard screenId={id} />
    </>
  );
}

const FAMILY_WORDS: Record<string, string> = { 'desktop-linux': 'Linux kiosk player', android: 'Android player', edge: 'Edge player' };
const playerWords = (s: Screen) => `${FAMILY_WORDS[s.playerFamily ?? ''] ?? 'Web browser player'}${s.playerVersion ? ` ${s.playerVersion}` : ''}`;

/** What the screen shows now (with its picture) and the last screenshot it sent; refreshed live. */
function NowCard({ screen }: { screen: Screen }) {
  const n = screen.nowShowing;
  const shot = screen.lastScreenshot;
  return (
    <article aria-labelledby="now-h" class="now-card" data-testid="now-card">
      <header>
        <h2 id="now-h">On the screen now</h2>
      </header>
      <div class="now-grid">
        <figure>
          {n?.assetId ? (
            <img
              class="now-thumb"
              src={`/api/v1/assets/${n.assetId}/thumbnail`}
              alt={`${n.assetName ?? 'Media'}, ${n.planned ? 'planned' : 'showing now'}`}
              onError={(e) => (e.currentTarget.style.visibility = 'hidden')}
            />
          ) : (
            <span class="now-thumb empty" aria-hidden="true" />
          )}
          <figcaption>
            <NowShowingLabel screen={screen} />
            {n?.planned && <small class="muted"> · not reported by the player: what its plan says plays now</small>}
            {n?.scheduleName && <small class="muted"> · by the schedule {n.scheduleName}</small>}
          </figcaption>
        </figure>
        <figure>
          {shot ? (
            <a href={shot.url} target="_blank" rel="noreferrer">
              <img
                class="now-thumb"
                src={shot.url}
                alt={`Last screenshot of ${screen.name}, taken ${formatTime(shot.takenAt)}`}
                data-testid="last-screenshot"
              />
            </a>
          ) : (
            <span class="now-thumb empty" aria-hidden="true" />
          )}
          <figcaption>{shot ? `Last screenshot, ${formatTime(shot.takenAt)}` : 'No screenshot yet: take one with the commands below.'}</figcaption>
        </figure>
      </div>
      <p class="muted">
        Runs in {zoneWords(screen.effectiveTimeZone ?? screen.timeZone ?? 'UTC')}
        {screen.timeZoneSource === 'server-default' ? ' (the server’s default: it has no location)' : ' (its location’s)'}.
      </p>
    </article>
  );
}

/** The player's last report (the heartbeat's status document), in words; the raw document behind a disclosure. */
function PlayerCard({ screen }: { screen: Screen }) {
  // biome-ignore lint/suspicious/noExplicitAny: the player's own report, each field checked where it is read
  const st = screen.lastStatus as Record<string, any> | null;
  const rows: [string, string][] = [];
  if (st) {
    rows.push(['Player', playerWords(screen)]);
    if (st.display?.width) rows.push(['Display', `${st.display.width} × ${st.display.height} pixels`]);
    if (st.cache) {
      const c = st.cache;
      const problems = [c.missing ? `${c.missing} still downloading` : '', c.failed ? `${c.failed} failed` : ''].filter(Boolean).join(', ');
      rows.push(['Media on the device', `${c.items ?? 0} files, ${formatBytes(c.bytes ?? 0)}${problems ? ` (${problems})` : ', all ready'}`]);
    }
    if (typeof st.socketConnected === 'boolean') rows.push(['Instant updates', st.socketConnected ? 'connected' : 'not connected (it checks every 15 s)']);
    if (st.playerStartedAt) rows.push(['Running since', formatTime(st.playerStartedAt)]);
    if (st.noiseMeter?.status) rows.push(['Noise meter', String(st.noiseMeter.status)]);
    rows.push([
      'Last problem',
      st.lastError ? String(typeof st.lastError === 'object' ? (st.lastError.message ?? JSON.stringify(st.lastError)) : st.lastError) : 'none',
    ]);
    if (st.userAgent) rows.push(['Browser', String(st.userAgent).replace(/^Mozilla\/5\.0 /, '')]);
  }
  return (
    <article aria-labelledby="status-h">
      <header>
        <h2 id="status-h">Player details</h2>
      </header>
      {st ? (
        <>
          <dl class="facts" data-testid="player-facts">
            {rows.map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{v}</dd>
              </div>
            ))}
          </dl>
          <details>
            <summary>Everything the player reported (for support)</summary>
            <pre class="json">{JSON.stringify(st, null, 2)}</pre>
          </details>
        </>
      ) : (
        <p class="muted">The player has not reported yet.</p>
      )}
    </article>
  );
}

function AssignmentCard({ screenId, canEdit }: { screenId: string; canEdit: boolean }) {
  const assignment = useLoad(() => api.get<Assignment>(`screens/${screenId}/playlist-assignment`), [screenId]);
  const playlists = useLoad(() => api.get<Page<PlaylistSummary>>('playlists?limit=500'));
  const [saved, setSaved] = useState(false);
  const save = useAction(async (playlistId: string) => {
    setSaved(false);
    const before = assignment.data?.playlistId ?? '';
    if (playlistId) await api.put(`screens/${screenId}/playlist-assignment`, { playlistId });
    else await api.del(`screens/${screenId}/playlist-assignment`);
    await assignment.reload();
    setSaved(true);
    // What the screen shows changed: offer to put the previous one back.
    showToast('Default playlist changed.', async () => {
      if (before) await api.put(`screens/${screenId}/playlist-assignment`, { playlistId: before });
      else await api.del(`screens/${screenId}/playlist-assignment`);
      await assignment.reload();
    });
  });
  const a = assignment.data;
  return (
    <article aria-labelledby="assign-h">
      <header>
        <h2 id="assign-h">Plays</h2>
      </header>
      <p class="muted">Schedules and takeovers win over this default playlist.</p>
      <label>
        Default playlist
        <select
          name="playlistId"
          value={a?.playlistId ?? ''}
          disabled={!canEdit || save.busy || !playlists.data}
          onChange={(e) => void save.run(e.currentTarget.value)}
        >
          <option value="">{a?.inherited ? `From its group: ${a.inherited.playlistName}` : 'None (idle slide)'}</option>
          {(playlists.data?.items ?? []).map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      {saved && <Notice>Saved; the screen picks it up within seconds.</Notice>}
      <ErrorNote error={save.error ?? assignment.error ?? playlists.error} />
    </article>
  );
}

function EditCard({ screen, onSaved }: { screen: Screen; onSaved: () => Promise<void> }) {
  const locations = useLoad(() => api.get<Page<Location>>('locations?limit=500'));
  const groups = useLoad(() => api.get<Page<Group>>('screen-groups?limit=500'));
  const save = useAction(async (form: HTMLFormElement) => {
    const v = formValues(form);
    await api.patch(`screens/${screen.id}`, { name: v.name, locationId: v.locationId || null, notes: v.notes || null });
    await onSaved();
  });
  const member = (groups.data?.items ?? []).filter((g) => screen.groupIds.includes(g.id));
  return (
    <article aria-labelledby="edit-h">
      <header>
        <h2 id="edit-h">Details</h2>
      </header>
      <form
        aria-label="Screen details"
        onSubmit={(e) => {
          e.preventDefault();
          void save.run(e.currentTarget);
        }}
      >
        <label>
          Name
          <input name="name" defaultValue={screen.name} required maxLength={200} />
        </label>
        <label>
          Location
          <select name="locationId" defaultValue={screen.locationId ?? ''} key={`${locations.data ? 'l' : 'n'}`}>
            <option value="">None</option>
            {(locations.data?.items ?? []).map((l) => (
              <option key={l.id} value={l.id} selected={l.id === screen.locationId}>
                {l.name} ({l.timeZone})
              </option>
            ))}
          </select>
        </label>
        <label>
          Notes
          <textarea name="notes" defaultValue={screen.notes ?? ''} maxLength={5000} rows={2} />
        </label>
        <p class="muted">
          Groups: {member.length ? member.map((g) => g.name).join(', ') : 'none'} (<a href="/groups">manage groups</a>)
        </p>
        <ErrorNote error={save.error} />
        <button type="submit" aria-busy={save.busy}>
          Save
        </button>
      </form>
    </article>
  );
}

function CommandsCard({ screen, canSend, onDone }: { screen: Screen; canSend: boolean; onDone: () => Promise<void> }) {
  const screenId = screen.id;
  const commands = useLoad(() => api.get<Page<Command>>(`screens/${screenId}/commands?limit=20`), [screenId]);
  const pendingAny = commands.data?.items.some((c) => c.state === 'queued' || c.state === 'delivered' || c.state === 'acknowledged');
  useEffect(() => {
    if (!pendingAny) return;
    const timer = setInterval(() => void commands.reload(), 2000);
    return () => clearInterval(timer);
  }, [pendingAny, commands.reload]);
  useEffect(() => {
    if (!pendingAny) void onDone(); // a screenshot that just arrived shows on the page
  }, [pendingAny]);
  const send = useAction(async (type: string) => {
    const c = COMMANDS.find((x) => x.type === type);
    if (
      c?.confirm &&
      !(await confirmAction({
        title: c.confirm.title,
        body: <p>{c.confirm.body}</p>,
        confirmLabel: c.label,
        screens: [{ id: screen.id, name: screen.name }],
        screensLabel: 'This screen:',
      }))
    )
      return;
    await api.post(`screens/${screenId}/commands`, { type });
    await commands.reload();
  });
  const support = screen.commandSupport ?? {};
  return (
    <article aria-labelledby="commands-h">
      <header>
        <h2 id="commands-h">Commands</h2>
      </header>
      {canSend && (
        <>
          <div class="row wrap-buttons">
            {COMMANDS.filter((c) => support[c.type]?.supported !== false).map((c) => (
              <button key={c.type} type="button" class="secondary outline small" disabled={send.busy} onClick={() => void send.run(c.type)}>
                {c.label}
              </button>
            ))}
          </div>
          {/* What this player cannot do is said, not offered. */}
          {COMMANDS.some((c) => support[c.type]?.supported === false) && (
            <ul class="plain unsupported" data-testid="unsupported-commands">
              {[...new Set(COMMANDS.filter((c) => support[c.type]?.supported === false).map((c) => support[c.type]!.reason ?? ''))].map((reason) => {
                const which = COMMANDS.filter((c) => support[c.type]?.supported === false && (support[c.type]!.reason ?? '') === reason);
                return (
                  <li key={reason} data-command-unsupported={which.map((c) => c.type).join(' ')}>
                    <small class="muted">
                      {which.map((c) => c.label).join(', ')}: not available. {reason}.
                    </small>
                  </li>
                );
              })}
            </ul>
          )}
        </>
      )}
      <ErrorNote error={send.error ?? commands.error} />
      <ul class="command-list">
        {(commands.data?.items ?? []).map((c) => (
          <li key={c.id} data-command={c.type} data-state={c.state}>
            <strong>{COMMANDS.find((x) => x.type === c.type)?.label ?? c.type}</strong>{' '}
            <span class={`badge ${c.state === 'succeeded' ? 'ok' : c.state === 'failed' || c.state === 'expired' ? 'bad' : 'warn'}`}>{c.state}</span>{' '}
            <small class="muted">{formatTime(c.createdAt)}</small>
            {c.result && typeof c.result.message === 'string' && (
              <div>
                <small>{c.result.message}</small>
              </div>
            )}
            {c.result && typeof c.result.error === 'string' && (
              <div>
                <small class="error-text">{c.result.error}</small>
              </div>
            )}
            {c.type === 'screenshot' && c.state === 'succeeded' && (
              <a href={`/api/v1/screens/${screenId}/commands/${c.id}/screenshot`} target="_blank" rel="noreferrer">
                <img
                  class="screenshot"
                  src={`/api/v1/screens/${screenId}/commands/${c.id}/screenshot`}
                  alt={`Screenshot taken ${formatTime(c.completedAt)}`}
                  loading="lazy"
                />
              </a>
            )}
          </li>
        ))}
        {commands.data && commands.data.items.length === 0 && <li class="muted">No commands sent yet.</li>}
      </ul>
    </article>
  );
}

function HistoryCard({ screenId }: { screenId: string }) {
  const history = useLoad(() => api.get<Page<HistoryItem>>(`screens/${screenId}/player-history?limit=50`), [screenId]);
  return (
    <article aria-labelledby="history-h">
      <header>
        <h2 id="history-h">History</h2>
      </header>
      <ErrorNote error={history.error} />
      <div class="table-wrap">
        <table>
          <tbody>
            {(history.data?.items ?? []).map((h) => (
              <tr key={h.id}>
                <td class="nowrap">{formatTime(h.at)}</td>
                <td>{h.kind}</td>
                <td>
                  <small class="muted">
                    {Object.entries(h.detail)
                      // Ids say nothing to people (they are in the raw history of the API).
                      .filter(([k, v]) => v !== null && typeof v !== 'object' && !/Id$|^by$/.test(k))
                      .map(([k, v]) => `${k}: ${String(v)}`)
                      .join(' · ')}
                  </small>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {history.data && history.data.items.length === 0 && <p class="muted">Nothing yet.</p>}
    </article>
  );
}
