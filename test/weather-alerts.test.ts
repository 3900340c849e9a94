import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { signIn, signedInApp } from './helpers/auth.js';
import { fakeFeed } from './helpers/data-sources.js';
import { pairScreen } from './helpers/screens.js';
import { capAtom, type CapEntry, type NwsAlert, nwsGeoJson, served } from './helpers/weather-feeds.js';

interface Takeover {
  id: string;
  state: 'active' | 'ended' | 'cancelled';
  message: { text: string; severity: string } | null;
  targets: unknown;
  endsAt: string | null;
  endedAt: string | null;
  endReason: string | null;
  createdBy: { userId: string | null; label: string };
  origin: { kind: string; id: string; ruleId: string | null } | null;
  events: { action: string; by: { userId: string | null; label: string }; reason: string }[];
}

/**
 * What the real takeovers module holds, read through its API: every takeover in the order
 * started, and the ended ones (id and end reason) in the order they ended.
 */
async function onAir(call: (method: string, path: string, json?: unknown) => Promise<{ status: number; body: any }>) {
  const res = await call('GET', '/api/v1/takeovers?limit=100');
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  const started = [...(res.body.data.items as Takeover[])].reverse();
  const ended = started
    .filter((x) => x.state !== 'active')
    .sort((a, b) => a.endedAt!.localeCompare(b.endedAt!))
    .map((x) => ({ id: x.id, reason: x.endReason }));
  return { started, ended };
}

const GEOJSON = 'application/geo+json';
const ATOM = 'application/atom+xml';

async function setup(t: Test) {
  return signedInApp(t, { config: { fetchAllowLoopback: true } });
}

const monitor = (feedUrl: string, format: 'cap-atom' | 'nws-geojson', zones: string[] = []) => ({ enabled: true, feedUrl, format, zones, pollIntervalSec: 60 });
const everywhere = { all: true };

t.test('NWS GeoJSON: an alert starts a takeover; an update replaces it; a cancel ends it', async (t) => {
  const { call } = await setup(t);
  const now = Date.now();
  const iso = (min: number) => new Date(now + min * 60_000).toISOString();
  let alerts: NwsAlert[] = [{ id: 'urn:oid:2.49.0.1.840.0.aaa.001.1', event: 'Tornado Warning', sent: iso(-5), expires: iso(40), ends: iso(60) }];
  const feed = await fakeFeed(t, { '/alerts/active': served(GEOJSON, () => nwsGeoJson(alerts)) });
  t.equal((await call('PUT', '/api/v1/alerts/weather/monitor', monitor(`${feed.url}/alerts/active`, 'nws-geojson'))).status, 200);
  const rule = await call('POST', '/api/v1/alerts/weather/rules', { name: 'Tornadoes', match: { events: ['Tornado Warning'] }, targets: everywhere });
  t.equal(rule.status, 201);
  const ruleId = rule.body.data.id;

  let polled = await call('POST', '/api/v1/alerts/weather/poll', {});
  t.equal(polled.status, 200);
  t.equal(polled.body.data.outcome, 'data');
  t.equal(polled.body.data.changes.alerts[0].change, 'new');
  t.equal((await onAir(call)).started.length, 1);
  const first = (await onAir(call)).started[0]!;
  t.equal(first.message!.severity, 'emergency', 'Extreme is an emergency');
  t.match(first.message!.text, /Tornado Warning issued by NWS Norman OK/);
  t.match(first.message!.text, /confirmed tornado warning was located near Moore/);
  t.match(first.message!.text, /TAKE COVER NOW!/);
  t.match(first.message!.text, /Issued by NWS Norman OK/);
  t.match(first.message!.text, new RegExp(`Until ${iso(40).slice(0, 10)} ${iso(40).slice(11, 16)} UTC`), 'until the message expires (before ends)');
  t.equal(first.endsAt, new Date(iso(40)).toISOString());
  t.same(first.targets, everywhere);
  t.same(first.createdBy, { userId: null, label: 'Weather alerts' });
  const alertId = (await call('GET', '/api/v1/alerts/weather')).body.data.alerts[0].id;
  t.same(first.origin, { kind: 'weather-alert', id: alertId, ruleId }, 'the takeover names the alert and the rule it came from');
  t.equal(first.state, 'active');
  t.match(first.events, [{ action: 'started', by: { userId: null, label: 'Weather alerts' }, reason: /Weather alert: Tornado Warning \(Tornadoes\)/ }]);
  const one = await call('GET', `/api/v1/takeovers/${first.id}`);
  t.equal(one.status, 200);
  t.same(one.body.data, first, 'GET /takeovers/{id} says the same');

  // The same document again: a 304 (conditional GET), nothing changes.
  polled = await call('POST', '/api/v1/alerts/weather/poll', {});
  t.equal(polled.body.data.outcome, 'unchanged');
  t.ok(feed.requests.at(-1)!.headers['if-none-match'], 'the second poll is conditional');
  t.equal((await onAir(call)).started.length, 1, 'deduplicated');

  // An update referencing it: the old takeover ends, a new one starts with the new text.
  alerts = [
    ...alerts,
    {
      id: 'urn:oid:2.49.0.1.840.0.aaa.002.1',
      event: 'Tornado Warning',
      messageType: 'Update',
      references: ['urn:oid:2.49.0.1.840.0.aaa.001.1'],
      sent: iso(-1),
      expires: iso(50),
      description: 'The tornado is now near Norman.',
    },
  ];
  polled = await call('POST', '/api/v1/alerts/weather/poll', {});
  t.equal(polled.body.data.outcome, 'data');
  t.same(polled.body.data.changes.alerts.map((c: { change: string }) => c.change).sort(), ['superseded', 'updated']);
  let tk = await onAir(call);
  t.same(tk.ended, [{ id: first.id, reason: 'The weather alert was updated' }]);
  t.equal(tk.started.length, 2);
  const second = tk.started[1]!;
  t.match(second.message!.text, /now near Norman/);
  t.match(tk.started[0]!, {
    state: 'ended',
    events: [{ action: 'started' }, { action: 'ended', by: { label: 'Weather alerts' }, reason: 'The weather alert was updated' }],
  });

  // A cancel: the takeover ends by itself.
  alerts = [
    ...alerts,
    {
      id: 'urn:oid:2.49.0.1.840.0.aaa.003.1',
      event: 'Tornado Warning',
      messageType: 'Cancel',
      references: ['urn:oid:2.49.0.1.840.0.aaa.002.1'],
      sent: iso(0),
      expires: iso(50),
    },
  ];
  polled = await call('POST', '/api/v1/alerts/weather/poll', {});
  tk = await onAir(call);
  t.same(tk.ended.at(-1), { id: second.id, reason: 'The weather alert was cancelled' });
  t.equal(tk.started.length, 2, 'a Cancel message starts nothing');
  t.ok(tk.started.every((x) => x.state === 'ended'));

  const listed = (await call('GET', '/api/v1/alerts/weather')).body.data;
  const byIdentifier = new Map(listed.alerts.map((a: { identifier: string }) => [a.identifier, a]));
  t.match(byIdentifier.get('urn:oid:2.49.0.1.840.0.aaa.001.1'), { state: 'superseded', actions: [{ state: 'ended', takeoverId: first.id }] });
  t.match(byIdentifier.get('urn:oid:2.49.0.1.840.0.aaa.002.1'), {
    state: 'cancelled',
    messageType: 'Update',
    zones: ['OKC109', 'OKC027', '040109', '040027'],
    actions: [{ state: 'ended', takeoverId: second.id, endReason: 'The weather alert was cancelled' }],
  });
  t.match(byIdentifier.get('urn:oid:2.49.0.1.840.0.aaa.003.1'), { state: 'cancel', actions: [] });
  t.match(listed.monitor, { enabled: true, format: 'nws-geojson', state: { lastError: null, consecutiveFailures: 0 } });
  t.equal(listed.rules[0].id, ruleId);

  const zones = (await call('GET', '/api/v1/alerts/weather/zones')).body.data;
  t.same(
    zones.zones.filter((z: { kind: string }) => z.kind === 'UGC'),
    [
      { code: 'OKC027', kind: 'UGC', areaDesc: 'Cleveland' },
      { code: 'OKC109', kind: 'UGC', areaDesc: 'Oklahoma' },
    ],
  );
  t.ok(zones.zones.some((z: { code: string; kind: string }) => z.code === '040109' && z.kind === 'SAME'));
});

t.test('expiry: a tick ends the takeover of an alert past its end without a poll', async (t) => {
  const { app, call } = await setup(t);
  const now = Date.now();
  const iso = (min: number) => new Date(now + min * 60_000).toISOString();
  const feed = await fakeFeed(t, {
    '/a': served(GEOJSON, () => nwsGeoJson([{ id: 'urn:oid:exp.1', event: 'Flash Flood Warning', severity: 'Severe', sent: iso(-5), expires: iso(30) }])),
  });
  await call('PUT', '/api/v1/alerts/weather/monitor', monitor(`${feed.url}/a`, 'nws-geojson'));
  await call('POST', '/api/v1/alerts/weather/rules', { name: 'All', match: {}, targets: everywhere });
  await call('POST', '/api/v1/alerts/weather/poll', {});
  t.equal((await onAir(call)).started.length, 1);
  t.equal((await onAir(call)).started[0]!.message!.severity, 'emergency', 'Severe is an emergency');
  const requests = feed.requests.length;
  // Time passes: the alert's expiry is now in the past (the next poll is a minute away).
  await app.deps.db
    .updateTable('weather_alerts')
    .set({ expires: iso(-1) })
    .execute();
  await app.deps.periodic.runNow('weather-alerts.tick');
  t.equal(feed.requests.length, requests, 'no poll was due');
  const expired = (await onAir(call)).started[0]!;
  t.same((await onAir(call)).ended, [{ id: expired.id, reason: 'The weather alert expired' }]);
  t.equal(expired.state, 'ended');
  const listed = (await call('GET', '/api/v1/alerts/weather')).body.data;
  t.match(listed.alerts[0], { state: 'expired', actions: [{ state: 'ended', takeoverId: expired.id }] });

  // An alert already expired when first read starts nothing.
  feed.routes.set(
    '/a',
    served(GEOJSON, () => nwsGeoJson([{ id: 'urn:oid:exp.2', event: 'Flood Warning', sent: iso(-90), expires: iso(-10) }])),
  );
  const polled = await call('POST', '/api/v1/alerts/weather/poll', {});
  t.match(polled.body.data.changes.alerts, [{ change: 'expired' }]);
  t.equal((await onAir(call)).started.length, 1);
});

t.test('CAP Atom (MeteoAlarm and embedded CAP): fields, zones, the monitor’s zone filter, rules on zones and events', async (t) => {
  const { call } = await setup(t);
  const now = Date.now();
  const iso = (min: number) => new Date(now + min * 60_000).toISOString();
  const entries: CapEntry[] = [
    {
      identifier: '2.49.0.0.40.0.AT.260520.WIND.1',
      event: 'Moderate wind warning',
      severity: 'Moderate',
      urgency: 'Expected',
      certainty: 'Likely',
      sent: iso(-10),
      expires: iso(120),
      areaDesc: 'Wien',
      geocodes: [
        ['EMMA_ID', 'AT009'],
        ['NUTS3', 'AT130'],
      ],
      headline: 'Moderate wind warning for Wien',
      description: 'Gusts up to 80 km/h.',
    },
    {
      identifier: '2.49.0.0.40.0.AT.260520.SNOW.1',
      event: 'Snow warning',
      sent: iso(-10),
      expires: iso(120),
      areaDesc: 'Tirol',
      geocodes: [['EMMA_ID', 'AT007']],
    },
    {
      identifier: 'urn:oid:2.49.0.1.840.0.fl.1',
      event: 'Hurricane Warning',
      severity: 'Extreme',
      sent: iso(-10),
      expires: iso(120),
      areaDesc: 'Coastal Miami-Dade',
      geocodes: [
        ['UGC', 'FLZ173'],
        ['SAME', '012086'],
      ],
      headline: 'Hurricane Warning issued for Coastal Miami-Dade',
      description: 'Hurricane conditions expected.',
      embedded: true,
    },
  ];
  const feed = await fakeFeed(t, { '/feed': served(ATOM, () => capAtom(entries)) });
  // Watch Wien and Miami only: the Tirol alert is ignored.
  await call('PUT', '/api/v1/alerts/weather/monitor', monitor(`${feed.url}/feed`, 'cap-atom', ['AT009', 'FLZ173']));
  const wien = (await call('POST', '/api/v1/alerts/weather/rules', { name: 'Wien', match: { zones: ['at009'] }, targets: everywhere })).body.data;
  const hurricane = (await call('POST', '/api/v1/alerts/weather/rules', { name: 'Hurricanes', match: { events: ['hurricane warning'] }, targets: everywhere }))
    .body.data;
  const polled = await call('POST', '/api/v1/alerts/weather/poll', {});
  t.equal(polled.body.data.outcome, 'data');
  const listed = (await call('GET', '/api/v1/alerts/weather')).body.data;
  t.same(listed.alerts.map((a: { identifier: string }) => a.identifier).sort(), ['2.49.0.0.40.0.AT.260520.WIND.1', 'urn:oid:2.49.0.1.840.0.fl.1']);
  const wind = listed.alerts.find((a: { event: string }) => a.event === 'Moderate wind warning');
  t.match(wind, {
    severity: 'Moderate',
    urgency: 'Expected',
    certainty: 'Likely',
    areaDesc: 'Wien',
    zones: ['AT009', 'AT130'],
    sender: 'meteoalarm-noreply@zamg.ac.at',
    senderName: 'ZAMG Zentralanstalt für Meteorologie und Geodynamik',
    headline: 'Moderate wind warning for Wien',
    description: 'Gusts up to 80 km/h.',
    actions: [{ ruleId: wien.id, state: 'active' }],
  });
  const storm = listed.alerts.find((a: { event: string }) => a.event === 'Hurricane Warning');
  t.match(storm, {
    senderName: 'NWS Miami FL',
    instruction: 'Stay indoors.',
    zones: ['FLZ173', '012086'],
    actions: [{ ruleId: hurricane.id, state: 'active' }],
  });
  const windStart = (await onAir(call)).started.find((c) => c.origin?.ruleId === wien.id)!;
  t.equal(windStart.message!.severity, 'warning', 'Moderate is a warning');
  const zones = (await call('GET', '/api/v1/alerts/weather/zones')).body.data;
  t.same(
    zones.zones.map((z: { code: string; kind: string; areaDesc: string }) => `${z.kind}:${z.code}:${z.areaDesc}`),
    ['EMMA_ID:AT007:Tirol', 'EMMA_ID:AT009:Wien', 'NUTS3:AT130:Wien', 'SAME:012086:Coastal Miami-Dade', 'UGC:FLZ173:Coastal Miami-Dade'],
    'every zone the feed offers, the unwatched ones too',
  );

  // A CAP Atom cancel (references as sender,identifier,sent triples) ends the wind takeover.
  entries.push({
    identifier: '2.49.0.0.40.0.AT.260520.WIND.2',
    event: 'Moderate wind warning',
    severity: 'Moderate',
    msgType: 'Cancel',
    references: `meteoalarm-noreply@zamg.ac.at,2.49.0.0.40.0.AT.260520.WIND.1,${iso(-10)}`,
    sent: iso(-1),
    expires: iso(120),
    areaDesc: 'Wien',
    geocodes: [['EMMA_ID', 'AT009']],
  });
  await call('POST', '/api/v1/alerts/weather/poll', {});
  t.same((await onAir(call)).ended, [{ id: windStart.id, reason: 'The weather alert was cancelled' }]);
  t.equal((await onAir(call)).started.find((c) => c.origin?.ruleId === hurricane.id)!.state, 'active', 'the hurricane stays on air');
});

t.test('rules match on each field', async (t) => {
  const { call } = await setup(t);
  const now = Date.now();
  const iso = (min: number) => new Date(now + min * 60_000).toISOString();
  const feed = await fakeFeed(t, {
    '/a': served(GEOJSON, () =>
      nwsGeoJson([
        {
          id: 'urn:a',
          event: 'Tornado Warning',
          severity: 'Extreme',
          urgency: 'Immediate',
          certainty: 'Observed',
          ugc: ['OKC109'],
          same: ['040109'],
          sent: iso(-2),
          expires: iso(30),
        },
        {
          id: 'urn:b',
          event: 'Frost Advisory',
          severity: 'Minor',
          urgency: 'Expected',
          certainty: 'Likely',
          ugc: ['TXC001'],
          same: ['048001'],
          sent: iso(-2),
          expires: iso(30),
        },
      ]),
    ),
  });
  await call('PUT', '/api/v1/alerts/weather/monitor', monitor(`${feed.url}/a`, 'nws-geojson'));
  const rules = [
    { name: 'events', match: { events: ['TORNADO WARNING'] } },
    { name: 'severities', match: { severities: ['Extreme', 'Severe'] } },
    { name: 'urgencies', match: { urgencies: ['Immediate'] } },
    { name: 'certainties', match: { certainties: ['Observed'] } },
    { name: 'zones', match: { zones: ['040109'] } },
    { name: 'minor', match: { severities: ['Minor'], zones: ['TXC001'] } },
    { name: 'none', match: { events: ['Frost Advisory'], urgencies: ['Immediate'] } },
  ];
  for (const r of rules) t.equal((await call('POST', '/api/v1/alerts/weather/rules', { ...r, targets: everywhere })).status, 201);
  await call('POST', '/api/v1/alerts/weather/poll', {});
  const listed = (await call('GET', '/api/v1/alerts/weather')).body.data;
  const namesOf = (identifier: string) =>
    listed.alerts
      .find((a: { identifier: string }) => a.identifier === identifier)
      .actions.map((x: { ruleName: string }) => x.ruleName)
      .sort();
  t.same(namesOf('urn:a'), ['certainties', 'events', 'severities', 'urgencies', 'zones']);
  t.same(namesOf('urn:b'), ['minor']);
});

t.test('requireConfirmation: the alert waits for a publisher, who confirms or dismisses it through poll', async (t) => {
  const { app, call } = await setup(t);
  const now = Date.now();
  const iso = (min: number) => new Date(now + min * 60_000).toISOString();
  let alerts: NwsAlert[] = [
    { id: 'urn:c1', event: 'Severe Thunderstorm Warning', severity: 'Severe', sent: iso(-2), expires: iso(30) },
    { id: 'urn:c2', event: 'Severe Thunderstorm Warning', severity: 'Severe', sent: iso(-2), expires: iso(30), ugc: ['OKC001'], same: ['040001'] },
  ];
  const feed = await fakeFeed(t, { '/a': served(GEOJSON, () => nwsGeoJson(alerts)) });
  await call('PUT', '/api/v1/alerts/weather/monitor', monitor(`${feed.url}/a`, 'nws-geojson'));
  const rule = (await call('POST', '/api/v1/alerts/weather/rules', { name: 'Storms', match: {}, targets: everywhere, requireConfirmation: true })).body.data;
  const polled = await call('POST', '/api/v1/alerts/weather/poll', {});
  t.equal(polled.body.data.changes.pendingConfirmation.length, 2);
  t.equal((await onAir(call)).started.length, 0, 'nothing on air before a person confirms');
  let listed = (await call('GET', '/api/v1/alerts/weather')).body.data;
  t.equal(listed.pendingConfirmation.length, 2);
  const [c1, c2] = ['urn:c1', 'urn:c2'].map((i) => listed.alerts.find((a: { identifier: string }) => a.identifier === i).id);

  const editor = await signIn(app, { role: 'editor' });
  const denied = await app.json('/api/v1/alerts/weather/poll', {
    method: 'POST',
    headers: editor.headers,
    json: { fetch: false, confirm: [{ alertId: c1, ruleId: rule.id }] },
  });
  t.equal(denied.status, 403);
  t.equal(denied.body.error.code, 'forbidden');

  const publisher = await signIn(app, { role: 'publisher' });
  const confirmed = await app.json('/api/v1/alerts/weather/poll', {
    method: 'POST',
    headers: publisher.headers,
    json: { fetch: false, confirm: [{ alertId: c1, ruleId: rule.id }], dismiss: [{ alertId: c2, ruleId: rule.id }] },
  });
  t.equal(confirmed.status, 200);
  t.equal(confirmed.body.data.outcome, 'not_polled');
  t.equal(confirmed.body.data.changes.started.length, 1);
  t.equal((await onAir(call)).started.length, 1);
  const confirmedTk = (await onAir(call)).started[0]!;
  t.same(confirmedTk.createdBy, { userId: publisher.user.id, label: 'Test publisher' }, 'the person who confirmed started it');
  t.match(confirmedTk.events, [{ action: 'started', by: { userId: publisher.user.id, label: 'Test publisher' } }]);
  t.match(confirmedTk.origin, { kind: 'weather-alert', id: c1, ruleId: rule.id });
  listed = (await call('GET', '/api/v1/alerts/weather')).body.data;
  t.equal(listed.pendingConfirmation.length, 0);
  t.match(listed.alerts.find((a: { id: string }) => a.id === c1).actions, [{ state: 'active', confirmedBy: publisher.user.id, takeoverId: confirmedTk.id }]);
  t.match(listed.alerts.find((a: { id: string }) => a.id === c2).actions, [
    { state: 'dismissed', confirmedBy: publisher.user.id, takeoverId: null, endReason: 'Dismissed by Test publisher' },
  ]);

  const again = await call('POST', '/api/v1/alerts/weather/poll', { fetch: false, confirm: [{ alertId: c1, ruleId: rule.id }] });
  t.equal(again.status, 409);
  t.equal(again.body.error.code, 'conflict');
  t.same(again.body.error.details.notPending, [{ alertId: c1, ruleId: rule.id }]);

  // An update of the confirmed alert goes on air without asking again.
  alerts = [
    ...alerts,
    { id: 'urn:c1u', event: 'Severe Thunderstorm Warning', severity: 'Severe', messageType: 'Update', references: ['urn:c1'], sent: iso(-1), expires: iso(40) },
  ];
  const updated = await call('POST', '/api/v1/alerts/weather/poll', {});
  t.equal(updated.body.data.changes.pendingConfirmation.length, 0);
  t.equal((await onAir(call)).started.length, 2);
  const afterUpdate = await onAir(call);
  t.same(afterUpdate.ended, [{ id: confirmedTk.id, reason: 'The weather alert was updated' }]);
  t.match(afterUpdate.started[1]!.origin, { kind: 'weather-alert', ruleId: rule.id });

  // Deleting the rule ends what it started.
  t.equal((await call('DELETE', `/api/v1/alerts/weather/rules/${rule.id}`)).status, 204);
  t.same((await onAir(call)).ended.at(-1), { id: afterUpdate.started[1]!.id, reason: 'The weather alert rule was deleted' });
});

t.test('a malformed document or a feed that is down changes nothing; the monitor records why', async (t) => {
  const { app, call } = await setup(t);
  const now = Date.now();
  const iso = (min: number) => new Date(now + min * 60_000).toISOString();
  const good = nwsGeoJson([{ id: 'urn:keep', event: 'Tornado Warning', sent: iso(-2), expires: iso(30) }]);
  const feed = await fakeFeed(t, { '/a': served(GEOJSON, () => good) });
  await call('PUT', '/api/v1/alerts/weather/monitor', monitor(`${feed.url}/a`, 'nws-geojson'));
  await call('POST', '/api/v1/alerts/weather/rules', { name: 'All', match: {}, targets: everywhere });
  await call('POST', '/api/v1/alerts/weather/poll', {});
  t.equal((await onAir(call)).started.length, 1);
  const before = (await call('GET', '/api/v1/alerts/weather')).body.data.alerts;

  const failures: [string, (req: http.IncomingMessage, res: http.ServerResponse) => void, RegExp][] = [
    ['truncated JSON', (_q, s) => void s.writeHead(200, { 'content-type': GEOJSON }).end(good.slice(0, 200)), /not JSON/],
    ['JSON that is not a FeatureCollection', (_q, s) => void s.writeHead(200, { 'content-type': GEOJSON }).end('{"type":"Feature"}'), /no features list/],
    ['HTTP 500', (_q, s) => void s.writeHead(500).end('oops'), /HTTP 500/],
  ];
  for (const [name, handler, why] of failures) {
    feed.routes.set('/a', handler);
    const polled = await call('POST', '/api/v1/alerts/weather/poll', {});
    t.equal(polled.status, 200, name);
    t.equal(polled.body.data.outcome, 'failed', name);
    t.match(polled.body.data.error, why, name);
    const listed = (await call('GET', '/api/v1/alerts/weather')).body.data;
    t.same(listed.alerts, before, `${name}: the alerts keep their state`);
    t.match(listed.monitor.state, { lastError: why }, name);
  }
  t.equal((await onAir(call)).ended.length, 0, 'no takeover ended');

  // Connection refused: a port nobody listens on.
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  await call('PUT', '/api/v1/alerts/weather/monitor', monitor(`http://127.0.0.1:${port}/a`, 'nws-geojson'));
  const refused = await call('POST', '/api/v1/alerts/weather/poll', {});
  t.equal(refused.body.data.outcome, 'failed');
  const state = (await call('GET', '/api/v1/alerts/weather')).body.data.monitor.state;
  t.equal(state.lastErrorCode, 'connection_failed');
  t.ok(state.consecutiveFailures >= 1);
  t.ok(state.nextPollAt > state.lastPollAt, 'retried later (backoff)');
  t.equal((await onAir(call)).ended.length, 0);

  // Malformed XML for a CAP Atom monitor, and XML that is not a feed.
  const atom = await fakeFeed(t, { '/x': (_q, s) => void s.writeHead(200, { 'content-type': ATOM }).end('<feed><entry><title>cut') });
  await call('PUT', '/api/v1/alerts/weather/monitor', monitor(`${atom.url}/x`, 'cap-atom'));
  let polled = await call('POST', '/api/v1/alerts/weather/poll', {});
  t.match(polled.body.data, { outcome: 'failed', error: /not well-formed XML/ });
  atom.routes.set('/x', (_q, s) => void s.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Maintenance</body></html>'));
  polled = await call('POST', '/api/v1/alerts/weather/poll', {});
  t.match(polled.body.data, { outcome: 'failed', error: /no <feed> or <alert> root/ });
  t.equal((await app.deps.db.selectFrom('weather_alerts').select('state').execute()).map((r) => r.state).join(), 'active');
});

t.test('feeds are fetched under the outbound rules: loopback refused by default', async (t) => {
  const { call } = await signedInApp(t);
  const feed = await fakeFeed(t, { '/a': served(GEOJSON, () => nwsGeoJson([])) });
  await call('PUT', '/api/v1/alerts/weather/monitor', monitor(`${feed.url}/a`, 'nws-geojson'));
  const polled = await call('POST', '/api/v1/alerts/weather/poll', {});
  t.equal(polled.body.data.outcome, 'failed');
  t.equal(feed.requests.length, 0);
  t.equal((await call('GET', '/api/v1/alerts/weather')).body.data.monitor.state.lastErrorCode, 'address_not_allowed');
});

t.test('a takeover that cannot start (its rule targets a screen deleted since) records a failed action and changes nothing else', async (t) => {
  const { app, owner, call } = await setup(t);
  const now = Date.now();
  const feed = await fakeFeed(t, {
    '/a': served(GEOJSON, () =>
      nwsGeoJson([{ id: 'urn:x', event: 'Tornado Warning', sent: new Date(now).toISOString(), expires: new Date(now + 3_600_000).toISOString() }]),
    ),
  });
  const gone = await pairScreen(app, owner, { name: 'Gone' });
  await call('PUT', '/api/v1/alerts/weather/monitor', monitor(`${feed.url}/a`, 'nws-geojson'));
  const rule = await call('POST', '/api/v1/alerts/weather/rules', { name: 'Gone', match: {}, targets: { screenIds: [gone.screenId] } });
  t.equal(rule.status, 201);
  t.equal((await call('DELETE', `/api/v1/screens/${gone.screenId}`)).status, 204);
  const polled = await call('POST', '/api/v1/alerts/weather/poll', {});
  t.equal(polled.status, 200);
  t.match(polled.body.data.changes.failed, [{ ruleId: rule.body.data.id, error: /Starting the takeover failed/ }]);
  t.same(polled.body.data.changes.started, []);
  const listed = (await call('GET', '/api/v1/alerts/weather')).body.data;
  t.match(listed.alerts, [{ identifier: 'urn:x', state: 'active', actions: [{ state: 'failed', takeoverId: null, error: /Starting the takeover failed/ }] }]);
  t.match(listed.monitor.state, { lastError: null, consecutiveFailures: 0 }, 'the feed itself is fine');
  t.same((await onAir(call)).started, [], 'no takeover exists');
  // The next poll does not retry forever nor start anything.
  await call('POST', '/api/v1/alerts/weather/poll', {});
  t.same((await onAir(call)).started, []);
  t.equal((await call('GET', '/api/v1/alerts/weather')).body.data.alerts[0].actions.length, 1);
});

t.test('monitor states: not configured, disabled; zones before a poll', async (t) => {
  const { call } = await setup(t);
  let polled = await call('POST', '/api/v1/alerts/weather/poll', {});
  t.equal(polled.body.data.outcome, 'not_configured');
  t.same((await call('GET', '/api/v1/alerts/weather')).body.data, { alerts: [], pendingConfirmation: [], monitor: null, rules: [] });
  t.same((await call('GET', '/api/v1/alerts/weather/zones')).body.data, { zones: [], feedUrl: null, asOf: null });
  await call('PUT', '/api/v1/alerts/weather/monitor', { ...monitor('https://api.weather.gov/alerts/active?area=OK', 'nws-geojson'), enabled: false });
  polled = await call('POST', '/api/v1/alerts/weather/poll', {});
  t.equal(polled.body.data.outcome, 'disabled');
});

t.test('roles and bad input answer the error envelope', async (t) => {
  const { app, call } = await setup(t);
  const good = monitor('https://api.weather.gov/alerts/active', 'nws-geojson');
  const bad: [string, unknown][] = [
    ['ftp feed', { ...good, feedUrl: 'ftp://example.com/feed' }],
    ['not a URL', { ...good, feedUrl: 'weather' }],
    ['unknown format', { ...good, format: 'rss' }],
    ['poll too often', { ...good, pollIntervalSec: 10 }],
    ['fractional interval', { ...good, pollIntervalSec: 60.5 }],
    ['zones not strings', { ...good, zones: [1] }],
    ['missing enabled', { feedUrl: good.feedUrl, format: good.format, zones: [], pollIntervalSec: 60 }],
  ];
  for (const [name, body] of bad) {
    const res = await call('PUT', '/api/v1/alerts/weather/monitor', body);
    t.equal(res.status, 400, name);
    t.equal(res.body.error.code, 'validation_failed', name);
  }
  const badRules: [string, unknown][] = [
    ['no targets', { name: 'x', match: {}, targets: {} }],
    ['all false', { name: 'x', match: {}, targets: { all: false } }],
    ['unknown severity', { name: 'x', match: { severities: ['Catastrophic'] }, targets: everywhere }],
    ['empty events', { name: 'x', match: { events: [] }, targets: everywhere }],
    ['unknown match field', { name: 'x', match: { colour: ['red'] }, targets: everywhere }],
    ['empty name', { name: ' ', match: {}, targets: everywhere }],
    ['not a uuid', { name: 'x', match: {}, targets: { screenIds: ['nope'] } }],
    ['confirmation not boolean', { name: 'x', match: {}, targets: everywhere, requireConfirmation: 'yes' }],
  ];
  for (const [name, body] of badRules) {
    const res = await call('POST', '/api/v1/alerts/weather/rules', body);
    t.equal(res.status, 400, name);
    t.equal(res.body.error.code, 'validation_failed', name);
  }
  const ghost = '0190b5a0-0000-7000-8000-000000000000';
  const unknownScreen = await call('POST', '/api/v1/alerts/weather/rules', { name: 'x', match: {}, targets: { screenIds: [ghost] } });
  t.equal(unknownScreen.status, 400);
  t.match(unknownScreen.body.error.details.issues, [{ path: ['targets', 'screenIds', 0], code: 'invalid_reference' }]);
  const group = await call('POST', '/api/v1/screen-groups', { name: 'Lobby' });
  t.equal(group.status, 201);
  const okRule = await call('POST', '/api/v1/alerts/weather/rules', { name: 'Lobby', match: {}, targets: { groupIds: [group.body.data.id] } });
  t.equal(okRule.status, 201);
  t.equal(okRule.body.data.requireConfirmation, false);

  t.equal((await call('PUT', `/api/v1/alerts/weather/rules/${ghost}`, { name: 'x', match: {}, targets: everywhere })).status, 404);
  t.equal((await call('DELETE', `/api/v1/alerts/weather/rules/${ghost}`)).status, 404);
  t.equal((await call('DELETE', '/api/v1/alerts/weather/rules/not-a-uuid')).status, 404);
  const put = await call('PUT', `/api/v1/alerts/weather/rules/${okRule.body.data.id}`, {
    name: 'Lobby 2',
    match: { zones: ['OKC109'] },
    targets: everywhere,
    requireConfirmation: true,
  });
  t.match(put.body.data, { name: 'Lobby 2', match: { zones: ['OKC109'] }, targets: everywhere, requireConfirmation: true });
  const badDecision = await call('POST', '/api/v1/alerts/weather/poll', { confirm: [{ alertId: 'x', ruleId: 'y' }] });
  t.equal(badDecision.status, 400);

  const viewer = await signIn(app, { role: 'viewer' });
  const publisher = await signIn(app, { role: 'publisher' });
  const editor = await signIn(app, { role: 'editor' });
  const as = (who: { headers: Record<string, string> }, method: string, path: string, json?: unknown) =>
    app.json(path, { method, headers: who.headers, ...(json !== undefined ? { json } : {}) });
  t.equal((await as(viewer, 'GET', '/api/v1/alerts/weather')).status, 200);
  t.equal((await as(viewer, 'GET', '/api/v1/alerts/weather/zones')).status, 200);
  t.equal((await as(publisher, 'PUT', '/api/v1/alerts/weather/monitor', good)).status, 403, 'the feed is an admin setting');
  t.equal((await as(editor, 'POST', '/api/v1/alerts/weather/rules', { name: 'x', match: {}, targets: everywhere })).status, 403);
  t.equal((await as(viewer, 'POST', '/api/v1/alerts/weather/poll', {})).status, 403);
  t.equal((await as(publisher, 'POST', '/api/v1/alerts/weather/rules', { name: 'p', match: {}, targets: everywhere })).status, 201);
  t.equal((await app.json('/api/v1/alerts/weather')).status, 401);
  const admin = await signIn(app, { role: 'admin' });
  t.equal((await as(admin, 'PUT', '/api/v1/alerts/weather/monitor', good)).status, 200);
});

t.test('the tick polls when the stored schedule says so, and not before; a document over the size cap is refused', async (t) => {
  const { app, call } = await setup(t);
  const now = Date.now();
  const iso = (min: number) => new Date(now + min * 60_000).toISOString();
  const feed = await fakeFeed(t, {
    '/a': served(GEOJSON, () => nwsGeoJson([{ id: 'urn:tick', event: 'Blizzard Warning', severity: 'Minor', sent: iso(-1), expires: iso(60) }])),
  });
  await call('PUT', '/api/v1/alerts/weather/monitor', monitor(`${feed.url}/a`, 'nws-geojson'));
  await call('POST', '/api/v1/alerts/weather/rules', { name: 'All', match: {}, targets: everywhere });
  // The PUT made a poll due: the tick (the periodic task main.ts starts) polls.
  await app.deps.periodic.runNow('weather-alerts.tick');
  t.equal(feed.requests.length, 1);
  t.equal((await onAir(call)).started.length, 1);
  t.equal((await onAir(call)).started[0]!.message!.severity, 'info', 'Minor is info');
  const state = (await call('GET', '/api/v1/alerts/weather')).body.data.monitor.state;
  const next = Date.parse(state.nextPollAt) - Date.parse(state.lastPollAt);
  t.ok(next >= 60_000 && next <= 67_000, 'next poll: the interval plus at most 10% jitter (and the poll’s own milliseconds)');
  await app.deps.periodic.runNow('weather-alerts.tick');
  t.equal(feed.requests.length, 1, 'not due yet: no fetch');
  // The schedule is in the database: making it due there is what a restart after the interval sees.
  await app.deps.db
    .updateTable('weather_monitor')
    .set({ next_poll_at: iso(-1) })
    .execute();
  await app.deps.periodic.runNow('weather-alerts.tick');
  t.equal(feed.requests.length, 2);

  feed.routes.set('/a', (_q, s) => {
    s.writeHead(200, { 'content-type': GEOJSON });
    s.end(Buffer.alloc(6 * 1024 * 1024, 32));
  });
  const polled = await call('POST', '/api/v1/alerts/weather/poll', {});
  t.match(polled.body.data, { outcome: 'failed', error: /larger than 5 MB/ });
  t.equal((await onAir(call)).ended.length, 0);
});

t.test('hostile and odd documents', async (t) => {
  const { call } = await setup(t);
  let body = '';
  const feed = await fakeFeed(t, { '/x': (_q, s) => void s.writeHead(200, { 'content-type': ATOM }).end(body) });
  await call('PUT', '/api/v1/alerts/weather/monitor', monitor(`${feed.url}/x`, 'cap-atom'));
  await call('POST', '/api/v1/alerts/weather/rules', { name: 'All', match: {}, targets: everywhere });
  const cases: [string, string, RegExp | null][] = [
    [
      'entity expansion',
      '<?xml version="1.0"?><!DOCTYPE feed [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><feed><entry><id>&b;</id></entry></feed>',
      /entity declarations/,
    ],
    ['an empty feed', '<feed xmlns="http://www.w3.org/2005/Atom"></feed>', null],
    ['entries of text', '<feed><entry>hello</entry><entry></entry></feed>', null],
    [
      'geocode without pairs',
      '<feed xmlns:cap="urn:oasis:names:tc:emergency:cap:1.2"><entry><id>e1</id><cap:geocode>x</cap:geocode><cap:expires>not a date</cap:expires></entry></feed>',
      null,
    ],
  ];
  for (const [name, doc, error] of cases) {
    body = doc;
    const polled = await call('POST', '/api/v1/alerts/weather/poll', {});
    t.equal(polled.status, 200, name);
    if (error) t.match(polled.body.data, { outcome: 'failed', error }, name);
    else t.equal(polled.body.data.outcome, 'data', name);
  }
  const listed = (await call('GET', '/api/v1/alerts/weather')).body.data;
  t.match(listed.alerts, [{ identifier: 'e1', expires: null, zones: [], severity: 'Unknown', state: 'active' }], 'an entry with only an id is kept');
  t.equal((await onAir(call)).started.length, 1);
  t.equal(
    (await onAir(call)).started[0]!.endsAt,
    new Date(Date.parse(listed.alerts[0].firstSeenAt) + 24 * 3600_000).toISOString(),
    'without expires or ends, an alert is over a day after it was first seen',
  );
});
