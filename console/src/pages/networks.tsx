import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, atLeast, type Page } from '../api';
import type { components } from '../api-schema';
import type { Screen } from '../types';
import { ErrorNote, useAction, useLoad, useSession, useTitle } from '../ui';
import { confirmAction, showToast } from '../ui/confirm';

/**
 * Presentation networks (docs/presentation-networks.md): screens that play one timeline in step,
 * members in order, one leader. Viewers read; admins change (the server enforces it).
 */

export type Network = components['schemas']['PresentationNetwork'];
export type Membership = components['schemas']['PresentationNetworkMembership'];

const ifMatch = (n: Network) => ({ headers: { 'if-match': `"${n.revision}"` } });

export function NetworksPage() {
  useTitle('Networks');
  const { user } = useSession();
  const isAdmin = atLeast(user, 'admin');
  const { route } = useLocation();
  const list = useLoad(() => api.get<Page<Network>>('presentation-networks?limit=100'));
  const [name, setName] = useState('');
  const create = useAction(async () => {
    const n = await api.post<Network>('presentation-networks', { name });
    setName('');
    showToast(`Network “${n.name}” created.`);
    route(`/networks/${n.id}`);
  });
  const items = list.data?.items ?? [];
  return (
    <>
      <hgroup>
        <h1>Networks</h1>
        <p>Screens side by side that play one timeline in step (a video wall, a row of menu boards).</p>
      </hgroup>
      <ErrorNote error={list.error} />
      {isAdmin && (
        <form
          class="row inline-create"
          aria-label="New network"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run();
          }}
        >
          <label>
            New network name
            <input value={name} maxLength={200} onInput={(e) => setName(e.currentTarget.value)} placeholder="e.g. Counter menu boards" />
          </label>
          <button type="submit" aria-busy={create.busy}>
            Create network
          </button>
        </form>
      )}
      <ErrorNote error={create.error} />
      {list.data && items.length === 0 && <p class="muted">No networks yet.</p>}
      {items.length > 0 && (
        <div class="table-wrap">
          <table class="striped" data-testid="networks">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Screens</th>
                <th scope="col">Leader</th>
                <th scope="col">Online</th>
              </tr>
            </thead>
            <tbody>
              {items.map((n) => (
                <tr key={n.id} data-network={n.name}>
                  <td>
                    <a href={`/networks/${n.id}`}>{n.name}</a>
                  </td>
                  <td>{n.screens.map((s) => s.name).join(', ') || '—'}</td>
                  <td>{n.screens.find((s) => s.leader)?.name ?? '—'}</td>
                  <td>
                    {n.screens.filter((s) => s.online).length} of {n.screens.length}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

export function NetworkPage({ id }: { id: string }) {
  const { user } = useSession();
  const isAdmin = atLeast(user, 'admin');
  const canTest = atLeast(user, 'editor');
  const { route } = useLocation();
  const net = useLoad(() => api.get<Network>(`presentation-networks/${id}`), [id]);
  const screens = useLoad(() => api.get<Page<Screen>>('screens?limit=500'));
  useTitle(net.data?.name ?? 'Network');
  const [rename, setRename] = useState<string | null>(null);
  const [adding, setAdding] = useState('');

  const setMembers = useAction(async (n: Network, ids: string[], leader: string | null, said: string) => {
    await api.put<Network>(`presentation-networks/${n.id}/screens`, { screenIds: ids, leaderScreenId: leader }, ifMatch(n));
    showToast(said);
    await net.reload();
  });
  const saveName = useAction(async (n: Network, value: string) => {
    await api.patch<Network>(`presentation-networks/${n.id}`, { name: value }, ifMatch(n));
    showToast('Network renamed.');
    setRename(null);
    await net.reload();
  });
  const remove = useAction(async (n: Network) => {
    const yes = await confirmAction({
      title: `Delete the network “${n.name}”?`,
      body: <p>Its screens stop playing in step and go back to their own schedules.</p>,
      screens: n.screens.map((s) => ({ id: s.screenId, name: s.name })),
      screensLabel: 'These screens stop playing in step:',
      confirmLabel: 'Delete network',
      danger: true,
    });
    if (!yes) return;
    await api.del(`presentation-networks/${n.id}`, ifMatch(n));
    showToast(`Network “${n.name}” deleted.`);
    route('/networks');
  });
  const test = useAction(async (n: Network) => {
    const r = await api.post<{ until: string; screenIds: string[]; socketsReached: number }>(`presentation-networks/${n.id}/test`, { seconds: 30 });
    showToast(
      r.socketsReached === 0
        ? 'No member is connected now: nothing shows the pattern.'
        : `The identification pattern shows for 30 seconds on ${r.socketsReached} connected screen${r.socketsReached === 1 ? '' : 's'}.`,
    );
  });

  const n = net.data;
  if (!n) return <ErrorNote error={net.error} />;
  const ids = n.screens.map((s) => s.screenId);
  const leader = n.leaderScreenId;
  const move = (i: number, by: number) => {
    const next = [...ids];
    const [x] = next.splice(i, 1);
    next.splice(i + by, 0, x as string);
    void setMembers.run(n, next, leader, 'Order saved.');
  };
  const candidates = (screens.data?.items ?? []).filter((s) => !ids.includes(s.id));
  return (
    <>
      <p>
        <a href="/networks">← Networks</a>
      </p>
      <hgroup>
        <h1>{n.name}</h1>
        <p>
          {n.screens.length} screen{n.screens.length === 1 ? '' : 's'} in step, counting from {new Date(n.epoch).toISOString().slice(0, 10)}.
        </p>
      </hgroup>
      <div class="row network-actions">
        {canTest && (
          <button type="button" class="secondary" aria-busy={test.busy} onClick={() => void test.run(n)}>
            Show identification pattern
          </button>
        )}
        {isAdmin && rename === null && (
          <button type="button" class="secondary outline" onClick={() => setRename(n.name)}>
            Rename
          </button>
        )}
        {isAdmin && (
          <button type="button" class="danger outline" onClick={() => void remove.run(n)}>
            Delete network
          </button>
        )}
      </div>
      <ErrorNote error={test.error ?? remove.error} />
      {rename !== null && (
        <form
          aria-label="Rename network"
          onSubmit={(e) => {
            e.preventDefault();
            void saveName.run(n, rename);
          }}
        >
          <label>
            Name
            <input value={rename} maxLength={200} onInput={(e) => setRename(e.currentTarget.value)} />
          </label>
          <ErrorNote error={saveName.error} />
          <div class="row">
            <button type="submit" aria-busy={saveName.busy}>
              Save name
            </button>
            <button type="button" class="secondary outline" onClick={() => setRename(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      <h2>Screens in order</h2>
      <ErrorNote error={setMembers.error} />
      {n.screens.length === 0 && <p class="muted">No screens yet.</p>}
      {n.screens.length > 0 && (
        <div class="table-wrap">
          <table class="striped" data-testid="members">
            <thead>
              <tr>
                <th scope="col">Position</th>
                <th scope="col">Screen</th>
                <th scope="col">State</th>
                <th scope="col">Leader</th>
                {isAdmin && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {n.screens.map((s, i) => (
                <tr key={s.screenId} data-member={s.name}>
                  <td data-label="Position">{s.position + 1}</td>
                  <td>
                    <a href={`/screens/${s.screenId}`}>{s.name}</a>
                  </td>
                  <td>
                    <span class={`badge ${s.online ? 'ok' : 'warn'}`}>{s.online ? 'Online' : 'Offline'}</span>
                  </td>
                  <td data-label="Leader">
                    {isAdmin ? (
                      <label class="inline">
                        <input type="radio" name="leader" checked={s.leader} onChange={() => void setMembers.run(n, ids, s.screenId, `${s.name} leads now.`)} />{' '}
                        <span class={s.leader ? '' : 'visually-hidden'}>{s.leader ? 'Leader' : `Make ${s.name} the leader`}</span>
                      </label>
                    ) : s.leader ? (
                      'Leader'
                    ) : (
                      ''
                    )}
                  </td>
                  {isAdmin && (
                    <td class="actions">
                      <button type="button" class="secondary outline small" disabled={i === 0} aria-label={`Move ${s.name} up`} onClick={() => move(i, -1)}>
                        ↑
                      </button>
                      <button
                        type="button"
                        class="secondary outline small"
                        disabled={i === n.screens.length - 1}
                        aria-label={`Move ${s.name} down`}
                        onClick={() => move(i, 1)}
                      >
                        ↓
                      </button>
                      <button
                        type="button"
                        class="secondary outline small"
                        aria-label={`Remove ${s.name}`}
                        onClick={() =>
                          void setMembers.run(
                            n,
                            ids.filter((x) => x !== s.screenId),
                            leader === s.screenId ? null : leader,
                            `${s.name} left the network.`,
                          )
                        }
                      >
                        Remove
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {isAdmin && (
        <form
          class="row inline-create"
          aria-label="Add a screen to the network"
          onSubmit={(e) => {
            e.preventDefault();
            if (adding) void setMembers.run(n, [...ids, adding], leader, 'Screen added.').then(() => setAdding(''));
          }}
        >
          <label>
            Screen to add
            <select value={adding} onChange={(e) => setAdding(e.currentTarget.value)}>
              <option value="">Choose…</option>
              {candidates.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={!adding}>
            Add
          </button>
        </form>
      )}
    </>
  );
}

/** The screen detail page's small panel: the network this screen plays in; an admin sets or clears it. */
export function ScreenNetworkPanel({ screenId }: { screenId: string }) {
  const { user } = useSession();
  const isAdmin = atLeast(user, 'admin');
  const membership = useLoad(() => api.get<Membership>(`screens/${screenId}/presentation-network`), [screenId]);
  const networks = useLoad(() => (isAdmin ? api.get<Page<Network>>('presentation-networks?limit=100') : Promise.resolve(null)));
  const [choice, setChoice] = useState('');
  const join = useAction(async () => {
    await api.put(`screens/${screenId}/presentation-network`, { networkId: choice });
    showToast('The screen joined the network.');
    setChoice('');
    await membership.reload();
  });
  const leave = useAction(async () => {
    await api.del(`screens/${screenId}/presentation-network`);
    showToast('The screen left its network.');
    await membership.reload();
  });
  const m = membership.data;
  return (
    <article aria-labelledby="network-h" data-testid="screen-network">
      <header>
        <h2 id="network-h">Presentation network</h2>
      </header>
      <ErrorNote error={membership.error ?? join.error ?? leave.error} />
      {m ? (
        <p>
          Plays in step in <a href={`/networks/${m.networkId}`}>{m.networkName}</a>: position {m.position + 1} of {m.memberCount}
          {m.leader ? ', the leader' : ''}.
          {isAdmin && (
            <>
              {' '}
              <button type="button" class="secondary outline small" onClick={() => void leave.run()}>
                Take out of the network
              </button>
            </>
          )}
        </p>
      ) : (
        membership.data === null && <p class="muted">Not in a network: plays its own schedule.</p>
      )}
      {isAdmin && !m && membership.data === null && (networks.data?.items.length ?? 0) > 0 && (
        <form
          class="row inline-create"
          aria-label="Join a network"
          onSubmit={(e) => {
            e.preventDefault();
            if (choice) void join.run();
          }}
        >
          <label>
            Network to join
            <select value={choice} onChange={(e) => setChoice(e.currentTarget.value)}>
              <option value="">Choose…</option>
              {networks.data?.items.map((x) => (
                <option key={x.id} value={x.id}>
                  {x.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={!choice}>
            Join network
          </button>
        </form>
      )}
    </article>
  );
}
