import t from 'tap';
import { checkA11y } from './helpers/a11y.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApp } from './helpers/harness.js';
import { DESKTOP, launchBrowser, PHONE, signedInContext, snap } from './helpers/browser.js';
import { settledAsset, uploadAsset } from './helpers/media.js';
import { samplePng } from './helpers/sample-media.js';

t.test('playlist items: validity window and day-parts edited and shown, bad window refused in place; reorder by dragging and by keyboard', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  const owner = await signedInContext(app, context, app.url);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-playlists-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const names = ['alpha.png', 'bravo.png', 'charlie.png'];
  const assets = [];
  for (const [i, name] of names.entries()) {
    const a = await uploadAsset(app, owner, readFileSync(await samplePng(dir, name, { r: 40 * i, g: 100, b: 200 - 40 * i })), name);
    assets.push(a);
  }
  for (const a of assets) t.equal((await settledAsset(app, owner, a.id)).state, 'ready');
  const pl = (await app.json('/api/v1/playlists', { method: 'POST', headers: owner.headers, json: { name: 'Week menu' } })).body.data;
  for (const a of assets)
    t.equal((await app.json(`/api/v1/playlists/${pl.id}/items`, { method: 'POST', headers: owner.headers, json: { assetId: a.id } })).status, 201);
  const itemsNow = async () =>
    (await app.json(`/api/v1/playlists/${pl.id}`, { headers: owner.headers })).body.data.items as {
      label: string;
      validFrom: string | null;
      validUntil: string | null;
      dayparts: unknown[];
      transition: unknown;
    }[];

  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-playlists').catch(() => {});
  });
  await page.goto(`${app.url}/playlists/${pl.id}`);
  await page.getByRole('heading', { name: 'Week menu' }).waitFor();
  const item = (name: string) => page.locator(`ol.playlist-items li[data-item="${name}"]`);
  const order = () => page.locator('ol.playlist-items li[data-item]').evaluateAll((lis) => lis.map((li: any) => li.dataset.item as string));
  t.same(await order(), names, 'items in the order added');

  // Validity: bravo ended yesterday. Screens skip it; the list says so.
  const pad = (n: number) => String(n).padStart(2, '0');
  const wall = (d: Date) => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  const yesterday = new Date(Date.now() - 86_400_000);
  const lastWeek = new Date(Date.now() - 7 * 86_400_000);
  await item('bravo.png').locator('summary', { hasText: 'When:' }).click();
  const bravoForm = page.getByRole('form', { name: 'When bravo.png plays' });
  await bravoForm.getByLabel('Plays from').fill(wall(lastWeek));
  await bravoForm.getByLabel('Plays until').fill(wall(yesterday));
  await bravoForm.getByRole('button', { name: 'Save when it plays' }).click();
  await page.locator('ol.playlist-items li[data-item="bravo.png"][data-window="ended"]').waitFor();
  t.match(await item('bravo.png').locator('.badge.bad').innerText(), /^ended /, 'an item past its window is marked ended');
  t.match(await item('bravo.png').getByTestId('item-when').innerText(), /^from .* · until /, 'the window is written out');
  let items = await itemsNow();
  t.equal(items[1]!.validUntil, new Date(`${wall(yesterday)}:00Z`).toISOString(), 'validUntil reached the server (typed in the browser’s zone)');
  t.equal(items[1]!.validFrom, new Date(`${wall(lastWeek)}:00Z`).toISOString(), 'validFrom too');

  // A window that ends before it starts: refused, the server's message on the form.
  await item('charlie.png').locator('summary', { hasText: 'When:' }).click();
  const charlieForm = page.getByRole('form', { name: 'When charlie.png plays' });
  await charlieForm.getByLabel('Plays from').fill(wall(yesterday));
  await charlieForm.getByLabel('Plays until').fill(wall(lastWeek));
  await charlieForm.getByRole('button', { name: 'Save when it plays' }).click();
  t.match(await charlieForm.getByRole('alert').innerText(), /validUntil must be after validFrom/, 'a backwards window is refused where it was typed');
  t.equal((await itemsNow())[2]!.validFrom, null, 'nothing was saved');
  // An upcoming window: from tomorrow.
  await charlieForm.getByLabel('Plays from').fill(wall(new Date(Date.now() + 86_400_000)));
  await charlieForm.getByLabel('Plays until').fill('');
  await charlieForm.getByRole('button', { name: 'Save when it plays' }).click();
  await page.locator('ol.playlist-items li[data-item="charlie.png"][data-window="upcoming"]').waitFor();
  t.match(await item('charlie.png').locator('.badge.warn').innerText(), /^from /, 'an item before its window says when it starts');

  // Day-parts and transition: alpha plays on weekday mornings, with a cut.
  await item('alpha.png').locator('summary', { hasText: 'When:' }).click();
  const alphaForm = page.getByRole('form', { name: 'When alpha.png plays' });
  await alphaForm.getByRole('button', { name: 'Add a time of day' }).click();
  const part = alphaForm.getByRole('group', { name: 'Time of day 1' });
  await part.getByLabel('From').fill('07:00');
  await part.getByLabel('To').fill('11:30');
  await alphaForm.getByLabel('Transition', { exact: true }).selectOption('none');
  await alphaForm.getByRole('button', { name: 'Save when it plays' }).click();
  await item('alpha.png').getByTestId('item-when').getByText('Mon–Fri 07:00–11:30').waitFor();
  items = await itemsNow();
  t.same(items[0]!.dayparts, [{ days: [1, 2, 3, 4, 5], from: '07:00', to: '11:30' }], 'day-parts reached the server');
  t.match(items[0]!.transition, { type: 'none', durationMs: 0 }, 'the transition too');
  t.ok(await alphaForm.getByLabel('Transition seconds').isDisabled(), 'a cut has no seconds to show');
  t.equal(
    await page.locator('ol.playlist-items li[data-item="alpha.png"]').getAttribute('data-window'),
    'always',
    'day-parts alone do not mark an item outside its window',
  );
  // No day ticked: refused before it reaches the server.
  for (const d of ['Mon', 'Tue', 'Wed', 'Thu', 'Fri']) await part.getByLabel(d).uncheck();
  await alphaForm.getByRole('button', { name: 'Save when it plays' }).click();
  t.match(await alphaForm.getByRole('alert').innerText(), /choose at least one day/, 'a time of day without days is refused on the form');
  await snap(page, 'playlist-when-1280-light');
  await checkA11y(page, t, 'playlist with its When form');
  await page.setViewportSize(PHONE);
  await snap(page, 'playlist-when-390-light');
  const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
  t.ok(width <= PHONE.width, `no sideways scrolling at phone width (${width}px)`);
  await page.setViewportSize(DESKTOP);
  await page.reload();
  await page.getByRole('heading', { name: 'Week menu' }).waitFor();

  // Reorder by dragging (native HTML5 drag and drop): charlie onto alpha's place.
  await item('charlie.png').locator('.drag-handle').dragTo(item('alpha.png'));
  await page.waitForFunction(() => (globalThis as any).document.querySelector('ol.playlist-items li')?.dataset.item === 'charlie.png');
  t.same(await order(), ['charlie.png', 'alpha.png', 'bravo.png'], 'dragging moves the item');
  t.same(
    (await itemsNow()).map((i) => i.label),
    ['charlie.png', 'alpha.png', 'bravo.png'],
    'the new order reached the server',
  );

  // Reorder with the keyboard: focus bravo's "up" button and press Enter.
  await page.getByRole('button', { name: 'Move bravo.png up' }).focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('ol.playlist-items li')[1]?.dataset.item === 'bravo.png');
  t.same(
    (await itemsNow()).map((i) => i.label),
    ['charlie.png', 'bravo.png', 'alpha.png'],
    'the keyboard move reached the server',
  );

  // The transition seconds shown are the ones stored: bravo fades in 0.5 s, saved and shown again after a reload.
  await item('bravo.png').locator('summary', { hasText: 'When:' }).click();
  const fadeForm = page.getByRole('form', { name: 'When bravo.png plays' });
  await fadeForm.getByLabel('Transition', { exact: true }).selectOption('fade');
  t.equal(await fadeForm.getByLabel('Transition seconds').inputValue(), '0.7', 'a fade starts at 0.7 s (a real value, not a shown-only one)');
  await fadeForm.getByLabel('Transition seconds').fill('0.5');
  await fadeForm.getByRole('button', { name: 'Save when it plays' }).click();
  await item('bravo.png').getByText('fade 0.5 s').waitFor();
  t.match((await itemsNow()).find((i) => i.label === 'bravo.png')!.transition, { type: 'fade', durationMs: 500 }, 'shown as 0.5 s, stored as 500 ms');
  await page.reload();
  await item('bravo.png').locator('summary', { hasText: 'When:' }).click();
  t.equal(await page.getByRole('form', { name: 'When bravo.png plays' }).getByLabel('Transition seconds').inputValue(), '0.5', 'and shown as 0.5 s again');

  // The item switch says what it is, and flipping it does what it says.
  const sw = page.getByRole('switch', { name: 'bravo.png plays' });
  t.ok(await sw.isChecked(), 'bravo plays');
  await sw.uncheck();
  await item('bravo.png').locator('.badge', { hasText: 'skipped' }).waitFor();
  t.equal(
    (await app.json(`/api/v1/playlists/${pl.id}`, { headers: owner.headers })).body.data.items.find((i: { label: string }) => i.label === 'bravo.png').enabled,
    false,
    'unchecked: the item is off on the server',
  );
  t.equal(await sw.isChecked(), false);
  await sw.check();
  await item('bravo.png').locator('.badge', { hasText: 'skipped' }).waitFor({ state: 'detached' });

  // Removing an item asks first (screens playing the playlist would stop showing it).
  await page.getByRole('button', { name: 'Remove alpha.png' }).click();
  const ask = page.locator('dialog.confirm-dialog');
  await ask.getByRole('heading', { name: 'Remove “alpha.png” from the playlist?' }).waitFor();
  await ask.getByRole('button', { name: 'Cancel' }).click();
  t.equal((await itemsNow()).length, 3, 'cancelled: the item stays');

  // The preview plays the playlist in the console.
  await page.getByText('Preview: play it here').click();
  await page.getByTestId('player-stage').locator('img').waitFor();
  await checkA11y(page, t, 'playlist preview');

  // A nested playlist plays one pass of its own items: no seconds box, its length shown.
  const inner = (await app.json('/api/v1/playlists', { method: 'POST', headers: owner.headers, json: { name: 'Specials' } })).body.data;
  await app.json(`/api/v1/playlists/${inner.id}/items`, { method: 'POST', headers: owner.headers, json: { assetId: assets[0]!.id, durationMs: 7000 } });
  await app.json(`/api/v1/playlists/${inner.id}/items`, { method: 'POST', headers: owner.headers, json: { assetId: assets[2]!.id, durationMs: 5000 } });
  t.equal((await app.json(`/api/v1/playlists/${pl.id}/items`, { method: 'POST', headers: owner.headers, json: { playlistId: inner.id } })).status, 201);
  await page.reload();
  const nested = item('Specials');
  await nested.waitFor();
  t.equal(await nested.getByRole('spinbutton', { name: /^Seconds for/ }).count(), 0, 'a nested playlist has no duration box');
  t.match(await nested.getByTitle('One pass of the nested playlist').innerText(), /12\s*s/, 'its length is one pass of its items (7 s + 5 s)');
  t.same(errors, [], 'no uncaught errors in the page');
});
