import t from 'tap';
import type { Page } from 'playwright-core';
import { checkA11y } from './helpers/a11y.js';
import { signIn } from './helpers/auth.js';
import { contextAs, DESKTOP, launchBrowser, pairPlayPage, PHONE, signedInContext, snap } from './helpers/browser.js';
import { startApp } from './helpers/harness.js';

/**
 * The console's form builder (issue 18) in Chromium: "New form" makes a table and its form;
 * fields added, reordered by drag and by the keyboard's move buttons; the preview follows the
 * order and checks values as they are typed with the server's rules; the server's 400 shows
 * under the setting it names; a stale save (412) offers a reload; publishing makes the
 * table's columns follow; rows that would break are listed and migrated as the owner says;
 * a viewer reads the form without controls.
 */

const labels = (page: Page) => page.locator('ol.form-fields > li .field-name').evaluateAll((els) => els.map((e) => (e.firstChild?.textContent ?? '').trim()));
const previewLabels = (page: Page) =>
  page
    .getByTestId('form-preview')
    .locator('[data-field]')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-field')));

t.test('form builder: add, reorder (drag and keyboard), preview checks as you type, 400 and 412, publish, rows that break; viewer reads', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  const owner = await signedInContext(app, context, app.url);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-forms').catch(() => {});
  });
  const api = (path: string, method = 'GET', json?: unknown, extra: Record<string, string> = {}) =>
    app.json(path, { method, headers: { ...owner.headers, ...extra }, ...(json === undefined ? {} : { json }) });

  // New form: the table and its form in one step, not published yet.
  await page.goto(`${app.url}/data`);
  await page.getByRole('button', { name: 'New form' }).click();
  const newForm = page.getByRole('form', { name: 'New form' });
  await newForm.getByRole('button', { name: 'Create the form' }).click();
  t.equal(
    await newForm
      .getByLabel('Name of the form (and its table)')
      .evaluate((e) => (e as unknown as { validity: { valueMissing: boolean } }).validity.valueMissing),
    true,
    'a name is needed',
  );
  await newForm.getByLabel('Name of the form (and its table)').fill('Specials');
  await newForm.getByRole('button', { name: 'Create the form' }).click();
  await page.getByRole('heading', { name: /^Specials/ }).waitFor();
  const id = new URL(page.url()).pathname.split('/').pop()!;
  const builder = page.getByTestId('form-builder');
  await builder.getByText(/^Not published yet/).waitFor();
  t.match((await api(`/api/v1/data-sources/${id}/form`)).body.data, { name: 'Specials', publishedVersion: 0, draft: { fields: [] } }, 'made on the server');

  // Fields: Dish (required text), Price (money, at least 0), Note (long text).
  const add = builder.getByRole('form', { name: 'Add a field' });
  const addField = async (label: string, type: string) => {
    await add.getByLabel('New field’s label').fill(label);
    await add.getByLabel('Its type').selectOption({ label: type });
    await add.getByRole('button', { name: 'Add the field' }).click();
    return builder.getByRole('group', { name: `Settings of ${label}` });
  };
  const dish = await addField('Dish', 'Text');
  await dish.getByLabel('Required').check();
  const price = await addField('Price', 'Money');
  t.equal(await price.getByLabel('Key').inputValue(), 'price', 'the key comes from the label');
  t.equal(await price.getByLabel('Currency').inputValue(), 'EUR');
  await price.getByLabel('Smallest').fill('0');
  await addField('Note', 'Long text');
  t.same(await labels(page), ['Dish', 'Price', 'Note']);

  // Reorder: Note dragged onto Dish goes first; then the keyboard moves it down one.
  await builder.locator('ol.form-fields > li[data-field="note"] .drag-handle').dragTo(builder.locator('ol.form-fields > li[data-field="dish"]'));
  t.same(await labels(page), ['Note', 'Dish', 'Price'], 'dragged');
  t.same(await previewLabels(page), ['note', 'dish', 'price'], 'the preview follows the drag');
  await builder.getByRole('button', { name: 'Move Note down' }).focus();
  await page.keyboard.press('Enter');
  t.same(await labels(page), ['Dish', 'Note', 'Price'], 'moved by the keyboard');
  t.same(await previewLabels(page), ['dish', 'note', 'price'], 'the preview follows the move');
  t.ok(await builder.getByRole('button', { name: 'Move Dish up' }).isDisabled(), 'the first cannot move up');

  // The preview checks as you type, with the server's rules and words.
  const preview = page.getByTestId('form-preview');
  const priceError = preview.locator('[data-field="price"] .field-error');
  await preview.getByLabel(/^Price/).fill('abc');
  t.equal(await priceError.innerText(), 'Price must be a number', 'a bad number is said as it is typed');
  t.equal(await preview.getByLabel(/^Price/).getAttribute('aria-invalid'), 'true');
  await preview.getByLabel(/^Price/).fill('-3');
  t.equal(await priceError.innerText(), 'Price must be at least 0', 'below the smallest');
  await preview.getByLabel(/^Price/).fill('4.555');
  t.equal(await priceError.innerText(), 'Price may have at most 2 digits after the decimal point', 'the precision too');
  await preview.getByLabel(/^Price/).fill('4.5');
  t.equal(await priceError.count(), 0, 'a good price: no error');
  await preview.getByLabel(/^Dish/).fill('x');
  await preview.getByLabel(/^Dish/).fill('');
  t.equal(await preview.locator('[data-field="dish"] .field-error').innerText(), 'Dish is required');

  // The server's 400 names a setting: shown under it.
  const priceSettings = builder.getByRole('group', { name: 'Settings of Price' });
  if (!(await priceSettings.isVisible())) await builder.getByRole('button', { name: 'Settings of Price' }).click();
  await priceSettings.getByLabel('Currency').fill('XQQ');
  await builder.getByRole('button', { name: 'Save draft' }).click();
  const currencyError = priceSettings.locator('.field', { has: page.getByLabel('Currency') }).locator('.field-error');
  await currencyError.waitFor();
  t.match(await currencyError.innerText(), /"XQQ" is not an ISO 4217 currency/, 'the server’s word under the currency');
  await priceSettings.getByLabel('Currency').fill('EUR');
  await builder.getByRole('button', { name: 'Save draft' }).click();
  await builder.getByText('Draft saved.').waitFor();
  const saved = (await api(`/api/v1/data-sources/${id}/form`)).body.data;
  t.same(
    saved.draft.fields.map((f: { key: string; type: string }) => [f.key, f.type]),
    [
      ['dish', 'text'],
      ['note', 'longText'],
      ['price', 'money'],
    ],
    'the draft reached the server in that order',
  );
  t.match(saved.draft.fields[2], { required: false, currency: 'EUR', precision: 2, validation: { min: 0 } });
  t.match(saved.draft.fields[0], { required: true });

  // Someone else changes the draft meanwhile: Save answers 412, the page offers a reload.
  const theirs = [...saved.draft.fields, { key: 'spicy', label: 'Spicy', type: 'boolean' }];
  t.equal((await api(`/api/v1/data-sources/${id}/form/draft`, 'PATCH', { fields: theirs }, { 'if-match': `"${saved.revision}"` })).status, 200);
  await builder.getByRole('button', { name: 'Settings of Dish' }).click();
  await dish.getByLabel('Help').fill('What the kitchen calls it');
  await builder.getByRole('button', { name: 'Save draft' }).click();
  const stale = builder.locator('[role=alert][data-code="version_conflict"]');
  await stale.waitFor();
  t.match(await stale.innerText(), /Someone changed this form meanwhile/);
  await stale.getByRole('button', { name: 'Reload the form' }).click();
  await builder.locator('ol.form-fields > li[data-field="spicy"]').waitFor();
  t.same(await labels(page), ['Dish', 'Note', 'Price', 'Spicy'], 'reloaded: their field is there');

  // Publish: the table's columns follow the published fields (in order, named by key).
  await builder.getByRole('button', { name: 'Publish' }).click();
  await builder.getByText(/^Published as version 1/).waitFor();
  const source = (await api(`/api/v1/data-sources/${id}`)).body.data;
  t.same(
    source.columns,
    [
      { name: 'dish', type: 'text' },
      { name: 'note', type: 'text' },
      { name: 'price', type: 'number' },
      { name: 'spicy', type: 'boolean' },
    ],
    'the columns follow the form',
  );
  await page.getByTestId('records-list').getByRole('columnheader', { name: 'Dish' }).waitFor();
  t.equal(await page.getByTestId('rows-grid').count(), 0, 'published: the rows grid gives way to the records');
  await builder.getByText('Published: version 1.').waitFor();

  // Rows the new version would break: listed; "empty" a required field still breaks; a value mends them.
  const withRows = await api(
    `/api/v1/data-sources/${id}`,
    'PATCH',
    {
      rows: [
        { dish: 'Soup', price: 4 },
        { dish: 'Cake', price: 3.5, note: 'with cream' },
        { dish: 'Tea', price: 2 },
      ],
    },
    { 'if-match': `"${source.revision}"` },
  );
  t.equal(withRows.status, 200);
  await page.reload();
  await builder.getByRole('button', { name: 'Settings of Note' }).click();
  await builder.getByRole('group', { name: 'Settings of Note' }).getByLabel('Required').check();
  await builder.getByRole('button', { name: 'Publish' }).click();
  const conflict = page.getByRole('dialog', { name: 'Some rows would not fit the new form' });
  await conflict.waitFor();
  t.match(await conflict.getByTestId('broken-rows').innerText(), /Row 1: Note is required\s+Row 3: Note is required/, 'the rows that break, and why');
  t.notMatch(await conflict.getByTestId('broken-rows').innerText(), /Row 2/, 'the row that fits is not listed');
  await conflict.getByRole('button', { name: 'Publish with these changes' }).click();
  await page.waitForFunction(() => !(globalThis as any).document.querySelector('[data-testid="publish-conflict"] button[aria-busy="true"]'));
  t.equal((await api(`/api/v1/data-sources/${id}/form`)).body.data.publishedVersion, 1, 'emptying a required value mends nothing: not published');
  await conflict.getByRole('radio', { name: 'Put a value' }).check();
  await conflict.getByLabel('Value for Note').fill('ask the staff');
  await snap(page, 'forms-publish-conflict-1280');
  await checkA11y(page, t, 'rows that would break the form');
  await conflict.getByRole('button', { name: 'Publish with these changes' }).click();
  await builder.getByText(/^Published as version 2/).waitFor();
  t.equal(await conflict.isVisible(), false, 'the dialog closed');
  const rows = (await api(`/api/v1/data-sources/${id}/views/preview`, 'POST', {})).body.data.rows;
  t.same(
    rows.map((r: { note: string }) => r.note),
    ['ask the staff', 'with cream', 'ask the staff'],
    'the broken rows got the value, the fitting one kept its own',
  );

  await snap(page, 'forms-builder-1280');
  await checkA11y(page, t, 'the form builder');
  await page.setViewportSize(PHONE);
  await snap(page, 'forms-builder-390');
  const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
  t.ok(width <= PHONE.width, `no sideways scrolling at phone width (${width}px)`);

  // A viewer reads the form: no add, no move, no save or publish.
  const viewerContext = await browser.newContext({ viewport: PHONE, timezoneId: 'UTC' });
  await signedInContext(app, viewerContext, app.url, 'viewer');
  const viewerPage = await viewerContext.newPage();
  await viewerPage.goto(`${app.url}/data/${id}`);
  const readOnly = viewerPage.getByTestId('form-builder');
  await readOnly.getByText(/You can read it/).waitFor();
  t.same(await labels(viewerPage), ['Dish', 'Note', 'Price', 'Spicy'], 'the viewer sees the fields');
  for (const name of ['Save draft', 'Publish', 'Add the field', 'Move Note up', 'Remove Note'])
    t.equal(await readOnly.getByRole('button', { name, exact: true }).count(), 0, `no "${name}"`);
  await readOnly.getByRole('button', { name: 'Settings of Price' }).click();
  t.ok(await readOnly.getByRole('group', { name: 'Settings of Price' }).getByLabel('Currency').isDisabled(), 'settings read only');
  await checkA11y(viewerPage, t, 'the form as a viewer at phone width');
  await viewerContext.close();
  t.same(errors, [], 'no page errors');
});

t.test('records: an editor adds a special and submits it, a publisher approves and publishes it from the inbox, a /play page shows it', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const owner = await signIn(app);
  const api = (path: string, method = 'GET', json?: unknown, extra: Record<string, string> = {}) =>
    app.json(path, { method, headers: { ...owner.headers, ...extra }, ...(json === undefined ? {} : { json }) });
  const made = await api('/api/v1/forms', 'POST', {
    name: 'Specials',
    fields: [
      { key: 'dish', label: 'Dish', type: 'text', required: true },
      { key: 'price', label: 'Price', type: 'money', currency: 'EUR', validation: { min: 0 } },
      { key: 'chef', label: 'Chef’s note', type: 'longText', showOnScreens: false },
    ],
  });
  t.equal(made.status, 201, JSON.stringify(made.body));
  const id: string = made.body.data.sourceId;

  // A /play page showing the table through a layout's data zone.
  const layout = (await api('/api/v1/layouts', 'POST', { name: 'Specials board' })).body.data;
  const zones = [{ name: 'Specials', x: 0, y: 0, width: 1920, height: 1080, content: { type: 'data', sourceId: id } }];
  t.equal((await api(`/api/v1/layouts/${layout.id}/draft`, 'PUT', { width: 1920, height: 1080, zones }, { 'if-match': String(layout.revision) })).status, 200);
  t.equal((await api(`/api/v1/layouts/${layout.id}/publish`, 'POST', {})).status, 200);
  const playContext = await browser.newContext({ viewport: { width: 1280, height: 720 }, timezoneId: 'UTC' });
  const player = await playContext.newPage();
  await player.goto(`${app.url}/play`);
  const screenId = await pairPlayPage(app, owner, player, 'Counter');
  const sched = await api('/api/v1/schedules', 'POST', {
    name: 'Specials all day',
    content: { layoutId: layout.id },
    targets: { screenIds: [screenId] },
    startsAt: new Date(Date.now() - 60_000).toISOString(),
  });
  t.equal(sched.status, 201, JSON.stringify(sched.body));

  // The editor adds a special through the entry form.
  const editor = await contextAs(app, browser, 'editor');
  const errors: string[] = [];
  editor.page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(editor.page, 'failure-console-records').catch(() => {});
  });
  await editor.page.goto(`${app.url}/data/${id}`);
  const records = editor.page.getByTestId('records');
  await records.getByText('No records yet.').waitFor();
  await records.getByRole('button', { name: 'New record' }).click();
  const entry = records.getByRole('form', { name: 'New record' });
  await entry.getByLabel(/^Price/).fill('-2');
  t.equal(await entry.locator('[data-field="price"] .field-error').innerText(), 'Price must be at least 0', 'checked as typed');
  await entry.getByLabel(/^Price/).fill('14.5');
  await entry.getByRole('button', { name: 'Add the record' }).click();
  t.equal(await entry.locator('[data-field="dish"] .field-error').innerText(), 'Dish is required', 'a submit shows what is missing');
  t.equal((await api(`/api/v1/data-sources/${id}/records`)).body.data.items.length, 0, 'and sends nothing');
  await entry.getByLabel(/^Dish/).fill('Truffle pasta');
  await entry.getByLabel(/^Chef’s note/).fill('Only while the truffles last');
  await entry.getByRole('button', { name: 'Add the record' }).click();
  const record = records.getByTestId('record');
  await record.and(editor.page.locator('[data-state="draft"]')).waitFor();
  const [stored] = (await api(`/api/v1/data-sources/${id}/records`)).body.data.items;
  t.match(stored, { state: 'draft', live: false, values: { dish: 'Truffle pasta', price: 14.5, chef: 'Only while the truffles last' } }, 'stored as a draft');
  t.equal(await records.locator(`tr[data-record="${stored.id}"] [data-testid="record-state"]`).innerText(), 'Draft', 'listed with its state');
  t.equal(await record.getByRole('button', { name: 'Approve' }).count(), 0, 'an editor is offered no approval');
  // Edited before it is submitted: a bad value is said as typed, the good one saved (If-Match).
  const values = record.getByRole('form', { name: 'Values of Truffle pasta' });
  await values.getByLabel(/^Price/).fill('15.123');
  t.equal(await values.locator('[data-field="price"] .field-error').innerText(), 'Price may have at most 2 digits after the decimal point');
  await values.getByLabel(/^Price/).fill('15');
  await values.getByRole('button', { name: 'Save the record' }).click();
  await values.getByText('Saved.').waitFor();
  t.match(
    (await api(`/api/v1/data-sources/${id}/records/${stored.id}`)).body.data,
    { values: { price: 15 }, revision: stored.revision + 1 },
    'the change reached the server',
  );
  await record.getByRole('group', { name: 'Workflow of Truffle pasta' }).getByRole('button', { name: 'Submit' }).click();
  await record.and(editor.page.locator('[data-state="submitted"]')).waitFor();
  t.match(
    await record.getByTestId('record-history').innerText(),
    /added it \(draft\)[\s\S]*changed Price: 14\.5 → 15[\s\S]*submit: draft → submitted/,
    'the history says who did what',
  );
  await snap(editor.page, 'records-editor-1280');
  await checkA11y(editor.page, t, 'a table’s records with one open');
  // State filter: the submitted one is under "Submitted", not under "Published".
  await records.getByLabel('State').selectOption('published');
  await records.getByText('No records match.').waitFor();
  await records.getByLabel('State').selectOption('submitted');
  await records.locator(`tr[data-record="${stored.id}"]`).waitFor();
  t.pass('filtered by state');

  // The publisher: the nav counts it; the inbox approves (a reject needs a comment), then publishes.
  const publisher = await contextAs(app, browser, 'publisher');
  publisher.page.on('pageerror', (e) => errors.push(e.message));
  await publisher.page.goto(`${app.url}/data`);
  await publisher.page.getByTestId('nav-count').waitFor();
  t.equal(await publisher.page.getByTestId('nav-count').textContent(), '1 waiting', 'the nav counts what waits');
  await publisher.page.getByRole('link', { name: /^Approvals/ }).click();
  await publisher.page.getByRole('heading', { name: 'Approvals' }).waitFor();
  const item = publisher.page.getByRole('article', { name: 'Truffle pasta in Specials' });
  await item.waitFor();
  // The item shows the raw keys until the table's form has loaded: wait for its formatted price.
  await item.getByText('15.00 EUR').waitFor();
  t.match(await item.innerText(), /Dish\s+Truffle pasta[\s\S]*Price\s+15\.00 EUR/, 'its values with the form’s labels');
  await item.getByRole('button', { name: 'Reject' }).click();
  t.equal(await item.locator('.field-error').innerText(), 'Reject needs a comment saying why.', 'a reject asks for its comment');
  t.equal((await api(`/api/v1/data-sources/${id}/records/${stored.id}`)).body.data.state, 'submitted', 'nothing sent');
  await snap(publisher.page, 'approvals-1280');
  await checkA11y(publisher.page, t, 'the approvals inbox');
  await publisher.page.setViewportSize(PHONE);
  await snap(publisher.page, 'approvals-390');
  const inboxWidth = await publisher.page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
  t.ok(inboxWidth <= PHONE.width, `the inbox fits a phone (${inboxWidth}px)`);
  await publisher.page.setViewportSize(DESKTOP);
  await item.getByLabel(/^Comment/).fill('Lovely, approved');
  await item.getByRole('button', { name: 'Approve' }).click();
  await item.locator('.badge', { hasText: 'Approved' }).waitFor();
  await item.getByRole('button', { name: 'Publish' }).click();
  await publisher.page.getByText('Nothing waits on you.').waitFor();
  const done = (await api(`/api/v1/data-sources/${id}/records/${stored.id}`)).body.data;
  t.match(done, { state: 'published', live: true }, 'published and live');
  t.match(
    done.history.map((e: { kind: string; data: { transition?: string; comment?: string } }) => [e.kind, e.data.transition ?? null, e.data.comment ?? null]),
    [
      ['created', null, null],
      ['updated', null, null],
      ['transition', 'submit', null],
      ['transition', 'approve', 'Lovely, approved'],
      ['transition', 'publish', null],
    ],
    'the audit trail',
  );

  // The /play page shows it (the hidden chef's note never reaches screens).
  await player.getByText('Truffle pasta').waitFor({ timeout: 20_000 });
  t.pass('the /play page shows the published special');
  t.equal(await player.getByText('Only while the truffles last').count(), 0, 'a field not on screens stays off them');
  await snap(player, 'records-play');

  // The editor's page follows: published, on screens; its history names the publisher.
  await editor.page.reload();
  await records.locator(`tr[data-record="${stored.id}"]`).getByRole('button', { name: 'Truffle pasta' }).click();
  await record.and(editor.page.locator('[data-state="published"]')).waitFor();
  t.match(await record.getByTestId('record-history').innerText(), /Test publisher approve: submitted → approved\s+Lovely, approved/);
  // A comment goes into the history.
  await record.getByRole('form', { name: 'Add a comment' }).getByLabel('Add a comment').fill('Plated with parmesan');
  await record.getByRole('button', { name: 'Comment', exact: true }).click();
  await record.getByTestId('record-history').getByText('Plated with parmesan').waitFor();
  t.match(await record.getByTestId('record-history').innerText(), /Test editor commented\s+Plated with parmesan/, 'the comment is in the history');

  // A viewer reads: no New record, values read only, no workflow buttons.
  const viewer = await contextAs(app, browser, 'viewer', PHONE);
  await viewer.page.goto(`${app.url}/data/${id}?record=${stored.id}`);
  await viewer.page.getByTestId('record').waitFor();
  t.equal(await viewer.page.getByRole('button', { name: 'New record' }).count(), 0, 'no New record');
  t.ok(await viewer.page.getByTestId('record').getByLabel(/^Dish/).isDisabled(), 'values read only');
  t.equal(await viewer.page.getByTestId('record').getByRole('button', { name: 'Save the record' }).count(), 0, 'no save');
  const width = await viewer.page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
  t.ok(width <= PHONE.width, `no sideways scrolling at phone width (${width}px)`);
  t.same(errors, [], 'no page errors');
});
