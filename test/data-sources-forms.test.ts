import t from 'tap';
import { type Field, FieldSchema, validateValues } from '../server/src/modules/data-sources/fields.js';
import { signIn, type SignedIn } from './helpers/auth.js';
import { createSource } from './helpers/data-sources.js';
import { startApp, type TestApp } from './helpers/harness.js';

const UNKNOWN = '0190f5a2-7b3c-7def-8abc-0123456789ab';
const field = (f: Record<string, unknown>): Field => FieldSchema.parse({ label: 'L', ...f });

const MENU = [
  { key: 'dish', label: 'Dish', type: 'text', required: true },
  { key: 'price', label: 'Price', type: 'money', currency: 'EUR' },
  { key: 'vegan', label: 'Vegan', type: 'boolean' },
  { key: 'note', label: 'Kitchen note', type: 'longText', showOnScreens: false },
];

async function makeForm(app: TestApp, who: SignedIn, body: Record<string, unknown>) {
  return app.json('/api/v1/forms', { method: 'POST', headers: who.headers, json: body });
}
const formUrl = (id: string, tail = '') => `/api/v1/data-sources/${id}/form${tail}`;

t.test('validateValues: each field type takes good values and names each bad one', async (t) => {
  const cases: [Record<string, unknown>, unknown[], unknown[]][] = [
    [{ type: 'text', validation: { minLength: 2, maxLength: 5, pattern: '[A-Z][a-z]+' } }, ['Soup', 'Ab'], [3, 'soup', 'A', 'Abcdef', 'x'.repeat(1001)]],
    [{ type: 'longText', validation: { maxLength: 10 } }, ['line\nline'], [true, 'x'.repeat(11)]],
    [{ type: 'number', unit: 'kg', precision: 1, validation: { min: 0, max: 10 } }, [0, 2.5, 10], ['2', 2.55, -1, 11, Number.NaN]],
    [{ type: 'money', currency: 'EUR', validation: { min: 0 } }, [4.5, 0, 12.25], [4.555, -0.01, '4.50']],
    [{ type: 'boolean' }, [true, false], ['true', 0]],
    [{ type: 'choice', options: ['S', 'M', 'L'] }, ['M'], ['XL', ['M'], 1]],
    [{ type: 'multiChoice', options: ['a', 'b', 'c'], validation: { min: 1, max: 2 } }, [['a'], ['a', 'c']], ['a', ['d'], ['a', 'a'], ['a', 'b', 'c']]],
    [{ type: 'date', validation: { min: '2026-01-01', max: '2026-12-31' } }, ['2026-02-28'], ['2026-02-30', '2025-12-31', '2027-01-01', '28/02/2026']],
    [{ type: 'time', validation: { min: '08:00', max: '20:00' } }, ['08:00', '12:30:15', '20:00'], ['24:00', '7:30', '07:59', '20:00:01']],
    [
      { type: 'datetime', validation: { min: '2026-01-01T00:00:00Z' } },
      ['2026-03-01T10:00:00Z', '2026-03-01T10:00:00.000+02:00'],
      ['2026-03-01T10:00:00', '2025-12-31T23:59:59Z', 'tomorrow'],
    ],
    [{ type: 'url', validation: { maxLength: 40 } }, ['https://example.com/a'], ['ftp://example.com', 'example.com', `https://example.com/${'a'.repeat(40)}`]],
    [{ type: 'image' }, ['http://example.com/a.png'], ['javascript:alert(1)', 42]],
    [{ type: 'colour' }, ['#00ff7F'], ['red', '#0f0', '#12345g']],
  ];
  for (const [def, good, bad] of cases) {
    const f = field({ key: 'v', ...def });
    for (const value of good) t.same(validateValues([f], { v: value }), [], `${f.type}: ${JSON.stringify(value)} fits`);
    for (const value of bad) {
      const issues = validateValues([f], { v: value });
      t.equal(issues.length, 1, `${f.type}: ${JSON.stringify(value)} does not fit (${issues[0]?.message})`);
      t.same(issues[0]?.path, ['v']);
    }
    t.same(validateValues([f], {}), [], `${f.type}: empty is fine when not required`);
    t.same(validateValues([{ ...f, required: true }], { v: null }), [{ path: ['v'], message: 'is required' }], `${f.type}: required`);
  }
  // Every problem at once, unknown keys too.
  const fields = [field({ key: 'a', type: 'number' }), field({ key: 'b', type: 'text', required: true })];
  t.same(
    validateValues(fields, { a: 'x', c: 1 }).map((i) => i.path[0]),
    ['c', 'a', 'b'],
  );
});

t.test('field definitions: the server refuses what cannot work, naming the field', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const bad: [Record<string, unknown>, (string | number)[]][] = [
    [{ key: 'a', label: 'A', type: 'text', validation: { pattern: '(a+)+$' } }, ['fields', 0, 'validation', 'pattern']],
    [{ key: 'a', label: 'A', type: 'text', validation: { pattern: '([a-z' } }, ['fields', 0, 'validation', 'pattern']],
    [{ key: 'a', label: 'A', type: 'money', currency: 'XYZ' }, ['fields', 0, 'currency']],
    [{ key: 'a', label: 'A', type: 'number', validation: { min: 5, max: 1 } }, ['fields', 0, 'validation', 'min']],
    [{ key: 'a', label: 'A', type: 'choice', options: ['x', 'y'], default: 'z' }, ['fields', 0, 'default']],
    [{ key: 'a', label: 'A', type: 'multiChoice', options: ['x,y'] }, ['fields', 0, 'options', 0]],
    [{ key: 'a', label: 'A', type: 'date', validation: { min: 'soon' } }, ['fields', 0, 'validation', 'min']],
    [{ key: '1a', label: 'A', type: 'text' }, ['fields', 0, 'key']],
    [{ key: 'a', label: 'A', type: 'slider' }, ['fields', 0, 'type']],
  ];
  for (const [def, path] of bad) {
    const res = await makeForm(app, owner, { name: 'bad', fields: [def] });
    t.equal(res.status, 400, JSON.stringify(def));
    t.same(res.body.error.details.issues[0].path, path, res.body.error.message);
  }
  const twice = await makeForm(app, owner, { name: 'twice', fields: [MENU[0], MENU[0]] });
  t.equal(twice.status, 400);
  t.same(twice.body.error.details.issues[0].path, ['fields', 1, 'key']);
  const list = await app.json('/api/v1/forms', { headers: owner.headers });
  t.same(list.body.data.items, [], 'nothing was made by the refused requests');
});

t.test('create, list, draft with If-Match, publish numbering, columns follow the published form', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const made = await makeForm(app, owner, { name: 'Specials', description: 'Daily', fields: MENU });
  t.equal(made.status, 201);
  const id = made.body.data.sourceId;
  t.equal(made.body.data.publishedVersion, 1);
  t.equal(made.headers.get('etag'), '"1"');
  t.same(made.body.data.workflow.states, ['draft', 'submitted', 'approved', 'published', 'rejected', 'archived']);
  const source = await app.json(`/api/v1/data-sources/${id}`, { headers: owner.headers });
  t.equal(source.body.data.provider, 'manual-table');
  t.same(
    source.body.data.columns,
    [
      { name: 'dish', type: 'text' },
      { name: 'price', type: 'number' },
      { name: 'vegan', type: 'boolean' },
    ],
    'published fields shown on screens are the columns (money is a number, the hidden note is not a column)',
  );
  await makeForm(app, owner, { name: 'Classes', fields: [{ key: 'room', label: 'Room', type: 'text' }], publish: false });
  await makeForm(app, owner, { name: 'Rooms', fields: [] });
  const page1 = await app.json('/api/v1/forms?limit=2', { headers: owner.headers });
  t.same(
    page1.body.data.items.map((f: any) => f.name),
    ['Classes', 'Rooms'],
  );
  const page2 = await app.json(`/api/v1/forms?limit=2&cursor=${page1.body.data.nextCursor}`, { headers: owner.headers });
  t.same(
    page2.body.data.items.map((f: any) => f.name),
    ['Specials'],
  );
  t.equal(page2.body.data.nextCursor, null);
  const classes = page1.body.data.items[0];
  t.equal(classes.publishedVersion, 0);
  t.equal(classes.published, null);

  // Draft edits: If-Match guards them, published versions stay as they were.
  const draft = [...MENU, { key: 'spicy', label: 'Spicy', type: 'choice', options: ['mild', 'hot'] }];
  const stale = await app.json(formUrl(id, '/draft'), { method: 'PATCH', headers: { ...owner.headers, 'if-match': '"7"' }, json: { fields: draft } });
  t.equal(stale.status, 412);
  t.equal(stale.body.error.code, 'version_conflict');
  const edited = await app.json(formUrl(id, '/draft'), { method: 'PATCH', headers: { ...owner.headers, 'if-match': '"1"' }, json: { fields: draft } });
  t.equal(edited.status, 200);
  t.equal(edited.body.data.revision, 2);
  t.equal(edited.body.data.draft.fields.length, 5);
  t.equal(edited.body.data.published.fields.length, 4, 'the published version did not move');
  const again = await app.json(formUrl(id, '/draft'), { method: 'PATCH', headers: { ...owner.headers, 'if-match': '"1"' }, json: { fields: MENU } });
  t.equal(again.status, 412, 'the second writer with the old revision loses');

  const renamed = await app.json(formUrl(id), {
    method: 'PATCH',
    headers: { ...owner.headers, 'if-match': '"2"' },
    json: { name: 'Specials of the day', description: 'Lunch' },
  });
  t.equal(renamed.status, 200);
  t.equal(renamed.body.data.name, 'Specials of the day');
  t.equal(renamed.body.data.description, 'Lunch');

  const published = await app.json(formUrl(id, '/publish'), { method: 'POST', headers: owner.headers, json: {} });
  t.equal(published.status, 200);
  t.equal(published.body.data.publishedVersion, 2);
  t.equal(published.body.data.published.version, 2);
  t.equal(published.body.data.published.fields[4].key, 'spicy');
  const nothingNew = await app.json(formUrl(id, '/publish'), { method: 'POST', headers: owner.headers, json: {} });
  t.equal(nothingNew.status, 409, 'publishing the same draft again makes no new version');
  const v1 = await app.json(formUrl(id, '?version=1'), { headers: owner.headers });
  t.equal(v1.status, 200);
  t.same(
    v1.body.data.published.fields.map((f: any) => f.key),
    ['dish', 'price', 'vegan', 'note'],
    'version 1 is unchanged',
  );
  t.equal((await app.json(formUrl(id, '?version=3'), { headers: owner.headers })).status, 404);
  const after = await app.json(`/api/v1/data-sources/${id}`, { headers: owner.headers });
  t.same(after.body.data.columns.at(-1), { name: 'spicy', type: 'text' });

  // A copy of the table keeps its form; deleting a table takes its form with it.
  const copy = await app.json(`/api/v1/data-sources/${id}/duplicate`, { method: 'POST', headers: owner.headers, json: {} });
  t.equal(copy.status, 201);
  const copied = await app.json(formUrl(copy.body.data.id), { headers: owner.headers });
  t.equal(copied.body.data.publishedVersion, 2);
  t.equal(copied.body.data.revision, 1);
  t.same(copied.body.data.published.fields, published.body.data.published.fields);
  t.equal(copied.body.data.description, 'Lunch');
  t.equal((await app.json(`/api/v1/data-sources/${copy.body.data.id}`, { method: 'DELETE', headers: owner.headers })).status, 204);
  t.equal((await app.json(formUrl(copy.body.data.id), { headers: owner.headers })).status, 404);
  t.equal((await app.json(formUrl(id, '?version=2'), { headers: owner.headers })).status, 200, 'the original keeps its versions');

  // The columns follow the form: changing them by hand is refused.
  const byHand = await app.json(`/api/v1/data-sources/${id}`, {
    method: 'PATCH',
    headers: owner.headers,
    json: { config: { columns: [{ name: 'x', type: 'text' }] } },
  });
  t.equal(byHand.status, 409);
});

t.test('publish with rows that would break: 409 listing them, then migrate', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const id = (await makeForm(app, owner, { name: 'Menu', fields: MENU })).body.data.sourceId;
  const rows = [
    { dish: 'Soup', price: 4.5, vegan: true },
    { dish: 'Stew', price: 9, vegan: false },
    { dish: 'Pie', price: 12.5 },
  ];
  const unfit = await app.json(`/api/v1/data-sources/${id}`, { method: 'PATCH', headers: owner.headers, json: { rows: [{ price: 4.555 }] } });
  t.equal(unfit.status, 400, 'rows written by hand must fit the published form');
  t.same(
    unfit.body.error.details.issues.map((i: any) => i.path),
    [
      ['rows', 0, 'dish'],
      ['rows', 0, 'price'],
    ],
  );
  t.equal((await app.json(`/api/v1/data-sources/${id}`, { method: 'PATCH', headers: owner.headers, json: { rows } })).status, 200);
  const draft = [
    MENU[0],
    { key: 'price', label: 'Price', type: 'money', currency: 'EUR', precision: 0, validation: { max: 10 } },
    { key: 'vegan', label: 'Vegan', type: 'boolean', required: true },
    { key: 'size', label: 'Size', type: 'choice', options: ['small', 'large'], required: true },
  ];
  await app.json(formUrl(id, '/draft'), { method: 'PATCH', headers: owner.headers, json: { fields: draft } });
  const refused = await app.json(formUrl(id, '/publish'), { method: 'POST', headers: owner.headers, json: {} });
  t.equal(refused.status, 409);
  t.same(refused.body.error.details.fields.sort(), ['price', 'size', 'vegan']);
  t.same(refused.body.error.details.rows, [
    {
      row: 0,
      fields: [
        { key: 'price', message: 'must be a whole number' },
        { key: 'size', message: 'is required' },
      ],
    },
    { row: 1, fields: [{ key: 'size', message: 'is required' }] },
    {
      row: 2,
      fields: [
        { key: 'price', message: 'must be at most 10' },
        { key: 'vegan', message: 'is required' },
        { key: 'size', message: 'is required' },
      ],
    },
  ]);
  const form = await app.json(formUrl(id), { headers: owner.headers });
  t.equal(form.body.data.publishedVersion, 1, 'nothing was published');
  const badDefault = await app.json(formUrl(id, '/publish'), { method: 'POST', headers: owner.headers, json: { migrate: { size: { default: 'huge' } } } });
  t.equal(badDefault.status, 400);
  t.same(badDefault.body.error.details.issues[0].path, ['migrate', 'size', 'default']);
  const partly = await app.json(formUrl(id, '/publish'), {
    method: 'POST',
    headers: owner.headers,
    json: { migrate: { size: { default: 'small' }, price: 'clear' } },
  });
  t.equal(partly.status, 409, 'row 2 still lacks vegan');
  t.same(partly.body.error.details.rows, [{ row: 2, fields: [{ key: 'vegan', message: 'is required' }] }]);
  const ok = await app.json(formUrl(id, '/publish'), {
    method: 'POST',
    headers: owner.headers,
    json: { migrate: { size: { default: 'small' }, price: 'clear', vegan: { default: false } } },
  });
  t.equal(ok.status, 200);
  t.equal(ok.body.data.publishedVersion, 2);
  const preview = await app.json(`/api/v1/data-sources/${id}/views/preview`, { method: 'POST', headers: owner.headers, json: {} });
  t.same(preview.body.data.rows, [
    { dish: 'Soup', price: null, vegan: true, size: 'small' },
    { dish: 'Stew', price: 9, vegan: false, size: 'small' },
    { dish: 'Pie', price: null, vegan: false, size: 'small' },
  ]);
});

t.test('workflow definitions: every mistake is refused, a good one is stored', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const id = (await makeForm(app, owner, { name: 'Flow', fields: MENU })).body.data.sourceId;
  const go = { name: 'go', from: 'draft', to: 'published', who: { roles: ['publisher'] } };
  const put = (json: unknown) => app.json(formUrl(id, '/workflow'), { method: 'PUT', headers: owner.headers, json });
  const bad: [unknown, (string | number)[], RegExp][] = [
    [{ states: ['draft', 'published'], transitions: [{ ...go, to: 'done' }] }, ['transitions', 0, 'to'], /not one of the states/],
    [{ states: ['draft', 'published'], transitions: [{ ...go, from: ['draft', 'nowhere'] }] }, ['transitions', 0, 'from', 1], /not one of/],
    [{ states: ['draft', 'published', 'limbo'], transitions: [go] }, ['states', 2], /No transition leads/],
    [{ states: ['draft', 'published'], transitions: [go, go] }, ['transitions', 1, 'name'], /Two transitions/],
    [{ states: ['draft', 'published'], transitions: [{ ...go, approvals: 0 }] }, ['transitions', 0, 'approvals'], /At least 1/],
    [{ states: ['draft', 'published'], transitions: [{ ...go, who: {} }] }, ['transitions', 0, 'who'], /Names nobody/],
    [{ states: ['draft', 'review'], transitions: [{ ...go, to: 'review' }] }, ['states'], /"published" state/],
    [
      {
        states: ['draft', 'published', 'review'],
        transitions: [
          { ...go, from: 'review' },
          { ...go, name: 'x', from: 'published', to: 'review' },
        ],
      },
      ['transitions'],
      /No way leads/,
    ],
    [{ states: ['draft', 'draft', 'published'], transitions: [go] }, ['states', 1], /listed twice/],
    [{ states: ['draft', 'published'], initial: 'start', transitions: [go] }, ['initial'], /not one of the states/],
    [{ states: ['draft', 'published'], transitions: [{ ...go, who: { userIds: [UNKNOWN] } }] }, ['transitions', 0, 'who', 'userIds', 0], /no such user/],
  ];
  for (const [body, path, message] of bad) {
    const res = await put(body);
    t.equal(res.status, 400, JSON.stringify(body));
    const issue = res.body.error.details.issues.find((i: any) => JSON.stringify(i.path) === JSON.stringify(path));
    t.ok(issue, `an issue at ${path.join('.')}: ${JSON.stringify(res.body.error.details.issues)}`);
    t.match(issue?.message, message);
  }
  const approver = await signIn(app, { role: 'publisher' });
  const good = {
    states: ['draft', 'review', 'published', 'archived'],
    transitions: [
      { name: 'submit', from: 'draft', to: 'review', who: { grants: ['editor'] } },
      { name: 'approve', from: 'review', to: 'published', who: { userIds: [approver.user.id.toUpperCase()] }, approvals: 2, commentRequired: true },
      { name: 'archive', from: ['review', 'published'], to: 'archived', who: { roles: ['admin'] } },
    ],
  };
  const stored = await put(good);
  t.equal(stored.status, 200);
  t.same(stored.body.data.workflow.transitions[1], { ...good.transitions[1], who: { userIds: [approver.user.id] } });
  t.equal(stored.body.data.workflow.initial, 'draft');
  t.equal((await app.json(formUrl(id, '/workflow'), { method: 'PUT', headers: { ...owner.headers, 'if-match': '"1"' }, json: good })).status, 412);
});

t.test('access: viewers read, editors edit the draft, owners publish and set the workflow; only tables have forms', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const viewer = await signIn(app, { role: 'viewer' });
  const id = (await makeForm(app, owner, { name: 'Board', fields: MENU })).body.data.sourceId;
  const fields = { fields: [...MENU, { key: 'extra', label: 'Extra', type: 'text' }] };
  const read = await app.json(formUrl(id), { headers: viewer.headers });
  t.equal(read.status, 200);
  t.equal(read.body.data.myAccess, 'viewer');
  t.equal((await app.json(formUrl(id, '/draft'), { method: 'PATCH', headers: viewer.headers, json: fields })).status, 403);
  t.equal((await app.json(formUrl(id), { method: 'PATCH', headers: viewer.headers, json: { description: 'x' } })).status, 403);
  t.equal((await makeForm(app, viewer, { name: 'nope', fields: [] })).status, 403);
  t.equal((await app.json(formUrl(id, '/draft'), { method: 'PATCH', headers: editor.headers, json: fields })).status, 200);
  const publish = () => app.json(formUrl(id, '/publish'), { method: 'POST', headers: editor.headers, json: {} });
  const denied = await publish();
  t.equal(denied.status, 403);
  t.equal(denied.body.error.code, 'forbidden');
  t.equal((await app.json(formUrl(id, '/workflow'), { method: 'PUT', headers: editor.headers, json: read.body.data.workflow })).status, 403);
  const grant = await app.json(`/api/v1/data-sources/${id}/access/${editor.user.id}`, { method: 'PUT', headers: owner.headers, json: { level: 'owner' } });
  t.equal(grant.status, 200);
  t.equal((await publish()).status, 200, 'an owner grant lets the editor publish');
  const revoke = await app.json(`/api/v1/data-sources/${id}/access/${viewer.user.id}`, { method: 'PUT', headers: owner.headers, json: { level: 'editor' } });
  t.equal(revoke.status, 200);
  t.equal(
    (await app.json(formUrl(id, '/draft'), { method: 'PATCH', headers: viewer.headers, json: fields })).status,
    200,
    'an editor grant lets a viewer edit',
  );

  // Another provider has no form; a table made the plain way gets one from its columns.
  const feed = await createSource(app, owner, { name: 'Feed', provider: 'json', config: { url: 'https://example.com/feed.json' } });
  const none = await app.json(formUrl(feed.body.data.id), { headers: owner.headers });
  t.equal(none.status, 404);
  t.equal(none.body.error.code, 'not_found');
  t.match(none.body.error.message, /only a table \(manual-table\) has a form/);
  t.equal((await app.json(formUrl(feed.body.data.id, '/publish'), { method: 'POST', headers: owner.headers, json: {} })).status, 404);
  t.equal((await app.json(formUrl(UNKNOWN), { headers: owner.headers })).status, 404);
  const table = await createSource(app, owner, {
    name: 'Plain',
    provider: 'manual-table',
    config: {
      columns: [
        { name: 'Dish', type: 'text' },
        { name: 'Price', type: 'number' },
      ],
    },
    rows: [{ Dish: 'Soup', Price: 4.5 }],
  });
  const derived = await app.json(formUrl(table.body.data.id), { headers: owner.headers });
  t.equal(derived.status, 200);
  t.same(
    derived.body.data.draft.fields.map((f: any) => [f.key, f.type]),
    [
      ['Dish', 'text'],
      ['Price', 'number'],
    ],
  );
  t.equal(derived.body.data.publishedVersion, 0);
  const first = await app.json(formUrl(table.body.data.id, '/publish'), { method: 'POST', headers: owner.headers, json: {} });
  t.equal(first.status, 200, 'the derived draft fits the rows it came from');
});
