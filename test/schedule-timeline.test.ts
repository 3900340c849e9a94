import t from 'tap';
import { occurrences, parseRrule, resolveTimeline, type ScheduleInput } from '../server/src/modules/schedules/timeline.js';

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
  // A seeded generator: the same cases on every run, many shapes of rule.
  let seed = 20261123;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const zones = ['Europe/London', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata', 'UTC'];
  const days = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];
  let compared = 0;
  let nonEmpty = 0;
  for (let i = 0; i < 300; i++) {
    const freq = pick(['DAILY', 'WEEKLY', 'WEEKLY', 'MONTHLY']);
    const parts = [`FREQ=${freq}`, `INTERVAL=${pick([1, 1, 2, 3])}`];
    if (freq === 'WEEKLY' && rnd() < 0.7) parts.push(`BYDAY=${days.filter(() => rnd() < 0.4).join(',') || 'MO'}`);
    if (freq === 'DAILY' && rnd() < 0.3) parts.push(`BYDAY=${pick(['MO,TU,WE,TH,FR', 'SA,SU', 'WE'])}`);
    if (rnd() < 0.2) parts.push(`WKST=${pick(days)}`);
    if (rnd() < 0.2) parts.push(`BYHOUR=${pick(['8', '8,12', '20'])}`);
    if (rnd() < 0.25) parts.push(`UNTIL=${pick(['20261231T000000Z', '20250601T120000Z', '20270315T000000Z'])}`);
    if (rnd() < 0.1) parts.push(`COUNT=${pick([5, 300, 2000])}`);
    const start = Date.UTC(2021 + Math.floor(rnd() * 5), Math.floor(rnd() * 12), 1 + Math.floor(rnd() * 28), Math.floor(rnd() * 24), pick([0, 15, 30]));
    const s = {
      ...base,
      id: `s${i}`,
      timeZone: pick(zones),
      rrule: parts.join(';'),
      startsAt: new Date(start).toISOString(),
      endsAt: new Date(start + pick([30, 90, 480, 1500, 3000]) * 60_000).toISOString(),
    };
    const from = Date.UTC(2025 + Math.floor(rnd() * 3), Math.floor(rnd() * 12), 1 + Math.floor(rnd() * 28), Math.floor(rnd() * 24));
    const to = from + pick([1, 48, 24 * 42]) * 3_600_000;
    const fast = occurrences(s, from, to);
    const full = occurrences(s, from, to, { exhaustive: true });
    if (JSON.stringify(fast) !== JSON.stringify(full))
      t.fail(`${s.rrule} from ${s.startsAt} in ${s.timeZone}, window ${new Date(from).toISOString()}: ${fast.length} vs ${full.length}`);
    compared++;
    if (full.length) nonEmpty++;
  }
  t.equal(compared, 300);
  t.ok(nonEmpty > 100, `most cases have occurrences to compare (${nonEmpty})`);
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
