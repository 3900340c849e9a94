import t from 'tap';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';
import { powerDesired, runPowerAssist } from '../server/src/modules/screens/fleet.service.js';
import { v7 as uuidv7 } from 'uuid';
import { pruneHistory } from '../server/src/modules/screens/screens.module.js';
import { updateSettings } from '../server/src/modules/system/settings.js';

t.test('reliability: uptime, gaps and heartbeat regularity from contact receipts', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const now = Date.now();
  const hour = 3600_000;
  // The screen exists for 10 h; it beat every 30 s except a 2-hour outage 4 h ago.
  await app.deps.db
    .updateTable('screens')
    .set({ created_at: new Date(now - 10 * hour).toISOString() })
    .where('id', '=', s.screenId)
    .execute();
  const rows = [];
  for (let at = now - 10 * hour; at <= now; at += 30_000) {
    if (at > now - 6 * hour && at < now - 4 * hour) continue;
    rows.push({ id: uuidv7(), screen_id: s.screenId, at: new Date(at).toISOString(), at_ms: at, kind: 'heartbeat', detail: '{}' });
  }
  for (let i = 0; i < rows.length; i += 200)
    await app.deps.db
      .insertInto('screen_history')
      .values(rows.slice(i, i + 200))
      .execute();
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
  t.same(
    only.body.data.windows.map((w: any) => w.window),
    ['7d'],
  );
  t.equal((await app.json(`/api/v1/screens/${s.screenId}/reliability?window=1y`, { headers: owner.headers })).status, 400);

  const fresh = await pairScreen(app, owner, { name: 'never seen' });
  const none = (await app.json(`/api/v1/screens/${fresh.screenId}/reliability?window=24h`, { headers: owner.headers })).body.data.windows[0];
  t.ok(none.uptimePercent === null || none.uptimePercent === 0, 'a screen never seen has no uptime');
});

t.test('reliability counts only the part of a window the pruned contact history still covers (coveredFrom)', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const now = Date.now();
  const day = 24 * 3600_000;
  const interval = 300;
  // A screen 20 days old that beat every 5 minutes all along; history is kept 7 days.
  await app.deps.db
    .updateTable('screens')
    .set({ created_at: new Date(now - 20 * day).toISOString(), expected_interval_sec: interval })
    .where('id', '=', s.screenId)
    .execute();
  const rows = [];
  for (let at = now - 20 * day; at <= now; at += interval * 1000)
    rows.push({ id: uuidv7(), screen_id: s.screenId, at: new Date(at).toISOString(), at_ms: at, kind: 'heartbeat', detail: '{}' });
  for (let i = 0; i < rows.length; i += 200)
    await app.deps.db
      .insertInto('screen_history')
      .values(rows.slice(i, i + 200))
      .execute();
  await updateSettings(app.deps.db, { retention: { heartbeatDays: 7 } });
  const pruned = await pruneHistory(app.deps.db, now);
  t.ok(pruned > 3500, `the retention job pruned ${pruned} contacts older than 7 days`);

  const res = await app.json(`/api/v1/screens/${s.screenId}/reliability`, { headers: owner.headers });
  t.equal(res.status, 200);
  const [d1, d7, d30] = res.body.data.windows;
  const grace = (2 * interval + 15) * 1000;
  t.equal(Date.parse(d30.from), now - 20 * day, 'the 30-day window starts at the screen’s creation');
  t.ok(
    Math.abs(Date.parse(d30.coveredFrom) - (now - 7 * day + grace)) < 60_000,
    `covered from ${d30.coveredFrom}: the retention cutoff plus one online window`,
  );
  t.equal(d30.gapCount, 0, 'no false gap for the pruned 13 days');
  t.ok(d30.uptimePercent > 99.9, `uptime ${d30.uptimePercent}% over the covered part`);
  t.ok(Math.abs(d30.observedMs - (7 * day - grace)) < 60_000, 'observedMs is the covered part');
  t.ok(d30.heartbeats.count < 7 * 288 + 2, 'only the covered heartbeats count');
  t.equal(d7.coveredFrom, d30.coveredFrom, 'the 7-day window is cut the same way');
  t.equal(d7.gapCount, 0);
  t.equal(d1.coveredFrom, d1.from, 'the last 24 h are fully covered');
  t.ok(d1.uptimePercent > 99.9);

  // Longer retention: the same window is covered further back (and the missing history is a gap again).
  await updateSettings(app.deps.db, { retention: { heartbeatDays: 30 } });
  const wide = (await app.json(`/api/v1/screens/${s.screenId}/reliability?window=30d`, { headers: owner.headers })).body.data.windows[0];
  t.equal(wide.coveredFrom, wide.from, 'with 30 days kept, the whole 20 days are covered');
  t.equal(wide.gapCount, 1, 'the contacts pruned under the 7-day setting are a gap now');
});

t.test('power assist: local-time windows become display commands', async (t) => {
  // Pure rule first: Mon-Fri 08:00-20:00 and an overnight Saturday window.
  const pa = {
    enabled: true,
    schedule: [
      { days: ['mon', 'tue', 'wed', 'thu', 'fri'] as const, onAt: '08:00', offAt: '20:00' },
      { days: ['sat'] as const, onAt: '22:00', offAt: '02:00' },
    ],
  };
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
  t.equal(
    (
      await app.json(`/api/v1/screens/${s.screenId}/power-assist`, {
        method: 'PUT',
        headers: owner.headers,
        json: { enabled: true, schedule: [{ days: ['mon'], onAt: '25:00', offAt: '10:00' }] },
      })
    ).status,
    400,
  );
  t.equal(
    (
      await app.json(`/api/v1/screens/${s.screenId}/power-assist`, {
        method: 'PUT',
        headers: owner.headers,
        json: { enabled: true, schedule: [{ days: ['funday'], onAt: '09:00', offAt: '10:00' }] },
      })
    ).status,
    400,
  );

  const desired = put.body.data.desiredState;
  t.equal(await runPowerAssist(app.deps), 1, 'the first run applies the state');
  t.equal(await runPowerAssist(app.deps), 0, 'nothing changes, nothing queued');
  const cmds = (await app.json(`/api/v1/screens/${s.screenId}/commands`, { headers: owner.headers })).body.data.items;
  t.same(
    cmds.map((c: any) => [c.type, c.source]),
    [[desired === 'on' ? 'display_on' : 'display_off', 'power-assist']],
  );
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
