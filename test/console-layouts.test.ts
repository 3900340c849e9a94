import t from 'tap';
import { startApp } from './helpers/harness.js';
import { DESKTOP, launchBrowser, PHONE, signedInContext, snap } from './helpers/browser.js';

t.test('layouts: zones on a canvas (template, drag, playlist per zone), save, conflict, publish, revisions', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const context = await browser.newContext({ viewport: DESKTOP });
  const owner = await signedInContext(app, context, app.url);
  const pl = await app.json('/api/v1/playlists', { method: 'POST', headers: owner.headers, json: { name: 'Menu board' } });
  t.equal(pl.status, 201);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-layouts').catch(() => {});
  });

  await page.goto(app.url + '/layouts');
  await page.getByLabel('New layout name').fill('Cafe wall');
  await page.getByRole('button', { name: 'Create layout' }).click();
  await page.getByRole('heading', { name: 'Cafe wall' }).waitFor();
  const id = new URL(page.url()).pathname.split('/').pop()!;

  await page.getByRole('button', { name: 'Main + sidebar' }).click();
  await page.getByRole('button', { name: 'Sidebar', exact: true }).click();
  await page.getByLabel('Plays').selectOption({ label: 'Menu board' });
  await page.getByRole('button', { name: 'Add zone' }).click();
  // Drag the new zone on the canvas.
  const zone = page.locator('.zone[data-zone="Zone 3"]');
  const box = (await zone.boundingBox())!;
  await page.mouse.move(box.x + 20, box.y + 20);
  await page.mouse.down();
  await page.mouse.move(box.x + 120, box.y + 70, { steps: 5 });
  await page.mouse.up();
  const x = Number(await page.getByLabel('x', { exact: true }).inputValue());
  const y = Number(await page.getByLabel('y', { exact: true }).inputValue());
  t.ok(x > 0 && y > 0, `dragging moves the zone (x ${x}, y ${y})`);
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.getByText('Draft saved.').waitFor();
  const saved = await app.json(`/api/v1/layouts/${id}`, { headers: owner.headers });
  t.equal(saved.body.data.draft.zones.length, 3, 'three zones saved');
  t.same(saved.body.data.draft.zones[1].content, { type: 'playlist', playlistId: pl.body.data.id }, 'the sidebar plays the playlist');
  t.equal(saved.body.data.draft.zones[2].x, x, 'the dragged position was saved');
  await snap(page, 'layout-editor-1280-light');

  // Someone else saves meanwhile: our save is refused with a clear message.
  const other = await app.json(`/api/v1/layouts/${id}/draft`, { method: 'PUT', headers: owner.headers, json: { ...saved.body.data.draft, zones: saved.body.data.draft.zones.slice(0, 2) } });
  t.equal(other.status, 200);
  await page.getByLabel('Zone name').fill('Clock');
  await page.getByRole('button', { name: 'Save draft' }).click();
  t.match(await page.getByRole('alert').first().innerText(), /Someone else changed this layout/, 'a stale save is explained');
  await page.reload();
  await page.getByRole('heading', { name: 'Cafe wall' }).waitFor();

  await page.getByLabel('Publish note').fill('first version');
  await page.getByRole('button', { name: 'Publish' }).click();
  await page.getByText(/Published revision 1/).waitFor();
  await page.getByText('on screens').waitFor();
  const published = await app.json(`/api/v1/layouts/${id}`, { headers: owner.headers });
  t.equal(published.body.data.published.zones.length, 2, 'the published layout has the current draft');
  await snap(page, 'layout-published-1280-light');
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.setViewportSize(PHONE);
  await snap(page, 'layout-390-dark');
  const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
  t.ok(width <= PHONE.width, `no sideways scrolling at phone width (${width}px)`);
  t.same(errors, [], 'no uncaught errors in the page');
});
