import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import t from 'tap';
import { addDataSourceUsageFinder } from '../server/src/modules/data-sources/index.js';
import { signIn } from './helpers/auth.js';
import { createSource, diagnosticsOf, fakeFeed, jsonDoc, refreshNow } from './helpers/data-sources.js';
import { startApp } from './helpers/harness.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const MENU = [
  { name: 'Dish', type: 'text' },
  { name: 'Price', type: 'number' },
  { name: 'Vegan', type: 'boolean' },
];
const UNKNOWN = '0190f5a2-7b3c-7def-8abc-0123456789ab';

t.test('provider-catalog: each provider’s config as a JSON Schema that agrees with the server', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const viewer = await signIn(app, { role: 'viewer' });
  const res = await app.json('/api/v1/provider-catalog', { headers: viewer.headers });
  t.equal(res.status, 200);
  const providers = res.body.data.providers as any[];
  t.same(
    providers.map((p) => p.id),
    ['manual-table', 'rss', 'json', 'csv', 'ical'],
  );
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  const json = providers.find((p) => p.id === 'json');
  t.same(json.secretPaths, ['headers.*', 'auth.password', 'auth.token']);
  t.same(json.refresh, { minSec: 60, defaultSec: 300, maxSec: 86_400 });
  t.equal(json.fetches, true);
  t.equal(json.configSchema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  const table = providers.find((p) => p.id === 'manual-table');
  t.equal(table.refresh, null);
  t.equal(table.fetches, false);
  const url = 'https://example.com/menu.json';
  const samples: [string, unknown, boolean][] = [
    ['json', { url }, true],
    [
      'json',
      {
        url,
        rowsPath: '$.items[*]',
        columns: [
          { name: 'Dish', path: '$.name', type: 'text' },
          { name: 'Price', path: 'price' },
        ],
        maxRows: 50,
      },
      true,
    ],
    ['json', { url, headers: { 'X-Api-Key': 'k' }, auth: { type: 'bearer', token: 't' } }, true],
    ['json', { url, auth: { type: 'basic', username: 'u', password: 'p' } }, true],
    ['json', {}, false],
    ['json', { url: 'ftp://example.com/x' }, false],
    ['json', { url, columns: [{ name: 'Dish' }] }, false],
    ['json', { url, auth: { type: 'basic' } }, false],
    ['json', { url, maxRows: 0 }, false],
    ['json', { url, headers: { 'bad header': 'x' } }, false],
    ['manual-table', { columns: MENU }, true],
    ['manual-table', {}, true],
    ['manual-table', { columns: [{ name: '', type: 'text' }] }, false],
    ['manual-table', { columns: [{ name: 'Price', type: 'money' }] }, false],
  ];
  for (const [id, config, good] of samples) {
    const schema = providers.find((p) => p.id === id).configSchema;
    const valid = ajv.validate(schema, config);
    t.equal(valid, good, `${id} ${JSON.stringify(config)}: the catalog’s schema says ${good ? 'valid' : 'invalid'}`);
    const made = await createSource(app, owner, { name: `sample ${id}`, provider: id, config });
    t.equal(made.status, good ? 201 : 400, `...and so does the server (${made.status})`);
    if (!good) t.equal(made.body.error.details.issues[0].path[0], 'config', 'the issue is in the config');
  }
  // What JSON Schema cannot say, the server still refuses.
  const twice = await createSource(app, owner, { name: 'twice', provider: 'manual-table', config: { columns: [MENU[0], MENU[0]] } });
  t.equal(twice.status, 400);
  t.same(twice.body.error.details.issues[0].path, ['config', 'columns', 1, 'name']);
});

t.test('content-definitions: asset kinds and data-bound content, each with a JSON Schema', async (t) => {
  const app = await startApp(t);
  const viewer = await signIn(app, { role: 'viewer' });
  await signIn(app); // the owner exists first
  const res = await app.json('/api/v1/content-definitions', { headers: viewer.headers });
  t.equal(res.status, 200);
  const defs = res.body.data.definitions as any[];
  const ids = defs.map((d) => d.id);
  for (const id of ['asset:image', 'asset:video', 'asset:website', 'data:data-source']) t.ok(ids.includes(id), `${id} is listed`);
  const ajv = addFormats(new Ajv2020({ strict: false }));
  const data = defs.find((d) => d.id === 'data:data-source');
  t.ok(ajv.validate(data.schema, { sourceId: UNKNOWN, view: { limit: 5, fields: ['Dish'] } }), 'a binding to a source');
  t.notOk(ajv.validate(data.schema, {}), 'a binding names its source');
  const image = defs.find((d) => d.id === 'asset:image');
  t.ok(ajv.validate(image.schema, { assetId: UNKNOWN, durationMs: 8000 }));
  t.notOk(ajv.validate(image.schema, { assetId: 'nope' }));
});

t.test('a table: create, list, get, patch (If-Match), rows checked against columns, delete', async (t) => {
  const app = await startApp(t);
  await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const other = await signIn(app, { role: 'editor' });
  const viewer = await signIn(app, { role: 'viewer' });
  const made = await createSource(app, editor, {
    name: 'Menu',
    provider: 'manual-table',
    config: { columns: MENU },
    rows: [
      { Dish: 'Soup', Price: 4.5, Vegan: true },
      { Dish: 'Pie', Price: 6 },
    ],
  });
  t.equal(made.status, 201, JSON.stringify(made.body));
  const src = made.body.data;
  t.equal(made.headers.get('etag'), '"1"');
  t.match(src, { name: 'Menu', provider: 'manual-table', columns: MENU, rowCount: 2, refreshIntervalSec: null, revision: 1, myAccess: 'owner' });
  t.equal(src.snapshot.revision, 1);
  t.equal(src.state.stale, false);
  t.equal(src.createdBy, editor.user.id);

  // Rows must fit the columns; a table does not refresh.
  for (const [rows, where] of [
    [[{ Dish: 5 }], ['rows', 0, 'Dish']],
    [
      [{ Dish: 'x' }, { Colour: 'red' }],
      ['rows', 1, 'Colour'],
    ],
    [[{ Vegan: 'yes' }], ['rows', 0, 'Vegan']],
  ] as const) {
    const bad = await createSource(app, editor, { name: 'Bad', provider: 'manual-table', config: { columns: MENU }, rows });
    t.equal(bad.status, 400);
    t.same(bad.body.error.details.issues[0].path, where, `refused at ${where.join('.')}`);
  }
  t.equal((await createSource(app, editor, { name: 'Bad', provider: 'manual-table', config: { columns: MENU }, refreshIntervalSec: 60 })).status, 400);
  t.equal((await createSource(app, editor, { name: 'Bad', provider: 'rss-ish', config: {} })).status, 400, 'an unknown provider is 400');
  t.equal((await createSource(app, viewer, { name: 'Mine', provider: 'manual-table', config: { columns: MENU } })).status, 403, 'viewers do not create');

  await createSource(app, other, { name: 'Allergens', provider: 'manual-table', config: { columns: MENU } });
  const list = await app.json('/api/v1/data-sources?limit=1', { headers: viewer.headers });
  t.equal(list.status, 200);
  t.equal(list.body.data.items.length, 1);
  t.equal(list.body.data.items[0].name, 'Allergens', 'by name');
  t.equal(list.body.data.items[0].myAccess, 'viewer');
  const next = await app.json(`/api/v1/data-sources?limit=1&cursor=${list.body.data.nextCursor}`, { headers: viewer.headers });
  t.equal(next.body.data.items[0].name, 'Menu');
  t.equal((await app.json('/api/v1/data-sources?q=men', { headers: viewer.headers })).body.data.items.length, 1);
  t.equal((await app.json('/api/v1/data-sources?provider=json', { headers: viewer.headers })).body.data.items.length, 0);
  t.equal((await app.json('/api/v1/data-sources?provider=nope', { headers: viewer.headers })).status, 400);

  const got = await app.json(`/api/v1/data-sources/${src.id}`, { headers: viewer.headers });
  t.equal(got.status, 200);
  t.equal(got.body.data.myAccess, 'viewer');
  t.equal((await app.json(`/api/v1/data-sources/${UNKNOWN}`, { headers: viewer.headers })).status, 404);
  t.equal((await app.json('/api/v1/data-sources/not-a-uuid', { headers: viewer.headers })).status, 404);

  const patch = (who: typeof editor, json: unknown, ifMatch?: string) =>
    app.json(`/api/v1/data-sources/${src.id}`, { method: 'PATCH', headers: { ...who.headers, ...(ifMatch ? { 'if-match': ifMatch } : {}) }, json });
  t.equal((await patch(viewer, { name: 'Mine' })).status, 403, 'a viewer does not change it');
  t.equal((await patch(editor, { name: 'Late' }, '"7"')).status, 412);
  const rows = [
    { Dish: 'Soup', Price: 4.5, Vegan: true },
    { Dish: 'Pie', Price: 6 },
    { Dish: 'Tart', Price: 5.5, Vegan: false },
  ];
  const changed = await patch(editor, { name: 'Lunch menu', rows }, '"1"');
  t.equal(changed.status, 200);
  t.match(changed.body.data, { name: 'Lunch menu', revision: 2, rowCount: 3 });
  t.equal(changed.body.data.snapshot.revision, 2, 'new rows, new data revision');
  const same = await patch(other, { rows });
  t.equal(same.body.data.revision, 3);
  t.equal(same.body.data.snapshot.revision, 2, 'the same rows again: the data revision stays');
  t.equal((await patch(editor, { rows: [{ Price: 'cheap' }] })).status, 400);
  t.equal((await patch(editor, { refreshIntervalSec: 120 })).status, 400, 'a table has no refresh interval');

  // Columns change: cells that no longer fit are empty in the data (the rows keep them).
  const retyped = await patch(editor, { config: { columns: [MENU[0], { name: 'Price', type: 'date' }] } });
  t.equal(retyped.status, 200);
  t.same(retyped.body.data.columns, [MENU[0], { name: 'Price', type: 'date' }]);
  const inspect = await app.json(`/api/v1/data-sources/${src.id}/inspect`, { headers: viewer.headers });
  t.equal(inspect.status, 200);
  t.same(inspect.body.data.fields, [
    { name: 'Dish', type: 'text', examples: ['Soup', 'Pie', 'Tart'], emptyCount: 0 },
    { name: 'Price', type: 'date', examples: [], emptyCount: 3 },
  ]);
  const back = await patch(editor, { config: { columns: MENU } });
  t.equal(back.body.data.snapshot.revision, 2 + 2, 'each column change made new data');
  const again = await app.json(`/api/v1/data-sources/${src.id}/inspect`, { headers: viewer.headers });
  t.same(again.body.data.fields[1].examples, [4.5, 6, 5.5], 'the rows kept their prices');

  // Only an owner of the source deletes it.
  const del = (who: typeof editor, ifMatch?: string) =>
    app.json(`/api/v1/data-sources/${src.id}`, { method: 'DELETE', headers: { ...who.headers, ...(ifMatch ? { 'if-match': ifMatch } : {}) } });
  t.equal((await del(other)).status, 403, 'another editor does not delete it');
  t.equal((await del(editor, '"1"')).status, 412);
  t.equal((await del(editor)).status, 204);
  t.equal((await app.json(`/api/v1/data-sources/${src.id}`, { headers: viewer.headers })).status, 404);
  t.equal((await del(editor)).status, 404);
});

t.test('a JSON source: secrets never answered, sealed at rest, kept by {set: true}, never sent to a new site; duplicate keeps them working', async (t) => {
  const app = await startApp(t, { config: { fetchAllowLoopback: true } });
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const KEY = 'k3y-Sekr1t-value';
  const TOKEN = 't0ken-Sekr1t-value';
  const items = {
    items: [
      { name: 'Latte', price: 3.5 },
      { name: 'Tea', price: 2 },
    ],
  };
  const feed = await fakeFeed(t, {
    '/menu.json': (req, res) => {
      if (req.headers['x-api-key'] !== KEY || req.headers.authorization !== `Bearer ${TOKEN}`) return res.writeHead(401).end('who are you');
      jsonDoc(items)(req, res);
    },
  });
  const elsewhere = await fakeFeed(t, { '/menu.json': jsonDoc(items) });
  const config = { url: `${feed.url}/menu.json`, rowsPath: '$.items[*]', headers: { 'X-Api-Key': KEY }, auth: { type: 'bearer', token: TOKEN } };
  t.equal(
    (await createSource(app, editor, { name: 'x', provider: 'json', config: { ...config, auth: { type: 'bearer', token: { set: true } } } })).status,
    400,
    '{set: true} with nothing stored',
  );

  const made = await createSource(app, editor, { name: 'Coffee', provider: 'json', config });
  t.equal(made.status, 201, JSON.stringify(made.body));
  const src = made.body.data;
  t.same(src.config.headers, { 'X-Api-Key': { set: true } });
  t.same(src.config.auth, { type: 'bearer', token: { set: true } });
  t.equal(src.config.url, config.url);
  t.equal(src.refreshIntervalSec, 300, 'the provider’s default interval');
  t.equal(src.rowCount, 0, 'no data before the first fetch');
  t.ok(src.state.nextFetchAt, 'the first fetch is scheduled');

  await refreshNow(app, src.id);
  const fetched = await app.json(`/api/v1/data-sources/${src.id}`, { headers: editor.headers });
  t.equal(fetched.body.data.rowCount, 2);
  t.same(fetched.body.data.columns, [
    { name: 'name', type: 'text' },
    { name: 'price', type: 'number' },
  ]);
  t.equal(feed.requests.at(-1)?.headers['x-api-key'], KEY, 'the fetch sent the secret header');

  // Never answered: not by any route that shows the source.
  for (const p of [
    `/api/v1/data-sources/${src.id}`,
    '/api/v1/data-sources',
    `/api/v1/data-sources/${src.id}/diagnostics`,
    `/api/v1/data-sources/${src.id}/access`,
  ]) {
    const res = await app.fetch(p, { headers: owner.headers });
    const text = await res.text();
    t.equal(res.status, 200, p);
    t.notOk(text.includes(KEY) || text.includes(TOKEN), `${p} does not carry the secrets`);
  }
  // Sealed at rest: the database file holds neither secret, in its rows or its pages.
  const file = path.join(app.dataDir, 'placard.db');
  // (PostgreSQL: the row as the server stores it; its pages are the server's own files.)
  const stored = JSON.parse((await app.deps.db.selectFrom('data_sources').select('config').where('id', '=', src.id).executeTakeFirstOrThrow()).config);
  t.match(stored.headers['X-Api-Key'], { $sealed: /^v1\./ });
  t.match(stored.auth.token, { $sealed: /^v1\./ });
  for (const f of app.database.kind === 'sqlite' ? [file, `${file}-wal`].filter(existsSync) : []) {
    const bytes = readFileSync(f);
    t.equal(bytes.indexOf(KEY), -1, `${path.basename(f)} has no plain API key`);
    t.equal(bytes.indexOf(TOKEN), -1, `${path.basename(f)} has no plain token`);
  }

  // {set: true} keeps the stored secrets through a change of config.
  const keep = { ...config, maxRows: 1, headers: { 'X-Api-Key': { set: true } }, auth: { type: 'bearer', token: { set: true } } };
  const patched = await app.json(`/api/v1/data-sources/${src.id}`, { method: 'PATCH', headers: editor.headers, json: { config: keep } });
  t.equal(patched.status, 200, JSON.stringify(patched.body));
  t.same(patched.body.data.config.auth, { type: 'bearer', token: { set: true } });
  await refreshNow(app, src.id);
  t.equal((await app.json(`/api/v1/data-sources/${src.id}`, { headers: editor.headers })).body.data.rowCount, 1, 'fetched with the kept secrets');
  t.equal((await diagnosticsOf(app, editor, src.id)).attempts[0].status, 200);
  // ...but never to another site, and never where nothing is stored.
  const moved = await app.json(`/api/v1/data-sources/${src.id}`, {
    method: 'PATCH',
    headers: editor.headers,
    json: { config: { ...keep, url: `${elsewhere.url}/menu.json` } },
  });
  t.equal(moved.status, 400);
  t.same(
    moved.body.error.details.issues.map((i: any) => i.path.join('.')),
    ['config.headers.X-Api-Key', 'config.auth.token'],
  );
  t.ok(moved.body.error.details.issues.every((i: any) => i.code === 'secret_not_set'));
  const stray = await app.json(`/api/v1/data-sources/${src.id}`, {
    method: 'PATCH',
    headers: editor.headers,
    json: { config: { ...keep, headers: { 'X-Api-Key': { set: true }, 'X-Other': { set: true } } } },
  });
  t.equal(stray.status, 400);
  t.same(stray.body.error.details.issues[0].path, ['config', 'headers', 'X-Other']);
  t.equal(elsewhere.requests.length, 0, 'the other site was never asked');

  // A copy fetches with the same (sealed) secrets.
  const before = feed.requests.length;
  const copy = await app.json(`/api/v1/data-sources/${src.id}/duplicate`, { method: 'POST', headers: owner.headers, json: {} });
  t.equal(copy.status, 201);
  t.not(copy.body.data.id, src.id);
  t.equal(copy.body.data.name, 'Coffee (copy)');
  t.same(copy.body.data.config.headers, { 'X-Api-Key': { set: true } });
  t.equal(copy.body.data.rowCount, 1, 'the data came along');
  await refreshNow(app, copy.body.data.id);
  t.equal(feed.requests.length, before + 1);
  t.equal(feed.requests.at(-1)?.headers.authorization, `Bearer ${TOKEN}`, 'the copy sent the token');
  const copyDiag = await diagnosticsOf(app, owner, copy.body.data.id);
  t.equal(copyDiag.attempts[0].error, null, 'and the server took it');
  t.equal(copyDiag.attempts[0].outcome, 'unchanged', 'the same document as the original: nothing new');
  const copied = JSON.parse(
    (await app.deps.db.selectFrom('data_sources').select('config').where('id', '=', copy.body.data.id).executeTakeFirstOrThrow()).config,
  );
  t.match(copied.auth.token, { $sealed: /^v1\./ }, 'the copy’s secrets are sealed too');
  t.equal((await app.json(`/api/v1/data-sources/${src.id}/duplicate`, { method: 'POST', headers: editor.headers, json: { name: '' } })).status, 400);
});

t.test('preview and inspect: unsaved configs run end to end, nothing stored; failures are answers; unknown providers 404 with the list', async (t) => {
  const app = await startApp(t, { config: { fetchAllowLoopback: true } });
  await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const viewer = await signIn(app, { role: 'viewer' });
  const events = {
    data: {
      events: [
        { title: 'Quiz night', starts: '2025-03-04T19:00:00Z', price: '12.50', link: 'https://example.com/quiz', poster: 'https://example.com/quiz.png' },
        { title: 'Jazz', starts: '2025-03-05T20:00:00Z', price: '8', link: 'https://example.com/jazz', poster: 'https://example.com/jazz.jpg' },
        { title: 'Brunch', starts: '2025-03-09T10:30:00Z', price: null, link: 'https://example.com/brunch' },
      ],
    },
  };
  const feed = await fakeFeed(t, {
    '/events.json': jsonDoc(events),
    '/broken.json': (_q, s) => s.writeHead(200, { 'content-type': 'application/json' }).end('{"data": [1, 2'),
    '/secret.json': (q, s) => (q.headers['x-api-key'] === 'abc' ? jsonDoc(events)(q, s) : s.writeHead(403).end()),
  });
  const config = { url: `${feed.url}/events.json`, rowsPath: '$.data.events[*]' };
  const post = (p: string, json: unknown, who = editor) => app.json(`/api/v1/data-sources/${p}`, { method: 'POST', headers: who.headers, json });

  const preview = await post('json/preview', { config, limit: 2 });
  t.equal(preview.status, 200, JSON.stringify(preview.body));
  const p = preview.body.data;
  t.equal(p.rows.length, 2, 'the first rows');
  t.equal(p.rowCount, 3);
  t.same(p.columns, [
    { name: 'title', type: 'text' },
    { name: 'starts', type: 'datetime' },
    { name: 'price', type: 'text' },
    { name: 'link', type: 'url' },
    { name: 'poster', type: 'image' },
  ]);
  t.equal(p.error, null);
  t.equal(p.attempt.status, 200);
  const mapped = await post('json/preview', {
    config: {
      ...config,
      columns: [
        { name: 'Event', path: 'title' },
        { name: 'Price', path: '$.price', type: 'number' },
      ],
    },
  });
  t.same(mapped.body.data.rows, [
    { Event: 'Quiz night', Price: 12.5 },
    { Event: 'Jazz', Price: 8 },
    { Event: 'Brunch', Price: null },
  ]);

  const inspect = await post('json/inspect', { config });
  t.equal(inspect.status, 200);
  const price = inspect.body.data.fields.find((f: any) => f.name === 'price');
  t.same(price, { name: 'price', type: 'text', examples: ['12.50', '8'], emptyCount: 1 });
  t.ok(inspect.body.data.fields.every((f: any) => f.examples.length <= 3));
  t.equal((await app.json('/api/v1/data-sources', { headers: editor.headers })).body.data.items.length, 0, 'nothing was stored');

  const missing = await post('json/preview', { config: { url: `${feed.url}/nothing.json` } });
  t.equal(missing.status, 200);
  t.match(missing.body.data, { rows: [], error: { code: 'http_status' }, attempt: { status: 404, outcome: 'failed' } });
  const broken = await post('json/inspect', { config: { url: `${feed.url}/broken.json` } });
  t.match(broken.body.data, { fields: [], error: { code: 'parse_failed', message: /could not be read/ } });

  const unknown = await post('rss-ish/preview', { config });
  t.equal(unknown.status, 404);
  t.match(unknown.body.error.message, /manual-table, rss, json, csv, ical/);
  t.same(unknown.body.error.details.providers, ['manual-table', 'rss', 'json', 'csv', 'ical']);
  t.equal((await post('rss-ish/inspect', { config })).status, 404);
  const bad = await post('json/preview', { config: { url: 'ftp://example.com/x' } });
  t.equal(bad.status, 400);
  t.same(bad.body.error.details.issues[0].path, ['config', 'url']);
  t.equal((await post('json/preview', { config }, viewer)).status, 403, 'viewers do not preview unsaved configs');

  const table = await post('manual-table/preview', { config: { columns: MENU } });
  t.same(table.body.data, { columns: MENU, rows: [], rowCount: 0, warnings: [], attempt: null, error: null });

  // Editing a source: its stored secret, sent back as {set: true}.
  const made = await createSource(app, editor, {
    name: 'Secret events',
    provider: 'json',
    config: { ...config, url: `${feed.url}/secret.json`, headers: { 'X-Api-Key': 'abc' } },
  });
  const kept = { ...config, url: `${feed.url}/secret.json`, headers: { 'X-Api-Key': { set: true } } };
  t.equal((await post('json/preview', { config: kept })).status, 400, 'no source named: nothing to keep');
  const withSource = await post('json/preview', { config: kept, sourceId: made.body.data.id });
  t.equal(withSource.body.data.rowCount, 3, 'the stored secret was used');
  t.equal((await post('json/preview', { config: kept, sourceId: UNKNOWN })).status, 400);

  const saved = await app.json(`/api/v1/data-sources/${made.body.data.id}/inspect`, { headers: viewer.headers });
  t.equal(saved.status, 200);
  t.equal(saved.body.data.rowCount, 3, 'a saved source is fetched now, with its secrets');
});

t.test('access: grants narrow and widen, owners manage them, the directory shows id, name and role only', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const admin = await signIn(app, { role: 'admin' });
  const maker = await signIn(app, { role: 'editor' });
  const colleague = await signIn(app, { role: 'editor' });
  const publisher = await signIn(app, { role: 'publisher' });
  const viewer = await signIn(app, { role: 'viewer' });
  const gone = await signIn(app, { role: 'editor' });
  await app.json(`/api/v1/users/${gone.user.id}`, { method: 'PATCH', headers: owner.headers, json: { disabled: true } });
  const src = (await createSource(app, maker, { name: 'Rota', provider: 'manual-table', config: { columns: MENU } })).body.data;
  const base = `/api/v1/data-sources/${src.id}`;
  const patch = (who: typeof maker) => app.json(base, { method: 'PATCH', headers: who.headers, json: { name: `by ${who.user.role}` } });
  const grant = (who: typeof maker, userId: string, level: string | null) =>
    app.json(`${base}/access/${userId}`, { method: 'PUT', headers: who.headers, json: { level } });
  const mine = async (who: typeof maker) => (await app.json(base, { headers: who.headers })).body.data.myAccess;

  // Defaults by role.
  t.equal(await mine(maker), 'owner', 'its maker owns it');
  t.equal(await mine(colleague), 'editor');
  t.equal(await mine(publisher), 'editor');
  t.equal(await mine(viewer), 'viewer');
  t.equal(await mine(admin), 'owner');
  t.equal((await patch(colleague)).status, 200, 'editors change every source');
  t.equal((await patch(viewer)).status, 403);
  t.equal((await grant(colleague, viewer.user.id, 'editor')).status, 403, 'only an owner of the source grants');
  t.equal((await app.json(`${base}/user-directory`, { headers: colleague.headers })).status, 403);
  t.equal((await app.json(`${base}/access`, { headers: viewer.headers })).status, 403);

  // Widen: a viewer may edit this one source (and still no other, and still create none).
  const widened = await grant(maker, viewer.user.id, 'editor');
  t.equal(widened.status, 200);
  t.same(widened.body.data, { userId: viewer.user.id, displayName: viewer.user.displayName, role: 'viewer', grant: 'editor', level: 'editor' });
  t.equal((await patch(viewer)).status, 200, 'the grant lets the viewer edit it');
  const otherSource = (await createSource(app, maker, { name: 'Other', provider: 'manual-table', config: { columns: MENU } })).body.data;
  t.equal(
    (await app.json(`/api/v1/data-sources/${otherSource.id}`, { method: 'PATCH', headers: viewer.headers, json: { name: 'x' } })).status,
    403,
    'not another one',
  );
  t.equal((await createSource(app, viewer, { name: 'New', provider: 'manual-table', config: {} })).status, 403);

  // Narrow: an editor may only read it.
  t.equal((await grant(maker, colleague.user.id, 'viewer')).body.data.level, 'viewer');
  t.equal(await mine(colleague), 'viewer');
  t.equal((await patch(colleague)).status, 403);
  t.equal((await app.json(`${base}/duplicate`, { method: 'POST', headers: colleague.headers, json: {} })).status, 403, 'nor copy it');
  t.equal((await app.json(base, { headers: colleague.headers })).status, 200, 'reading is still fine');

  // Owner grants: another owner of the source may delete it and manage access.
  t.equal((await grant(maker, publisher.user.id, 'owner')).status, 200);
  const access = await app.json(`${base}/access`, { headers: publisher.headers });
  t.equal(access.status, 200);
  t.equal(access.body.data.myAccess, 'owner');
  t.same(access.body.data.defaults, { owner: 'owner', admin: 'owner', publisher: 'editor', editor: 'editor', viewer: 'viewer' });
  const levels = Object.fromEntries(access.body.data.items.map((g: any) => [g.userId, g.level]));
  t.same(levels, { [maker.user.id]: 'owner', [viewer.user.id]: 'editor', [colleague.user.id]: 'viewer', [publisher.user.id]: 'owner' });

  // Clearing returns to the role's default; admins need no grant; unknown users are 404.
  const cleared = await grant(publisher, colleague.user.id, null);
  t.same(cleared.body.data, { userId: colleague.user.id, displayName: colleague.user.displayName, role: 'editor', grant: null, level: 'editor' });
  t.equal((await grant(maker, admin.user.id, 'viewer')).status, 409);
  t.equal((await grant(maker, UNKNOWN, 'viewer')).status, 404);
  t.equal((await grant(maker, viewer.user.id, 'boss')).status, 400);

  // The directory: whom the caller may grant, id + name + role, nothing else.
  const dir = await app.json(`${base}/user-directory`, { headers: maker.headers });
  t.equal(dir.status, 200);
  for (const entry of dir.body.data.items) t.same(Object.keys(entry).sort(), ['displayName', 'id', 'role'], 'id, displayName and role only');
  const listed = dir.body.data.items.map((e: any) => e.id).sort();
  t.same(
    listed,
    [maker.user.id, colleague.user.id, publisher.user.id, viewer.user.id].sort(),
    'active users a grant affects (no owners, admins or disabled users)',
  );
  t.notOk(JSON.stringify(dir.body).includes('@example.test'), 'no email addresses');
  const searched = await app.json(`${base}/user-directory?q=${encodeURIComponent('test view')}&limit=1`, { headers: maker.headers });
  t.same(
    searched.body.data.items.map((e: any) => e.id),
    [viewer.user.id],
  );

  // Delete: owners of the source and admins; a colleague editor does not.
  t.equal((await app.json(base, { method: 'DELETE', headers: colleague.headers })).status, 403);
  t.equal((await app.json(`/api/v1/data-sources/${otherSource.id}`, { method: 'DELETE', headers: admin.headers })).status, 204, 'admins delete any source');
  t.equal((await app.json(base, { method: 'DELETE', headers: publisher.headers })).status, 204, 'an owner by grant deletes it');
  t.equal(
    Number(
      (
        await app.deps.db
          .selectFrom('data_source_grants')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ),
    0,
    'its grants went with it',
  );
});

t.test('deleting a source in use is 409 naming its users (the hook widgets and outputs register)', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const src = (await createSource(app, owner, { name: 'Prices', provider: 'manual-table', config: { columns: MENU } })).body.data;
  const remove = addDataSourceUsageFinder(app.deps, async (_db, ids) =>
    ids.includes(src.id) ? [{ sourceId: src.id, type: 'widget', id: UNKNOWN, name: 'Price board' }] : [],
  );
  const refused = await app.json(`/api/v1/data-sources/${src.id}`, { method: 'DELETE', headers: owner.headers });
  t.equal(refused.status, 409);
  t.match(refused.body.error.message, /widget "Price board"/);
  t.same(refused.body.error.details.usedBy, [{ type: 'widget', id: UNKNOWN, name: 'Price board' }]);
  t.same((await diagnosticsOf(app, owner, src.id)).usedBy, [{ type: 'widget', id: UNKNOWN, name: 'Price board' }], 'diagnostics name the users too');
  remove();
  t.equal((await app.json(`/api/v1/data-sources/${src.id}`, { method: 'DELETE', headers: owner.headers })).status, 204);
});
