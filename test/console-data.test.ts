import t from 'tap';
import { checkA11y } from './helpers/a11y.js';
import { signIn } from './helpers/auth.js';
import { DESKTOP, launchBrowser, PHONE, signedInContext, snap } from './helpers/browser.js';
import { addDataSourceUsageFinder } from '../server/src/modules/data-sources/index.js';
import { createSource, diagnosticsOf, fakeFeed, type Handler, jsonDoc, refreshNow } from './helpers/data-sources.js';
import { startApp } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';

/**
 * The console's Data page (issue 17) in Chromium against a local fake feed: an RSS source
 * added through the catalog's form (a bad address refused in place with the server's
 * words), inspect's fields and the preview before saving; after the refresh its health;
 * the feed failing: the problem in plain words, stale, the last rows kept; a view edited
 * (relative dates, text filter, fields) with its preview following; access granted; a table
 * made with its columns and rows typed in the grid; a viewer reads without controls.
 */

const HOUR = 3_600_000;
const item = (title: string, agoMs: number, summary: string) =>
  `<item><title>${title}</title><link>http://venue.test/${encodeURIComponent(title)}</link><description>${summary}</description><pubDate>${new Date(Date.now() - agoMs).toUTCString()}</pubDate></item>`;
const RSS = `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Venue news</title><link>http://venue.test/</link><description>News</description>${[
  item('Jazz concert tonight', 2 * HOUR, 'Doors at eight'),
  item('New winter menu', 3 * 24 * HOUR, 'Soups and stews'),
  item('Summer terrace closed', 10 * 24 * HOUR, 'See you in spring'),
].join('')}</channel></rss>`;
const rss: Handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(RSS);
const gone: Handler = (_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('nope');

t.test('data page: add an RSS source by its form, preview, health, a failing feed in plain words, views, access, a table; phone width', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t, { config: { fetchAllowLoopback: true } });
  const feed = await fakeFeed(t, { '/news.xml': rss });
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  const owner = await signedInContext(app, context, app.url);
  const editor = await signIn(app, { role: 'editor' });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-data').catch(() => {});
  });

  await page.goto(`${app.url}/data`);
  await page.getByRole('heading', { name: 'Data', exact: true }).waitFor();
  t.equal(await page.getByRole('link', { name: 'Data', exact: true }).getAttribute('aria-current'), 'page', 'Data in the navigation, marked current');
  await page.getByText('No data sources yet.').waitFor();
  await page.getByRole('button', { name: 'Add a data source' }).click();
  await page.getByRole('radio', { name: /News feed/ }).check();
  const form = page.getByRole('form', { name: /New News feed/ });
  await form.getByLabel('Name', { exact: true }).fill('Venue news');

  // A bad address: the server's own words under the field (the live preview asks it).
  await form.getByLabel('Address (URL)').fill('ftp://127.0.0.1/news.xml');
  const urlError = form.locator('.field', { has: page.getByLabel('Address (URL)') }).locator('.field-error');
  await urlError.waitFor();
  const serverSays = (
    await app.json('/api/v1/data-sources/rss/preview', { method: 'POST', headers: owner.headers, json: { config: { url: 'ftp://127.0.0.1/news.xml' } } })
  ).body.error.details.issues[0].message as string;
  t.equal(await urlError.innerText(), serverSays, `the server's message sits under the address: "${serverSays}"`);
  t.equal(await form.getByLabel('Address (URL)').getAttribute('aria-invalid'), 'true', 'the field is marked invalid');

  // The right address: inspect's fields and the first rows, before anything is saved.
  await form.getByLabel('Address (URL)').fill(`${feed.url}/news.xml`);
  await form
    .getByTestId('probe-summary')
    .getByText(/^3 rows from 127\.0\.0\.1/)
    .waitFor();
  t.equal(await urlError.count(), 0, 'the error went with the mistake');
  const titleField = form.locator('[data-testid="fields"] tr[data-field="title"]');
  t.match(await titleField.innerText(), /Text.*Jazz concert tonight/s, 'inspect: the title field, its type and examples');
  t.match(await form.locator('[data-testid="fields"] tr[data-field="published"]').innerText(), /Date and time/, 'inspect: the date typed');
  t.match(
    await form.getByTestId('probe-rows').innerText(),
    /Jazz concert tonight[\s\S]*New winter menu[\s\S]*Summer terrace closed/,
    'the preview table shows the rows',
  );
  t.equal((await app.json('/api/v1/data-sources', { headers: owner.headers })).body.data.items.length, 0, 'nothing saved by the preview');
  await snap(page, 'data-add-1280');
  await checkA11y(page, t, 'add a data source with its preview');
  await form.getByRole('button', { name: 'Save the data source' }).click();
  await page.getByRole('heading', { name: /^Venue news/ }).waitFor();
  const id = new URL(page.url()).pathname.split('/').pop()!;
  const saved = (await app.json(`/api/v1/data-sources/${id}`, { headers: owner.headers })).body.data;
  t.match(saved, { provider: 'rss', config: { url: `${feed.url}/news.xml` } }, 'the source reached the server with its config');
  await page.getByTestId('waiting').waitFor();

  // The refresh fetches it: the page follows by itself.
  await refreshNow(app, id);
  await page.getByTestId('fine').waitFor({ timeout: 15_000 });
  t.equal(await page.getByTestId('health').first().innerText(), 'up to date');
  await page
    .getByTestId('view-summary')
    .getByText(/^3 rows of 3/)
    .waitFor();

  // Outputs: none until a screen uses it; Rebuild now builds the whole source's document.
  const outputs = page.getByTestId('outputs');
  await outputs.getByText(/^None yet/).waitFor();
  await outputs.getByRole('button', { name: 'Rebuild now' }).click();
  const whole = outputs.locator('tr[data-output="whole"]');
  await whole.waitFor();
  t.match(await whole.innerText(), /^The whole source\s+3\s+\d+(\.\d)? (bytes|kB)/, 'the whole source’s output: its rows and size');
  const built = (await app.json(`/api/v1/data-sources/${id}/outputs`, { headers: owner.headers })).body.data;
  t.match(built.outputs, [{ viewKey: null, rowCount: 3, current: true }], 'built on the server');

  // A screen shows it (a layout zone, scheduled): the panel names the screen.
  const api = (path: string, method: string, json?: unknown, extra: Record<string, string> = {}) =>
    app.json(path, { method, headers: { ...owner.headers, ...extra }, ...(json === undefined ? {} : { json }) });
  const layout = (await api('/api/v1/layouts', 'POST', { name: 'News board' })).body.data;
  await api(
    `/api/v1/layouts/${layout.id}/draft`,
    'PUT',
    { zones: [{ name: 'News', x: 0, y: 0, width: 800, height: 600, content: { type: 'data', sourceId: id } }] },
    { 'if-match': String(layout.revision) },
  );
  await api(`/api/v1/layouts/${layout.id}/publish`, 'POST', {});
  const lobby = await pairScreen(app, owner, { name: 'Foyer screen' });
  await api('/api/v1/schedules', 'POST', {
    name: 'News',
    content: { layoutId: layout.id },
    targets: { screenIds: [lobby.screenId] },
    startsAt: new Date(Date.now() - 60_000).toISOString(),
  });
  t.equal((await app.json('/api/v1/player/manifest', { headers: lobby.headers })).body.data.data.length, 1, 'the screen’s manifest lists the output');
  await page.getByTestId('showing-screens').getByText('Foyer screen').waitFor({ timeout: 15_000 });

  // The feed fails: the problem in words, stale, the last rows stay.
  feed.routes.set('/news.xml', gone);
  await refreshNow(app, id);
  const problem = page.getByTestId('problem');
  await problem.waitFor({ timeout: 15_000 });
  const d = await diagnosticsOf(app, owner, id);
  // Times of today as the page writes them (the browser's locale, UTC here).
  const hhmm = (iso: string) => page.evaluate((at) => new Date(at).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' }), iso);
  t.equal(
    (await problem.innerText()).split(' Placard tries again')[0],
    `The feed answered 404 Not Found (check the address) at ${await hhmm(d.attempts[0].at)}; showing the data from ${await hhmm(d.lastSuccessAt)}.`,
    'the error in plain words, with when it failed and how old the data shown is',
  );
  t.equal(await page.getByTestId('diagnostics').getAttribute('data-stale'), 'true', 'the panel says stale');
  t.equal(await page.getByTestId('health').first().innerText(), 'stale', 'and so does the badge');
  t.match(await page.getByTestId('view-rows').innerText(), /Jazz concert tonight[\s\S]*Summer terrace closed/, 'the last rows stay');

  // A view: published within the last 7 days, newest first, two fields; the preview follows.
  const views = page.getByTestId('view-editor');
  await views.getByRole('button', { name: 'Add a condition' }).click();
  const cond = views.getByRole('group', { name: 'Condition 1' });
  await cond.getByLabel('Field').selectOption('published');
  await cond.getByLabel('Operator').selectOption({ label: 'is within' });
  await cond.getByLabel('When').selectOption({ label: 'the last … days' });
  await cond.getByLabel('Days').fill('7');
  await views
    .getByTestId('view-summary')
    .getByText(/^2 rows of 3/)
    .waitFor();
  await views.getByRole('button', { name: 'Sort by…' }).click();
  await views.getByRole('group', { name: 'Sort 1' }).getByLabel('Sort field').selectOption('title');
  await views.getByRole('group', { name: 'Sort 1' }).getByLabel('Direction').selectOption('asc');
  for (const f of ['summary', 'summaryHtml', 'link', 'author', 'image', 'guid']) await views.getByRole('checkbox', { name: f, exact: true }).uncheck();
  await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('[data-testid="view-rows"] th').length === 2, undefined, { timeout: 5000 });
  const viewText = await views.getByTestId('view-rows').innerText();
  t.match(viewText, /^title\s+published\s+Jazz concert tonight[^\n]*\n\s*New winter menu/, 'two rows, sorted by title, two fields');
  t.notMatch(viewText, /Summer terrace/, 'the old item is filtered out');
  t.same(JSON.parse((await views.getByTestId('view-json').textContent()) ?? ''), {
    filter: [{ field: 'published', op: 'between', value: { last: { days: 7 } } }],
    sort: [{ field: 'title', direction: 'asc' }],
    fields: ['title', 'published'],
  });
  await cond.getByLabel('Operator').selectOption({ label: 'is empty' });
  await views
    .getByTestId('view-summary')
    .getByText(/^0 rows of 3/)
    .waitFor();
  t.pass('changing the condition changes the preview');

  // Access: the editor narrowed to reading this source.
  const access = page.getByTestId('access');
  await access.getByLabel('Person').selectOption({ label: 'Test editor (editor)' });
  await access.getByLabel('Access', { exact: true }).selectOption({ label: 'can read it' });
  await access.getByRole('button', { name: 'Grant', exact: true }).click();
  await access.getByLabel('Access of Test editor').waitFor();
  t.equal(await access.getByLabel('Access of Test editor').inputValue(), 'viewer', 'the grant is listed');
  t.match(await access.getByRole('status').innerText(), /Test editor can read it/, 'and said');
  const grants = (await app.json(`/api/v1/data-sources/${id}/access`, { headers: owner.headers })).body.data.items;
  t.match(
    grants.find((g: { userId: string }) => g.userId === editor.user.id),
    { level: 'viewer' },
    'the grant reached the server',
  );
  t.equal((await app.json(`/api/v1/data-sources/${id}`, { headers: editor.headers })).body.data.myAccess, 'viewer', 'the editor now reads it only');
  await snap(page, 'data-source-1280');
  await checkA11y(page, t, 'a failing source with a view and access');
  await page.setViewportSize(PHONE);
  await snap(page, 'data-source-390');
  const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
  t.ok(width <= PHONE.width, `no sideways scrolling of the page at phone width (${width}px)`);
  await page.setViewportSize(DESKTOP);

  // Delete while a widget (a usage finder as the widgets module registers one) and the layout use it: asked first naming them, then refused naming them.
  const stopFinding = addDataSourceUsageFinder(app.deps, async (_db, ids) =>
    ids.includes(id) ? [{ sourceId: id, type: 'widget', id: '01900000-0000-7000-8000-000000000001', name: 'Lobby ticker' }] : [],
  );
  await page.reload();
  await page.getByTestId('diagnostics').getByText('Widget Lobby ticker').waitFor();
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  const ask = page.getByRole('dialog', { name: 'Delete the data source “Venue news”?' });
  t.match(await ask.innerText(), /It is used by:[\s\S]*Widget Lobby ticker/, 'the confirmation names what uses it');
  t.match(await ask.innerText(), /It is used by:[\s\S]*News board/, 'the layout showing it too');
  await ask.getByRole('button', { name: 'Delete data source' }).click();
  const refusal = page.locator('[role=alert][data-code="conflict"]');
  await refusal.waitFor();
  t.match(await refusal.innerText(), /Used by:[\s\S]*Widget Lobby ticker/, 'the refusal says in words what still uses it');
  t.match(await refusal.innerText(), /Used by:[\s\S]*News board/);
  t.equal((await app.json(`/api/v1/data-sources/${id}`, { headers: owner.headers })).status, 200, 'and the source is still there');
  stopFinding();

  // A table: columns from the form, rows typed in the grid.
  await page.goto(`${app.url}/data/new?provider=manual-table`);
  const tableForm = page.getByRole('form', { name: 'New Table source' });
  await tableForm.getByLabel('Name', { exact: true }).fill('Drinks');
  await tableForm.getByRole('button', { name: 'Add a column' }).click();
  await tableForm.getByRole('group', { name: 'Column 1' }).getByLabel('Name').fill('drink');
  await tableForm.getByRole('button', { name: 'Add a column' }).click();
  await tableForm.getByRole('group', { name: 'Column 2' }).getByLabel('Name').fill('price');
  await tableForm.getByRole('group', { name: 'Column 2' }).getByLabel('Type').selectOption({ label: 'Number' });
  await tableForm.getByRole('button', { name: 'Save the data source' }).click();
  const grid = page.getByTestId('rows-grid');
  await grid.getByRole('button', { name: 'Add a row' }).click();
  await grid.getByLabel('drink, row 1').fill('Espresso');
  await grid.getByLabel('price, row 1').fill('2.5');
  await grid.getByRole('button', { name: 'Save the rows' }).click();
  await grid.getByText('Rows saved.').waitFor();
  await page.getByTestId('view-rows').getByText('Espresso').waitFor();
  const tableId = new URL(page.url()).pathname.split('/').pop()!;
  const rows = (await app.json(`/api/v1/data-sources/${tableId}/views/preview`, { method: 'POST', headers: owner.headers, json: {} })).body.data;
  t.same(rows.columns, [
    { name: 'drink', type: 'text' },
    { name: 'price', type: 'number' },
  ]);
  t.same(rows.rows, [{ drink: 'Espresso', price: 2.5 }], 'the row reached the server, the price a number');

  // Secrets: a JSON source with a key header and a token, renamed in its settings; the stored secrets stay (sent back as {"set": true}).
  feed.routes.set('/menu.json', jsonDoc({ items: [{ dish: 'Soup', price: 4 }] }));
  const made = await createSource(app, owner, {
    name: 'Menu API',
    provider: 'json',
    config: { url: `${feed.url}/menu.json`, rowsPath: '$.items[*]', headers: { 'X-Api-Key': 's3cret' }, auth: { type: 'bearer', token: 'tok-1' } },
  });
  await page.goto(`${app.url}/data/${made.body.data.id}`);
  await page.getByTestId('settings').locator('summary').first().click();
  const settings = page.getByRole('form', { name: 'Settings of the data source' });
  const keyValue = settings.getByLabel('Header 1 value');
  t.equal(await keyValue.getAttribute('type'), 'password', 'a header value is a secret field');
  t.equal(await keyValue.inputValue(), '', 'the stored secret is not shown');
  t.equal(await keyValue.getAttribute('placeholder'), 'Kept secret: type to replace it');
  t.equal(await settings.getByLabel('Sign-in', { exact: true }).inputValue(), '1', 'the token kind is chosen');
  await settings.getByLabel('Name', { exact: true }).fill('Menu API (bar)');
  await settings.getByRole('button', { name: 'Save settings' }).click();
  await settings.getByText('Saved.').waitFor();
  const renamed = (await app.json(`/api/v1/data-sources/${made.body.data.id}`, { headers: owner.headers })).body.data;
  t.match(renamed, { name: 'Menu API (bar)', config: { headers: { 'X-Api-Key': { set: true } }, auth: { type: 'bearer', token: { set: true } } } });
  await refreshNow(app, made.body.data.id);
  const sent = feed.requests.filter((r) => r.path === '/menu.json').pop()!;
  t.match(sent.headers, { 'x-api-key': 's3cret', authorization: 'Bearer tok-1' }, 'the kept secrets are still the ones sent');

  // A viewer reads: no add, no settings to change, no delete, no access panel.
  const viewerContext = await browser.newContext({ viewport: PHONE, timezoneId: 'UTC' });
  await signedInContext(app, viewerContext, app.url, 'viewer');
  const viewerPage = await viewerContext.newPage();
  await viewerPage.goto(`${app.url}/data`);
  await viewerPage.locator('tr[data-source="Venue news"]').waitFor();
  t.equal(await viewerPage.getByRole('button', { name: 'Add a data source' }).count(), 0, 'viewers add nothing');
  await snap(viewerPage, 'data-list-390');
  await viewerPage.getByRole('link', { name: 'Venue news' }).click();
  await viewerPage.getByTestId('problem').waitFor();
  t.equal(await viewerPage.getByRole('button', { name: 'Delete' }).count(), 0, 'no delete');
  t.equal(await viewerPage.getByTestId('access').count(), 0, 'no access panel');
  await viewerPage.getByText('Settings (read only)').click();
  t.ok(await viewerPage.getByLabel('Address (URL)').isDisabled(), 'the settings are read only');
  await checkA11y(viewerPage, t, 'a source as a viewer at phone width');
  await viewerContext.close();
  t.same(errors, [], 'no page errors');
});
