import { monitorEventLoopDelay } from 'node:perf_hooks';
import t, { type Test } from 'tap';
import { signedInApp } from './helpers/auth.js';
import { DENSE_TIMES, REFUSED, WORST_ALLOWED } from './helpers/fuzz/recurrence.js';
import type { Config } from '../server/src/config.js';
import { pairScreen } from './helpers/screens.js';

/**
 * Issue 15, "A publisher can freeze the event loop": a schedule every second from years ago
 * took 13 s to create and 25 s for every manifest and preview of its screens. Rules finer
 * than daily, too dense, too long to count or that never occur are refused with a message
 * naming the part; what is allowed expands from the window asked for, within bounds.
 */

async function setup(t: Test, config: Partial<Config> = {}) {
  const { app, owner, call } = await signedInApp(t, { config });
  const site = (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id as string;
  const playlist = async (name: string) => {
    const res = await call('POST', '/api/v1/playlists', { name, items: [{ assetId: site }] });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body.data.id as string;
  };
  const screen = await pairScreen(app, owner, { name: 'Lobby' });
  return { app, owner, call, playlist, screen };
}

t.test('every RRULE part is checked; a refusal is 400 naming the part', async (t) => {
  const { call, playlist, screen } = await setup(t);
  const p = await playlist('P');
  const body = (rrule: string, extra: Record<string, unknown> = {}) => ({
    name: 'S',
    content: { playlistId: p },
    targets: { screenIds: [screen.screenId] },
    startsAt: '2026-06-01T09:00:00Z',
    endsAt: '2026-06-01T10:00:00Z',
    timeZone: 'Europe/London',
    rrule,
    ...extra,
  });
  const refused: [string, RegExp][] = [
    ['FREQ=DAILY;BYHOUR=99', /BYHOUR values must be 0 to 23 \(got 99\)/],
    ['FREQ=DAILY;BYHOUR=-1', /BYHOUR/],
    ['FREQ=DAILY;BYMINUTE=60', /BYMINUTE values must be 0 to 59/],
    ['FREQ=DAILY;BYSECOND=61', /BYSECOND values must be 0 to 59/],
    ['FREQ=YEARLY;BYMONTH=13', /BYMONTH values must be 1 to 12/],
    ['FREQ=YEARLY;BYMONTH=0', /BYMONTH/],
    ['FREQ=MONTHLY;BYMONTHDAY=0', /BYMONTHDAY values must be -31 to 31, not 0/],
    ['FREQ=MONTHLY;BYMONTHDAY=32', /BYMONTHDAY/],
    ['FREQ=MONTHLY;BYMONTHDAY=-32', /BYMONTHDAY/],
    ['FREQ=WEEKLY;BYMONTHDAY=1', /BYMONTHDAY does not go with FREQ=WEEKLY/],
    ['FREQ=YEARLY;BYYEARDAY=367', /BYYEARDAY values must be -366 to 366/],
    ['FREQ=MONTHLY;BYYEARDAY=1', /BYYEARDAY goes with FREQ=YEARLY only/],
    ['FREQ=YEARLY;BYWEEKNO=54', /BYWEEKNO values must be -53 to 53/],
    ['FREQ=MONTHLY;BYWEEKNO=1', /BYWEEKNO goes with FREQ=YEARLY only/],
    ['FREQ=WEEKLY;BYDAY=XX', /BYDAY values are weekdays/],
    ['FREQ=WEEKLY;BYDAY=MO,', /BYDAY values are weekdays/],
    ['FREQ=WEEKLY;BYDAY=1MO', /BYDAY=1MO: an ordinal weekday goes with FREQ=MONTHLY or YEARLY only/],
    ['FREQ=MONTHLY;BYDAY=6MO', /BYDAY=6MO: the ordinal must be 1 to 5/],
    ['FREQ=MONTHLY;BYDAY=0MO', /BYDAY=0MO/],
    ['FREQ=YEARLY;BYDAY=54FR', /BYDAY=54FR: the ordinal must be 1 to 53/],
    ['FREQ=YEARLY;BYWEEKNO=1;BYDAY=1MO', /BYDAY=1MO: an ordinal weekday does not go with BYWEEKNO/],
    ['FREQ=MONTHLY;BYSETPOS=1', /BYSETPOS needs another BYxxx part/],
    ['FREQ=MONTHLY;BYDAY=MO;BYSETPOS=0', /BYSETPOS values must be -366 to 366, not 0/],
    ['FREQ=DAILY;INTERVAL=0', /INTERVAL values must be 1 to 366/],
    ['FREQ=DAILY;INTERVAL=367', /INTERVAL values must be 1 to 366/],
    ['FREQ=DAILY;INTERVAL=1,2', /INTERVAL is one number/],
    ['FREQ=DAILY;INTERVAL=x', /INTERVAL must be a comma-separated list of integers/],
    ['FREQ=DAILY;COUNT=0', /COUNT values must be 1 to 1000/],
    ['FREQ=DAILY;COUNT=1001', /COUNT values must be 1 to 1000/],
    ['FREQ=DAILY;UNTIL=2026', /UNTIL must be a date/],
    ['FREQ=DAILY;UNTIL=20261332', /UNTIL is not a real date-time/],
    ['FREQ=DAILY;UNTIL=20260101T250000Z', /UNTIL is not a real date-time/],
    ['FREQ=DAILY;UNTIL=20260101T000000Z', /UNTIL is before startsAt/],
    ['FREQ=DAILY;COUNT=3;UNTIL=20270101T000000Z', /give COUNT or UNTIL, not both/],
    ['FREQ=DAILY;WKST=XX', /WKST must be a weekday/],
    ['FREQ=DAILY;BYEASTER=0', /BYEASTER is not an RRULE part schedules support/],
    ['FREQ=DAILY;X-NAME=1', /X-NAME is not an RRULE part/],
    ['FREQ=DAILY;FREQ=WEEKLY', /FREQ is given twice/],
    ['FREQ=DAILY;BYHOUR', /BYHOUR needs a value/],
    ['BYHOUR=9', /FREQ is required/],
    ['FREQ=SOMETIMES', /FREQ must be YEARLY, MONTHLY, WEEKLY or DAILY/],
    ['FREQ=SECONDLY', /FREQ=SECONDLY is finer than schedules repeat/],
    ['FREQ=MINUTELY;INTERVAL=30', /FREQ=MINUTELY is finer than schedules repeat/],
    ['FREQ=HOURLY', /FREQ=HOURLY is finer than schedules repeat: the finest is DAILY; for several times a day use FREQ=DAILY with BYHOUR and BYMINUTE/],
    [`FREQ=DAILY;${DENSE_TIMES};BYSECOND=0,30`, /BYHOUR x BYMINUTE x BYSECOND give 96 start times a day; at most 48 \(one every half hour on average\)/],
    [
      `FREQ=YEARLY;BYYEARDAY=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32;${DENSE_TIMES}`,
      /FREQ=YEARLY with these parts allows up to 1536 occurrences a period; at most 1500/,
    ],
    ['FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30', /This rule has no occurrence from startsAt on \(looked 10000 days ahead\)/],
    ['FREQ=DAILY;BYSETPOS=2;BYHOUR=9', /no occurrence/],
    ['FREQ=DAILY;COUNT=1000;BYMONTH=2;BYMONTHDAY=29', /COUNT=1000: this rule does not reach its last occurrence within 10000 days; give UNTIL instead/],
    ['FREQ=DAILY;DTSTART=20260101T000000Z', /give the start as startsAt, not DTSTART/],
    ['FREQ=DAILY\nFREQ=WEEKLY', /one line/],
  ];
  for (const [rrule, message] of refused) {
    const res = await call('POST', '/api/v1/schedules', body(rrule));
    t.equal(res.status, 400, rrule);
    t.equal(res.body?.error?.code, 'validation_failed', rrule);
    t.match(res.body?.error?.message, message, rrule);
    t.same(res.body?.error?.details?.issues?.[0]?.path, ['rrule'], `${rrule}: the issue is on rrule`);
  }
  for (const rrule of REFUSED) t.equal((await call('POST', '/api/v1/schedules', body(rrule))).status, 400, `refused: ${rrule.slice(0, 80)}`);

  // The series as a whole: from 1970 on, occurrences of at most 366 days.
  let res = await call('POST', '/api/v1/schedules', body('FREQ=YEARLY', { startsAt: '1969-06-01T09:00:00Z', endsAt: '1969-06-01T10:00:00Z' }));
  t.equal(res.status, 400);
  t.match(res.body.error, { message: /starts in 1970 or later/, details: { issues: [{ path: ['startsAt'] }] } });
  res = await call('POST', '/api/v1/schedules', body('FREQ=YEARLY', { endsAt: '2027-06-02T10:00:00Z' }));
  t.equal(res.status, 400);
  t.match(res.body.error, { message: /lasts at most 366 days/, details: { issues: [{ path: ['endsAt'] }] } });
  t.equal((await call('GET', '/api/v1/schedules')).body.data.items.length, 0, 'nothing refused was stored');

  // What the product needs is accepted (and normalised by the rrule library).
  const accepted = [
    'FREQ=DAILY',
    'rrule:freq=weekly;byday=mo,we,fr',
    'FREQ=WEEKLY;INTERVAL=2;BYDAY=SA,SU;WKST=SU',
    'FREQ=DAILY;BYHOUR=9,12,15;BYMINUTE=0,30',
    `FREQ=DAILY;${DENSE_TIMES}`,
    'FREQ=MONTHLY;BYDAY=-1FR',
    'FREQ=MONTHLY;BYMONTHDAY=1,-1;COUNT=12',
    'FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1',
    'FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=24,25,26',
    'FREQ=YEARLY;BYWEEKNO=1,-1;BYDAY=MO',
    'FREQ=YEARLY;BYYEARDAY=1,100,-1',
    'FREQ=DAILY;UNTIL=20261231',
    'FREQ=DAILY;UNTIL=20261231T235959Z',
    'FREQ=DAILY;COUNT=1000;BYDAY=MO',
  ];
  for (const rrule of accepted) {
    res = await call('POST', '/api/v1/schedules', body(rrule));
    t.equal(res.status, 201, `${rrule}: ${JSON.stringify(res.body?.error ?? '')}`);
  }
  t.equal(
    (await call('GET', '/api/v1/schedules?limit=100')).body.data.items.find((s: any) => /BYDAY=MO,WE,FR/.test(s.rrule))?.rrule,
    'FREQ=WEEKLY;BYDAY=MO,WE,FR',
  );

  // PATCH is held to the same rules.
  const id = res.body.data.id;
  res = await call('PATCH', `/api/v1/schedules/${id}`, { rrule: 'FREQ=DAILY;BYHOUR=99' });
  t.equal(res.status, 400);
  t.match(res.body.error.message, /BYHOUR/);
  t.equal((await call('PATCH', `/api/v1/schedules/${id}`, { rrule: 'FREQ=MINUTELY' })).status, 400);
  t.equal((await call('PATCH', `/api/v1/schedules/${id}`, { rrule: 'FREQ=DAILY;BYMINUTE=0,30' })).status, 200);
});

t.test('a rule stored before the checks is skipped with a warning, never expanded', async (t) => {
  const { app, call, playlist, screen } = await setup(t);
  const p = await playlist('P');
  const res = await call('POST', '/api/v1/schedules', {
    name: 'Old rule',
    content: { playlistId: p },
    targets: { screenIds: [screen.screenId] },
    startsAt: '2016-01-01T00:00:00Z',
    endsAt: '2016-01-01T00:00:01Z',
    rrule: 'FREQ=DAILY',
    timeZone: 'UTC',
  });
  t.equal(res.status, 201);
  // As an older server stored it: every second since 2016.
  await app.deps.db.updateTable('schedules').set({ rrule: 'FREQ=SECONDLY' }).where('id', '=', res.body.data.id).execute();
  // One instant for both ends: two clock reads a millisecond apart made the range 62 days and 1 ms, over the limit (400).
  const now = Date.now();
  const from = new Date(now).toISOString();
  const to = new Date(now + 62 * 86_400_000).toISOString();
  const started = performance.now();
  const preview = await call('POST', '/api/v1/schedules/preview', { screenId: screen.screenId, from, to });
  t.equal(preview.status, 200);
  t.ok(performance.now() - started < 5000, 'answered at once (it took minutes before)');
  t.match(preview.body.data.warnings, [{ code: 'rrule_unsupported', scheduleId: res.body.data.id, message: /FREQ=SECONDLY is finer/ }]);
  t.notOk(
    preview.body.data.timeline.some((s: any) => s.source.type === 'schedule'),
    'it plays nowhere',
  );
  const got = await call('GET', `/api/v1/schedules/${res.body.data.id}`);
  t.equal(got.status, 200);
  t.equal(got.body.data.nextOccurrence, null);
  const manifest = await app.json('/api/v1/player/manifest', { headers: screen.headers });
  t.equal(manifest.status, 200);
  t.match(manifest.body.data.warnings, [{ code: 'rrule_unsupported' }]);
});

/** Event-loop delay (ms) while `work` runs. */
async function loopDelay(work: () => Promise<unknown>): Promise<{ p99: number; max: number; ms: number }> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  h.disable();
  return { p99: h.percentile(99) / 1e6, max: h.max / 1e6, ms };
}

t.test('the worst rules allowed, from years ago: creating them and every manifest and preview keep the event loop free', async (t) => {
  // Production answers without checking its own responses (tests check them, at a cost that
  // grows with a 2 MB preview); the loop is measured as a server runs.
  const { app, call, playlist, screen, owner } = await setup(t, { validateResponses: false });
  const group = await call('POST', '/api/v1/screen-groups', { name: 'All', screenIds: [screen.screenId] });
  t.equal(group.status, 201);
  const second = await pairScreen(app, owner, { name: 'Second', groupIds: [group.body.data.id] });
  const playlists: string[] = [];
  for (let i = 0; i < WORST_ALLOWED.length; i++) playlists.push(await playlist(`P${i}`));

  // The bound is 200 ms of a machine to ourselves. A busy machine (CI, other test files)
  // gives this process a share of a core: a busy loop measures it, and the bound grows by
  // as much, plus the hiccups light requests alone see. (The freeze this guards against
  // took 13 s for the POST and 25 s for each manifest.)
  const spin = performance.now();
  const cpu = process.cpuUsage();
  while (performance.now() - spin < 300);
  const used = process.cpuUsage(cpu);
  const share = Math.min(1, (used.user + used.system) / 1000 / (performance.now() - spin));
  const floor = await loopDelay(async () => {
    const until = performance.now() + 2000;
    while (performance.now() < until) await app.json('/readyz');
  });

  const ids: string[] = [];
  let screenPreview: any;
  let groupPreview: any;
  let list: any;
  const from = Date.now();
  const window = { from: new Date(from).toISOString(), to: new Date(from + 62 * 86_400_000).toISOString() };
  const heavy = await loopDelay(async () => {
    for (const [i, w] of WORST_ALLOWED.entries()) {
      const res = await call('POST', '/api/v1/schedules', {
        name: w.name,
        content: { playlistId: playlists[i] },
        // Half on the screen, half on the group (the second screen sees those only).
        targets: i % 2 ? { groupIds: [group.body.data.id] } : { screenIds: [screen.screenId] },
        startsAt: w.startsAt,
        endsAt: new Date(Date.parse(w.startsAt) + w.durationMs).toISOString(),
        rrule: w.rrule,
        timeZone: 'Europe/London',
        // The densest short rule wins over the rest.
        priority: i === 0 ? 100 : i,
      });
      t.equal(res.status, 201, `${w.name}: ${JSON.stringify(res.body?.error ?? '')}`);
      ids.push(res.body.data.id);
      // Every creation changes the screens' manifests: each fetch builds anew.
      t.equal((await app.json('/api/v1/player/manifest', { headers: screen.headers })).status, 200);
      t.equal((await app.json('/api/v1/player/manifest', { headers: second.headers })).status, 200);
    }
    // Both previews, a listing and readiness at once.
    const answers = await Promise.all([
      call('POST', '/api/v1/schedules/preview', { screenId: screen.screenId, ...window }),
      call('POST', '/api/v1/schedules/preview', { groupId: group.body.data.id, ...window }),
      call('GET', '/api/v1/schedules?limit=100'),
      app.json('/readyz'),
    ]);
    for (const res of answers) t.equal(res.status, 200);
    [screenPreview, groupPreview, list] = answers;
  });
  const bound = 200 / Math.max(share, 0.1) + floor.max;
  t.comment(
    `${WORST_ALLOWED.length} worst schedules created, 2 manifests after each, two 62-day previews: ${Math.round(heavy.ms)} ms; ` +
      `event-loop delay p99 ${heavy.p99.toFixed(0)} ms, max ${heavy.max.toFixed(0)} ms (light requests alone: p99 ${floor.p99.toFixed(0)} ms, max ${floor.max.toFixed(0)} ms; this process had ${Math.round(share * 100)}% of a core)`,
  );
  t.ok(heavy.p99 < bound, `event-loop delay p99 ${heavy.p99.toFixed(0)} ms < ${bound.toFixed(0)} ms`);
  t.ok(heavy.max < bound, `event-loop delay max ${heavy.max.toFixed(0)} ms < ${bound.toFixed(0)} ms`);

  // What was built is right: the dense rule wins 10 minutes of every half hour.
  const manifest = (await app.json('/api/v1/player/manifest', { headers: screen.headers })).body.data;
  const dense = manifest.timeline.filter((s: any) => s.source.id === ids[0]);
  t.ok(dense.length >= 95 && dense.length <= 97, `${dense.length} ten-minute occurrences in the manifest's 48 hours`);
  t.ok(
    dense.slice(1, -1).every((s: any) => Date.parse(s.endsAt) - Date.parse(s.startsAt) === 600_000 && new Date(s.startsAt).getUTCMinutes() % 30 === 0),
    'each 10 minutes long, on the hour and half hour',
  );
  t.ok(
    manifest.timeline.every((s: any) => s.source.type === 'schedule'),
    'the year-long occurrences cover the rest',
  );
  // 62 days of it would be 6 000 segments: the preview stops at 3 000 (a month) and says so.
  const timeline = screenPreview.body.data.timeline;
  t.equal(timeline.length, 3000);
  const reached = (Date.parse(timeline.at(-1).endsAt) - from) / 86_400_000;
  t.ok(reached > 30 && reached < 32, `the preview reaches ${reached.toFixed(1)} days ahead`);
  t.match(screenPreview.body.data.warnings, [{ code: 'preview_truncated', message: /at most 3000 segments/ }]);
  t.ok(
    groupPreview.body.data.timeline.every((s: any) => s.source.type === 'schedule' && ids.filter((_, i) => i % 2).includes(s.source.id)),
    'the group preview shows the group’s schedules only',
  );
  t.equal(list.body.data.items.length, WORST_ALLOWED.length);
  t.ok(list.body.data.items.filter((s: any) => s.nextOccurrence).length >= 5, 'next occurrences are given (the sparse ones are years away or over)');
});
