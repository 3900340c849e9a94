import t from 'tap';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';
import { powerDesired, runPowerAssist } from '../server/src/modules/screens/fleet.routes.js';
import { v7 as uuidv7 } from 'uuid';

t.test('reliability: uptime, gaps and heartbeat regularity from contact receipts', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const now = Date.now();
  const hour = 3600_000;
  // The screen exists for 10 h; it beat every 30 s except a 2-hour outage 4 h ago.
  await app.deps.db.updateTable('screens').set({ created_at: new Date(now - 10 * hour).toISOString() }).where('id', '=', s.screenId).execute();
  const rows = [];
  for (let at = now - 10 * hour; at <= now; at += 30_000) {
    if (at > now - 6 * hour && at < now - 4 * hour) continue;
    rows.push({ id: uuidv7(), screen_id: s.screenId, at: new Date(at).toISOString(), at_ms: at, kind: 'heartbeat', detail: '{}' });
  }
  for (let i = 0; i < rows.length; i += 200) await app.deps.db.insertInto('screen_history').values(rows.slice(i, i + 200)).execute();
  const res = await app.json(`/api/v1/screens/${s.screenId}/reliability`, { headers: owner.headers });
  t.equal(res.status, 200);
  const [day, week, month] = res.body.data.windows;
  t.same([day.window, week.window, month.window], ['24h', '7d', '30d']);
  t.equal(day.observedMs, week.observedMs, 'windows start at the screen’s creation');
  // Down from the last beat before the outage + 75 s grace until the first beat after it.
  const expectedGap = 2 * hour - 30_000 - 75_000;
  t.ok(Math.abs(day.gaps[0].durationMs - expectedGap) < 31_000, `gap ${day.gaps[0].durationMs} ≈ ${expectedGap}`);
  t.equal(day.gapCount, 1);
  t.ok(day.uptimePercent > 79 && day.uptimePercent < 81, `uptime ${day.uptimePercent}% ≈ 80%`);
  t.equal(day.heartbeats.expectedIntervalSec, 30);
  t.equal(day.heartbeats.medianIntervalSec, 30);
  t.ok(day.heartbeats.regularPercent > 99);
  const only = await app.json(`/api/v1/screens/${s.screenId}/reliability?window=7d`, { headers: owner.headers });
  t.same(only.body.data.windows.map((w: any) => w.window), ['7d']);
  t.equal((await app.json(`/api/v1/screens/${s.screenId}/reliability?window=1y`, { headers: owner.headers })).status, 400);

  const fresh = await pairScreen(app, owner, { name: 'never seen' });
  const none = (await app.json(`/api/v1/screens/${fresh.screenId}/reliability?window=24h`, { headers: owner.headers })).body.data.windows[0];
  t.ok(none.uptimePercent === null || none.uptimePercent === 0, 'a screen never seen has no uptime');
});

t.test('power assist: local-time windows become display commands', async (t) => {
  // Pure rule first: Mon-Fri 08:00-20:00 and an overnight Saturday window.
  const pa = { enabled: true, schedule: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'] as const, onAt: '08:00', offAt: '20:00' }, { days: ['sat'] as const, onAt: '22:00', offAt: '02:00' }] };
  const at = (iso: string) => Date.parse(iso);
  t.equal(powerDesired(pa as never, 'Europe/Paris', at('2026-06-01T06:30:00Z')), 'on', 'Monday 08:30 in Paris (UTC+2)');
  t.equal(powerDesired(pa as never, 'Europe/Paris', at('2026-06-01T05:30:00Z')), 'off', 'Monday 07:30 in Paris');
  t.equal(powerDesired(pa as never, 'Europe/Paris', at('2026-06-01T18:30:00Z')), 'off', 'Monday 20:30 in Paris');
  t.equal(powerDesired(pa as never, 'Europe/Paris', at('2026-06-06T20:30:00Z')), 'on', 'Saturday 22:30');
  t.equal(powerDesired(pa as never, 'Europe/Paris', at('2026-06-06T23:30:00Z')), 'on', 'Sunday 01:30 belongs to Saturday’s window');
  t.equal(powerDesired(pa as never, 'Europe/Paris', at('2026-06-07T00:30:00Z')), 'off', 'Sunday 02:30');
  t.equal(powerDesired(pa as never, 'America/New_York', at('2026-06-01T06:30:00Z')), 'off', 'the same instant is 02:30 in New York');

  const app = await startApp(t);
  const owner = await signIn(app);
  const loc = (await app.json('/api/v1/locations', { method: 'POST', headers: owner.headers, json: { name: 'P', timeZone: 'Europe/Paris' } })).body.data;
  const s = await pairScreen(app, owner, { locationId: loc.id });
  const alwaysOn = { enabled: true, schedule: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], onAt: '00:00', offAt: '23:59' }] };
  const put = await app.json(`/api/v1/screens/${s.screenId}/power-assist`, { method: 'PUT', headers: owner.headers, json: alwaysOn });
  t.equal(put.status, 200);
  t.match(put.body.data, { screenId: s.screenId, timeZone: 'Europe/Paris', enabled: true });
  t.equal((await app.json(`/api/v1/screens/${s.screenId}/power-assist`, { method: 'PUT', headers: owner.headers, json: { enabled: true, schedule: [{ days: ['mon'], onAt: '25:00', offAt: '10:00' }] } })).status, 400);
  t.equal((await app.json(`/api/v1/screens/${s.screenId}/power-assist`, { method: 'PUT', headers: owner.headers, json: { enabled: true, schedule: [{ days: ['funday'], onAt: '09:00', offAt: '10:00' }] } })).status, 400);

  const desired = put.body.data.desiredState;
  t.equal(await runPowerAssist(app.deps), 1, 'the first run applies the state');
  t.equal(await runPowerAssist(app.deps), 0, 'nothing changes, nothing queued');
  const cmds = (await app.json(`/api/v1/screens/${s.screenId}/commands`, { headers: owner.headers })).body.data.items;
  t.same(cmds.map((c: any) => [c.type, c.source]), [[desired === 'on' ? 'display_on' : 'display_off', 'power-assist']]);
  // Turning the schedule into "never on" flips the display off.
  await app.json(`/api/v1/screens/${s.screenId}/power-assist`, { method: 'PUT', headers: owner.headers, json: { enabled: true, schedule: [] } });
  await runPowerAssist(app.deps);
  const after = (await app.json(`/api/v1/screens/${s.screenId}/commands`, { headers: owner.headers })).body.data.items;
  t.equal(after[0].type, 'display_off');
  const got = await app.json(`/api/v1/screens/${s.screenId}/power-assist`, { headers: owner.headers });
  t.match(got.body.data, { desiredState: 'off', lastAppliedState: 'off' });
  await app.json(`/api/v1/screens/${s.screenId}/power-assist`, { method: 'PUT', headers: owner.headers, json: { enabled: false, schedule: [] } });
  t.equal(await runPowerAssist(app.deps), 0, 'disabled: no commands');
  await app.deps.periodic.runNow('screens.power-assist');
});
