import Papa from 'papaparse';
import t, { type Test } from 'tap';
import { signedInApp } from './helpers/auth.js';
import type { TestApp } from './helpers/harness.js';
import { pairScreen, type PairedScreen } from './helpers/screens.js';

/**
 * The five noise history reports against figures computed here from the buckets sent
 * through real heartbeats: across Berlin's spring-forward and fall-back days, in Kolkata
 * (a half-hour offset: the minute path), with gaps, a retried heartbeat, CSV parsed back.
 */

const H = 3_600_000;

interface B {
  screenId: string;
  ms: number;
  averageLevel: number;
  peakLevel: number;
  monitoredMs: number;
  warningMs: number;
  loudMs: number;
  triggerCount: number | null;
}

function make(screenId: string, fromIso: string, toIso: string, seed: number): B[] {
  const out: B[] = [];
  for (let ms = Date.parse(fromIso), i = 0; ms < Date.parse(toIso); ms += 10_000, i++) {
    if (i % 97 < 20) continue; // gaps
    const x = (i * 7919 + seed * 104729) % 1000;
    const monitored = 1000 + ((x * 13) % 9001);
    out.push({
      screenId,
      ms,
      averageLevel: 20 + (x % 600) / 10,
      peakLevel: Math.min(100, 40 + (x % 600) / 10),
      monitoredMs: monitored,
      warningMs: Math.min(monitored, (x * 3) % 5000),
      loudMs: Math.min(monitored, (x * 7) % 3000),
      triggerCount: i % 13 === 0 ? null : x % 4,
    });
  }
  return out;
}

async function send(app: TestApp, screen: PairedScreen, list: B[]) {
  const mine = list.filter((b) => b.screenId === screen.screenId);
  for (let i = 0; i < mine.length; i += 120) {
    const pendingHistory = mine.slice(i, i + 120).map(({ screenId: _s, ms, ...b }) => ({ startedAt: new Date(ms).toISOString(), ...b }));
    const res = await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: screen.headers, json: { noiseMeter: { pendingHistory } } });
    if (res.status !== 200) throw new Error(`heartbeat ${res.status}`);
  }
}

/** Expected figures of the buckets in [a, b). */
function expect(list: B[], a: number, b: number, screens = 1) {
  const in_ = list.filter((x) => x.ms >= a && x.ms < b);
  const m = in_.reduce((s, x) => s + x.monitoredMs, 0);
  const l = in_.reduce((s, x) => s + x.averageLevel * x.monitoredMs, 0);
  return {
    count: in_.length,
    monitoredMs: m,
    averageLevel: m > 0 ? l / m : null,
    peakLevel: in_.length ? Math.max(...in_.map((x) => x.peakLevel)) : null,
    warningMs: in_.reduce((s, x) => s + x.warningMs, 0),
    loudMs: in_.reduce((s, x) => s + x.loudMs, 0),
    triggerCount: in_.reduce((s, x) => s + (x.triggerCount ?? 0), 0),
    coverage: m / ((b - a) * screens),
  };
}

function same(t: Test, got: any, want: ReturnType<typeof expect>, label: string) {
  for (const f of ['monitoredMs', 'warningMs', 'loudMs', 'triggerCount', 'peakLevel'] as const) t.equal(got[f], want[f], `${label}: ${f}`);
  if (want.averageLevel === null) t.equal(got.averageLevel, null, `${label}: averageLevel null`);
  else t.ok(Math.abs(got.averageLevel - want.averageLevel) < 1e-9, `${label}: averageLevel ${got.averageLevel} ~ ${want.averageLevel}`);
}

/** ISO with the offset of a zone, by Intl (independent of the server). */
function isoIn(ms: number, zone: string) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(ms)
      .map((p) => [p.type, p.value]),
  );
  const wall = Date.UTC(+parts.year!, +parts.month! - 1, +parts.day!, +parts.hour!, +parts.minute!, +parts.second!);
  const off = (wall - ms) / 60_000;
  const a = Math.abs(off);
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${off < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

t.test('noise history reports', async (t) => {
  const { app, owner } = await signedInApp(t);
  const call = (method: string, url: string, json?: unknown) => app.json(url, { method, headers: owner.headers, ...(json === undefined ? {} : { json }) });
  const loc = async (name: string, timeZone: string) => (await call('POST', '/api/v1/locations', { name, timeZone })).body.data.id as string;
  const berlinLoc = await loc('Berlin', 'Europe/Berlin');
  const berlin = await pairScreen(app, owner, { name: 'Berlin A', locationId: berlinLoc });
  const formula = await pairScreen(app, owner, { name: '=HYPERLINK("http://x","y")', locationId: berlinLoc });
  const kolkata = await pairScreen(app, owner, { name: 'Kolkata', locationId: await loc('Kolkata', 'Asia/Kolkata') });
  t.equal((await call('POST', '/api/v1/plugins/noise-meter/install')).status, 200);
  const created = await call('POST', '/api/v1/plugins/noise-meter/instances', {
    name: '+cmd',
    targets: { screenIds: [berlin.screenId, formula.screenId, kolkata.screenId] },
    config: {},
  });
  t.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.data.id as string;

  const all = [
    ...make(berlin.screenId, '2026-03-28T20:00:00Z', '2026-03-29T03:00:00Z', 1),
    ...make(formula.screenId, '2026-03-28T22:30:00Z', '2026-03-29T01:30:00Z', 2),
    ...make(kolkata.screenId, '2026-03-28T17:00:00Z', '2026-03-28T20:00:00Z', 3),
    ...make(berlin.screenId, '2026-10-24T21:00:00Z', '2026-10-25T02:00:00Z', 4),
  ];
  for (const s of [berlin, formula, kolkata]) await send(app, s, all);
  await send(app, berlin, all); // retried: adds nothing

  const base = `/api/v1/plugins/noise-meter/instances/${id}/history`;
  const get = (what: string, q: Record<string, string>) => call('GET', `${base}/${what}?${new URLSearchParams(q)}`);

  await t.test('summary (default zone: the first screen’s), with the loudest hours', async (t) => {
    const from = '2026-03-28T18:00:00Z';
    const to = '2026-03-29T04:00:00Z';
    const res = await get('summary', { from, to, timeZone: 'Europe/Berlin' });
    t.equal(res.status, 200, JSON.stringify(res.body));
    const d = res.body.data;
    same(t, d, expect(all, Date.parse(from), Date.parse(to)), 'summary');
    t.equal(d.screenCount, 3);
    t.ok(Math.abs(d.coverage - expect(all, Date.parse(from), Date.parse(to), 3).coverage) < 1e-12, 'coverage');
    const hours = Array.from({ length: 10 }, (_, i) => Date.parse(from) + i * H)
      .map((s) => ({ s, e: expect(all, s, s + H) }))
      .filter((h) => h.e.monitoredMs > 0)
      .sort((a, b) => b.e.averageLevel! - a.e.averageLevel!)
      .slice(0, 5);
    t.same(
      d.loudestPeriods.map((p: any) => p.startsAt),
      hours.map((h) => isoIn(h.s, 'Europe/Berlin')),
      'the loudest hours',
    );
    const kz = await get('summary', { from, to, timeZone: 'Asia/Kolkata' });
    same(t, kz.body.data, expect(all, Date.parse(from), Date.parse(to)), 'the same sums in Kolkata');
    t.match(kz.body.data.loudestPeriods[0].startsAt, /:30:00\+05:30$|:00:00\+05:30$/);
    const odd = await get('summary', { from: '2026-03-28T22:00:10Z', to: '2026-03-29T00:59:50Z' });
    same(t, odd.body.data, expect(all, Date.parse('2026-03-28T22:00:10Z'), Date.parse('2026-03-29T00:59:50Z')), 'a range off the minute grid (raw buckets)');
  });

  await t.test('series: every slot present, gaps null, 1h in Berlin and Kolkata, 1m, 10s', async (t) => {
    for (const [zone, from, to, res, step] of [
      ['Europe/Berlin', '2026-03-28T23:00:00+01:00', '2026-03-29T05:00:00+02:00', '1h', H],
      ['Asia/Kolkata', '2026-03-28T22:00:00+05:30', '2026-03-29T02:00:00+05:30', '1h', H],
      ['Asia/Kolkata', '2026-03-28T23:40:00+05:30', '2026-03-29T00:20:00+05:30', '1m', 60_000],
      ['Europe/Berlin', '2026-03-29T04:00:00+02:00', '2026-03-29T05:30:00+02:00', '5m', 300_000],
      ['Europe/Berlin', '2026-03-29T04:58:00+02:00', '2026-03-29T05:10:00+02:00', '10s', 10_000],
    ] as const) {
      const r = await get('series', { from, to, timeZone: zone, resolution: res });
      t.equal(r.status, 200, JSON.stringify(r.body));
      t.equal(r.body.data.resolution, res);
      const a = Date.parse(from);
      const n = Math.ceil((Date.parse(to) - a) / step);
      t.equal(r.body.data.points.length, n, `${zone} ${res}: every slot`);
      r.body.data.points.forEach((p: any, i: number) => {
        t.equal(p.startsAt, isoIn(a + i * step, zone));
        same(t, p, expect(all, a + i * step, a + (i + 1) * step), `${zone} ${res} ${p.startsAt}`);
      });
      t.ok(r.body.data.points.some((p: any) => p.averageLevel === null && p.monitoredMs === 0) || res === '1h', `${zone} ${res}: gaps are null, not zeros`);
    }
    const auto = await get('series', { from: '2026-03-28T00:00:00Z', to: '2026-03-30T00:00:00Z' });
    t.equal(auto.body.data.resolution, '5m', 'auto: the finest with at most 1000 points');
    const days = await get('series', { from: '2026-03-28T00:00:00+01:00', to: '2026-03-30T00:00:00+02:00', timeZone: 'Europe/Berlin', resolution: '1d' });
    t.same(
      days.body.data.points.map((p: any) => p.startsAt),
      ['2026-03-28T00:00:00+01:00', '2026-03-29T00:00:00+01:00'],
    );
  });

  await t.test('daily: local days of 24, 23 and 25 hours with the busiest hour; Kolkata days', async (t) => {
    for (const [zone, from, to] of [
      ['Europe/Berlin', '2026-03-28T00:00:00+01:00', '2026-03-30T00:00:00+02:00'],
      ['Europe/Berlin', '2026-10-24T00:00:00+02:00', '2026-10-26T00:00:00+01:00'],
      ['Asia/Kolkata', '2026-03-28T00:00:00+05:30', '2026-03-30T00:00:00+05:30'],
    ] as const) {
      const r = await get('daily', { from, to, timeZone: zone });
      t.equal(r.status, 200);
      const rows = r.body.data;
      t.equal(rows.length, 2, `${zone}: two days`);
      let start = Date.parse(from);
      for (const row of rows) {
        // The next local midnight, found by Intl hour by hour.
        let end = start + H;
        while (isoIn(end, zone).slice(11, 19) !== '00:00:00') end += H / 2;
        t.equal(row.startsAt, isoIn(start, zone));
        t.equal(row.endsAt, isoIn(end, zone));
        t.equal(row.date, isoIn(start, zone).slice(0, 10));
        t.equal(row.hours, (end - start) / H);
        same(t, row, expect(all, start, end), `${zone} ${row.date}`);
        let best: number | null = null;
        let bestAvg = -1;
        for (let h = start; h < end; h += H) {
          const e = expect(all, h, h + H);
          if (e.monitoredMs > 0 && e.averageLevel! > bestAvg) (bestAvg = e.averageLevel!), (best = h);
        }
        t.equal(row.busiestHour, best === null ? null : isoIn(best, zone), `${zone} ${row.date}: busiest hour`);
        start = end;
      }
      if (zone === 'Europe/Berlin') t.same(rows.map((x: any) => x.hours).sort(), from.startsWith('2026-03') ? [23, 24] : [24, 25]);
    }
  });

  await t.test('screens: per screen, sorted', async (t) => {
    const from = '2026-03-28T00:00:00Z';
    const to = '2026-03-30T00:00:00Z';
    const r = await get('screens', { from, to, sort: 'averageLevel', order: 'desc' });
    t.equal(r.status, 200);
    t.equal(r.body.data.length, 3);
    for (const row of r.body.data)
      same(
        t,
        row,
        expect(
          all.filter((b) => b.screenId === row.screenId),
          Date.parse(from),
          Date.parse(to),
        ),
        row.name,
      );
    const avgs = r.body.data.map((x: any) => x.averageLevel);
    t.same(
      avgs,
      [...avgs].sort((a: number, b: number) => b - a),
      'by average level, descending',
    );
    const byName = await get('screens', { from, to, sort: 'name' });
    t.same(
      byName.body.data.map((x: any) => x.name),
      ['=HYPERLINK("http://x","y")', 'Berlin A', 'Kolkata'].sort((a, b) => a.localeCompare(b)),
    );
  });

  await t.test('export.csv: the series and the days parsed back; formulas escaped; the file name', async (t) => {
    const q = { from: '2026-03-29T00:00:00+01:00', to: '2026-03-29T04:00:00+02:00', timeZone: 'Europe/Berlin', resolution: '5m' };
    const res = await fetch(`${app.url}${base}/export.csv?${new URLSearchParams({ ...q, what: 'series' })}`, { headers: owner.headers });
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
    t.equal(res.headers.get('content-disposition'), `attachment; filename="cmd_2026-03-29_2026-03-29.csv"; filename*=UTF-8''%2Bcmd_2026-03-29_2026-03-29.csv`);
    const parsed = Papa.parse<Record<string, string>>(await res.text(), { header: true, skipEmptyLines: true });
    const json = (await get('series', q)).body.data.points;
    t.equal(parsed.data.length, json.length);
    t.same(
      parsed.data,
      json.map((p: any) => Object.fromEntries(Object.entries(p).map(([k, v]) => [k, v === null ? '' : String(v)]))),
      'the CSV is the series',
    );
    t.match(parsed.data[0]!.startsAt, /^2026-03-29T00:00:00\+01:00$/);
    const dres = await fetch(`${app.url}${base}/export.csv?${new URLSearchParams({ ...q, what: 'daily' })}`, { headers: owner.headers });
    const days = Papa.parse<Record<string, string>>(await dres.text(), { header: true, skipEmptyLines: true }).data;
    const djson = (await get('daily', q)).body.data;
    t.same(
      days.map((d) => [d.date, d.startsAt, d.hours, d.monitoredMs]),
      djson.map((d: any) => [d.date, d.startsAt, String(d.hours), String(d.monitoredMs)]),
    );
    const sres = await fetch(`${app.url}${base}/export.csv?${new URLSearchParams({ ...q, what: 'screens' })}`, { headers: owner.headers });
    const text = await sres.text();
    const names = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true }).data.map((r) => r.name);
    t.ok(names.includes(`'=HYPERLINK("http://x","y")`), 'a formula cell is escaped');
    t.notOk(
      names.some((n) => n?.startsWith('=')),
      'no cell starts with =',
    );
  });

  await t.test('bad inputs: 400 and 404 with the error envelope', async (t) => {
    const q = { from: '2026-03-29T00:00:00Z', to: '2026-03-30T00:00:00Z' };
    for (const [what, query, status, code] of [
      ['summary', { from: q.to, to: q.from }, 400, 'validation_failed'],
      ['summary', { ...q, to: q.from }, 400, 'validation_failed'],
      ['summary', { from: '2025-01-01T00:00:00Z', to: q.to }, 400, 'validation_failed'],
      ['daily', { ...q, timeZone: 'Mars/Olympus' }, 400, 'validation_failed'],
      ['series', { ...q, resolution: '2h' }, 400, 'validation_failed'],
      ['series', { from: '2026-03-27T00:00:00Z', to: q.to, resolution: '10s' }, 400, 'too_many_points'],
      ['export.csv', { from: '2026-03-27T00:00:00Z', to: q.to, resolution: '10s' }, 400, 'too_many_points'],
      ['screens', { ...q, sort: 'volume' }, 400, 'validation_failed'],
      ['summary', { from: '2026-03-29', to: q.to }, 400, 'validation_failed'],
    ] as const) {
      const r = await get(what, query as Record<string, string>);
      t.equal(r.status, status, `${what} ${JSON.stringify(query)}`);
      t.equal(r.body.error?.code, code);
    }
    const unknown = await call('GET', `/api/v1/plugins/noise-meter/instances/00000000-0000-4000-8000-000000000000/history/summary?${new URLSearchParams(q)}`);
    t.equal(unknown.status, 404);
    t.equal(unknown.body.error?.code, 'not_found');
  });
});
