import { DateTime } from 'luxon';
import t from 'tap';
import { expand, MAX_WALK_DAYS } from '../server/src/modules/schedules/recurrence.js';
import { checkRruleText } from '../server/src/modules/schedules/rrule-check.js';
import { occurrences, parseRrule, resolveTimeline, type ScheduleInput } from '../server/src/modules/schedules/timeline.js';
import { instantOf, wallClock } from '../server/src/modules/schedules/zone-clock.js';

const ms = (iso: string) => Date.parse(iso);
const iso = (n: number) => new Date(n).toISOString();
const base: Omit<ScheduleInput, 'id' | 'startsAt' | 'endsAt'> = {
  content: { type: 'playlist', id: 'p1' },
  rrule: null,
  timeZone: 'UTC',
  priority: 0,
  enabled: true,
  updatedAt: '2026-01-01T00:00:00.000Z',
};

t.test('a daily 09:00-17:00 London schedule keeps local time across the spring DST change', async (t) => {
  const s: ScheduleInput = {
    ...base,
    id: 's',
    timeZone: 'Europe/London',
    startsAt: '2026-03-27T09:00:00.000Z',
    endsAt: '2026-03-27T17:00:00.000Z',
    rrule: 'FREQ=DAILY',
  };
  const got = occurrences(s, ms('2026-03-27T00:00:00Z'), ms('2026-03-31T00:00:00Z')).map((o) => [iso(o.start), iso(o.end)]);
  t.same(got, [
    ['2026-03-27T09:00:00.000Z', '2026-03-27T17:00:00.000Z'],
    ['2026-03-28T09:00:00.000Z', '2026-03-28T17:00:00.000Z'],
    ['2026-03-29T08:00:00.000Z', '2026-03-29T16:00:00.000Z'], // BST from 29 March
    ['2026-03-30T08:00:00.000Z', '2026-03-30T16:00:00.000Z'],
  ]);
});

t.test('weekdays at 09:00 in New York across the autumn change, with UNTIL', async (t) => {
  const s: ScheduleInput = {
    ...base,
    id: 's',
    timeZone: 'America/New_York',
    startsAt: '2026-10-29T13:00:00.000Z',
    endsAt: '2026-10-29T14:00:00.000Z',
    rrule: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;UNTIL=20261104T000000Z',
  };
  const got = occurrences(s, ms('2026-10-01T00:00:00Z'), ms('2026-12-01T00:00:00Z')).map((o) => iso(o.start));
  t.same(got, ['2026-10-29T13:00:00.000Z', '2026-10-30T13:00:00.000Z', '2026-11-02T14:00:00.000Z', '2026-11-03T14:00:00.000Z']);
});

t.test('an occurrence in the spring-forward gap moves forward, never vanishes', async (t) => {
  // 02:30 local does not exist in New York on 8 March 2026.
  const s: ScheduleInput = {
    ...base,
    id: 's',
    timeZone: 'America/New_York',
    startsAt: '2026-03-07T07:30:00.000Z',
    endsAt: '2026-03-07T08:30:00.000Z',
    rrule: 'FREQ=DAILY;COUNT=3',
  };
  const got = occurrences(s, ms('2026-03-01T00:00:00Z'), ms('2026-03-20T00:00:00Z')).map((o) => iso(o.start));
  t.equal(got.length, 3);
  t.equal(got[0], '2026-03-07T07:30:00.000Z');
  t.equal(got[2], '2026-03-09T06:30:00.000Z', '02:30 EDT the day after');
  t.ok(Date.parse(got[1]!) > Date.parse(got[0]!) && Date.parse(got[1]!) < Date.parse(got[2]!));
});

t.test('an occurrence already running at the window start is included', async (t) => {
  const s: ScheduleInput = { ...base, id: 's', startsAt: '2026-05-01T08:00:00.000Z', endsAt: '2026-05-01T20:00:00.000Z', rrule: 'FREQ=DAILY' };
  const got = occurrences(s, ms('2026-05-03T12:00:00Z'), ms('2026-05-03T13:00:00Z'));
  t.same(
    got.map((o) => iso(o.start)),
    ['2026-05-03T08:00:00.000Z'],
  );
});

t.test('disabled schedules and bad rules', async (t) => {
  t.same(occurrences({ ...base, id: 's', enabled: false, startsAt: '2026-05-01T08:00:00.000Z', endsAt: null }, 0, ms('2030-01-01T00:00:00Z')), []);
  t.equal(parseRrule('RRULE:FREQ=WEEKLY;BYDAY=MO'), 'FREQ=WEEKLY;BYDAY=MO');
  t.throws(() => parseRrule('FREQ=SOMETIMES'));
  t.throws(() => parseRrule('DTSTART:20260101T000000Z\nFREQ=DAILY'));
  t.throws(() => parseRrule('FREQ=DAILY;BYHOUR=99'), { name: 'RruleError', part: 'BYHOUR' });
  t.equal(parseRrule('freq=monthly;byday=-1fr'), 'FREQ=MONTHLY;BYDAY=-1FR');
});

t.test('precedence: window sources, then priority, then recency, then the fallbacks, then idle', async (t) => {
  const day = (h: number) => ms(`2026-06-01T${String(h).padStart(2, '0')}:00:00Z`);
  const low: ScheduleInput = { ...base, id: 'low', content: { type: 'playlist', id: 'A' }, startsAt: iso(day(8)), endsAt: iso(day(18)), priority: 1 };
  const high: ScheduleInput = { ...base, id: 'high', content: { type: 'layout', id: 'B' }, startsAt: iso(day(10)), endsAt: iso(day(12)), priority: 5 };
  const olderTie: ScheduleInput = {
    ...base,
    id: 'old',
    content: { type: 'playlist', id: 'C' },
    startsAt: iso(day(14)),
    endsAt: iso(day(16)),
    priority: 1,
    updatedAt: '2025-01-01T00:00:00.000Z',
  };
  const newerTie: ScheduleInput = {
    ...base,
    id: 'new',
    content: { type: 'playlist', id: 'D' },
    startsAt: iso(day(15)),
    endsAt: iso(day(16)),
    priority: 1,
    updatedAt: '2026-05-01T00:00:00.000Z',
  };
  const timeline = resolveTimeline(
    {
      schedules: [low, high, olderTie, newerTie],
      windows: [{ source: { type: 'takeover', id: 'T' }, content: { type: 'playlist', id: 'X' }, start: day(11), end: day(11) + 1_800_000 }],
      fallbacks: [{ source: { type: 'assignment', id: 'screen-1' }, content: { type: 'playlist', id: 'F' } }],
    },
    day(6),
    day(20),
  );
  t.same(
    timeline.map((s) => `${s.startsAt.slice(11, 16)}-${s.endsAt.slice(11, 16)} ${s.source.type}:${s.source.id} ${s.content?.id}`),
    [
      '06:00-08:00 assignment:screen-1 F',
      '08:00-10:00 schedule:low A',
      '10:00-11:00 schedule:high B', // higher priority
      '11:00-11:30 takeover:T X', // a takeover beats any schedule
      '11:30-12:00 schedule:high B',
      '12:00-15:00 schedule:low A', // low and old tie on priority: low changed more recently
      '15:00-16:00 schedule:new D', // new ties with low on priority and is more recent
      '16:00-18:00 schedule:low A',
      '18:00-20:00 assignment:screen-1 F', // adjacent equal segments are merged
    ],
  );
  const idle = resolveTimeline({ schedules: [] }, day(0), day(1));
  t.same(idle, [{ startsAt: iso(day(0)), endsAt: iso(day(1)), source: { type: 'idle', id: null }, content: null }]);
});

t.test('inZone keeps the wall clock when a schedule follows the screen’s zone', async (t) => {
  const { inZone } = await import('../server/src/modules/schedules/timeline.js');
  const s: ScheduleInput = {
    ...base,
    id: 's',
    timeZone: 'Europe/London',
    startsAt: '2026-07-01T08:00:00.000Z',
    endsAt: '2026-07-01T16:00:00.000Z',
    rrule: 'FREQ=DAILY',
  };
  const ny = inZone(s, 'America/New_York');
  t.equal(ny.startsAt, '2026-07-01T13:00:00.000Z', '09:00 BST -> 09:00 EDT');
  t.equal(ny.endsAt, '2026-07-01T21:00:00.000Z');
  t.equal(inZone(s, 'Europe/London'), s);
});

t.test('expanding from a later start (fast path) gives exactly the occurrences of a full expansion', async (t) => {
  // A seeded generator: the same cases on every run, many shapes of rule (every part the
  // checks allow), starts and windows; each compared with a walk from the first occurrence.
  let seed = 20261123;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const some = <T>(xs: readonly T[], p = 0.4): T[] => {
    const got = xs.filter(() => rnd() < p);
    return got.length ? got : [pick(xs)];
  };
  const zones = ['Europe/London', 'America/New_York', 'Australia/Sydney', 'Australia/Lord_Howe', 'Asia/Kolkata', 'UTC'];
  const days = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];
  let compared = 0;
  let nonEmpty = 0;
  let skipped = 0;
  for (let i = 0; i < 600; i++) {
    const freq = pick(['DAILY', 'WEEKLY', 'WEEKLY', 'MONTHLY', 'MONTHLY', 'YEARLY']);
    const parts = [`FREQ=${freq}`];
    if (rnd() < 0.5) parts.push(`INTERVAL=${pick([1, 2, 3, 5])}`);
    if (freq === 'WEEKLY' && rnd() < 0.7) parts.push(`BYDAY=${some(days).join(',')}`);
    if (freq === 'DAILY' && rnd() < 0.3) parts.push(`BYDAY=${pick(['MO,TU,WE,TH,FR', 'SA,SU', 'WE'])}`);
    if (freq === 'MONTHLY' && rnd() < 0.4) parts.push(`BYDAY=${pick(['1MO', '-1FR', '2TU,4TU', 'MO,TU,WE,TH,FR', 'SA'])}`);
    else if (freq === 'MONTHLY' && rnd() < 0.5) parts.push(`BYMONTHDAY=${pick(['1', '-1', '15,30', '31', '1,2,3'])}`);
    if (freq === 'YEARLY') {
      const shape = pick(['month', 'monthday', 'weekno', 'yearday', 'nth']);
      if (shape === 'month') parts.push(`BYMONTH=${some(['1', '3', '6', '12']).join(',')}`);
      if (shape === 'monthday') parts.push(`BYMONTH=${pick(['2', '6,12'])}`, `BYMONTHDAY=${pick(['1', '29', '-1', '10,20'])}`);
      if (shape === 'weekno') parts.push(`BYWEEKNO=${pick(['1', '-1', '20,21', '53'])}`, `BYDAY=${some(days).join(',')}`);
      if (shape === 'yearday') parts.push(`BYYEARDAY=${pick(['1', '-1', '100,200', '366'])}`);
      if (shape === 'nth') parts.push(`BYMONTH=${pick(['3', '10'])}`, `BYDAY=${pick(['-1SU', '1MO', '2SA'])}`);
    }
    if (rnd() < 0.2 && parts.some((p) => /^BY(DAY|MONTHDAY|YEARDAY|WEEKNO)=/.test(p))) parts.push(`BYSETPOS=${pick(['1', '-1', '2', '1,-1'])}`);
    if (rnd() < 0.2) parts.push(`WKST=${pick(days)}`);
    if (rnd() < 0.25) parts.push(`BYHOUR=${pick(['8', '8,12', '20', '0,6,12,18'])}`);
    if (rnd() < 0.15) parts.push(`BYMINUTE=${pick(['0', '0,30', '45'])}`);
    const ending = rnd();
    if (ending < 0.2) parts.push(`UNTIL=${pick(['20261231T000000Z', '20250601T120000Z', '20270315T000000Z'])}`);
    else if (ending < 0.4) parts.push(`COUNT=${pick([5, 40, 300, 1000])}`);
    const rrule = parts.join(';');
    try {
      checkRruleText(rrule);
    } catch {
      skipped++;
      continue;
    }
    const start = Date.UTC(
      2021 + Math.floor(rnd() * 5),
      Math.floor(rnd() * 12),
      1 + Math.floor(rnd() * 28),
      Math.floor(rnd() * 24),
      pick([0, 15, 30]),
      0,
      pick([0, 0, 250]),
    );
    const s = {
      ...base,
      id: `s${i}`,
      timeZone: pick(zones),
      rrule,
      startsAt: new Date(start).toISOString(),
      // Up to 10 days: some series overlap themselves.
      endsAt: new Date(start + pick([30, 90, 480, 1500, 3000, 14_400]) * 60_000).toISOString(),
    };
    const from = Date.UTC(2025 + Math.floor(rnd() * 3), Math.floor(rnd() * 12), 1 + Math.floor(rnd() * 28), Math.floor(rnd() * 24));
    const to = from + pick([1, 48, 24 * 42]) * 3_600_000;
    const fast = expand(s, from, to);
    const full = expand(s, from, to, { exhaustive: true });
    t.notOk(fast.truncated || full.truncated, `${rrule}: within bounds`);
    if (JSON.stringify(fast.occurrences) !== JSON.stringify(full.occurrences))
      t.fail(`${rrule} from ${s.startsAt} in ${s.timeZone}, window ${new Date(from).toISOString()}: ${fast.occurrences.length} vs ${full.occurrences.length}`);
    compared++;
    if (full.occurrences.length) nonEmpty++;
  }
  t.ok(compared > 450, `${compared} rules compared (${skipped} generated rules the checks refuse were left out)`);
  t.ok(nonEmpty > 150, `most cases have occurrences to compare (${nonEmpty})`);
});

t.test('the walk is bounded: a rule that never (or rarely) matches walks only the window’s periods', async (t) => {
  const window = [ms('2028-01-01T00:00:00Z'), ms('2028-03-01T00:00:00Z')] as const;
  // rrule alone walks such a rule day by day to the year 9999 (seconds of work).
  const never = expand(
    { ...base, id: 'n', startsAt: '2026-01-01T09:00:00.000Z', endsAt: '2026-01-01T10:00:00.000Z', rrule: 'FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30' },
    ...window,
  );
  t.same(never.occurrences, []);
  t.notOk(never.truncated, 'the window was covered');
  t.ok(never.periods <= 70, `${never.periods} days walked for a 60-day window (a day either side, and the look back)`);
  // Rarely: 29 February, the last days of the window. A budget that ran out early would miss it
  // (rrule reads INTERVAL twice a period; the budget counts on that).
  const leap = expand(
    { ...base, id: 'l', startsAt: '2024-02-29T09:00:00.000Z', endsAt: '2024-02-29T10:00:00.000Z', rrule: 'FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29' },
    ...window,
  );
  t.same(
    leap.occurrences.map((o) => iso(o.start)),
    ['2028-02-29T09:00:00.000Z'],
  );
  t.ok(leap.periods <= 70, `${leap.periods} days walked`);
  // Years ago, every frequency: the walk starts at the window.
  for (const rrule of [
    'FREQ=DAILY',
    'FREQ=WEEKLY;BYDAY=MO,TH',
    'FREQ=MONTHLY;BYDAY=-1FR',
    'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=28',
    'FREQ=DAILY;COUNT=1000;BYDAY=MO',
  ]) {
    const e = expand({ ...base, id: 'y', startsAt: '1975-02-28T09:00:00.000Z', endsAt: '1975-02-28T10:00:00.000Z', rrule }, ...window);
    t.ok(e.periods <= 70, `${rrule} from 1975: ${e.periods} periods walked`);
  }
  // A window longer than any asked for by the API: the budget stops the walk, and says so.
  const huge = expand(
    { ...base, id: 'h', startsAt: '2026-01-01T09:00:00.000Z', endsAt: '2026-01-01T10:00:00.000Z', rrule: 'FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30' },
    ms('2026-01-01T00:00:00Z'),
    ms('2060-01-01T00:00:00Z'),
  );
  t.ok(huge.truncated);
  t.ok(huge.periods >= MAX_WALK_DAYS && huge.periods <= MAX_WALK_DAYS + 10, `${huge.periods} days walked: the budget`);
  // A rule stored before the checks is not expanded at all.
  const old = expand({ ...base, id: 'o', startsAt: '2016-01-01T00:00:00.000Z', endsAt: '2016-01-01T00:00:01.000Z', rrule: 'FREQ=SECONDLY' }, ...window);
  t.match(old, { occurrences: [], refused: /FREQ=SECONDLY is finer/ });
});

t.test('occurrences that overlap each other are one span', async (t) => {
  // At 00:00 and 01:00, each two hours long: 00:00-03:00 every day.
  const s: ScheduleInput = { ...base, id: 's', startsAt: '2026-05-01T00:00:00.000Z', endsAt: '2026-05-01T02:00:00.000Z', rrule: 'FREQ=DAILY;BYHOUR=0,1' };
  const window = [ms('2026-05-03T00:30:00Z'), ms('2026-05-04T02:00:00Z')] as const;
  const want = [
    ['2026-05-03T00:00:00.000Z', '2026-05-03T03:00:00.000Z'],
    ['2026-05-04T00:00:00.000Z', '2026-05-04T03:00:00.000Z'],
  ];
  t.same(
    occurrences(s, ...window).map((o) => [iso(o.start), iso(o.end)]),
    want,
  );
  t.same(
    occurrences(s, ...window, { exhaustive: true }).map((o) => [iso(o.start), iso(o.end)]),
    want,
  );
  t.same(
    occurrences(s, ...window, { limit: 1 }).map((o) => [iso(o.start), iso(o.end)]),
    want.slice(0, 1),
  );
});

t.test('wall clock and instants: the same as luxon, a repeated hour is the first, a skipped hour moves forward', async (t) => {
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const zones = [
    'Europe/London',
    'America/New_York',
    'Australia/Sydney',
    'Australia/Lord_Howe',
    'Asia/Kathmandu',
    'Pacific/Chatham',
    'America/Sao_Paulo',
    'Africa/Casablanca',
    'UTC',
  ];
  let checked = 0;
  for (let i = 0; i < 3000; i++) {
    const zone = zones[i % zones.length]!;
    const instant = Math.floor(ms('1970-01-01T00:00:00Z') + rnd() * (ms('2080-01-01T00:00:00Z') - ms('1970-01-01T00:00:00Z')));
    const d = DateTime.fromMillis(instant, { zone });
    const floating = Date.UTC(d.year, d.month - 1, d.day, d.hour, d.minute, d.second, d.millisecond);
    if (wallClock(instant, zone) !== floating) t.fail(`${zone} ${iso(instant)}: wall clock ${iso(wallClock(instant, zone))}, luxon ${d.toISO()}`);
    // Back from the wall clock: the same instant, or the earlier one of a repeated hour.
    const back = instantOf(floating, zone);
    if (!(back === instant || (back < instant && wallClock(back, zone) === floating))) t.fail(`${zone} ${iso(instant)}: back to ${iso(back)}`);
    checked++;
  }
  t.equal(checked, 3000);
  // London, 25 October 2026: 01:30 happens twice (BST, then GMT): the first.
  t.equal(iso(instantOf(ms('2026-10-25T01:30:00Z'), 'Europe/London')), '2026-10-25T00:30:00.000Z');
  // London, 29 March 2026: 01:30 does not happen: 02:30 BST (01:30 UTC).
  t.equal(iso(instantOf(ms('2026-03-29T01:30:00Z'), 'Europe/London')), '2026-03-29T01:30:00.000Z');
  t.equal(iso(instantOf(ms('2026-06-01T09:00:00Z'), 'Asia/Kathmandu')), '2026-06-01T03:15:00.000Z');
});

t.test('the timeline sweep picks what a point-by-point reading picks', async (t) => {
  let seed = 99;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const h = (n: number) => ms('2026-06-01T00:00:00Z') + n * 3_600_000;
  for (let round = 0; round < 40; round++) {
    const schedules: ScheduleInput[] = [];
    for (let i = 0; i < 6; i++) {
      const a = Math.floor(rnd() * 40);
      schedules.push({
        ...base,
        id: `s${i}`,
        content: { type: 'playlist', id: `c${i}` },
        startsAt: iso(h(a)),
        endsAt: iso(h(a + 1 + Math.floor(rnd() * 6))),
        rrule: rnd() < 0.5 ? 'FREQ=DAILY' : null,
        priority: Math.floor(rnd() * 3),
        updatedAt: `2026-01-0${1 + Math.floor(rnd() * 9)}T00:00:00.000Z`,
      });
    }
    const fallbacks = [
      { source: { type: 'assignment' as const, id: 'scr' }, content: { type: 'playlist' as const, id: 'F' }, availability: [{ start: h(5), end: h(30) }] },
    ];
    const from = h(0);
    const to = h(72);
    const segments = resolveTimeline({ schedules, fallbacks }, from, to);
    // Every half hour: what the segment says against the strongest schedule running then.
    for (let x = from + 1_800_000; x < to; x += 3_600_000) {
      const seg = segments.find((s) => ms(s.startsAt) <= x && ms(s.endsAt) > x)!;
      const running = schedules
        .filter((s) => occurrences(s, x, x + 1).length)
        .sort((a, b) => b.priority - a.priority || b.updatedAt.localeCompare(a.updatedAt) || a.id.localeCompare(b.id));
      const want = running[0] ? running[0].id : x >= h(5) && x < h(30) ? 'scr' : null;
      if (seg.source.id !== want) t.fail(`round ${round}, ${iso(x)}: ${seg.source.id} instead of ${want}`);
    }
  }
  t.pass('40 random sets of schedules read hour by hour');
});

t.test('availability: a schedule or fallback with nothing to play is passed over for that while', async (t) => {
  const day = (h: number) => ms(`2026-06-01T${String(h).padStart(2, '0')}:00:00Z`);
  const s: ScheduleInput = { ...base, id: 's', content: { type: 'playlist', id: 'S' }, startsAt: iso(day(9)), endsAt: iso(day(17)), priority: 5 };
  const fallbacks = [
    {
      source: { type: 'assignment' as const, id: 'screen' },
      content: { type: 'playlist' as const, id: 'Own' },
      availability: [{ start: day(6), end: day(8) }],
    },
    { source: { type: 'group-assignment' as const, id: 'group' }, content: { type: 'playlist' as const, id: 'Group' } },
  ];
  const timeline = resolveTimeline({ schedules: [s], fallbacks, availability: new Map([['s', [{ start: day(12), end: day(14) }]]]) }, day(5), day(18));
  t.same(
    timeline.map((x) => [x.startsAt.slice(11, 13), x.endsAt.slice(11, 13), x.content?.id]),
    [
      ['05', '06', 'Group'],
      ['06', '08', 'Own'],
      ['08', '12', 'Group'],
      ['12', '14', 'S'],
      ['14', '18', 'Group'],
    ],
  );
  t.same(
    resolveTimeline({ schedules: [s], availability: new Map([['s', []]]) }, day(5), day(18)).map((x) => x.source.type),
    ['idle'],
    'never available: never wins',
  );
});
