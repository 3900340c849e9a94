import t, { type Test } from 'tap';
import { ManifestDto } from '../server/src/modules/content/manifest.routes.js';
import { signedInApp, signIn } from './helpers/auth.js';
import { fakeFeed } from './helpers/data-sources.js';
import { openSocket, pairScreen } from './helpers/screens.js';
import { type NwsAlert, nwsGeoJson, served } from './helpers/weather-feeds.js';

/**
 * Weather alerts end to end on the real takeovers module (issue 21): a local fake feed, the
 * rule, the takeover, a paired screen's socket and manifest, the schedule preview.
 */

const GEOJSON = 'application/geo+json';
/** Socket messages are awaited, not timed: a generous bound only keeps a broken run from hanging. */
const PATIENCE = 30_000;

/** The segment playing now. */
const current = (m: any) => {
  const now = Date.now();
  return m.timeline.find((s: any) => Date.parse(s.startsAt) <= now && Date.parse(s.endsAt) > now);
};

async function setup(t: Test) {
  const { app, owner, call } = await signedInApp(t, { config: { fetchAllowLoopback: true } });
  const lobby = await pairScreen(app, owner, { name: 'Lobby' });
  const manifest = async () => {
    const res = await app.json('/api/v1/player/manifest', { headers: lobby.headers });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    t.ok(ManifestDto.safeParse(res.body.data).success, 'the manifest matches its schema');
    return res.body.data;
  };
  const preview = async () => {
    const from = Date.now();
    const res = await call('POST', '/api/v1/schedules/preview', {
      screenId: lobby.screenId,
      from: new Date(from).toISOString(),
      to: new Date(from + 3 * 3600_000).toISOString(),
    });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body.data;
  };
  let site: string | undefined;
  const playlist = async (name: string) => {
    site ??= (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id as string;
    const res = await call('POST', '/api/v1/playlists', { name, items: [{ assetId: site }] });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body.data.id as string;
  };
  const now = Date.now();
  const iso = (min: number) => new Date(now + min * 60_000).toISOString();
  let alerts: NwsAlert[] = [];
  const feed = await fakeFeed(t, { '/alerts/active': served(GEOJSON, () => nwsGeoJson(alerts)) });
  const put = await call('PUT', '/api/v1/alerts/weather/monitor', {
    enabled: true,
    feedUrl: `${feed.url}/alerts/active`,
    format: 'nws-geojson',
    zones: [],
    pollIntervalSec: 60,
  });
  if (put.status !== 200) throw new Error(JSON.stringify(put.body));
  const setAlerts = (next: NwsAlert[]) => {
    alerts = next;
  };
  const poll = async () => {
    const res = await call('POST', '/api/v1/alerts/weather/poll', {});
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body.data;
  };
  const weather = async () => (await call('GET', '/api/v1/alerts/weather')).body.data;
  return { app, owner, call, lobby, manifest, preview, playlist, iso, setAlerts, poll, weather };
}

t.test('end to end: the feed issues an alert, the screen gets the takeover; the feed cancels it, the schedule plays again', async (t) => {
  const { app, call, lobby, manifest, playlist, iso, setAlerts, poll, weather } = await setup(t);
  const sched = await playlist('Scheduled');
  const s = await call('POST', '/api/v1/schedules', {
    name: 'All day',
    content: { playlistId: sched },
    targets: { screenIds: [lobby.screenId] },
    startsAt: iso(-60),
    endsAt: iso(600),
    priority: 1,
  });
  t.equal(s.status, 201, JSON.stringify(s.body));
  const rule = await call('POST', '/api/v1/alerts/weather/rules', {
    name: 'Tornadoes here',
    match: { events: ['Tornado Warning'], zones: ['OKC109'] },
    targets: { screenIds: [lobby.screenId] },
  });
  t.equal(rule.status, 201);
  t.equal(current(await manifest()).source.type, 'schedule');
  const socket = await openSocket(t, app, lobby.credential);

  // The feed issues a tornado warning.
  setAlerts([{ id: 'urn:e2e.1', event: 'Tornado Warning', sent: iso(-2), expires: iso(45) }]);
  let since = Date.now();
  let polled = await poll();
  t.equal(polled.changes.started.length, 1);
  const takeoverId = polled.changes.started[0].takeoverId as string;
  t.same(await socket.next((m) => m.type === 'takeover.started', since, PATIENCE), { type: 'takeover.started', takeoverId });
  await socket.next((m) => m.type === 'manifest.changed', since, PATIENCE);
  t.ok(
    socket.messages.findIndex((m) => m.type === 'takeover.started') < socket.messages.findIndex((m) => m.type === 'manifest.changed'),
    'takeover.started comes before manifest.changed',
  );
  let m = await manifest();
  t.match(current(m), {
    source: { type: 'alert', id: takeoverId },
    content: { type: 'message' },
    message: { severity: 'emergency', text: /Tornado Warning issued by NWS Norman OK[\s\S]*TAKE COVER NOW!/ },
  });
  t.equal(Date.parse(current(m).endsAt), Date.parse(iso(45)), 'the alert plays until the alert expires');
  t.equal(m.timeline[m.timeline.indexOf(current(m)) + 1].source.type, 'schedule', 'then the schedule again');
  const alertId = (await weather()).alerts[0].id;
  let one = (await call('GET', `/api/v1/takeovers/${takeoverId}`)).body.data;
  t.match(one, { state: 'active', origin: { kind: 'weather-alert', id: alertId, ruleId: rule.body.data.id }, endsAt: new Date(iso(45)).toISOString() });

  // The feed cancels it.
  setAlerts([
    { id: 'urn:e2e.1', event: 'Tornado Warning', sent: iso(-2), expires: iso(45) },
    { id: 'urn:e2e.2', event: 'Tornado Warning', messageType: 'Cancel', references: ['urn:e2e.1'], sent: iso(0), expires: iso(45) },
  ]);
  since = Date.now();
  polled = await poll();
  t.match(polled.changes.ended, [{ takeoverId, reason: 'The weather alert was cancelled' }]);
  t.same(await socket.next((msg) => msg.type === 'takeover.ended', since, PATIENCE), { type: 'takeover.ended', takeoverId });
  m = await manifest();
  t.match(current(m), { source: { type: 'schedule', id: s.body.data.id } }, 'back to the screen’s schedule');
  t.notOk(
    m.timeline.some((x: any) => x.source.type === 'alert'),
    'no alert left in the timeline',
  );
  one = (await call('GET', `/api/v1/takeovers/${takeoverId}`)).body.data;
  t.match(one, {
    state: 'ended',
    endReason: 'The weather alert was cancelled',
    events: [
      { action: 'started', by: { userId: null, label: 'Weather alerts' } },
      { action: 'ended', by: { userId: null, label: 'Weather alerts' }, reason: 'The weather alert was cancelled' },
    ],
  });

  // A second alert that expires ends by itself (the tick, no poll needed).
  setAlerts([{ id: 'urn:e2e.3', event: 'Tornado Warning', sent: iso(1), expires: iso(20) }]);
  polled = await poll();
  const second = polled.changes.started[0].takeoverId as string;
  t.match(current(await manifest()), { source: { type: 'alert', id: second } });
  await app.deps.db
    .updateTable('weather_alerts')
    .set({ expires: iso(-1) })
    .where('identifier', '=', 'urn:e2e.3')
    .execute();
  since = Date.now();
  await app.deps.periodic.runNow('weather-alerts.tick');
  t.same(await socket.next((msg) => msg.type === 'takeover.ended' && msg.takeoverId === second, since, PATIENCE), {
    type: 'takeover.ended',
    takeoverId: second,
  });
  t.match(current(await manifest()), { source: { type: 'schedule' } });
  t.match((await call('GET', `/api/v1/takeovers/${second}`)).body.data, { state: 'ended', endReason: 'The weather alert expired' });
  const listed = await weather();
  t.match(
    listed.alerts.find((a: any) => a.identifier === 'urn:e2e.3'),
    { state: 'expired', actions: [{ state: 'ended', takeoverId: second, endReason: 'The weather alert expired' }] },
  );
});

t.test('precedence across every source: takeover > override > weather alert > schedule > assignment > idle', async (t) => {
  const { call, lobby, manifest, preview, playlist, iso, setAlerts, poll } = await setup(t);
  const own = await playlist('Own');
  const sched = await playlist('Scheduled');
  const over = await playlist('Override');
  t.equal((await call('PUT', `/api/v1/screens/${lobby.screenId}/playlist-assignment`, { playlistId: own })).status, 200);
  const s = await call('POST', '/api/v1/schedules', {
    name: 'All day',
    content: { playlistId: sched },
    targets: { screenIds: [lobby.screenId] },
    startsAt: iso(-60),
    endsAt: iso(600),
    priority: 1,
  });
  t.equal(s.status, 201);
  const o = await call('POST', '/api/v1/presentation-overrides', {
    content: { type: 'playlist', id: over },
    targets: { screenIds: [lobby.screenId] },
    endsAt: iso(120),
    reason: 'Open day',
  });
  t.equal(o.status, 201, JSON.stringify(o.body));
  await call('POST', '/api/v1/alerts/weather/rules', { name: 'All', match: {}, targets: { all: true } });
  // The alert comes with the severest message there is; it still ranks below the override.
  setAlerts([{ id: 'urn:p.1', event: 'Tornado Warning', severity: 'Extreme', sent: iso(-2), expires: iso(90) }]);
  const alertTakeover = (await poll()).changes.started[0].takeoverId as string;
  const person = await call('POST', '/api/v1/takeovers', {
    message: { text: 'Fire drill', severity: 'info' },
    targets: { screenIds: [lobby.screenId] },
    reason: 'drill',
  });
  t.equal(person.status, 201);

  const expectNow = async (type: string, id: string | null, name: string) => {
    const m = await manifest();
    t.match(current(m).source, id ? { type, id } : { type }, `manifest: ${name}`);
    const p = await preview();
    t.match(p.timeline[0].source, id ? { type, id } : { type }, `preview: ${name}`);
  };
  await expectNow('takeover', person.body.data.id, 'a person’s takeover (even info) beats everything');
  t.equal((await call('POST', `/api/v1/takeovers/${person.body.data.id}/cancel`, { reason: 'done' })).status, 200);
  await expectNow('override', o.body.data.id, 'the override beats the weather alert');
  t.equal((await call('POST', `/api/v1/presentation-overrides/${o.body.data.id}/stop`, { reason: 'closed' })).status, 200);
  await expectNow('alert', alertTakeover, 'the weather alert beats the schedule');
  const p = await preview();
  t.match(p.timeline[0], { source: { type: 'alert', id: alertTakeover } });
  setAlerts([
    { id: 'urn:p.1', event: 'Tornado Warning', severity: 'Extreme', sent: iso(-2), expires: iso(90) },
    { id: 'urn:p.2', event: 'Tornado Warning', messageType: 'Cancel', references: ['urn:p.1'], sent: iso(0), expires: iso(90) },
  ]);
  t.match((await poll()).changes.ended, [{ takeoverId: alertTakeover }]);
  await expectNow('schedule', s.body.data.id, 'the schedule beats the assignment');
  t.equal((await call('DELETE', `/api/v1/schedules/${s.body.data.id}`)).status, 204);
  await expectNow('assignment', null, 'the assignment');
  t.equal((await call('DELETE', `/api/v1/screens/${lobby.screenId}/playlist-assignment`)).status, 204);
  await expectNow('idle', null, 'nothing left: idle');
});

t.test('a person cancels the alert’s takeover: not restarted by later polls; an update waits for a person; all attributed', async (t) => {
  const { app, call, lobby, manifest, iso, setAlerts, poll, weather } = await setup(t);
  const rule = (await call('POST', '/api/v1/alerts/weather/rules', { name: 'Storms', match: {}, targets: { screenIds: [lobby.screenId] } })).body.data;
  setAlerts([{ id: 'urn:c.1', event: 'Severe Thunderstorm Warning', severity: 'Severe', sent: iso(-2), expires: iso(60) }]);
  const first = (await poll()).changes.started[0].takeoverId as string;
  t.match(current(await manifest()), { source: { type: 'alert', id: first } });

  const publisher = await signIn(app, { role: 'publisher' });
  const cancel = await app.json(`/api/v1/takeovers/${first}/cancel`, { method: 'POST', headers: publisher.headers, json: { reason: 'not for this building' } });
  t.equal(cancel.status, 200);
  t.equal(cancel.body.data.state, 'cancelled');
  t.notOk(
    (await manifest()).timeline.some((x: any) => x.source.type === 'alert'),
    'off the air',
  );

  // The same alert on the next polls (the document changes, so it is read again) and ticks: nothing restarts.
  setAlerts([
    { id: 'urn:c.1', event: 'Severe Thunderstorm Warning', severity: 'Severe', sent: iso(-2), expires: iso(60) },
    { id: 'urn:other', event: 'Frost Advisory', severity: 'Minor', sent: iso(-2), expires: iso(60), ugc: ['TXC001'] },
  ]);
  let polled = await poll();
  t.equal(polled.outcome, 'data');
  t.equal(polled.changes.started.length, 1, 'only the other alert starts');
  const other = polled.changes.started[0].takeoverId as string;
  await poll();
  await app.deps.periodic.runNow('weather-alerts.tick');
  const list = (await call('GET', '/api/v1/takeovers?limit=100')).body.data.items as any[];
  t.equal(list.filter((x) => x.origin?.id === (list.find((y) => y.id === first)!.origin.id as string)).length, 1, 'one takeover for the cancelled alert');
  t.match(
    list.find((x) => x.id === first),
    {
      state: 'cancelled',
      events: [
        { action: 'started', by: { label: 'Weather alerts' } },
        { action: 'cancelled', by: { userId: publisher.user.id, label: 'Test publisher' }, reason: 'not for this building' },
      ],
    },
  );
  let listed = await weather();
  t.match(
    listed.alerts.find((a: any) => a.identifier === 'urn:c.1'),
    {
      state: 'active',
      actions: [{ ruleId: rule.id, state: 'ended', takeoverId: first, endReason: 'Takeover cancelled by Test publisher: not for this building' }],
    },
  );
  t.match(
    listed.alerts.find((a: any) => a.identifier === 'urn:other'),
    { actions: [{ state: 'active', takeoverId: other }] },
  );

  // An update of the cancelled alert does not go on air by itself: it waits for a person.
  setAlerts([
    { id: 'urn:c.1', event: 'Severe Thunderstorm Warning', severity: 'Severe', sent: iso(-2), expires: iso(60) },
    {
      id: 'urn:c.2',
      event: 'Severe Thunderstorm Warning',
      severity: 'Severe',
      messageType: 'Update',
      references: ['urn:c.1'],
      sent: iso(-1),
      expires: iso(80),
    },
  ]);
  polled = await poll();
  t.same(polled.changes.started, []);
  const update = (await weather()).alerts.find((a: any) => a.identifier === 'urn:c.2');
  t.same(polled.changes.pendingConfirmation, [{ alertId: update.id, ruleId: rule.id }]);
  t.match(update.actions, [{ state: 'pending_confirmation', takeoverId: null }]);
  listed = await weather();
  t.match(
    listed.alerts.find((a: any) => a.identifier === 'urn:c.1'),
    { state: 'superseded', actions: [{ state: 'ended', endReason: /^Takeover cancelled by Test publisher/ }] },
    'the cancel stays attributed after the update',
  );
  // A second update before anyone decides: still waiting.
  setAlerts([
    { id: 'urn:c.3', event: 'Severe Thunderstorm Warning', severity: 'Severe', messageType: 'Update', references: ['urn:c.2'], sent: iso(0), expires: iso(90) },
  ]);
  polled = await poll();
  t.same(polled.changes.started, []);
  const third = (await weather()).alerts.find((a: any) => a.identifier === 'urn:c.3');
  t.match(third.actions, [{ state: 'pending_confirmation' }]);

  // A person confirms it: on air, attributed to them.
  const confirmed = await app.json('/api/v1/alerts/weather/poll', {
    method: 'POST',
    headers: publisher.headers,
    json: { fetch: false, confirm: [{ alertId: third.id, ruleId: rule.id }] },
  });
  t.equal(confirmed.status, 200);
  const again = confirmed.body.data.changes.started[0].takeoverId as string;
  t.match((await call('GET', `/api/v1/takeovers/${again}`)).body.data, {
    state: 'active',
    createdBy: { userId: publisher.user.id, label: 'Test publisher' },
    origin: { kind: 'weather-alert', id: third.id, ruleId: rule.id },
    events: [{ action: 'started', by: { userId: publisher.user.id } }],
  });
  t.match((await weather()).alerts.find((a: any) => a.id === third.id).actions, [{ state: 'active', takeoverId: again, confirmedBy: publisher.user.id }]);
  t.match(current(await manifest()), { source: { type: 'alert', id: again } });
});
