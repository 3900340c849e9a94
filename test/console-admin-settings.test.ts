import t from 'tap';
import { getSettings } from '../server/src/modules/system/settings.js';
import { launchBrowser, unfoldNav } from './helpers/browser.js';
import { adminPage, checkAccessibility, openAdmin, snapBoth } from './helpers/console-admin.js';
import { startApp } from './helpers/harness.js';

const GiB = 1024 ** 3;

t.test('console: the settings page edits every section with If-Match, explains stale edits and refused values', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const { page, who, errors } = await adminPage(browser, app);
  t.teardown(async () => {
    if (!t.passing()) await page.screenshot({ path: 'test/artifacts/failure-console-admin-settings.png', fullPage: true }).catch(() => {});
  });

  await page.goto(`${app.url}/`);
  await openAdmin(page, 'Settings');
  t.ok(await page.getByTestId('admin-menu').locator('summary').isVisible(), 'the Administration menu is in the navigation');
  for (const section of [
    'This server',
    'Time and language',
    'Uploads',
    'Automatic backups',
    'History kept',
    'Local network',
    'Approvals',
    'Screen mirroring receiver',
  ]) {
    await page.getByRole('heading', { name: section, level: 2 }).waitFor();
  }
  t.pass('every section of the settings has its part of the page');
  await checkAccessibility(t, page, 'settings');
  await snapBoth(page, 'admin-settings', t);
  // The Administration menu opens inside the screen at phone width too.
  await page.setViewportSize({ width: 390, height: 844 });
  await unfoldNav(page);
  await page.getByTestId('admin-menu').locator('summary').click();
  const menu = await page.getByTestId('admin-menu').locator('ul').boundingBox();
  t.ok(menu && menu.x >= 0 && menu.x + menu.width <= 390, `the open menu fits the phone screen (${JSON.stringify(menu)})`);
  await page.waitForTimeout(300); // Pico fades the menu in
  await page.screenshot({ path: 'test/artifacts/admin-menu-390.png' });
  await page.getByTestId('admin-menu').locator('summary').click();
  await page.setViewportSize({ width: 1366, height: 768 });

  // This server + time and language.
  const general = page.getByRole('form', { name: 'This server' });
  await general.getByLabel('Server name').fill('Café de Flore');
  await general.getByRole('button', { name: 'Save this server' }).click();
  await general.getByText('Saved.').waitFor();
  const time = page.getByRole('form', { name: 'Time and language' });
  await time.getByLabel('Time zone').selectOption('Europe/Paris');
  await time.getByLabel('Language for dates and times').selectOption('fr-FR');
  t.match(await time.locator('.field-help').nth(1).innerText(), /vendredi 14 mars 2025/, 'an example in the chosen language');
  await time.getByRole('button', { name: 'Save time and language' }).click();
  await time.getByText('Saved.').waitFor();
  let s = await getSettings(app.deps.db);
  t.equal(s.serverName, 'Café de Flore', 'the name reached the server');
  t.equal(s.timeZone, 'Europe/Paris', 'the time zone reached the server');
  t.equal(s.locale, 'fr-FR', 'the locale reached the server');
  const updatedAt = (await app.json('/api/v1/settings', { headers: who.headers })).body.data.updatedAt;
  const expected = await page.evaluate((iso) => new Date(iso).toLocaleString('fr-FR', { dateStyle: 'medium', timeStyle: 'short' }), updatedAt);
  t.equal(await page.getByTestId('settings-updated').innerText(), `Last changed ${expected}.`, 'the console now writes dates in French');

  // Uploads, backups, retention, network, approvals.
  const uploads = page.getByRole('form', { name: 'Uploads' });
  await uploads.getByLabel('Largest file people can upload (GB)').fill('2');
  await uploads.getByLabel('Throw away unfinished uploads after (hours)').fill('48');
  await uploads.getByRole('button', { name: 'Save uploads' }).click();
  await uploads.getByText('Saved.').waitFor();
  const backups = page.getByRole('form', { name: 'Automatic backups' });
  await backups.getByLabel('Make a backup').selectOption({ label: 'Every week' });
  await backups.getByLabel('How many to keep').fill('4');
  await backups.getByLabel('Include pictures, videos and other media').uncheck();
  await backups.getByRole('button', { name: 'Save automatic backups' }).click();
  await backups.getByText('Saved.').waitFor();
  const history = page.getByRole('form', { name: 'History kept' });
  await history.getByLabel('Screen check-ins (days)').fill('10');
  await history.getByLabel('Screenshots from screens (days)').fill('3');
  await history.getByRole('button', { name: 'Save history kept' }).click();
  await history.getByText('Saved.').waitFor();
  const network = page.getByRole('form', { name: 'Local network' });
  await network.getByLabel('Let the server open web pages on this local network').uncheck();
  await network.getByRole('button', { name: 'Save local network' }).click();
  await network.getByText('Saved.').waitFor();
  s = await getSettings(app.deps.db);
  t.equal(s.uploads.maxSizeBytes, 2 * GiB);
  t.equal(s.uploads.abandonAfterHours, 48);
  t.same(s.backups, { intervalHours: 168, keep: 4, includeMedia: false });
  t.equal(s.retention.heartbeatDays, 10);
  t.equal(s.retention.screenshotDays, 3);
  t.equal(s.retention.noiseHistoryDays, 90, 'untouched fields keep their values');
  t.equal(s.network.allowPrivateFetchTargets, false);

  // A value the server refuses: its message under the field, nothing stored.
  await general.getByLabel('Address screens use to reach this server').fill('ftp://files.example');
  await general.getByRole('button', { name: 'Save this server' }).click();
  const urlField = general.getByLabel('Address screens use to reach this server');
  await page.waitForFunction(() => (globalThis as any).document.querySelector('[aria-invalid="true"][name="publicUrl"]'));
  t.match(await general.locator('.field-error').innerText(), /http/, 'the server’s message is under the field');
  t.match(await general.getByRole('alert').innerText(), /publicUrl|http/, 'and the form says why it was not saved');
  t.equal(await urlField.getAttribute('aria-invalid'), 'true');
  t.equal((await getSettings(app.deps.db)).publicUrl, null, 'nothing stored');
  await general.getByLabel('Address screens use to reach this server').fill('http://192.168.1.20:8080/');
  await general.getByRole('button', { name: 'Save this server' }).click();
  await general.getByText('Saved.').waitFor();
  t.equal((await getSettings(app.deps.db)).publicUrl, 'http://192.168.1.20:8080');

  // Someone else changes the settings meanwhile: the stale save is refused, the page reloads and says so.
  await history.getByLabel('Noise levels (days)').fill('30');
  const elsewhere = await app.json('/api/v1/settings', { method: 'PATCH', headers: who.headers, json: { serverName: 'Changed elsewhere' } });
  t.equal(elsewhere.status, 200);
  await backups.getByLabel('How many to keep').fill('9');
  await backups.getByRole('button', { name: 'Save automatic backups' }).click();
  await page
    .locator('[data-section="backups"] [role=alert]')
    .getByText(/Someone else changed the settings/)
    .waitFor();
  t.equal((await getSettings(app.deps.db)).backups.keep, 4, 'the stale edit changed nothing');
  t.equal(await page.getByRole('form', { name: 'This server' }).getByLabel('Server name').inputValue(), 'Changed elsewhere', 'the page shows the other change');
  t.equal(await page.getByRole('form', { name: 'Automatic backups' }).getByLabel('How many to keep').inputValue(), '4', 'and the current values');
  await page.getByRole('form', { name: 'Automatic backups' }).getByLabel('How many to keep').fill('9');
  await page.getByRole('form', { name: 'Automatic backups' }).getByRole('button', { name: 'Save automatic backups' }).click();
  await page.getByRole('form', { name: 'Automatic backups' }).getByText('Saved.').waitFor();
  t.equal((await getSettings(app.deps.db)).backups.keep, 9, 'saved once made again');
  await snapBoth(page, 'admin-settings-after', t);
  t.same(errors, [], 'no script errors');
});

t.test('console: the Administration menu is for owners and admins only', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  await app.json('/api/v1/auth/setup', { method: 'POST', json: { email: 'first@example.test', password: 'a long owner passphrase', displayName: 'Owner' } });
  for (const role of ['editor', 'viewer'] as const) {
    const { page, context } = await adminPage(browser, app, role);
    await page.goto(`${app.url}/`);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    t.equal(await page.getByTestId('admin-menu').count(), 0, `${role}: no Administration menu`);
    for (const path of ['/settings', '/backups', '/system', '/tokens', '/users']) {
      await page.goto(app.url + path);
      await page.getByRole('heading', { name: 'Nothing here' }).waitFor();
    }
    t.pass(`${role}: the administration pages are not open to them`);
    await context.close();
  }
});
