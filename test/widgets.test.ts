import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { addPlayerWidgetGuard, addWidgetBundleChangeHook, widgetBundleFor } from '../server/src/modules/widgets/index.js';
import { MAX_WAITING_DRAWINGS } from '../server/src/modules/widgets/preview.js';
import { kickImageFetch } from '../server/src/modules/data-sources/images.service.js';
import { signedInApp } from './helpers/auth.js';
import { launchBrowser, waitUntil } from './helpers/browser.js';
import { compileWidget } from '../server/src/modules/widgets/compiler.js';
import { SETTINGS } from '../server/src/modules/widgets/types.js';
import { samplePng } from './helpers/sample-media.js';
import { createSource, fakeFeed, refreshNow } from './helpers/data-sources.js';
import { pairScreen } from './helpers/screens.js';

const UNKNOWN = '0190f5a2-7b3c-7def-8abc-0123456789ab';
const MENU = [
  { name: 'Dish', type: 'text' },
  { name: 'Course', type: 'text' },
  { name: 'Price', type: 'number' },
];
const ROWS = [
  { Dish: 'Soup', Course: 'Starters', Price: 4.5 },
  { Dish: 'Steak', Course: 'Mains', Price: 15 },
  { Dish: 'Fish', Course: 'Mains', Price: 1234.5 },
];
const bodyOf = (html: string) => /<body[^>]*>([\s\S]*)<script>/.exec(html)?.[1] ?? '';
const scriptOf = (html: string) => /<script>([\s\S]*)<\/script><\/body>/.exec(html)?.[1] ?? '';

t.test('every built-in type compiles into a bundle document: CSP first, one context, the runtime allowed by its hash', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const src = (await createSource(app, owner, { name: 'Menu', provider: 'manual-table', config: { columns: MENU }, rows: ROWS })).body.data;
  const cases: [string, Record<string, unknown>, string | null, boolean, RegExp[]][] = [
    ['clock', { show: 'datetime', seconds: true }, null, false, [/class="pl-clock" data-show="datetime"/]],
    ['text', { text: 'Hello <world>' }, null, false, [/Hello &lt;world&gt;/]],
    [
      'ticker',
      { text: '', column: 'Dish', speedPxPerSec: 120 },
      null,
      true,
      [/data-speed="120"/, /<span>Soup<\/span><span class="pl-sep"> • <\/span><span>Steak/],
    ],
    ['qr', { value: 'https://placard.example/x', label: 'Scan me' }, null, false, [/<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/, /<path/, /Scan me/]],
    [
      'countdown',
      { target: '2031-05-01T10:00:00Z', label: 'Opening', after: 'text', afterText: 'Open!' },
      null,
      false,
      [/data-target="2031-05-01T10:00:00Z"/, /data-after-text="Open!"/],
    ],
    [
      'table',
      {
        title: 'Menu',
        columns: [{ name: 'Dish' }, { name: 'Price', heading: 'Cost', format: { type: 'money', currency: 'EUR', decimals: 2, grouping: true } }],
        groupBy: 'Course',
        rowsPerPage: 2,
      },
      null,
      true,
      [
        /<td class="pl-money">15.00 €<\/td>/,
        /<td class="pl-money">4.50 €<\/td>/,
        /1\u202f234.50 €/,
        /<th class="pl-money">Cost<\/th>/,
        /<tr class="pl-group"><th colspan="2">Mains<\/th>/,
      ],
    ],
    ['feed-list', { fields: { title: 'Dish', summary: 'Course', image: 'Pic', published: 'When' } }, null, true, [/<h2>Soup<\/h2><p>Starters<\/p>/]],
    [
      'agenda',
      { fields: { start: 'Price', end: 'Price', title: 'Dish', location: 'Course' } },
      null,
      true,
      [/<strong>Soup<\/strong> <span class="pl-where">Starters/],
    ],
    ['carousel', { imageColumn: 'Dish', intervalMs: 3000 }, null, true, [/class="pl-fill pl-carousel" data-interval="3000"/]],
    [
      'custom',
      { css: '.x{color:red}' },
      '<p class="x">{{ source }}: {% for r in rows %}{{ r.Dish }} {{ r.Price | money: "EUR" }};{% endfor %}</p>',
      true,
      [/Menu: Soup 4.50 €;Steak 15.00 €;/, /\.x\{color:red\}/],
    ],
  ];
  const types = (await call('GET', '/api/v1/widget-types')).body.data.types.map((x: { type: string }) => x.type);
  t.same(types.sort(), cases.map((c) => c[0]).sort(), 'GET /widget-types lists every type');
  for (const [type, settings, template, bound, expect] of cases) {
    const body = { name: type, type, settings, template, binding: bound ? { sourceId: src.id } : null };
    const preview = await call('POST', '/api/v1/widgets/compile-preview', body);
    t.equal(preview.status, 200, `${type}: ${JSON.stringify(preview.body).slice(0, 300)}`);
    t.same(preview.body.data.errors, [], `${type} compiles`);
    const html: string = preview.body.data.html;
    t.match(
      html,
      /^<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data: blob:; media-src data: blob:; font-src data:; style-src 'unsafe-inline'; script-src 'sha256-[A-Za-z0-9+/=]+'; base-uri 'none'; form-action 'none'">/,
      `${type}: CSP first`,
    );
    t.equal(html.split('id="placard-context"').length, 2, `${type}: one context`);
    t.match(html, /<script type="application\/json" id="placard-context">\{\}<\/script>/);
    const hash = /script-src 'sha256-([^']+)'/.exec(html)![1];
    t.equal(createHash('sha256').update(scriptOf(html)).digest('base64'), hash, `${type}: the CSP hash is the inline runtime's sha256`);
    t.equal(html.split('<script').length, 3, `${type}: the context and the runtime are the only scripts`);
    for (const re of expect) t.match(html, re, `${type}: ${re}`);
    // Saved, the same compiler builds its bundle.
    const made = await call('POST', '/api/v1/widgets', body);
    t.equal(made.status, 201, `${type} saved`);
    t.ok(made.body.data.bundle?.sha256, `${type} has a bundle`);
  }
  const defs = (await call('GET', '/api/v1/content-definitions')).body.data.definitions as { id: string; settingsSchema?: unknown }[];
  t.ok(defs.find((d) => d.id === 'widget:table')?.settingsSchema, 'content-definitions lists widget:table with its settings schema');
  t.notOk(
    defs.find((d) => d.id === 'asset:widget'),
    'the placeholder asset:widget is gone',
  );
});

t.test('bad input: settings, unknown source, a view that does not fit, template errors with line and column, nothing stored', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const src = (await createSource(app, owner, { name: 'Menu', provider: 'manual-table', config: { columns: MENU }, rows: ROWS })).body.data;
  const bad = await call('POST', '/api/v1/widgets', { name: 'T', type: 'table', settings: { rowsPerPage: 0 } });
  t.equal(bad.status, 400);
  t.same(bad.body.error.details.issues[0].path, ['settings', 'rowsPerPage']);
  const unknown = await call('POST', '/api/v1/widgets', { name: 'T', type: 'table', binding: { sourceId: UNKNOWN } });
  t.equal(unknown.status, 400);
  t.match(unknown.body.error.details.issues[0], { path: ['binding', 'sourceId'], code: 'invalid_reference' });
  const view = await call('POST', '/api/v1/widgets', { name: 'T', type: 'table', binding: { sourceId: src.id, view: { fields: ['Nope'] } } });
  t.equal(view.status, 400);
  t.same(view.body.error.details.issues[0].path, ['binding', 'view']);
  t.equal((await call('POST', '/api/v1/widgets', { name: 'T', type: 'clock', template: '<p>' })).status, 400, 'a built-in type takes no template');
  const template = 'line one\n  {% for r in rows %}\n{{ r.Dish | no_such_filter }}{% endfor %}';
  const broken = await call('POST', '/api/v1/widgets', { name: 'C', type: 'custom', template, binding: { sourceId: src.id } });
  t.equal(broken.status, 400);
  t.match(broken.body.error.details.errors[0], { line: 3, column: 1, message: /no_such_filter/ });
  const unclosed = await call('POST', '/api/v1/widgets', { name: 'C', type: 'custom', template: '<p>\n\n   {% if rows %}' });
  t.equal(unclosed.status, 400);
  t.match(unclosed.body.error.details.errors[0], { line: 3, column: 4 });
  const preview = await call('POST', '/api/v1/widgets/compile-preview', { name: 'C', type: 'custom', template });
  t.equal(preview.status, 200, 'compile-preview answers the errors with 200');
  t.equal(preview.body.data.html, '');
  t.match(preview.body.data.errors[0], { line: 3, column: 1 });
  for (const include of ['{% include "secret" %}', '{% render "../../etc/passwd" %}', '{{ rows.constructor.name }}{{ settings.__proto__ }}']) {
    const r = await call('POST', '/api/v1/widgets/compile-preview', { name: 'C', type: 'custom', template: include });
    t.equal(r.status, 200);
    if (include.includes('constructor')) t.notMatch(bodyOf(r.body.data.html), /Array|Object/, 'no prototype reached');
    else t.ok(r.body.data.errors.length, `${include} fails: no file system`);
  }
  t.same((await call('GET', '/api/v1/widgets')).body.data.items, [], 'nothing was stored');
});

t.test('a custom template cannot bring scripts, handlers, remote URLs, frames, links or meta refreshes', async (t) => {
  const { call } = await signedInApp(t);
  const template = [
    '<div class="ok" style="color:red;background:url(https://evil.example/x.png)">kept</div>',
    '<script>alert(1)</script><img src="https://evil.example/a.png" onerror="alert(2)"><img src="placard-media:0190f5a2-7b3c-7def-8abc-0123456789ab" alt="m">',
    '<meta http-equiv="refresh" content="0;url=https://evil.example"><link rel="stylesheet" href="https://evil.example/s.css">',
    '<iframe src="https://evil.example"></iframe><object data="x"></object><embed src="x"><form action="https://evil.example"><input></form>',
    '<a href="javascript:alert(3)">link</a><base href="https://evil.example/"><svg onload="alert(4)"></svg><p onclick="alert(5)">p</p>',
  ].join('\n');
  const res = await call('POST', '/api/v1/widgets', {
    name: 'Hostile',
    type: 'custom',
    template,
    settings: { css: '@import url(https://evil.example/a.css); .x{background:url("https://evil.example/b.png")} </style><script>alert(6)</script>' },
  });
  t.equal(res.status, 201, JSON.stringify(res.body).slice(0, 300));
  const preview = await call('POST', '/api/v1/widgets/compile-preview', {
    name: 'Hostile',
    type: 'custom',
    template,
    settings: { css: '@import url(https://evil.example/a.css); .x{background:url("https://evil.example/b.png")} </style><script>alert(6)</script>' },
  });
  const html: string = preview.body.data.html;
  t.equal(html.split('<script').length, 3, 'only the context and the runtime are scripts');
  const css = /<style>([\s\S]*)<\/style>/.exec(html)![1]!;
  t.notMatch(css, /</, 'the stylesheet cannot end its <style>');
  t.notMatch(css, /@import|evil\.example/, 'nor import or reach a URL');
  for (const bad of [
    /alert/,
    /onerror/i,
    /onload/i,
    /onclick/i,
    /evil\.example/,
    /<iframe/,
    /<object/,
    /<embed/,
    /<link/,
    /<form/,
    /<base /,
    /javascript:/,
    /http-equiv="refresh"/,
    /@import/,
  ])
    t.notMatch(bodyOf(html), bad, `no ${bad}`);
  t.match(html, /<div class="ok" style="color:red;background:none">kept<\/div>/, 'formatting kept, the remote url gone');
  t.match(html, /<img src="placard-media:0190f5a2-7b3c-7def-8abc-0123456789ab" alt="m" \/>/, 'a placard-media image kept');
  t.match(html, /<p>p<\/p>/);
});

t.test('a hostile loop is stopped and the server stays responsive', async (t) => {
  const { app, call } = await signedInApp(t);
  for (const template of [
    '{% for i in (1..10000000) %}{{ i }}{% endfor %}',
    '{% for i in (1..1000) %}{% for j in (1..1000) %}{% for k in (1..1000) %}x{% endfor %}{% endfor %}{% endfor %}',
  ]) {
    const started = Date.now();
    const pending = call('POST', '/api/v1/widgets', { name: 'Loop', type: 'custom', template });
    const health = await app.fetch('/healthz');
    t.equal(health.status, 200, 'the server answers meanwhile');
    const res = await pending;
    t.equal(res.status, 400, 'stopped');
    t.match(res.body.error.details.errors[0].message, /limit exceeded/);
    t.ok(Date.now() - started < 5000, `stopped within seconds (${Date.now() - started} ms)`);
  }
  t.same((await call('GET', '/api/v1/widgets')).body.data.items, []);
});

t.test('revisions: If-Match 412, PATCH rebuilds, duplicate, delete; a data change makes a new bundle and tells the hook', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const heard: { widgetIds: string[]; deleted: boolean }[] = [];
  addWidgetBundleChangeHook(app.deps, (_deps, change) => {
    heard.push(change);
  });
  const src = (await createSource(app, owner, { name: 'Menu', provider: 'manual-table', config: { columns: MENU }, rows: ROWS })).body.data;
  const settings = { columns: [{ name: 'Dish' }, { name: 'Price', format: { type: 'money', currency: 'EUR' } }] };
  const made = await call('POST', '/api/v1/widgets', {
    name: 'Board',
    type: 'table',
    settings,
    binding: { sourceId: src.id, view: { sort: [{ field: 'Dish', direction: 'asc' }] } },
  });
  t.equal(made.status, 201);
  const w = made.body.data;
  t.equal(made.headers.get('etag'), '"1"');
  t.same(heard, [{ widgetIds: [w.id], deleted: false }], 'the first bundle was announced');
  const first = w.bundle;

  // A data change: the table's rows edited.
  heard.length = 0;
  const patched = await call(
    'PATCH',
    `/api/v1/data-sources/${src.id}`,
    { rows: [...ROWS, { Dish: 'Cake', Course: 'Desserts', Price: 3 }] },
    { 'if-match': '"1"' },
  );
  t.equal(patched.status, 200, JSON.stringify(patched.body).slice(0, 300));
  const after = (await call('GET', `/api/v1/widgets/${w.id}`)).body.data;
  t.not(after.bundle.id, first.id, 'a new bundle version');
  t.not(after.bundle.sha256, first.sha256);
  t.equal(after.revision, 1, 'the widget itself did not change');
  t.same(heard, [{ widgetIds: [w.id], deleted: false }], 'the hook heard it once');
  const answer = await widgetBundleFor(app.deps, w.id);
  t.ok(answer.ok);
  if (answer.ok) {
    t.match(answer.bundle, {
      widgetId: w.id,
      bundleId: after.bundle.id,
      sha256: after.bundle.sha256,
      contentType: 'text/html; charset=utf-8',
      sourceId: src.id,
      url: `/api/v1/player/widget-bundles/${after.bundle.id}`,
      type: 'table',
      name: 'Board',
    });
  }
  // The same rows again make no new version.
  heard.length = 0;
  await call('PATCH', `/api/v1/data-sources/${src.id}`, { name: 'Menu 2' }, {});
  t.equal((await call('GET', `/api/v1/widgets/${w.id}`)).body.data.bundle.id, after.bundle.id, 'same data, same bundle');
  t.same(heard, []);

  t.equal((await call('PATCH', `/api/v1/widgets/${w.id}`, { name: 'X' }, { 'if-match': '"7"' })).status, 412, 'a stale If-Match is 412');
  const renamed = await call('PATCH', `/api/v1/widgets/${w.id}`, { settings: { ...settings, title: 'Today' } }, { 'if-match': '"1"' });
  t.equal(renamed.status, 200);
  t.equal(renamed.headers.get('etag'), '"2"');
  t.not(renamed.body.data.bundle.id, after.bundle.id, 'an edit builds a new bundle');
  const badEdit = await call('PATCH', `/api/v1/widgets/${w.id}`, { template: '{{' }, { 'if-match': '"2"' });
  t.equal(badEdit.status, 400, 'a table takes no template');
  t.equal((await call('GET', `/api/v1/widgets/${w.id}`)).body.data.revision, 2, 'nothing stored');

  const copy = await call('POST', `/api/v1/widgets/${w.id}/duplicate`);
  t.equal(copy.status, 201);
  t.match(copy.body.data, { name: 'Board (copy)', type: 'table', settings: { title: 'Today' }, binding: { sourceId: src.id }, revision: 1 });
  t.not(copy.body.data.id, w.id);

  // The source cannot go while widgets show it: the data-sources usage finder names them.
  const gone = await call('DELETE', `/api/v1/data-sources/${src.id}`);
  t.equal(gone.status, 409);
  t.ok(JSON.stringify(gone.body.error.details).includes(w.id), 'the widget is named');

  heard.length = 0;
  t.equal((await call('DELETE', `/api/v1/widgets/${copy.body.data.id}`, undefined, { 'if-match': '"9"' })).status, 412);
  t.equal((await call('DELETE', `/api/v1/widgets/${copy.body.data.id}`)).status, 204);
  t.same(heard, [{ widgetIds: [copy.body.data.id], deleted: true }]);
  t.equal((await call('GET', `/api/v1/widgets/${copy.body.data.id}`)).status, 404);
  t.same(await widgetBundleFor(app.deps, copy.body.data.id), { ok: false, reason: 'no_widget', message: 'The widget no longer exists' });
});

t.test('the player bundle route: device credential, a guard, ETag and 304, immutable', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const w = (await call('POST', '/api/v1/widgets', { name: 'Clock', type: 'clock' })).body.data;
  const url = `/api/v1/player/widget-bundles/${w.bundle.id}`;
  t.equal((await app.fetch(url)).status, 401, 'no credential');
  t.equal((await call('GET', url)).status, 401, 'a session is not a device');
  const screen = await pairScreen(app, owner, { name: 'Lobby' });
  t.equal((await app.fetch(url, { headers: screen.headers })).status, 404, 'the screen does not use it');
  addPlayerWidgetGuard(app.deps, async (_deps, screenId, widgetId) => screenId === screen.screenId && widgetId === w.id);
  const res = await app.fetch(url, { headers: screen.headers });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
  t.equal(res.headers.get('etag'), `"${w.bundle.sha256}"`);
  t.match(res.headers.get('cache-control'), /immutable/);
  const bytes = Buffer.from(await res.arrayBuffer());
  t.equal(createHash('sha256').update(bytes).digest('hex'), w.bundle.sha256, 'the bytes hash to the sha256');
  t.equal((await app.fetch(url, { headers: { ...screen.headers, 'if-none-match': `"${w.bundle.sha256}"` } })).status, 304);
  t.equal((await app.fetch(`/api/v1/player/widget-bundles/${UNKNOWN}`, { headers: screen.headers })).status, 404);
});

t.test('preview-image: a placeholder without a browser, an uploaded one until the widget changes, bad uploads refused', async (t) => {
  const { app, call, owner } = await signedInApp(t, { config: { chromiumPath: '/nonexistent/chromium' } });
  const w = (await call('POST', '/api/v1/widgets', { name: 'Welcome', type: 'text', settings: { text: 'Hi' } })).body.data;
  const get = (q = '') => app.fetch(`/api/v1/widgets/${w.id}/preview-image${q}`, { headers: owner.headers });
  const res = await get('?width=640&height=360');
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'image/png');
  t.equal(res.headers.get('x-preview-source'), 'placeholder');
  const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
  t.match(meta, { format: 'png', width: 640, height: 360 });

  const put = (body: Buffer, type = 'image/jpeg') =>
    app.fetch(`/api/v1/widgets/${w.id}/preview-image`, { method: 'PUT', headers: { ...owner.headers, 'content-type': type }, body });
  const jpeg = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#f00' } })
    .jpeg()
    .toBuffer();
  t.equal((await put(jpeg)).status, 200);
  const up = await get();
  t.equal(up.headers.get('x-preview-source'), 'uploaded');
  t.match(await sharp(Buffer.from(await up.arrayBuffer())).metadata(), { format: 'png', width: 300, height: 200 });
  t.equal((await put(Buffer.from('GIF89a not really'), 'image/png')).status, 415, 'sniffed: not PNG/JPEG/WebP');
  t.equal((await put(jpeg, 'text/plain')).status, 415);
  t.equal((await put(Buffer.alloc(0), 'image/png')).status, 400, 'empty');
  t.equal((await put(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.alloc(100)]))).status, 400, 'a broken JPEG');
  t.equal((await put(Buffer.concat([jpeg, Buffer.alloc(5 * 1024 * 1024)]))).status, 413);
  t.equal((await get()).headers.get('x-preview-source'), 'uploaded', 'refused uploads kept the one before');
  await call('PATCH', `/api/v1/widgets/${w.id}`, { settings: { text: 'Bye' } });
  t.equal((await get()).headers.get('x-preview-source'), 'placeholder', 'the widget changed: the upload no longer describes it');
});

t.test(
  'preview-image with headless Chromium: a PNG of the asked size, cached',
  { skip: !process.env.PLACARD_TEST_CHROMIUM && !existsSync('/usr/bin/chromium') },
  async (t) => {
    const chromiumPath = process.env.PLACARD_TEST_CHROMIUM ?? '/usr/bin/chromium';
    const { app, call, owner } = await signedInApp(t, { config: { chromiumPath } });
    const w = (await call('POST', '/api/v1/widgets', { name: 'Red', type: 'text', settings: { text: 'Hi', background: '#ff0000', color: '#ff0000' } })).body
      .data;
    const res = await app.fetch(`/api/v1/widgets/${w.id}/preview-image?width=400&height=300`, { headers: owner.headers });
    t.equal(res.status, 200);
    t.equal(res.headers.get('x-preview-source'), 'chromium');
    const png = Buffer.from(await res.arrayBuffer());
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    t.match(info, { width: 400, height: 300 });
    t.same([...data.subarray(0, 3)], [255, 0, 0], 'drawn by the browser: the red background');
    const again = await app.fetch(`/api/v1/widgets/${w.id}/preview-image?width=400&height=300`, { headers: owner.headers });
    t.equal(Buffer.compare(Buffer.from(await again.arrayBuffer()), png), 0, 'the cached picture');

    // Any viewer may ask at any size: past MAX_WAITING_DRAWINGS waiting, the placeholder answers.
    const burst = await Promise.all(
      Array.from({ length: MAX_WAITING_DRAWINGS + 3 }, (_, i) =>
        app.fetch(`/api/v1/widgets/${w.id}/preview-image?width=${200 + i}&height=150`, { headers: owner.headers }),
      ),
    );
    const sources = burst.map((r) => r.headers.get('x-preview-source'));
    // 3 over the limit: all 3 get the placeholder unless a drawing ended before the last asked (then 2).
    t.ok(
      sources.filter((s) => s === 'placeholder').length >= 2 && sources.includes('chromium'),
      `at most ${MAX_WAITING_DRAWINGS} drawings wait for the browser; the rest get the placeholder (${sources.join(', ')})`,
    );
    t.ok(burst.every((r) => r.status === 200));

    // Edits make newer bundles; once a version is no longer kept, its drawings are pruned.
    const dir = path.join(app.dataDir, 'widget-previews');
    const firstSha: string = (await call('GET', `/api/v1/widgets/${w.id}`)).body.data.bundle.sha256;
    t.ok(
      readdirSync(dir).some((f) => f.startsWith(firstSha)),
      'drawings of the first bundle are cached',
    );
    let revision = w.revision;
    for (const text of ['One', 'Two', 'Three', 'Four']) {
      const edited = await call(
        'PATCH',
        `/api/v1/widgets/${w.id}`,
        { settings: { text, background: '#ff0000', color: '#ff0000' } },
        { 'if-match': String(revision) },
      );
      t.equal(edited.status, 200);
      revision = edited.body.data.revision;
    }
    await app.deps.periodic.runNow('widgets.preview-prune');
    t.notOk(
      readdirSync(dir).some((f) => f.startsWith(firstSha)),
      'the first bundle is no longer kept: its drawings are gone',
    );
  },
);

t.test('row images the server keeps as media become placard-media:<assetId>; the others are dropped, no remote URL left', async (t) => {
  const { app, owner, call } = await signedInApp(t, { config: { fetchAllowLoopback: true } });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-widget-images-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const png = readFileSync(await samplePng(dir, 'tea.png', { r: 20, g: 160, b: 60 }));
  const feed = await fakeFeed(t, { '/tea.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(png) });
  const items = [
    { name: 'Tea', photo: `${feed.url}/tea.png` },
    { name: 'Cake', photo: `${feed.url}/gone.png` },
  ];
  feed.routes.set('/menu.json', (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items })));
  const made = await createSource(app, owner, {
    name: 'Menu',
    provider: 'json',
    config: {
      url: `${feed.url}/menu.json`,
      rowsPath: '$.items[*]',
      columns: [
        { name: 'name', path: '$.name' },
        { name: 'photo', path: '$.photo', type: 'image' },
      ],
    },
  });
  const sourceId = made.body.data.id as string;
  await refreshNow(app, sourceId);
  const heard: string[][] = [];
  addWidgetBundleChangeHook(app.deps, (_d, c) => {
    heard.push(c.widgetIds);
  });
  const w = (
    await call('POST', '/api/v1/widgets', {
      name: 'Photos',
      type: 'carousel',
      settings: { imageColumn: 'photo', captionColumn: 'name' },
      binding: { sourceId },
    })
  ).body.data;
  await kickImageFetch(app.deps);
  const ref = await waitUntil('the bundle shows the image as media', async () => {
    const a = await widgetBundleFor(app.deps, w.id);
    return a.ok && a.bundle.images.length ? a.bundle : undefined;
  });
  const assetId = ref.images[0]!.assetId;
  t.ok(heard.flat().filter((id) => id === w.id).length >= 2, 'the image becoming ready rebuilt the bundle and told the hook');
  const screen = await pairScreen(app, owner);
  addPlayerWidgetGuard(app.deps, async () => true);
  const html = await (await app.fetch(ref.url, { headers: screen.headers })).text();
  t.match(html, `<img src="placard-media:${assetId}"`, 'the kept image');
  t.notMatch(html, /127\.0\.0\.1|https?:\/\//, 'no remote URL in the bundle');
  t.equal(html.split('<figure').length, 2, 'the row whose image is not kept shows no slide');
});

t.test('sizes come from the zone: a 12-row table fills a 1080x1920 zone with large type; fontSizePx wins; text fits', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const compile = async (type: 'table' | 'clock' | 'text', settings: Record<string, unknown>, rows: Record<string, unknown>[] = []) => {
    const r = await compileWidget({
      type,
      settings: SETTINGS[type].parse(settings) as Record<string, unknown>,
      template: null,
      data: { columns: MENU, rows, sourceName: 'menu' },
      now: new Date(),
    });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    return r.html;
  };
  const measure = async (html: string, width: number, height: number, fn: string) => {
    const page = await browser.newPage({ viewport: { width, height } });
    try {
      await page.setContent(html);
      return (await page.evaluate(fn)) as Record<string, number>;
    } finally {
      await page.close();
    }
  };
  const rows = Array.from({ length: 12 }, (_, i) => ({ Dish: `Dish ${i}`, Course: 'Mains', Price: 10 + i }));
  const columns = [{ name: 'Dish' }, { name: 'Price', format: { type: 'money', currency: 'EUR' } }];
  const table = await compile('table', { title: 'Menu', columns, rowsPerPage: 12 }, rows);
  const tableFn = `(() => { const td = document.querySelector('tbody td'); const last = [...document.querySelectorAll('tbody tr')].pop();
    return { font: parseFloat(getComputedStyle(td).fontSize), bottom: last.getBoundingClientRect().bottom,
      money: getComputedStyle(document.querySelectorAll('tbody td')[1]).textAlign === 'right' ? 1 : 0 }; })()`;
  const tall = await measure(table, 1080, 1920, tableFn);
  t.ok(tall.font! >= 40, `row text is ${tall.font}px in a 1080x1920 zone (>= 40)`);
  t.ok(tall.bottom! > 1920 * 0.75, `the rows reach down the zone (last row ends at ${tall.bottom}px)`);
  t.equal(tall.money, 1, 'money is right-aligned');
  const small = await measure(table, 640, 360, tableFn);
  t.ok(small.font! < tall.font! && small.bottom! <= 360, `in a 640x360 zone the 12 rows still fit (${small.font}px, ends at ${small.bottom}px)`);
  const few = await measure(await compile('table', { columns, rowsPerPage: 3 }, rows.slice(0, 3)), 1920, 1080, tableFn);
  t.ok(few.font! <= 0.08 * 1080 + 0.5, `three rows in a big zone are capped (${few.font}px)`);
  const explicit = await measure(await compile('table', { columns, fontSizePx: 30 }, rows), 1080, 1920, tableFn);
  t.equal(explicit.font, 30, 'a table honours fontSizePx');

  const clockFn = `({ font: parseFloat(getComputedStyle(document.querySelector('.pl-clock')).fontSize) })`;
  t.equal((await measure(await compile('clock', { fontSizePx: 40 }), 1920, 1080, clockFn)).font, 40, 'the clock honours fontSizePx');
  const autoClock = (await measure(await compile('clock', {}), 1920, 1080, clockFn)).font!;
  t.ok(autoClock >= 200, `without it the clock fills the zone (${autoClock}px at 1920x1080)`);

  const long = 'A notice that goes on and on. '.repeat(40);
  const text = await measure(
    await compile('text', { text: long }),
    640,
    360,
    `(() => { const e = document.querySelector('.pl-text');
    return { fits: e.scrollHeight <= e.clientHeight + 1 ? 1 : 0, font: parseFloat(getComputedStyle(e).fontSize) }; })()`,
  );
  t.equal(text.fits, 1, `long text is shrunk to fit its zone (${text.font}px)`);
});
