import t from 'tap';
import { signIn } from './helpers/auth.js';
import { createSource } from './helpers/data-sources.js';
import { startApp } from './helpers/harness.js';

// POST /data-sources/{id}/views/preview: a view over a source's current data, in its time zone.
const COLUMNS = [
  { name: 'Class', type: 'text' },
  { name: 'Day', type: 'date' },
  { name: 'Spaces', type: 'number' },
];

/** YYYY-MM-DD of `now` plus `days` in `zone`. */
function dayIn(zone: string, days: number): string {
  return new Date(Date.now() + days * 86_400_000).toLocaleDateString('en-CA', { timeZone: zone });
}

t.test('a view filters, sorts, limits and selects the current rows; relative dates in the source’s zone', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const viewer = await signIn(app, { role: 'viewer' });
  const zone = 'Pacific/Auckland';
  const rows = [
    { Class: 'Yoga', Day: dayIn(zone, 0), Spaces: 4 },
    { Class: 'Spin', Day: dayIn(zone, 0), Spaces: 0 },
    { Class: 'Boxing', Day: dayIn(zone, 1), Spaces: 9 },
    { Class: 'Pilates', Day: dayIn(zone, 3), Spaces: 2 },
    { Class: 'Old', Day: dayIn(zone, -2), Spaces: 7 },
  ];
  const made = await createSource(app, owner, { name: 'Classes', provider: 'manual-table', config: { columns: COLUMNS }, rows, timeZone: zone });
  t.equal(made.status, 201);
  const id = made.body.data.id;
  const preview = (who: typeof owner, view: unknown) =>
    app.json(`/api/v1/data-sources/${id}/views/preview`, { method: 'POST', headers: who.headers, json: view });

  const all = await preview(viewer, {});
  t.equal(all.status, 200, 'a viewer previews');
  t.equal(all.body.data.rows.length, 5, 'no view: every row');
  t.same(all.body.data.columns, COLUMNS);
  t.type(all.body.data.revision, 'number', 'the data revision the rows come from');

  const today = await preview(owner, {
    filter: [
      { field: 'Day', op: 'eq', value: 'today' },
      { field: 'Spaces', op: 'gt', value: 0 },
    ],
  });
  t.same(
    today.body.data.rows.map((r: { Class: string }) => r.Class),
    ['Yoga'],
    '"today" is today in Auckland, and the filters all hold',
  );

  const week = await preview(owner, {
    filter: [{ field: 'Day', op: 'between', value: ['today', { next: { days: 3 } }] }],
    sort: [{ field: 'Spaces', direction: 'desc' }],
    limit: 3,
    fields: ['Class', 'Spaces'],
  });
  t.equal(week.status, 200);
  t.same(week.body.data.columns, [COLUMNS[0], COLUMNS[2]], 'the selected fields, in order');
  t.same(week.body.data.rows, [
    { Class: 'Boxing', Spaces: 9 },
    { Class: 'Yoga', Spaces: 4 },
    { Class: 'Pilates', Spaces: 2 },
  ]);

  const bad = await preview(owner, {
    filter: [
      { field: 'Nope', op: 'eq', value: 1 },
      { field: 'Class', op: 'gt', value: 'today' },
    ],
    fields: ['Class', 'Class'],
  });
  t.equal(bad.status, 400);
  t.equal(bad.body.error.code, 'validation_failed');
  const issues = bad.body.error.details.issues as { path: unknown[]; code: string }[];
  t.ok(issues.length >= 3, `every mistake at once (${issues.map((i) => i.code).join(', ')})`);
  t.ok(issues.some((i) => i.code === 'unknown_field' && i.path[0] === 'filter' && i.path[1] === 0));
  t.ok(
    issues.some((i) => i.path[0] === 'fields'),
    'the repeated field is named',
  );

  t.equal((await preview(owner, { limit: 0 })).status, 400, 'a limit below 1');
  t.equal((await preview(owner, { filter: 'Day' })).status, 400, 'a filter that is not a list');
  const missing = await app.json('/api/v1/data-sources/0190f5a2-7b3c-7def-8abc-0123456789ab/views/preview', {
    method: 'POST',
    headers: owner.headers,
    json: {},
  });
  t.equal(missing.status, 404);
});
