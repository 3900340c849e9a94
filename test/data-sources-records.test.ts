import t from 'tap';
import { signIn, type SignedIn } from './helpers/auth.js';
import { startApp, type TestApp } from './helpers/harness.js';

const FIELDS = [
  { key: 'dish', label: 'Dish', type: 'text', required: true, validation: { maxLength: 40 } },
  { key: 'price', label: 'Price', type: 'money', currency: 'EUR', validation: { min: 0 } },
  { key: 'vegan', label: 'Vegan', type: 'boolean', default: false },
  { key: 'tags', label: 'Tags', type: 'multiChoice', options: ['hot', 'new', 'spicy'] },
  { key: 'note', label: 'Kitchen note', type: 'longText', showOnScreens: false },
];

const recordsUrl = (id: string, tail = '') => `/api/v1/data-sources/${id}/records${tail}`;

async function makeTable(app: TestApp, who: SignedIn, publish = true): Promise<string> {
  const res = await app.json('/api/v1/forms', { method: 'POST', headers: who.headers, json: { name: `Menu ${Math.random()}`, fields: FIELDS, publish } });
  if (res.status !== 201) throw new Error(`form: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.sourceId;
}

function add(app: TestApp, who: SignedIn, id: string, body: Record<string, unknown>) {
  return app.json(recordsUrl(id), { method: 'POST', headers: who.headers, json: body });
}

t.test('create: values checked against the published form, each bad field named; no published form is 409', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const draftOnly = await makeTable(app, owner, false);
  const none = await add(app, owner, draftOnly, { values: { dish: 'Soup' } });
  t.equal(none.status, 409);
  t.match(none.body.error.message, /publish the form first/);

  const id = await makeTable(app, owner);
  const bad = await add(app, owner, id, { values: { dish: '', price: -1, vegan: 'yes', tags: ['cold'], bogus: 1 } });
  t.equal(bad.status, 400);
  t.equal(bad.body.error.code, 'validation_failed');
  t.same(bad.body.error.details.issues.map((i: { path: string[] }) => i.path.join('.')).sort(), [
    'values.bogus',
    'values.dish',
    'values.price',
    'values.tags',
    'values.vegan',
  ]);
  for (const key of ['dish', 'price', 'vegan', 'tags', 'bogus']) t.match(bad.body.error.message, `values.${key}`, `the message names ${key}`);
  const long = await add(app, owner, id, { values: { dish: 'x'.repeat(41) } });
  t.same(long.body.error.details.issues[0].path, ['values', 'dish']);

  const window = await add(app, owner, id, { values: { dish: 'Soup' }, publishAt: '2030-01-02T00:00:00Z', unpublishAt: '2030-01-01T00:00:00Z' });
  t.equal(window.status, 400);
  t.same(window.body.error.details.issues[0].path, ['unpublishAt']);
  t.equal((await add(app, owner, id, { values: { dish: 'Soup' }, publishAt: 'tomorrow' })).status, 400);

  const ok = await add(app, owner, id, { values: { dish: 'Soup', price: 4.5, tags: ['hot', 'new'] } });
  t.equal(ok.status, 201);
  t.equal(ok.headers.get('etag'), '"1"');
  const r = ok.body.data;
  t.match(r, { sourceId: id, state: 'draft', revision: 1, formVersion: 1, live: false, position: 0, createdBy: owner.user.id, createdByToken: null });
  t.same(r.values, { dish: 'Soup', price: 4.5, vegan: false, tags: ['hot', 'new'], note: null }, 'every field, defaults and hidden ones too');
  // A draft is not on screens.
  const preview = await app.json(`/api/v1/data-sources/${id}/views/preview`, { method: 'POST', headers: owner.headers, json: {} });
  t.same(preview.body.data.rows, []);

  const viewer = await signIn(app, { role: 'viewer' });
  t.equal((await add(app, viewer, id, { values: { dish: 'Tea' } })).status, 403, 'viewers do not write');
  t.equal((await app.json(recordsUrl(id), { headers: viewer.headers })).status, 200, 'but they read');
  t.equal((await app.json(recordsUrl('0190f5a2-7b3c-7def-8abc-0123456789ab'), { headers: owner.headers })).status, 404);
  t.equal((await app.json(recordsUrl(id, '/0190f5a2-7b3c-7def-8abc-0123456789ab'), { headers: owner.headers })).status, 404);
});

t.test('list: filters, text search, sort and cursor paging', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const id = await makeTable(app, owner);
  const dishes: [string, number, SignedIn][] = [
    ['Soup', 4.5, owner],
    ['Pie', 6, editor],
    ['Salad', 5.25, owner],
    ['Curry', 9, editor],
    ['Bread', 2, owner],
  ];
  const ids: string[] = [];
  for (const [dish, price, who] of dishes) ids.push((await add(app, who, id, { values: { dish, price, note: `about ${dish}` } })).body.data.id);
  const list = async (query: string) => {
    const res = await app.json(recordsUrl(id, `?${query}`), { headers: owner.headers });
    t.equal(res.status, 200, query);
    return res.body.data;
  };
  const dishesOf = (page: { items: { values: { dish: string } }[] }) => page.items.map((r) => r.values.dish);
  t.same(dishesOf(await list('')), ['Soup', 'Pie', 'Salad', 'Curry', 'Bread'], 'position order by default');
  t.same(dishesOf(await list('sort=price&direction=desc')), ['Curry', 'Pie', 'Salad', 'Soup', 'Bread']);
  t.same(dishesOf(await list('sort=createdAt&direction=desc')).length, 5);
  t.same(dishesOf(await list('q=SAL')), ['Salad'], 'search is case-insensitive over the values');
  t.same(dishesOf(await list('q=about%20curry')), ['Curry'], 'hidden fields are searched too');
  t.same(dishesOf(await list('q=dish')), [], 'keys are not searched, only values');
  t.same(dishesOf(await list(`createdBy=${editor.user.id}`)), ['Pie', 'Curry']);
  t.same(dishesOf(await list('state=draft&live=false')).length, 5);
  t.same(dishesOf(await list('live=true')), []);
  t.same(dishesOf(await list('state=published')), []);
  t.same(dishesOf(await list(`updatedSince=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)), []);

  // Cursor paging: every record once, in the sort's order.
  for (const query of ['limit=2', 'limit=2&sort=price', 'limit=2&sort=dish&direction=desc', 'limit=3&sort=updatedAt']) {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { values: { dish: string } }[]; nextCursor: string | null } = await list(
        `${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      seen.push(...dishesOf(page));
      cursor = page.nextCursor;
    } while (cursor);
    const whole = dishesOf(await list(query.replace(/limit=\d/, 'limit=50')));
    t.same(seen, whole, `${query}: the pages make the whole list`);
    t.equal(new Set(seen).size, 5);
  }
  const unknownSort = await app.json(recordsUrl(id, '?sort=calories'), { headers: owner.headers });
  t.equal(unknownSort.status, 400);
  t.same(unknownSort.body.error.details.issues[0].path, ['sort']);
  t.equal((await app.json(recordsUrl(id, '?cursor=nonsense'), { headers: owner.headers })).status, 400);
  t.equal((await app.json(recordsUrl(id, '?live=maybe'), { headers: owner.headers })).status, 400);

  // Position: a record placed first, another moved last.
  const first = await add(app, owner, id, { values: { dish: 'Olives' }, position: 0 });
  t.equal(first.body.data.position, 0);
  const moved = await app.json(recordsUrl(id, `/${ids[0]}`), { method: 'PATCH', headers: owner.headers, json: { position: 99 } });
  t.equal(moved.status, 200);
  t.same(dishesOf(await list('')), ['Olives', 'Pie', 'Salad', 'Curry', 'Bread', 'Soup']);
});

t.test('change: If-Match, merged values checked, audit trail with who and what; delete keeps the trail', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const id = await makeTable(app, owner);
  const created = (await add(app, editor, id, { values: { dish: 'Soup', price: 4.5 } })).body.data;
  const url = recordsUrl(id, `/${created.id}`);
  const patch = (json: unknown, headers: Record<string, string> = {}, who = editor) =>
    app.json(url, { method: 'PATCH', headers: { ...who.headers, ...headers }, json });

  const stale = await patch({ values: { price: 5 } }, { 'if-match': '"7"' });
  t.equal(stale.status, 412);
  t.equal(stale.body.error.code, 'version_conflict');
  const bad = await patch({ values: { price: 'five', dish: null } });
  t.equal(bad.status, 400);
  t.same(bad.body.error.details.issues.map((i: { path: string[] }) => i.path.join('.')).sort(), ['values.dish', 'values.price']);
  const changed = await patch({ values: { price: 5 } }, { 'if-match': '"1"' });
  t.equal(changed.status, 200);
  t.equal(changed.headers.get('etag'), '"2"');
  t.same(changed.body.data.values, { dish: 'Soup', price: 5, vegan: false, tags: null, note: null }, 'merged: the dish stays');
  t.equal(changed.body.data.updatedBy, editor.user.id);
  t.equal((await patch({ values: { price: 6 } }, { 'if-match': '"1"' })).status, 412, 'the old revision is stale now');
  const window = await patch({ publishAt: '2030-01-01T10:00:00+02:00' });
  t.equal(window.body.data.publishAt, '2030-01-01T08:00:00.000Z');
  t.equal(window.body.data.revision, 3);

  const detail = await app.json(url, { headers: owner.headers });
  t.equal(detail.status, 200);
  t.equal(detail.headers.get('etag'), '"3"');
  const history = detail.body.data.history;
  t.same(
    history.map((e: { kind: string; seq: number }) => [e.seq, e.kind]),
    [
      [1, 'created'],
      [2, 'updated'],
      [3, 'updated'],
    ],
  );
  t.match(history[0], { userId: editor.user.id, userName: 'Test editor', data: { values: { dish: 'Soup', price: 4.5 }, state: 'draft' } });
  t.same(history[1].data, { changes: { price: { from: 4.5, to: 5 } } });
  t.same(history[2].data, { publishAt: { from: null, to: '2030-01-01T08:00:00.000Z' } });
  t.same(
    detail.body.data.transitions.map((x: { name: string; mayTake: boolean }) => [x.name, x.mayTake]),
    [
      ['submit', true],
      ['archive', true],
    ],
  );

  const viewer = await signIn(app, { role: 'viewer' });
  t.equal((await patch({ values: { price: 1 } }, {}, viewer)).status, 403);
  t.equal((await app.json(url, { method: 'DELETE', headers: { ...editor.headers, 'if-match': '"1"' } })).status, 412);
  t.equal((await app.json(url, { method: 'DELETE', headers: viewer.headers })).status, 403);
  t.equal((await app.json(url, { method: 'DELETE', headers: { ...editor.headers, 'if-match': '"3"' } })).status, 204);
  t.equal((await app.json(url, { headers: owner.headers })).status, 404);
  t.equal((await app.json(url, { method: 'DELETE', headers: editor.headers })).status, 404);
  const trail = await app.deps.db
    .selectFrom('data_source_record_events')
    .select(['kind', 'user_id', 'data'])
    .where('record_id', '=', created.id)
    .orderBy('seq')
    .execute();
  t.same(
    trail.map((e) => e.kind),
    ['created', 'updated', 'updated', 'deleted'],
    'the trail outlives the record',
  );
  t.equal(trail[3]!.user_id, editor.user.id);
  t.match(JSON.parse(trail[3]!.data), { values: { dish: 'Soup', price: 5 }, state: 'draft' });
});

t.test('rows written whole to a table with a published form: owners only; they become published live records', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const id = await makeTable(app, owner);
  await add(app, owner, id, { values: { dish: 'Draft soup' } });
  const refused = await app.json(`/api/v1/data-sources/${id}`, { method: 'PATCH', headers: editor.headers, json: { rows: [{ dish: 'Pie' }] } });
  t.equal(refused.status, 403, 'it bypasses the workflow');
  const done = await app.json(`/api/v1/data-sources/${id}`, { method: 'PATCH', headers: owner.headers, json: { rows: [{ dish: 'Pie', price: 3 }] } });
  t.equal(done.status, 200);
  const list = (await app.json(recordsUrl(id), { headers: owner.headers })).body.data.items;
  t.same(
    list.map((r: { values: unknown; state: string; live: boolean }) => [r.values, r.state, r.live]),
    [[{ dish: 'Pie', price: 3 }, 'published', true]],
  );
  const preview = await app.json(`/api/v1/data-sources/${id}/views/preview`, { method: 'POST', headers: owner.headers, json: {} });
  t.same(
    preview.body.data.rows.map((r: { dish: string }) => r.dish),
    ['Pie'],
  );
  // A table without a form keeps its old rule: editors write rows.
  const plain = await app.json('/api/v1/data-sources', {
    method: 'POST',
    headers: owner.headers,
    json: { name: 'plain', provider: 'manual-table', config: { columns: [{ name: 'a', type: 'text' }] } },
  });
  const plainId = plain.body.data.id;
  t.equal((await app.json(`/api/v1/data-sources/${plainId}`, { method: 'PATCH', headers: editor.headers, json: { rows: [{ a: 'x' }] } })).status, 200);
});

t.test('a form publish checks every record, drafts too, and migrates them in place (audited)', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const id = await makeTable(app, owner);
  const draft = (await add(app, owner, id, { values: { dish: 'Caviar', price: 90, tags: ['new'] } })).body.data;
  t.equal(draft.state, 'draft');
  const fields = FIELDS.map((f) => (f.key === 'price' ? { ...f, validation: { min: 0, max: 50 } } : f));
  t.equal((await app.json(`/api/v1/data-sources/${id}/form/draft`, { method: 'PATCH', headers: owner.headers, json: { fields } })).status, 200);
  const refused = await app.json(`/api/v1/data-sources/${id}/form/publish`, { method: 'POST', headers: owner.headers, json: {} });
  t.equal(refused.status, 409, 'a draft record that would break counts');
  t.same(refused.body.error.details.fields, ['price']);
  const done = await app.json(`/api/v1/data-sources/${id}/form/publish`, { method: 'POST', headers: owner.headers, json: { migrate: { price: 'clear' } } });
  t.equal(done.status, 200);
  const after = (await app.json(recordsUrl(id, `/${draft.id}`), { headers: owner.headers })).body.data;
  t.match(after, { id: draft.id, state: 'draft', formVersion: 2, revision: 2 });
  t.same(after.values, { dish: 'Caviar', price: null, vegan: false, tags: ['new'], note: null }, 'the multi-choice stays a list');
  t.same(after.history.at(-1).data, { changes: { price: { from: 90, to: null } }, migratedTo: 2 });
});
