import t from 'tap';
import {
  activeWindows,
  flattenPlaylist,
  nestingDepth,
  wouldCycle,
  type PlanItem,
  type PlanPlaylist,
  type PlayRule,
} from '../server/src/modules/content/plan.js';

const ms = (iso: string) => Date.parse(iso);
const iso = (n: number) => new Date(n).toISOString();
const always: PlayRule = { validFrom: null, validUntil: null, dayparts: [] };

t.test('day-parting follows the local wall clock across the spring DST change', async (t) => {
  // Europe/London moves to BST on Sunday 29 March 2026.
  const w = activeWindows(
    { ...always, dayparts: [{ days: [6, 7], from: '08:00', to: '12:00' }] },
    'Europe/London',
    ms('2026-03-27T00:00:00Z'),
    ms('2026-03-31T00:00:00Z'),
  );
  t.same(
    w.map((i) => [iso(i.start), iso(i.end)]),
    [
      ['2026-03-28T08:00:00.000Z', '2026-03-28T12:00:00.000Z'], // Saturday, GMT
      ['2026-03-29T07:00:00.000Z', '2026-03-29T11:00:00.000Z'], // Sunday, BST
    ],
  );
});

t.test('a day-part over midnight starts on its listed day and ends the next morning', async (t) => {
  const w = activeWindows({ ...always, dayparts: [{ days: [5], from: '22:00', to: '02:00' }] }, 'UTC', ms('2026-06-01T00:00:00Z'), ms('2026-06-08T00:00:00Z'));
  t.same(
    w.map((i) => [iso(i.start), iso(i.end)]),
    [['2026-06-05T22:00:00.000Z', '2026-06-06T02:00:00.000Z']],
  );
  const late = activeWindows(
    { ...always, dayparts: [{ days: [1], from: '18:00', to: '24:00' }] },
    'UTC',
    ms('2026-06-01T00:00:00Z'),
    ms('2026-06-02T12:00:00Z'),
  );
  t.same(
    late.map((i) => [iso(i.start), iso(i.end)]),
    [['2026-06-01T18:00:00.000Z', '2026-06-02T00:00:00.000Z']],
  );
});

t.test('validity windows clip day-parts and the horizon; overlapping parts merge', async (t) => {
  const w = activeWindows(
    {
      validFrom: '2026-06-02T10:00:00.000Z',
      validUntil: '2026-06-03T11:00:00.000Z',
      dayparts: [
        { days: [1, 2, 3, 4, 5], from: '09:00', to: '12:00' },
        { days: [2, 3], from: '11:00', to: '13:00' },
      ],
    },
    'UTC',
    ms('2026-06-01T00:00:00Z'),
    ms('2026-06-10T00:00:00Z'),
  );
  t.same(
    w.map((i) => [iso(i.start), iso(i.end)]),
    [
      ['2026-06-02T10:00:00.000Z', '2026-06-02T13:00:00.000Z'],
      ['2026-06-03T09:00:00.000Z', '2026-06-03T11:00:00.000Z'],
    ],
  );
  t.same(
    activeWindows({ validFrom: '2026-07-01T00:00:00.000Z', validUntil: null, dayparts: [] }, 'UTC', ms('2026-06-01T00:00:00Z'), ms('2026-06-03T00:00:00Z')),
    [],
    'not yet valid',
  );
  t.same(activeWindows(always, 'UTC', 10, 20), [{ start: 10, end: 20 }]);
});

const item = (id: string, kind: PlanItem['kind'], refId: string, rule = always, enabled = true): PlanItem => ({
  id,
  kind,
  refId,
  durationMs: 5000,
  transition: { type: 'none', durationMs: 0 },
  rule,
  enabled,
});

t.test('nested playlists flatten in order, with the parent item’s day-part applied to the children', async (t) => {
  const playlists = new Map<string, PlanPlaylist>([
    [
      'root',
      {
        id: 'root',
        name: 'Root',
        items: [
          item('r1', 'asset', 'A'),
          item('r2', 'playlist', 'lunch', { ...always, dayparts: [{ days: [1, 2, 3, 4, 5, 6, 7], from: '12:00', to: '14:00' }] }),
          item('r3', 'asset', 'B'),
          item('r4', 'asset', 'off', always, false),
        ],
      },
    ],
    [
      'lunch',
      {
        id: 'lunch',
        name: 'Lunch',
        items: [
          item('l1', 'asset', 'L1'),
          item('l2', 'widget', 'W', { ...always, dayparts: [{ days: [1, 2, 3, 4, 5, 6, 7], from: '13:00', to: '15:00' }] }),
          item('l3', 'playlist', 'deep'),
        ],
      },
    ],
    ['deep', { id: 'deep', name: 'Deep', items: [item('d1', 'asset', 'D1')] }],
  ]);
  const from = ms('2026-06-01T00:00:00Z');
  const to = ms('2026-06-02T00:00:00Z');
  const { items, problems } = flattenPlaylist('root', playlists, 'UTC', from, to);
  t.same(problems, []);
  t.same(
    items.map((i) => i.id),
    ['r1', 'l1', 'l2', 'd1', 'r3'],
    'disabled items are left out',
  );
  t.same(items.find((i) => i.id === 'd1')!.path, ['root', 'lunch', 'deep']);
  t.equal(items[0]!.windows, null, 'always');
  t.same(
    items.find((i) => i.id === 'l2')!.windows!.map((w) => [iso(w.start), iso(w.end)]),
    [['2026-06-01T13:00:00.000Z', '2026-06-01T14:00:00.000Z']],
    'intersection of the two day-parts',
  );
});

t.test('a cycle in stored data is cut and reported, never loops', async (t) => {
  const playlists = new Map<string, PlanPlaylist>([
    ['a', { id: 'a', name: 'A', items: [item('a1', 'asset', 'X'), item('a2', 'playlist', 'b')] }],
    ['b', { id: 'b', name: 'B', items: [item('b1', 'playlist', 'a'), item('b2', 'asset', 'Y'), item('b3', 'playlist', 'gone')] }],
  ]);
  const { items, problems } = flattenPlaylist('a', playlists, 'UTC', 0, 1000);
  t.same(
    items.map((i) => i.id),
    ['a1', 'b2'],
  );
  t.equal(problems.length, 2);
  t.match(problems[0], /cycle/);
  t.match(problems[1], /missing/);
});

t.test('cycle and depth checks used before saving a nested item', async (t) => {
  const graph: Record<string, string[]> = { a: ['b'], b: ['c'], c: [], d: [] };
  const childrenOf = (id: string) => graph[id] ?? [];
  t.ok(wouldCycle('a', 'a', childrenOf), 'itself');
  t.ok(wouldCycle('c', 'a', childrenOf), 'c -> a -> b -> c');
  t.notOk(wouldCycle('a', 'd', childrenOf));
  t.notOk(wouldCycle('d', 'a', childrenOf));
  t.equal(nestingDepth('a', childrenOf), 3);
  t.equal(nestingDepth('d', childrenOf), 1);
});

t.test('a nesting item’s transition leads into its run; its stored duration is ignored', async (t) => {
  const fade = { type: 'fade', durationMs: 900 };
  const slide = { type: 'slide', durationMs: 300 };
  const at = (i: PlanItem, patch: Partial<PlanItem>): PlanItem => ({ ...i, ...patch });
  const playlists = new Map<string, PlanPlaylist>([
    [
      'root',
      {
        id: 'root',
        name: 'Root',
        items: [
          item('r1', 'asset', 'A'),
          at(item('r2', 'playlist', 'inner'), { transition: fade, durationMs: 60_000 }),
          at(item('r3', 'playlist', 'empty'), { transition: slide }),
          item('r4', 'asset', 'B'),
          at(item('r5', 'playlist', 'outer'), { transition: slide }),
        ],
      },
    ],
    ['inner', { id: 'inner', name: 'Inner', items: [at(item('i1', 'asset', 'I1'), { transition: slide }), item('i2', 'asset', 'I2')] }],
    ['empty', { id: 'empty', name: 'Empty', items: [item('e1', 'asset', 'E', always, false)] }],
    ['outer', { id: 'outer', name: 'Outer', items: [at(item('o1', 'playlist', 'inner'), { transition: fade })] }],
  ]);
  const { items } = flattenPlaylist('root', playlists, 'UTC', 0, 1000);
  t.same(
    items.map((i) => [i.id, i.transition.type, i.durationMs]),
    [
      ['r1', 'none', 5000],
      ['i1', 'fade', 5000], // the nesting item's fade replaces i1's own slide
      ['i2', 'none', 5000], // only the first item of the run; the 60 s on r2 is not a duration of anything
      ['r4', 'none', 5000], // r3's run played nothing: its slide does not leak onto r4
      ['i1', 'slide', 5000], // runs starting together: the outermost nesting item (r5) wins
      ['i2', 'none', 5000],
    ],
  );
});
