import t, { type Test } from 'tap';
import { signedInApp, signIn } from './helpers/auth.js';
import { openSocket, pairScreen } from './helpers/screens.js';

const ID = '0190f5a2-7b3c-7def-8abc-0123456789ab';

async function setup(t: Test, screens = 3) {
  const { app, owner, call } = await signedInApp(t);
  const list = [];
  for (let i = 0; i < screens; i++) list.push(await pairScreen(app, owner, { name: `Board ${i + 1}` }));
  const manifest = async (headers: Record<string, string>) => (await app.json('/api/v1/player/manifest', { headers })).body.data;
  return { app, owner, call, screens: list, manifest };
}

t.test('create, read, list, rename, delete; If-Match; bad input', async (t) => {
  const { call, screens } = await setup(t, 2);
  const [a, b] = screens.map((s) => s.screenId);
  const made = await call('POST', '/api/v1/presentation-networks', { name: 'Menu row', screenIds: [a, b] });
  t.equal(made.status, 201);
  t.equal(made.headers.get('etag'), `"${made.body.data.revision}"`);
  const id = made.body.data.id;
  t.match(made.body.data, {
    name: 'Menu row',
    leaderScreenId: a,
    screens: [
      { screenId: a, name: 'Board 1', position: 0, leader: true, online: false },
      { screenId: b, name: 'Board 2', position: 1, leader: false },
    ],
  });
  t.ok(Number.isFinite(Date.parse(made.body.data.epoch)));
  t.equal((await call('GET', '/api/v1/presentation-networks')).body.data.items.length, 1);
  t.equal((await call('GET', `/api/v1/presentation-networks/${id}`)).body.data.name, 'Menu row');

  const rev = made.body.data.revision;
  const renamed = await call('PATCH', `/api/v1/presentation-networks/${id}`, { name: 'Row A' }, { 'if-match': `"${rev}"` });
  t.equal(renamed.status, 200);
  t.match(renamed.body.data, { name: 'Row A', revision: rev + 1 });
  t.equal((await call('PATCH', `/api/v1/presentation-networks/${id}`, { name: 'x' }, { 'if-match': `"${rev}"` })).status, 412, 'stale If-Match');
  t.equal((await call('DELETE', `/api/v1/presentation-networks/${id}`, undefined, { 'if-match': `"${rev}"` })).status, 412);

  const bad: [string, string, string, unknown, number, string][] = [
    ['no name', 'POST', '/api/v1/presentation-networks', {}, 400, 'validation_failed'],
    ['empty name', 'POST', '/api/v1/presentation-networks', { name: '  ' }, 400, 'validation_failed'],
    ['unknown screen', 'POST', '/api/v1/presentation-networks', { name: 'X', screenIds: [ID] }, 400, 'validation_failed'],
    ['not a uuid', 'PUT', `/api/v1/presentation-networks/${id}/screens`, { screenIds: ['nope'] }, 400, 'validation_failed'],
    ['twice', 'PUT', `/api/v1/presentation-networks/${id}/screens`, { screenIds: [a, a] }, 400, 'validation_failed'],
    ['leader outside', 'PUT', `/api/v1/presentation-networks/${id}/screens`, { screenIds: [a], leaderScreenId: b }, 400, 'validation_failed'],
    ['unknown network', 'GET', `/api/v1/presentation-networks/${ID}`, undefined, 404, 'not_found'],
    ['bad id', 'GET', '/api/v1/presentation-networks/abc', undefined, 404, 'not_found'],
    ['test: seconds 0', 'POST', `/api/v1/presentation-networks/${id}/test`, { seconds: 0 }, 400, 'validation_failed'],
    ['unknown screen membership', 'GET', `/api/v1/screens/${ID}/presentation-network`, undefined, 404, 'not_found'],
    ['join unknown network', 'PUT', `/api/v1/screens/${a}/presentation-network`, { networkId: ID }, 400, 'validation_failed'],
    ['join: negative position', 'PUT', `/api/v1/screens/${a}/presentation-network`, { networkId: id, position: -1 }, 400, 'validation_failed'],
  ];
  for (const [what, method, path, body, status, code] of bad) {
    const res = await call(method, path, body);
    t.equal(res.status, status, what);
    t.equal(res.body.error?.code, code, what);
  }
  // The failed create left nothing behind.
  t.equal((await call('GET', '/api/v1/presentation-networks')).body.data.items.length, 1);

  t.equal((await call('DELETE', `/api/v1/presentation-networks/${id}`)).status, 204);
  t.equal((await call('GET', `/api/v1/presentation-networks/${id}`)).status, 404);
  t.equal((await call('GET', `/api/v1/screens/${a}/presentation-network`)).body.data, null, 'the members are out');
});

t.test('membership: one network per screen (409 naming it), per-screen join/move/leave, leader hand-over, screen delete', async (t) => {
  const { call, screens } = await setup(t, 3);
  const [a, b, c] = screens.map((s) => s.screenId) as [string, string, string];
  const n1 = (await call('POST', '/api/v1/presentation-networks', { name: 'Wall', screenIds: [a, b], leaderScreenId: b })).body.data;
  t.equal(n1.leaderScreenId, b);
  const n2 = (await call('POST', '/api/v1/presentation-networks', { name: 'Other' })).body.data;
  const taken = await call('PUT', `/api/v1/presentation-networks/${n2.id}/screens`, { screenIds: [c, a] });
  t.equal(taken.status, 409);
  t.match(taken.body.error.message, /"Wall"/);
  t.match(taken.body.error.details.screens, [{ screenId: a, networkId: n1.id, networkName: 'Wall' }]);
  t.equal((await call('PUT', `/api/v1/screens/${a}/presentation-network`, { networkId: n2.id })).status, 409);

  // Per screen: c joins at position 0 as leader.
  const joined = await call('PUT', `/api/v1/screens/${c}/presentation-network`, { networkId: n1.id, position: 0, leader: true });
  t.equal(joined.status, 200);
  t.same(joined.body.data, { networkId: n1.id, networkName: 'Wall', position: 0, leader: true, memberCount: 3 });
  let net = (await call('GET', `/api/v1/presentation-networks/${n1.id}`)).body.data;
  t.same(
    net.screens.map((s: any) => [s.screenId, s.position, s.leader]),
    [
      [c, 0, true],
      [a, 1, false],
      [b, 2, false],
    ],
  );
  // Move a to the end.
  t.equal((await call('PUT', `/api/v1/screens/${a}/presentation-network`, { networkId: n1.id, position: 9 })).body.data.position, 2);
  // The leader leaves: the first left leads.
  t.equal((await call('DELETE', `/api/v1/screens/${c}/presentation-network`)).status, 204);
  t.equal((await call('DELETE', `/api/v1/screens/${c}/presentation-network`)).status, 204, 'again: nothing to do');
  net = (await call('GET', `/api/v1/presentation-networks/${n1.id}`)).body.data;
  t.same(
    net.screens.map((s: any) => [s.screenId, s.position, s.leader]),
    [
      [b, 0, true],
      [a, 1, false],
    ],
  );
  // Deleting a screen takes it out.
  t.equal((await call('DELETE', `/api/v1/screens/${b}`)).status, 204);
  net = (await call('GET', `/api/v1/presentation-networks/${n1.id}`)).body.data;
  t.same(
    net.screens.map((s: any) => s.screenId),
    [a],
  );
});

t.test('roles: viewers read, editors test, admins change', async (t) => {
  const { app, call, screens } = await setup(t, 1);
  const id = (await call('POST', '/api/v1/presentation-networks', { name: 'Row', screenIds: [screens[0]!.screenId] })).body.data.id;
  for (const role of ['viewer', 'editor'] as const) {
    const who = await signIn(app, { role });
    const as = (method: string, path: string, json?: unknown) => app.json(path, { method, headers: who.headers, ...(json !== undefined ? { json } : {}) });
    t.equal((await as('GET', `/api/v1/presentation-networks/${id}`)).status, 200, role);
    t.equal((await as('POST', '/api/v1/presentation-networks', { name: 'X' })).status, 403, role);
    t.equal((await as('PUT', `/api/v1/presentation-networks/${id}/screens`, { screenIds: [] })).status, 403, role);
    t.equal((await as('DELETE', `/api/v1/screens/${screens[0]!.screenId}/presentation-network`)).status, 403, role);
    t.equal((await as('POST', `/api/v1/presentation-networks/${id}/test`, { seconds: 5 })).status, role === 'editor' ? 200 : 403, role);
  }
  t.equal((await app.json('/api/v1/presentation-networks')).status, 401, 'no session');
});

t.test('player route, manifest (the leader’s timeline), manifest.changed and network.test on the sockets', async (t) => {
  const { app, call, screens, manifest } = await setup(t, 2);
  const [lead, member] = screens as [(typeof screens)[0], (typeof screens)[0]];
  t.equal((await app.json('/api/v1/player/presentation-network', { headers: member.headers })).body.data, null, 'in none');
  t.equal((await app.json('/api/v1/player/presentation-network')).status, 401, 'no credential');

  const site = (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id;
  const p = (await call('POST', '/api/v1/playlists', { name: 'Lead loop', items: [{ assetId: site }] })).body.data.id;
  t.equal((await call('PUT', `/api/v1/screens/${lead.screenId}/playlist-assignment`, { playlistId: p })).status, 200);
  const before = await manifest(member.headers);
  t.equal(before.presentationNetwork, null);
  t.notOk(
    before.timeline.some((s: any) => s.playlist?.id === p),
    'the member plays its own content first',
  );

  const socket = await openSocket(t, app, member.credential);
  let since = Date.now();
  const id = (await call('POST', '/api/v1/presentation-networks', { name: 'Pair', screenIds: [lead.screenId, member.screenId] })).body.data.id;
  await socket.next((m) => m.type === 'manifest.changed', since);

  const clientTime = Date.now();
  const got = await app.json(`/api/v1/player/presentation-network?clientTime=${clientTime}`, { headers: member.headers });
  const after = Date.now();
  t.equal(got.status, 200);
  t.match(got.body.data, {
    id,
    name: 'Pair',
    screenId: member.screenId,
    position: 1,
    leader: false,
    leaderScreenId: lead.screenId,
    peers: [
      { screenId: lead.screenId, position: 0, leader: true },
      { screenId: member.screenId, position: 1, leader: false },
    ],
  });
  const server = Date.parse(got.body.data.serverTime);
  t.ok(server >= clientTime && server <= after, 'serverTime within the request');
  t.equal(got.body.data.clockOffsetMs, server - clientTime);
  t.equal((await app.json('/api/v1/player/presentation-network?clientTime=x', { headers: member.headers })).status, 400);

  const m = await manifest(member.headers);
  t.match(m.presentationNetwork, { id, name: 'Pair', leaderScreenId: lead.screenId, position: 1, memberCount: 2 });
  t.ok(
    m.timeline.some((s: any) => s.playlist?.id === p),
    'the member plays the leader’s playlist',
  );
  t.equal((await manifest(lead.headers)).presentationNetwork.position, 0);

  since = Date.now();
  const tested = await call('POST', `/api/v1/presentation-networks/${id}/test`, { seconds: 20 });
  t.equal(tested.status, 200);
  t.equal(tested.body.data.socketsReached, 1);
  const msg = await socket.next((x) => x.type === 'network.test', since);
  t.match(msg, {
    networkId: id,
    networkName: 'Pair',
    screenId: member.screenId,
    screenName: 'Board 2',
    position: 1,
    leader: false,
    until: tested.body.data.until,
  });

  // Leaving pushes again and the manifest drops the network.
  since = Date.now();
  t.equal((await call('DELETE', `/api/v1/screens/${member.screenId}/presentation-network`)).status, 204);
  await socket.next((x) => x.type === 'manifest.changed' && socket.messages.indexOf(x) > socket.messages.indexOf(msg), since);
  t.equal((await manifest(member.headers)).presentationNetwork, null);
});
