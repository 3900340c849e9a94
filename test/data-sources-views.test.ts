import t from 'tap';
import type { Column, Row } from '../server/src/modules/data-sources/providers/types.js';
import { applyView, checkView, type ViewResult, viewSchema } from '../server/src/modules/data-sources/views.js';

/**
 * Views (issue 17): every operator, relative dates at a zone's day boundary, sort, limit,
 * fields, and every mistake listed. "Now" is Sunday 17 March 2024, 23:30 UTC: already
 * Monday 18 March 00:30 in Berlin, still Sunday in UTC and in New York.
 */

const NOW = new Date('2024-03-17T23:30:00Z');
const columns: Column[] = [
  { name: 'name', type: 'text' },
  { name: 'price', type: 'number' },
  { name: 'vegan', type: 'boolean' },
  { name: 'day', type: 'date' },
  { name: 'starts', type: 'datetime' },
  { name: 'link', type: 'url' },
];
const rows: Row[] = [
  { name: 'Espresso', price: 2.4, vegan: true, day: '2024-03-17', starts: '2024-03-17T22:10:00Z', link: 'https://cafe.example/espresso' },
  { name: 'Cappuccino', price: 3.2, vegan: false, day: '2024-03-18', starts: '2024-03-18T08:00:00+01:00', link: null },
  { name: 'Cake 10', price: 4.5, vegan: false, day: '2024-03-24', starts: '2024-03-24T23:30:00+01:00', link: 'https://cafe.example/cake' },
  { name: 'Cake 2', price: null, vegan: null, day: '2024-03-25', starts: '2024-03-25T00:30:00+01:00', link: '' },
  { name: 'espresso doppio', price: 3, vegan: true, day: '2024-03-11', starts: '2024-03-11T12:00:00Z', link: 'https://cafe.example/doppio' },
  { name: 'Tea', price: 2.4, vegan: true, day: null, starts: null, link: 'https://tea.example/' },
];
const dataset = { columns, rows, warnings: [] };

function apply(view: unknown, timeZone = 'Europe/Berlin', now = NOW): ViewResult {
  return applyView(dataset, viewSchema.parse(view), { timeZone, now });
}
function names(view: unknown, timeZone = 'Europe/Berlin', now = NOW): string[] {
  const r = apply(view, timeZone, now);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.rows.map((row) => String(row.name));
}
const where = (field: string, op: string, value?: unknown) => ({ filter: [{ field, op, ...(value === undefined ? {} : { value }) }] });

t.test('text operators', async (t) => {
  t.same(names(where('name', 'eq', 'Tea')), ['Tea']);
  t.same(names(where('name', 'eq', 'tea')), [], 'eq is exact');
  t.same(names(where('name', 'ne', 'Tea')), ['Espresso', 'Cappuccino', 'Cake 10', 'Cake 2', 'espresso doppio']);
  t.same(names(where('name', 'contains', 'ESPRESSO')), ['Espresso', 'espresso doppio'], 'contains ignores case');
  t.same(names(where('name', 'startsWith', 'cake')), ['Cake 10', 'Cake 2']);
  t.same(names(where('name', 'in', ['Tea', 'Cake 2', 'Nope'])), ['Cake 2', 'Tea']);
  t.same(names(where('link', 'isEmpty')), ['Cappuccino', 'Cake 2'], 'null and "" are empty');
  t.same(names(where('link', 'isNotEmpty')), ['Espresso', 'Cake 10', 'espresso doppio', 'Tea']);
  t.same(names(where('link', 'contains', 'tea.example')), ['Tea'], 'urls are text');
});

t.test('number operators', async (t) => {
  t.same(names(where('price', 'eq', 2.4)), ['Espresso', 'Tea']);
  t.same(names(where('price', 'ne', 2.4)), ['Cappuccino', 'Cake 10', 'Cake 2', 'espresso doppio'], 'ne keeps empty cells');
  t.same(names(where('price', 'lt', 3)), ['Espresso', 'Tea']);
  t.same(names(where('price', 'lte', 3)), ['Espresso', 'espresso doppio', 'Tea']);
  t.same(names(where('price', 'gt', 3)), ['Cappuccino', 'Cake 10']);
  t.same(names(where('price', 'gte', 3.2)), ['Cappuccino', 'Cake 10']);
  t.same(names(where('price', 'between', [3, 4.5])), ['Cappuccino', 'Cake 10', 'espresso doppio'], 'between includes both ends');
  t.same(names(where('price', 'between', [4.5, 3])), ['Cappuccino', 'Cake 10', 'espresso doppio'], 'in either order');
  t.same(names(where('price', 'in', [3, 4.5])), ['Cake 10', 'espresso doppio']);
  t.same(names(where('price', 'isEmpty')), ['Cake 2']);
  t.same(names(where('price', 'isNotEmpty')).length, 5);
});

t.test('boolean operators', async (t) => {
  t.same(names(where('vegan', 'eq', true)), ['Espresso', 'espresso doppio', 'Tea']);
  t.same(names(where('vegan', 'eq', false)), ['Cappuccino', 'Cake 10']);
  t.same(names(where('vegan', 'ne', true)), ['Cappuccino', 'Cake 10', 'Cake 2']);
  t.same(names(where('vegan', 'isEmpty')), ['Cake 2']);
});

t.test('date and date-time operators with absolute values', async (t) => {
  t.same(names(where('day', 'eq', '2024-03-18')), ['Cappuccino']);
  t.same(names(where('day', 'lt', '2024-03-18')), ['Espresso', 'espresso doppio']);
  t.same(names(where('day', 'lte', '2024-03-18')), ['Espresso', 'Cappuccino', 'espresso doppio']);
  t.same(names(where('day', 'gt', '2024-03-18')), ['Cake 10', 'Cake 2']);
  t.same(names(where('day', 'gte', '2024-03-24')), ['Cake 10', 'Cake 2']);
  t.same(names(where('day', 'between', ['2024-03-11', '2024-03-17'])), ['Espresso', 'espresso doppio'], 'both days included');
  t.same(names(where('day', 'in', ['2024-03-11', '2024-03-25'])), ['Cake 2', 'espresso doppio']);
  t.same(names(where('day', 'ne', '2024-03-18')), ['Espresso', 'Cake 10', 'Cake 2', 'espresso doppio', 'Tea']);
  t.same(names(where('starts', 'eq', '2024-03-18T07:00:00Z')), ['Cappuccino'], 'the same instant written with another offset');
  t.same(names(where('starts', 'lt', '2024-03-18T07:00:00Z')), ['Espresso', 'espresso doppio']);
  t.same(names(where('starts', 'lte', '2024-03-18T07:00:00Z')), ['Espresso', 'Cappuccino', 'espresso doppio']);
  t.same(names(where('starts', 'gt', '2024-03-18T07:00:00Z')), ['Cake 10', 'Cake 2']);
  t.same(names(where('starts', 'gte', '2024-03-18T08:00:00+01:00')), ['Cappuccino', 'Cake 10', 'Cake 2']);
  t.same(names(where('starts', 'eq', '2024-03-24')), ['Cake 10'], 'a date against date-times: that whole day in the zone');
  t.same(names(where('starts', 'eq', '2024-03-24'), 'UTC'), ['Cake 10', 'Cake 2'], 'the same day in UTC holds other instants');
  t.same(names(where('starts', 'isEmpty')), ['Tea']);
});

t.test('relative dates at a day boundary: Berlin is on Monday, UTC and New York still on Sunday', async (t) => {
  t.same(names(where('day', 'eq', 'today')), ['Cappuccino'], 'Berlin: today is the 18th');
  t.same(names(where('day', 'eq', 'today'), 'UTC'), ['Espresso'], 'UTC: today is the 17th');
  t.same(names(where('day', 'eq', 'yesterday')), ['Espresso']);
  t.same(names(where('day', 'eq', 'tomorrow'), 'America/New_York'), ['Cappuccino']);
  t.same(names(where('starts', 'eq', 'today')), ['Cappuccino'], 'Berlin: 22:10 UTC is 23:10 on the 17th, yesterday');
  t.same(names(where('starts', 'eq', 'today'), 'UTC'), ['Espresso']);
  t.same(names(where('starts', 'gte', 'today')), ['Cappuccino', 'Cake 10', 'Cake 2']);
  t.same(names(where('day', 'between', 'thisWeek')), ['Cappuccino', 'Cake 10'], 'Berlin: the week of Monday 18th to Sunday 24th');
  t.same(names(where('day', 'between', 'thisWeek'), 'UTC'), ['Espresso', 'espresso doppio'], 'UTC: the week of the 11th to the 17th');
  t.same(names(where('day', 'eq', 'startOfWeek')), ['Cappuccino']);
  t.same(names(where('day', 'eq', 'endOfWeek')), ['Cake 10']);
  t.same(names(where('day', 'lte', 'endOfWeek')), ['Espresso', 'Cappuccino', 'Cake 10', 'espresso doppio']);
  t.same(names(where('day', 'between', { next: { days: 7 } })), ['Cappuccino', 'Cake 10', 'Cake 2'], 'today and the next 7 days');
  t.same(names(where('starts', 'between', { next: { days: 7 } })), ['Cappuccino', 'Cake 10', 'Cake 2'], 'from now to 7 days on, that instant included');
  t.same(
    names(where('starts', 'between', { next: { days: 7 } }), 'Europe/Berlin', new Date(NOW.getTime() - 1)),
    ['Cappuccino', 'Cake 10'],
    'asked a millisecond earlier: not',
  );
  t.same(names(where('day', 'between', { last: { days: 7 } })), ['Espresso', 'Cappuccino', 'espresso doppio']);
  t.same(names(where('starts', 'lt', { next: { days: 0 } })), ['Espresso', 'espresso doppio'], 'before now');
  t.same(names(where('day', 'between', ['yesterday', 'tomorrow'])), ['Espresso', 'Cappuccino']);
  t.same(names(where('day', 'in', ['yesterday', '2024-03-25'])), ['Espresso', 'Cake 2']);
});

t.test('sort, limit and fields', async (t) => {
  t.same(names({ sort: [{ field: 'price' }] }), ['Espresso', 'Tea', 'espresso doppio', 'Cappuccino', 'Cake 10', 'Cake 2'], 'ties keep their order; empty last');
  t.same(
    names({ sort: [{ field: 'price', direction: 'desc' }] }),
    ['Cake 10', 'Cappuccino', 'espresso doppio', 'Espresso', 'Tea', 'Cake 2'],
    'empty last in descending order too',
  );
  t.same(
    names({ sort: [{ field: 'vegan', direction: 'desc' }, { field: 'name' }] }),
    ['Espresso', 'espresso doppio', 'Tea', 'Cake 10', 'Cappuccino', 'Cake 2'],
    'two keys; text by the reader’s collation',
  );
  t.same(names({ sort: [{ field: 'name' }] }), ['Cake 2', 'Cake 10', 'Cappuccino', 'Espresso', 'espresso doppio', 'Tea'], 'numbers in text sort as numbers');
  t.same(names({ sort: [{ field: 'starts', direction: 'desc' }] }), ['Cake 2', 'Cake 10', 'Cappuccino', 'Espresso', 'espresso doppio', 'Tea'], 'by instant');
  t.same(names({ sort: [{ field: 'day' }], limit: 2 }), ['espresso doppio', 'Espresso']);
  const r = apply({ fields: ['price', 'name'], filter: [{ field: 'vegan', op: 'eq', value: true }], sort: [{ field: 'price', direction: 'desc' }], limit: 2 });
  t.same(r, {
    ok: true,
    columns: [
      { name: 'price', type: 'number' },
      { name: 'name', type: 'text' },
    ],
    rows: [
      { price: 3, name: 'espresso doppio' },
      { price: 2.4, name: 'Espresso' },
    ],
  });
  const all = apply({});
  t.ok(all.ok && all.rows.length === 6 && all.columns.length === 6, 'an empty view is the whole dataset');
  t.same(names(where('name', 'contains', 'a')), names({ filter: [{ field: 'name', op: 'contains', value: 'a' }] }));
  t.same(
    names({
      filter: [
        { field: 'vegan', op: 'eq', value: true },
        { field: 'price', op: 'lt', value: 3 },
      ],
    }),
    ['Espresso', 'Tea'],
    'all filters must hold',
  );
});

t.test('every mistake is listed, none thrown', async (t) => {
  const view = viewSchema.parse({
    filter: [
      { field: 'nope', op: 'eq', value: 1 },
      { field: 'price', op: 'contains', value: '2' },
      { field: 'name', op: 'lt', value: 'B' },
      { field: 'vegan', op: 'eq', value: 'yes' },
      { field: 'price', op: 'eq' },
      { field: 'name', op: 'isEmpty', value: 'x' },
      { field: 'price', op: 'between', value: [1, 2, 3] },
      { field: 'name', op: 'in', value: [] },
      { field: 'day', op: 'gte', value: 'someday' },
      { field: 'price', op: 'eq', value: [1, 2] },
      { field: 'starts', op: 'between', value: { next: { days: 1 } } },
    ],
    sort: [{ field: 'missing' }],
    fields: ['name', 'ghost', 'name'],
  });
  const r = applyView(dataset, view, { timeZone: 'Europe/Berlin', now: NOW });
  t.notOk(r.ok);
  const errors = r.ok ? [] : r.errors;
  t.same(
    errors.map((e) => [e.path.join('.'), e.code]),
    [
      ['filter.0.field', 'unknown_field'],
      ['filter.1.op', 'invalid_operator'],
      ['filter.2.op', 'invalid_operator'],
      ['filter.3.value', 'invalid_value'],
      ['filter.4.value', 'invalid_value'],
      ['filter.5.value', 'invalid_value'],
      ['filter.6.value', 'invalid_value'],
      ['filter.7.value', 'invalid_value'],
      ['filter.8.value', 'invalid_value'],
      ['filter.9.value', 'invalid_value'],
      ['sort.0.field', 'unknown_field'],
      ['fields.1', 'unknown_field'],
      ['fields.2', 'duplicate_field'],
    ],
    'the last filter is fine; each of the others is named',
  );
  t.match(errors[0]!.message, /"nope" is not a field of this source \(fields: name, price, vegan, day, starts, link\)/);
  t.match(errors[1]!.message, /"contains" does not apply to "price", a number field \(it takes eq, ne, lt, lte, gt, gte, between, in, isEmpty, isNotEmpty\)/);
  t.match(errors[8]!.message, /takes a date \(YYYY-MM-DD\), an ISO date-time, 'today'/);
  t.same(checkView(columns, view, { timeZone: 'UTC', now: NOW }), errors, 'checkView answers the same list without rows');
  t.same(checkView(columns, viewSchema.parse({ sort: [{ field: 'price' }] }), { timeZone: 'UTC', now: NOW }), []);
});

t.test('the schema refuses malformed views', async (t) => {
  const bad = [
    { limit: 0 },
    { limit: 1001 },
    { limit: 1.5 },
    { filter: [{ field: 'a', op: 'like', value: 'x' }] },
    { filter: [{ field: '', op: 'eq', value: 'x' }] },
    { filter: [{ field: 'a', op: 'eq', value: { soon: true } }] },
    { filter: [{ field: 'a', op: 'eq', value: { next: { days: -1 } } }] },
    { filter: [{ field: 'a', op: 'eq', value: { next: { weeks: 1 } } }] },
    { filter: [{ field: 'a', op: 'eq', value: 'x', extra: 1 }] },
    { sort: [{ field: 'a', direction: 'up' }] },
    { fields: [] },
    { select: ['a'] },
    { filter: Array.from({ length: 51 }, () => ({ field: 'a', op: 'isEmpty' })) },
  ];
  for (const view of bad) t.notOk(viewSchema.safeParse(view).success, JSON.stringify(view).slice(0, 80));
  t.same(viewSchema.parse({ sort: [{ field: 'a' }] }).sort, [{ field: 'a', direction: 'asc' }], 'direction defaults to asc');
  t.ok(viewSchema.safeParse({ filter: [{ field: 'a', op: 'between', value: [{ last: { days: 3 } }, 'today'] }], limit: 1000 }).success);
});
