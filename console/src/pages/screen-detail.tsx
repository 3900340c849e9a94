import { useEffect, useState } from 'preact/hooks';
import { api, atLeast, type Page } from '../api';
import type { Command, Group, Location, PlaylistSummary, Screen } from '../types';
import { ErrorNote, formatTime, formValues, Notice, useAction, useLoad, useSession, useTitle } from '../ui';
import { NowShowingLabel, ScreenStatus } from './screens';

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

const COMMANDS: { type: string; label: string; confirm?: string }[] = [
  { type: 'screenshot', label: 'Take screenshot' },
  { type: 'identify', label: 'Identify' },
  { type: 'reload', label: 'Reload player' },
  { type: 'sync_now', label: 'Sync now' },
  { type: 'clear_cache', label: 'Clear cache', confirm: 'Clear the screen’s media cache? It downloads everything again.' },
  { type: 'display_off', label: 'Display off' },
  { type: 'display_on', label: 'Display on' },
  { type: 'reboot', label: 'Reboot', confirm: 'Reboot the device? The screen goes dark for a while.' },
];

/** One screen: status document, what it plays, commands with results, history, lifecycle. */
export function ScreenDetailPage({ id }: { id: string }) {
  const { user } = useSession();
  const admin = atLeast(user, 'admin');
  const screen = useLoad(() => api.get<Screen>(`screens/${id}`), [id]);
  useTitle(screen.data?.name ?? 'Screen');
  const s = screen.data;
  const lifecycle = useAction(async (what: 'disable' | 'enable' | 'revoke') => {
    await api.post(`screens/${id}/${what}`);
    await screen.reload();
  });
  if (screen.error) return <ErrorNote error={screen.error} />;
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
        <p>
          <ScreenStatus screen={s} /> · showing <NowShowingLabel screen={s} /> · last seen {formatTime(s.lastSeenAt)} · {s.lastSeenAt ? `${s.playerFamily ?? 'web'} ${s.playerVersion ?? ''}` : 'no player yet'}
          {s.socketConnected ? ' · live connection' : ''}
        </p>
      </hgroup>
      <div class="two-col">
        <div>
          <AssignmentCard screenId={id} canEdit={atLeast(user, 'publisher')} />
          {admin && <EditCard screen={s} onSaved={screen.reload} />}
          {admin && (
            <article aria-labelledby="lifecycle-h">
              <header>
                <h2 id="lifecycle-h">Access</h2>
              </header>
              <p class="muted">Disabling keeps the screen paired but stops it playing and reporting. Revoking ends its credential: it must be paired again.</p>
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
                <button
                  type="button"
                  class="contrast outline"
                  disabled={lifecycle.busy || s.revoked}
                  onClick={() => {
                    if (confirm(`Revoke ${s.name}? It stops working until paired again.`)) void lifecycle.run('revoke');
                  }}
                >
                  {s.revoked ? 'Revoked' : 'Revoke'}
                </button>
              </div>
              <ErrorNote error={lifecycle.error} />
            </article>
          )}
        </div>
        <div>
          <CommandsCard screenId={id} canSend={atLeast(user, 'publisher') && !s.disabled && !s.revoked} />
          <article aria-labelledby="status-h">
            <header>
              <h2 id="status-h">Status document</h2>
            </header>
            {s.lastStatus ? <pre class="json">{JSON.stringify(s.lastStatus, null, 2)}</pre> : <p class="muted">No heartbeat yet.</p>}
          </article>
        </div>
      </div>
      <HistoryCard screenId={id} />
    </>
  );
}

function AssignmentCard({ screenId, canEdit }: { screenId: string; canEdit: boolean }) {
  const assignment = useLoad(() => api.get<Assignment>(`screens/${screenId}/playlist-assignment`), [screenId]);
  const playlists = useLoad(() => api.get<Page<PlaylistSummary>>('playlists?limit=500'));
  const [saved, setSaved] = useState(false);
  const save = useAction(async (playlistId: string) => {
    setSaved(false);
    if (playlistId) await api.put(`screens/${screenId}/playlist-assignment`, { playlistId });
    else await api.del(`screens/${screenId}/playlist-assignment`);
    await assignment.reload();
    setSaved(true);
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
        <select name="playlistId" value={a?.playlistId ?? ''} disabled={!canEdit || save.busy || !playlists.data} onChange={(e) => void save.run(e.currentTarget.value)}>
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

function CommandsCard({ screenId, canSend }: { screenId: string; canSend: boolean }) {
  const commands = useLoad(() => api.get<Page<Command>>(`screens/${screenId}/commands?limit=20`), [screenId]);
  const pendingAny = commands.data?.items.some((c) => c.state === 'queued' || c.state === 'delivered' || c.state === 'acknowledged');
  useEffect(() => {
    if (!pendingAny) return;
    const timer = setInterval(() => void commands.reload(), 2000);
    return () => clearInterval(timer);
  }, [pendingAny, commands.reload]);
  const send = useAction(async (type: string) => {
    await api.post(`screens/${screenId}/commands`, { type });
    await commands.reload();
  });
  return (
    <article aria-labelledby="commands-h">
      <header>
        <h2 id="commands-h">Commands</h2>
      </header>
      {canSend && (
        <div class="row wrap-buttons">
          {COMMANDS.map((c) => (
            <button
              key={c.type}
              type="button"
              class="secondary outline small"
              disabled={send.busy}
              onClick={() => {
                if (!c.confirm || confirm(c.confirm)) void send.run(c.type);
              }}
            >
              {c.label}
            </button>
          ))}
        </div>
      )}
      <ErrorNote error={send.error ?? commands.error} />
      <ul class="command-list">
        {(commands.data?.items ?? []).map((c) => (
          <li key={c.id} data-command={c.type} data-state={c.state}>
            <strong>{c.type}</strong> <span class={`badge ${c.state === 'succeeded' ? 'ok' : c.state === 'failed' || c.state === 'expired' ? 'bad' : 'warn'}`}>{c.state}</span>{' '}
            <small class="muted">{formatTime(c.createdAt)}</small>
            {c.result && typeof c.result.message === 'string' && <div><small>{c.result.message}</small></div>}
            {c.result && typeof c.result.error === 'string' && <div><small class="error-text">{c.result.error}</small></div>}
            {c.type === 'screenshot' && c.state === 'succeeded' && (
              <a href={`/api/v1/screens/${screenId}/commands/${c.id}/screenshot`} target="_blank" rel="noreferrer">
                <img class="screenshot" src={`/api/v1/screens/${screenId}/commands/${c.id}/screenshot`} alt={`Screenshot taken ${formatTime(c.completedAt)}`} loading="lazy" />
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
                      .filter(([, v]) => v !== null && typeof v !== 'object')
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
