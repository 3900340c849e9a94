import t from 'tap';
import { SERVER_VERSION } from '../server/src/version.js';
import { launchBrowser } from './helpers/browser.js';
import { adminPage, checkAccessibility, snapBoth } from './helpers/console-admin.js';
import { startApp } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';

t.test('console: system status shows readiness, versions, disk and every status section as cards', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const { page, who, errors } = await adminPage(browser, app);
  t.teardown(async () => {
    app.deps.state.restoreInProgress = false;
    if (!t.passing()) await page.screenshot({ path: 'test/artifacts/failure-console-admin-system.png', fullPage: true }).catch(() => {});
  });
  await pairScreen(app, who, { name: 'Counter' });
  await pairScreen(app, who, { name: 'Window' });

  // Keyboard only: the Administration menu opens with Enter and its links are reached with Tab.
  await page.goto(`${app.url}/`);
  await page.getByTestId('admin-menu').locator('summary').focus();
  await page.keyboard.press('Enter');
  for (let i = 0; i < 6; i++) {
    await page.keyboard.press('Tab');
    if ((await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)) === 'System status') break;
  }
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'System status', level: 1 }).waitFor();
  t.equal(await page.getByTestId('admin-menu').getAttribute('open'), null, 'the menu closes once a page is chosen');
  const status = (await app.json('/api/v1/system/status', { headers: who.headers })).body.data;

  const readiness = page.locator('[data-card="readiness"]');
  await readiness.getByTestId('readiness').getByText('Yes: screens and people can use this server.').waitFor();
  t.equal(await readiness.locator('.badge').innerText(), 'OK');
  for (const check of ['Database', 'Image processing (sharp)', 'No restore running']) await readiness.getByText(check, { exact: false }).first().waitFor();
  t.pass('readiness lists its checks');

  const versions = await page.locator('[data-card="versions"]').innerText();
  t.match(versions, SERVER_VERSION, 'the Placard version');
  t.match(versions, status.database.sqliteVersion, 'the SQLite version');
  if (status.tools.ffmpeg.version) t.match(versions, status.tools.ffmpeg.version, 'the ffmpeg version');

  const disk = page.locator('[data-card="disk"]');
  t.match(await disk.innerText(), `${status.storage.usedPercent}% used`, 'disk use in percent');
  t.equal(Number(await disk.getByRole('progressbar', { name: 'Disk space used' }).getAttribute('value')), status.storage.usedPercent, 'and as a bar');

  // Every section the modules contribute is a card with its title; the fleet card counts the two screens.
  t.ok(Object.keys(status.sections).length >= 3, 'the server has several sections');
  for (const [key, section] of Object.entries(status.sections) as [string, { title: string }][]) {
    await page.locator(`[data-card="section-${key}"]`).getByRole('heading', { name: section.title }).waitFor();
  }
  t.pass('a card per status section');
  const fleet = await page.locator('[data-card="section-fleet"]').innerText();
  t.match(fleet, /Screens\s+2/, 'the fleet card counts the screens');
  t.match(fleet, /Never connected\s+2/, 'in plain words');
  t.notOk(await page.locator('details.raw').getAttribute('open'), 'the raw JSON stays behind a disclosure');
  await checkAccessibility(t, page, 'system status');
  await snapBoth(page, 'admin-system', t);

  // A restore in progress (the real state the restore action sets): /readyz is 503 and the page says why.
  app.deps.state.restoreInProgress = true;
  await page.getByRole('button', { name: 'Refresh now' }).click();
  await readiness
    .getByTestId('readiness')
    .getByText(/restore is in progress/)
    .waitFor();
  t.equal(await readiness.locator('.badge').innerText(), 'Problem');
  await page
    .locator('[data-card="maintenance"]')
    .getByText(/changes are refused until it finishes/)
    .waitFor();
  t.pass('not ready while a restore runs, and why');
  app.deps.state.restoreInProgress = false;
  await page.getByRole('button', { name: 'Refresh now' }).click();
  await readiness.getByText('Yes: screens and people can use this server.').waitFor();
  t.same(errors, [], 'no script errors');
});
