import t, { type Test } from 'tap';
import { ManifestDto } from '../server/src/modules/content/manifest.routes.js';
import { signedInApp, signIn } from './helpers/auth.js';
import { openSocket, pairScreen } from './helpers/screens.js';

/** The segment playing now (the manifest starts at the top of the hour, before the takeover began). */
const current = (m: any) => {
  const now = Date.now();
  return m.timeline.find((s: any) => Date.parse(s.startsAt) <= now && Date.parse(s.endsAt) > now);
};

async function setup(t: Test) {
  const { app, owner, call } = await signedInApp(t);
  const group = (await call('POST', '/api/v1/screen-groups', { name: 'Front' })).body.data.id as string;
  const lobby = await pairScreen(app, owner, { name: 'Lobby', groupIds: [group] });
  const hall = await pairScreen(app, owner, { name: 'Hall' });
  const manifest = (s = lobby) => app.json('/api/v1/player/manifest', { headers: s.headers });
  let site: string | undefined;
  const playable = async (name: string) => {
    site ??= (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id as string;
    const res = await call('POST', '/api/v1/playlists', { name, items: [{ assetId: site }] });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body.data as { id: string };
  };
  const preview = async (screenId: string) => {
    const from = Date.now();
    const res = await call('POST', '/api/v1/schedules/preview', {
      screenId,
      from: new Date(from).toISOString(),
      to: new Date(from + 3 * 3600_000).toISOString(),
    });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body.data;
  };
  return { app, owner, call, group, lobby, hall, manifest, playable, preview, site: () => site! };
}

t.test('precedence: takeover > override > schedule > assignment; severity then newest; cancel uncovers the next', async (t) => {
  const { call, group, lobby, manifest, playable, preview } = await setup(t);
  const own = await playable('Own');
  const sched = await playable('Scheduled');
  const over = await playable('Override');
  t.equal((await call('PUT', `/api/v1/screens/${lobby.screenId}/playlist-assignment`, { playlistId: own.id })).status, 200);
  const now = Date.now();
  const s = await call('POST', '/api/v1/schedules', {
    name: 'All day',
    content: { playlistId: sched.id },
    targets: { screenIds: [lobby.screenId] },
    startsAt: new Date(now - 3600_000).toISOString(),
    endsAt: new Date(now + 10 * 3600_000).toISOString(),
    priority: 1,
  });
  t.equal(s.status, 201, JSON.stringify(s.body));
  let m = (await manifest()).body.data;
  t.equal(current(m).source.type, 'schedule', 'the schedule beats the assignment');

  const o = await call('POST', '/api/v1/presentation-overrides', {
    content: { type: 'playlist', id: over.id },
    targets: { groupIds: [group] },
    endsAt: new Date(now + 2 * 3600_000).toISOString(),
    reason: 'Open day',
  });
  t.equal(o.status, 201, JSON.stringify(o.body));
  t.match(o.body.data, { state: 'active', content: { type: 'playlist', id: over.id } });
  m = (await manifest()).body.data;
  t.ok(ManifestDto.safeParse(m).success, 'the manifest matches its schema');
  t.match(current(m), { source: { type: 'override', id: o.body.data.id }, content: { type: 'playlist', id: over.id }, playlist: { id: over.id } });
  t.equal(m.timeline[m.timeline.indexOf(current(m)) + 1].source.type, 'schedule', 'the schedule plays again after the override');

  const info = await call('POST', '/api/v1/takeovers', {
    message: { text: 'Fire drill at noon', severity: 'info' },
    targets: { screenIds: [lobby.screenId] },
    reason: 'drill',
  });
  t.equal(info.status, 201, JSON.stringify(info.body));
  t.match(info.body.data, { state: 'active', endsAt: null, severity: 'info' });
  const asset = await call('POST', '/api/v1/takeovers', {
    content: { type: 'playlist', id: own.id },
    targets: { all: true },
    reason: 'news',
  });
  t.equal(asset.status, 201);
  t.equal(asset.body.data.severity, 'warning', 'content counts as warning');
  const emergency = await call('POST', '/api/v1/takeovers', {
    message: { text: 'Evacuate now', severity: 'emergency' },
    targets: { groupIds: [group] },
    reason: 'fire',
  });
  const newerInfo = await call('POST', '/api/v1/takeovers', {
    message: { text: 'Newer info', severity: 'info' },
    targets: { all: true },
    reason: 'info 2',
  });
  t.equal(newerInfo.status, 201);
  m = (await manifest()).body.data;
  t.match(current(m), {
    source: { type: 'takeover', id: emergency.body.data.id },
    content: { type: 'message' },
    message: { text: 'Evacuate now', severity: 'emergency' },
  });
  t.equal(current(m).endsAt, m.validUntil, 'a takeover with no end lasts to the horizon end');
  let p = await preview(lobby.screenId);
  t.match(p.timeline[0], { source: { type: 'takeover', id: emergency.body.data.id } });

  t.equal((await call('POST', `/api/v1/takeovers/${emergency.body.data.id}/cancel`, { reason: 'all clear' })).body.data.state, 'cancelled');
  m = (await manifest()).body.data;
  t.match(current(m), { source: { type: 'takeover', id: asset.body.data.id }, playlist: { id: own.id } }, 'warning (content) beats info');
  await call('POST', `/api/v1/takeovers/${asset.body.data.id}/cancel`, { reason: 'done' });
  m = (await manifest()).body.data;
  t.match(current(m), { source: { type: 'takeover', id: newerInfo.body.data.id }, message: { text: 'Newer info' } }, 'same severity: newest');
  await call('POST', `/api/v1/takeovers/${newerInfo.body.data.id}/cancel`, { reason: 'done' });
  m = (await manifest()).body.data;
  t.match(current(m), { source: { type: 'takeover', id: info.body.data.id } });
  await call('POST', `/api/v1/takeovers/${info.body.data.id}/cancel`, { reason: 'done' });
  m = (await manifest()).body.data;
  t.match(current(m), { source: { type: 'override', id: o.body.data.id } }, 'the override shows again');
  p = await preview(lobby.screenId);
  t.match(p.timeline[0], { source: { type: 'override', id: o.body.data.id, name: 'Open day' } });

  const stop = await call('POST', `/api/v1/presentation-overrides/${o.body.data.id}/stop`, { reason: 'closed early' });
  t.equal(stop.status, 200);
  t.equal(stop.body.data.state, 'stopped');
  m = (await manifest()).body.data;
  t.equal(current(m).source.type, 'schedule', 'stopping the override uncovers the schedule');

  const list = await call('GET', '/api/v1/takeovers');
  t.equal(list.body.data.items.length, 4);
  t.ok(list.body.data.items.every((i: any) => i.state === 'cancelled'));
  const one = await call('GET', `/api/v1/takeovers/${emergency.body.data.id}`);
  t.match(one.body.data.events, [
    { action: 'started', reason: 'fire', by: { label: 'Test owner' } },
    { action: 'cancelled', reason: 'all clear', by: { label: 'Test owner' } },
  ]);
});

t.test('delivery: takeover.started then manifest on two sockets; takeover.ended on cancel; offline screen gets it on reconnect', async (t) => {
  const { app, call, lobby, hall, manifest, preview } = await setup(t);
  const a = await openSocket(t, app, lobby.credential);
  const b = await openSocket(t, app, hall.credential);
  const revisionBefore = (await manifest(hall)).body.data.revision;
  const since = Date.now();
  const res = await call('POST', '/api/v1/takeovers', {
    message: { text: 'Evacuate', severity: 'emergency' },
    targets: { screenIds: [lobby.screenId, hall.screenId] },
    reason: 'fire',
    audio: 'force-on',
  });
  t.equal(res.status, 201);
  const id = res.body.data.id;
  for (const s of [a, b]) {
    const started = await s.next((m) => m.type === 'takeover.started', since, 5000);
    t.same(started, { type: 'takeover.started', takeoverId: id });
    await s.next((m) => m.type === 'manifest.changed', since, 5000);
    const iStart = s.messages.findIndex((m) => m.type === 'takeover.started');
    const iManifest = s.messages.findIndex((m) => m.type === 'manifest.changed');
    t.ok(iStart < iManifest, 'takeover.started comes before manifest.changed');
  }
  const m = (await manifest(hall)).body.data;
  t.ok(m.revision > revisionBefore, 'the manifest revision changed');
  t.match(current(m), { source: { type: 'takeover', id }, message: { severity: 'emergency' }, audio: 'force-on' });

  const since2 = Date.now();
  t.equal((await call('POST', `/api/v1/takeovers/${id}/cancel`, { reason: 'clear' })).status, 200);
  for (const s of [a, b]) t.same(await s.next((msg) => msg.type === 'takeover.ended', since2, 5000), { type: 'takeover.ended', takeoverId: id });
  t.equal(current((await manifest(hall)).body.data).source.type, 'idle');

  // An offline screen (no socket) finds the active takeover in its manifest when it comes back.
  const later = await call('POST', '/api/v1/takeovers', {
    content: { type: 'asset', id: (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/a', name: 'A' })).body.data.id },
    targets: { all: true },
    reason: 'news',
  });
  t.equal(later.status, 201, JSON.stringify(later.body));
  const back = (await manifest(hall)).body.data;
  t.match(current(back), {
    source: { type: 'takeover', id: later.body.data.id },
    content: { type: 'asset' },
    playlist: { items: [{ kind: 'website', url: 'https://example.org/a' }] },
  });
  const p = await preview(hall.screenId);
  t.match(p.timeline[0], { source: { type: 'takeover', id: later.body.data.id, name: 'news' }, content: { type: 'asset', name: 'A' } });
  t.match(p.timeline[0].reason, /takeover "news" is active .*asset "A" plays/);
});

t.test('an endsAt end happens on its own: takeover.ended, audited by the system', async (t) => {
  const { app, call, lobby, manifest } = await setup(t);
  const s = await openSocket(t, app, lobby.credential);
  app.deps.periodic.start(); // the server's ticks, as main.ts starts them
  const since = Date.now();
  const res = await call('POST', '/api/v1/takeovers', {
    message: { text: 'Short', severity: 'warning' },
    targets: { screenIds: [lobby.screenId] },
    endsAt: new Date(since + 1500).toISOString(),
    reason: 'brief',
  });
  t.equal(res.status, 201);
  t.same(await s.next((m) => m.type === 'takeover.ended', since, 15_000), { type: 'takeover.ended', takeoverId: res.body.data.id });
  const one = (await call('GET', `/api/v1/takeovers/${res.body.data.id}`)).body.data;
  t.equal(one.state, 'ended');
  t.match(one.events, [{ action: 'started' }, { action: 'ended', by: { userId: null, label: 'system' } }]);
  t.equal(current((await manifest()).body.data).source.type, 'idle');
});

t.test('bad input answers the envelope; publisher role required', async (t) => {
  const { app, call, lobby, playable } = await setup(t);
  const pl = await playable('P');
  const base = { targets: { screenIds: [lobby.screenId] }, reason: 'x' };
  const bad = [
    { ...base },
    { ...base, content: { type: 'playlist', id: pl.id }, message: { text: 'both', severity: 'info' } },
    { ...base, message: { text: 'x', severity: 'loud' } },
    { ...base, message: { text: 'x', severity: 'info' }, endsAt: new Date(Date.now() - 60_000).toISOString() },
    { ...base, message: { text: 'x', severity: 'info' }, endsAt: 'tomorrow' },
    { ...base, message: { text: 'x', severity: 'info' }, targets: {} },
    { ...base, content: { type: 'campaign', id: pl.id } },
    { targets: base.targets, message: { text: 'x', severity: 'info' } },
  ];
  for (const body of bad) {
    const res = await call('POST', '/api/v1/takeovers', body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.equal(res.body.error.code, 'validation_failed');
  }
  const unknown = await call('POST', '/api/v1/takeovers', { ...base, content: { type: 'asset', id: pl.id } });
  t.equal(unknown.status, 400);
  t.match(unknown.body.error.details.issues, [{ path: ['content', 'id'], code: 'invalid_reference' }]);
  const noScreen = await call('POST', '/api/v1/takeovers', { ...base, message: { text: 'x', severity: 'info' }, targets: { screenIds: [pl.id] } });
  t.match(noScreen.body.error.details.issues, [{ path: ['targets', 'screenIds', 0] }]);
  t.equal((await call('POST', `/api/v1/takeovers/${pl.id}/cancel`, { reason: 'x' })).status, 404);
  t.equal((await call('GET', `/api/v1/takeovers/${pl.id}`)).status, 404);

  const editor = await signIn(app, { role: 'editor' });
  const asEditor = await app.json('/api/v1/takeovers', {
    method: 'POST',
    headers: editor.headers,
    json: { ...base, message: { text: 'x', severity: 'info' } },
  });
  t.equal(asEditor.status, 403);
  const publisher = await signIn(app, { role: 'publisher' });
  const asPublisher = await app.json('/api/v1/takeovers', {
    method: 'POST',
    headers: publisher.headers,
    json: { ...base, message: { text: 'x', severity: 'info' } },
  });
  t.equal(asPublisher.status, 201);
  const cancelAsEditor = await app.json(`/api/v1/takeovers/${asPublisher.body.data.id}/cancel`, {
    method: 'POST',
    headers: editor.headers,
    json: { reason: 'x' },
  });
  t.equal(cancelAsEditor.status, 403);
});

t.test('content a takeover shows is deleted: the manifest still answers (the entry plays nothing)', async (t) => {
  const { call, lobby, manifest, playable } = await setup(t);
  const pl = await playable('Gone soon');
  const layout = (await call('POST', '/api/v1/layouts', { name: 'Never published', zones: [] })).body.data;
  const a = await call('POST', '/api/v1/takeovers', { content: { type: 'playlist', id: pl.id }, targets: { screenIds: [lobby.screenId] }, reason: 'a' });
  t.equal(a.status, 201);
  t.equal((await call('DELETE', `/api/v1/playlists/${pl.id}`)).status, 204, 'a takeover does not hold its content');
  let res = await manifest();
  t.equal(res.status, 200);
  t.match(current(res.body.data), { source: { type: 'takeover', id: a.body.data.id } });
  const b = await call('POST', '/api/v1/takeovers', { content: { type: 'layout', id: layout.id }, targets: { screenIds: [lobby.screenId] }, reason: 'b' });
  t.equal(b.status, 201);
  res = await manifest();
  t.equal(res.status, 200);
  t.match(current(res.body.data), { source: { type: 'takeover', id: b.body.data.id }, content: null });
});

t.test('presentation networks: members play the leader’s timeline, but a takeover reaches exactly the screens it targets', async (t) => {
  const { call, lobby, hall, manifest, playable } = await setup(t);
  const menu = await playable('Menu');
  t.equal((await call('PUT', `/api/v1/screens/${lobby.screenId}/playlist-assignment`, { playlistId: menu.id })).status, 200);
  // Lobby leads, Hall follows: Hall plays the leader's playlist.
  const net = await call('POST', '/api/v1/presentation-networks', { name: 'Row', screenIds: [lobby.screenId, hall.screenId] });
  t.equal(net.status, 201);
  t.match(current((await manifest(hall)).body.data), { content: { type: 'playlist', id: menu.id } }, 'the member plays the leader’s content');

  // A takeover of the member alone: the member shows it, the leader does not.
  const onHall = await call('POST', '/api/v1/takeovers', {
    message: { text: 'Hall closed', severity: 'info' },
    targets: { screenIds: [hall.screenId] },
    reason: 'cleaning',
  });
  t.equal(onHall.status, 201);
  t.match(current((await manifest(hall)).body.data), { source: { type: 'takeover', id: onHall.body.data.id } }, 'the member shows its own takeover');
  t.match(current((await manifest(lobby)).body.data), { source: { type: 'assignment' } }, 'the leader is untouched');
  t.equal((await call('POST', `/api/v1/takeovers/${onHall.body.data.id}/cancel`, { reason: 'done' })).status, 200);

  // A takeover of the leader alone does not spread to the member.
  const onLobby = await call('POST', '/api/v1/takeovers', {
    message: { text: 'Lobby only', severity: 'warning' },
    targets: { screenIds: [lobby.screenId] },
    reason: 'test',
  });
  t.equal(onLobby.status, 201);
  t.match(current((await manifest(lobby)).body.data), { source: { type: 'takeover', id: onLobby.body.data.id } });
  t.match(current((await manifest(hall)).body.data), { content: { type: 'playlist', id: menu.id } }, 'the member keeps the leader’s playlist');
});
