import t from 'tap';
import sharp from 'sharp';
import { checkA11y } from './helpers/a11y.js';
import { signIn } from './helpers/auth.js';
import { contextAs, launchBrowser, snap } from './helpers/browser.js';
import { startApp } from './helpers/harness.js';

/**
 * A record's page in the console, follow-ups of issue 18, in Chromium: the publishing window
 * ("Show from" / "Show until", read in the browser's zone, the server's 400 under the field it
 * names; a published record outside its window listed as "scheduled" or "ended" and not live);
 * attachments (a real PNG uploaded, listed, its link answering 200; a text file named .png
 * refused in words; one removed); deleting a record (confirmed, If-Match, back to the list).
 * A viewer sees the attachments but no upload, remove or delete.
 */

/** "YYYY-MM-DDTHH:MM" in UTC (the browser contexts run in UTC). */
const localInput = (ms: number) => new Date(ms).toISOString().slice(0, 16);

t.test('a record’s window, attachments and delete in the console', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const owner = await signIn(app);
  const api = (path: string, method = 'GET', json?: unknown, extra: Record<string, string> = {}) =>
    app.json(path, { method, headers: { ...owner.headers, ...extra }, ...(json === undefined ? {} : { json }) });
  const made = await api('/api/v1/forms', 'POST', { name: 'Specials', fields: [{ key: 'dish', label: 'Dish', type: 'text', required: true }] });
  t.equal(made.status, 201, JSON.stringify(made.body));
  const id: string = made.body.data.sourceId;
  const records = `/api/v1/data-sources/${id}/records`;

  const editor = await contextAs(app, browser, 'editor');
  const page = editor.page;
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-records-window').catch(() => {});
  });
  await page.goto(`${app.url}/data/${id}`);
  const list = page.getByTestId('records');
  await list.getByText('No records yet.').waitFor();

  // New record with a window: an end before the start is the server's 400, said under "Show until".
  await list.getByRole('button', { name: 'New record' }).click();
  const entry = list.getByRole('form', { name: 'New record' });
  t.ok(await entry.getByLabel('Show from (UTC)').isVisible(), 'the label names the time zone the inputs are read in');
  const from = Date.now() + 2 * 86_400_000;
  await entry.getByLabel(/^Dish/).fill('Christmas menu');
  await entry.getByLabel(/^Show from/).fill(localInput(from));
  await entry.getByLabel(/^Show until/).fill(localInput(from - 3_600_000));
  await entry.getByRole('button', { name: 'Add the record' }).click();
  await entry.locator('.field-error', { hasText: 'must be after publishAt' }).waitFor();
  t.equal(await entry.getByLabel(/^Show until/).getAttribute('aria-invalid'), 'true', 'the server’s 400 on unpublishAt is shown under Show until');
  t.equal((await api(records)).body.data.items.length, 0, 'nothing was made');
  await entry.getByLabel(/^Show until/).fill('');
  await entry.getByRole('button', { name: 'Add the record' }).click();
  const record = list.getByTestId('record');
  await record.and(page.locator('[data-state="draft"]')).waitFor();
  const [stored] = (await api(records)).body.data.items;
  t.match(stored, { state: 'draft', publishAt: new Date(Math.floor(from / 60_000) * 60_000).toISOString(), unpublishAt: null }, 'the window as an ISO instant');

  // Published (by the owner, through the workflow) while its window is in the future: scheduled, not live.
  let revision = stored.revision;
  for (const transition of ['submit', 'approve', 'publish']) {
    const res = await api(`${records}/${stored.id}/transitions`, 'POST', { transition });
    t.equal(res.status, 200, `${transition}: ${JSON.stringify(res.body)}`);
    revision = res.body.data.revision;
  }
  t.match((await api(`${records}/${stored.id}`)).body.data, { state: 'published', live: false }, 'published but not live');
  await page.reload();
  const row = list.locator(`tr[data-record="${stored.id}"]`);
  t.equal(await row.getByTestId('record-state').innerText(), 'Published');
  t.equal((await row.getByTestId('record-window').innerText()).trim(), 'scheduled', 'the list says it is scheduled');
  await row.getByRole('button', { name: 'Christmas menu' }).click();
  await record.and(page.locator('[data-state="published"]')).waitFor();
  t.equal(await record.getByLabel(/^Show from/).inputValue(), localInput(from), 'the record shows its window in the browser’s zone');

  // The editor empties "Show from" (PATCH with If-Match): live now, no hint; still published.
  await record.getByLabel(/^Show from/).fill('');
  await record.getByRole('button', { name: 'Save the record' }).click();
  await record.getByText('Saved.').waitFor();
  t.match(
    (await api(`${records}/${stored.id}`)).body.data,
    { state: 'published', live: true, publishAt: null, revision: revision + 1 },
    'live once the window opens',
  );
  await row.getByTestId('record-window').waitFor({ state: 'detached' });
  // A window that has ended: "ended".
  t.equal((await api(`${records}/${stored.id}`, 'PATCH', { unpublishAt: new Date(Date.now() - 60_000).toISOString() })).status, 200);
  await page.reload();
  t.equal((await row.getByTestId('record-window').innerText()).trim(), 'ended', 'the list says its window ended');

  // Attachments: a real PNG is uploaded, listed, and its link answers 200 with the same bytes.
  await row.getByRole('button', { name: 'Christmas menu' }).click();
  const files = record.getByTestId('record-attachments');
  await files.getByText('No attachments.').waitFor();
  const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 200, g: 30, b: 30 } } })
    .png()
    .toBuffer();
  await files.getByLabel('Attach a file').setInputFiles({ name: 'menu-card.png', mimeType: 'image/png', buffer: png });
  await files.getByRole('button', { name: 'Upload' }).click();
  const link = files.getByRole('link', { name: 'menu-card.png' });
  await link.waitFor();
  const href = (await link.getAttribute('href'))!;
  const got = await editor.context.request.get(`${app.url}${href}`);
  t.equal(got.status(), 200, 'the link answers 200 in the browser’s session');
  t.equal(got.headers()['content-type'], 'image/png');
  t.ok(Buffer.from(await got.body()).equals(png), 'with the bytes uploaded');
  t.match(await record.getByTestId('record-history').innerText(), /attached menu-card\.png/, 'the history says so');

  // A text file named .png: refused (415) in words, nothing kept.
  await files.getByLabel('Attach a file').setInputFiles({ name: 'notes.png', mimeType: 'image/png', buffer: Buffer.from('not an image at all\n') });
  await files.getByRole('button', { name: 'Upload' }).click();
  await files.locator('.field-error', { hasText: 'not a PNG, JPEG, WebP or GIF image or a PDF' }).waitFor();
  t.pass('the 415 is said in words under the file input');
  t.equal((await api(`${records}/${stored.id}`)).body.data.attachments.length, 1, 'nothing was kept');
  await snap(page, 'records-window-attachments-1280');
  await checkA11y(page, t, 'a record with its window and attachments');

  // A viewer sees the attachment but cannot upload, remove or delete.
  const viewer = await contextAs(app, browser, 'viewer');
  await viewer.page.goto(`${app.url}/data/${id}?record=${stored.id}`);
  const seen = viewer.page.getByTestId('record');
  await seen.getByRole('link', { name: 'menu-card.png' }).waitFor();
  t.equal(await seen.getByLabel('Attach a file').count(), 0, 'no upload for a viewer');
  t.equal(await seen.getByRole('button', { name: 'Remove menu-card.png' }).count(), 0, 'no remove for a viewer');
  t.equal(await seen.getByRole('button', { name: 'Delete the record' }).count(), 0, 'no delete for a viewer');
  await viewer.context.close();

  // The editor removes the attachment (confirmed).
  await files.getByRole('button', { name: 'Remove menu-card.png' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Remove the attachment' }).click();
  await files.getByText('No attachments.').waitFor();
  t.same((await api(`${records}/${stored.id}`)).body.data.attachments, [], 'removed on the server');

  // Delete the record: Cancel keeps it; confirmed, it goes and the page is back to the list.
  await record.getByRole('button', { name: 'Delete the record' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  t.equal((await api(`${records}/${stored.id}`)).status, 200, 'Cancel keeps it');
  await record.getByRole('button', { name: 'Delete the record' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete the record' }).click();
  await list.getByText('No records yet.').waitFor();
  t.equal(await list.getByTestId('record').count(), 0, 'the record panel closed');
  t.equal((await api(`${records}/${stored.id}`)).status, 404, 'gone on the server');
  t.same(errors, [], 'no page errors');
});

t.test('deleting a record someone changed meanwhile: the 412 is said, the record stays', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const owner = await signIn(app);
  const api = (path: string, method = 'GET', json?: unknown) => app.json(path, { method, headers: owner.headers, ...(json === undefined ? {} : { json }) });
  const id: string = (await api('/api/v1/forms', 'POST', { name: 'Notes', fields: [{ key: 'text', label: 'Text', type: 'text' }] })).body.data.sourceId;
  const rec = (await api(`/api/v1/data-sources/${id}/records`, 'POST', { values: { text: 'first' } })).body.data;
  const editor = await contextAs(app, browser, 'editor');
  await editor.page.goto(`${app.url}/data/${id}?record=${rec.id}`);
  const record = editor.page.getByTestId('record');
  await record.waitFor();
  t.equal((await api(`/api/v1/data-sources/${id}/records/${rec.id}`, 'PATCH', { values: { text: 'second' } })).status, 200);
  await record.getByRole('button', { name: 'Delete the record' }).click();
  await editor.page.getByRole('dialog').getByRole('button', { name: 'Delete the record' }).click();
  await record.getByRole('alert').waitFor();
  t.match(
    await record.getByRole('alert').innerText(),
    /Someone changed this record meanwhile, so it was not deleted/,
    'the stale delete (412) is refused in words',
  );
  t.equal(await record.getByLabel(/^Text/).inputValue(), 'second', 'and the record is reloaded with their change');
  t.equal((await api(`/api/v1/data-sources/${id}/records/${rec.id}`)).status, 200, 'the record stays');
});
