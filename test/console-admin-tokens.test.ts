import t from 'tap';
import { launchBrowser } from './helpers/browser.js';
import { adminPage, checkAccessibility, openAdmin, snapBoth } from './helpers/console-admin.js';
import { startApp } from './helpers/harness.js';

t.test('console: an integration token made in the console works for its capability, once shown, and stops when revoked', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const { page, context, errors } = await adminPage(browser, app);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.url });
  t.teardown(async () => {
    if (!t.passing()) await page.screenshot({ path: 'test/artifacts/failure-console-admin-tokens.png', fullPage: true }).catch(() => {});
  });

  await page.goto(`${app.url}/`);
  await openAdmin(page, 'Integration tokens');
  await page.getByText('No tokens yet.').waitFor();
  const form = page.getByRole('form', { name: 'Make a token' });
  for (const label of ['Read the state of every screen', 'Write rows of data tables']) await form.getByLabel(label).waitFor();
  t.match(await form.innerText(), /Uptime Kuma/, 'capabilities are explained in plain words');
  await checkAccessibility(t, page, 'integration tokens');

  // Nothing ticked: refused on the form, nothing made.
  await form.getByLabel('Name').fill('Uptime Kuma in the office');
  await form.getByRole('button', { name: 'Make token' }).click();
  t.match(await form.getByRole('alert').innerText(), /Tick at least one/);
  t.equal((await app.deps.db.selectFrom('integration_tokens').selectAll().execute()).length, 0, 'nothing made');

  await form.getByLabel('Read the state of every screen').check();
  await form.getByRole('button', { name: 'Make token' }).click();
  const made = page.getByTestId('token-made');
  await made.waitFor();
  const token = await made.getByTestId('token-value').inputValue();
  t.match(token, /^svci_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'the token is shown');
  t.match(await made.innerText(), /not shown again/, 'once, and it says so');
  await made.getByRole('button', { name: 'Copy' }).click();
  await made.getByText('Copied.').waitFor();
  t.equal(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText()), token, 'Copy put the token on the clipboard');
  await snapBoth(page, 'admin-tokens-made', t);
  const row = page.locator('tr[data-token="Uptime Kuma in the office"]');
  t.match(await row.innerText(), /Read the state of every screen/);
  t.equal(await row.getByTestId('last-used').innerText(), 'never');
  const stored = await app.deps.db.selectFrom('integration_tokens').selectAll().execute();
  t.notOk(JSON.stringify(stored).includes(token.split('.')[1]!), 'the secret is not stored');

  // It works for its capability, and only there.
  const bearer = { authorization: `Bearer ${token}` };
  let res = await app.json('/api/v1/fleet-health', { headers: bearer });
  t.equal(res.status, 200, 'fleet health answers the token');
  res = await app.json('/api/v1/screens', { headers: bearer });
  t.equal(res.status, 401, 'a console route does not');
  await made.getByRole('button', { name: 'I have copied it' }).click();
  t.equal(await page.getByTestId('token-made').count(), 0, 'the token is gone from the page');
  await page.reload();
  await row.waitFor();
  t.not(await row.getByTestId('last-used').innerText(), 'never', 'last used shows when it was used');

  // Revoke asks first (Escape backs out, nothing revoked); then the token is refused.
  await row.getByRole('button', { name: 'Revoke Uptime Kuma in the office' }).click();
  const dialog = page.getByRole('dialog', { name: 'Revoke “Uptime Kuma in the office”?' });
  t.match(await dialog.innerText(), /stops working at once/);
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  t.equal((await app.json('/api/v1/fleet-health', { headers: bearer })).status, 200, 'Escape revoked nothing');
  await row.getByRole('button', { name: 'Revoke Uptime Kuma in the office' }).click();
  await dialog.getByRole('button', { name: 'Revoke' }).click();
  await row.getByText(/revoked/).waitFor();
  res = await app.json('/api/v1/fleet-health', { headers: bearer });
  t.equal(res.status, 401, 'refused after revoke');
  t.equal(res.body.error.code, 'credential_revoked');
  t.equal(await row.getByRole('button', { name: /Revoke/ }).count(), 0, 'no second revoke');
  await snapBoth(page, 'admin-tokens', t);
  t.same(errors, [], 'no script errors');
});
