import t from 'tap';
import { cookieHeader, signIn, TEST_PASSWORD } from './helpers/auth.js';
import { launchBrowser, signedInAs, snap, unfoldNav } from './helpers/browser.js';
import { adminPage, checkAccessibility, LAPTOP, openAdmin, PHONE, snapBoth } from './helpers/console-admin.js';
import { startApp, type TestApp } from './helpers/harness.js';

const login = (app: TestApp, email: string, password: string) => app.json('/api/v1/auth/login', { method: 'POST', json: { email, password } });

t.test('console: users get a one-time set-password link (works once), admins set passwords, and I change mine', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const { page, who, errors } = await adminPage(browser, app);
  t.teardown(async () => {
    if (!t.passing()) await page.screenshot({ path: 'test/artifacts/failure-console-admin-passwords.png', fullPage: true }).catch(() => {});
  });

  // Add a user: the least role by default, and a link for them to choose their own password.
  await page.goto(`${app.url}/`);
  await openAdmin(page, 'Users');
  await page.getByText('Add a user').click();
  const addForm = page.getByRole('form', { name: 'Add a user' });
  t.equal(await addForm.getByLabel('Role').inputValue(), 'viewer', 'a new user is a viewer unless chosen otherwise');
  t.ok(await addForm.getByLabel('Make a link for them to choose their own (works once, for 24 hours)').isChecked(), 'a link is the default way in');
  await addForm.getByLabel('Name').fill('Vera Barista');
  await addForm.getByLabel('Email').fill('vera@cafe.example');
  await addForm.getByLabel('Role').selectOption('editor');
  await addForm.getByRole('button', { name: 'Add user' }).click();
  const added = page.getByTestId('user-added');
  await added.getByText('Vera Barista was added as editor.').waitFor();
  const link = await added.getByTestId('password-link').inputValue();
  t.match(link, new RegExp(`^${app.url.replace(/\./g, '\\.')}/set-password#token=[A-Za-z0-9_-]{43}$`), 'the link is shown to copy');
  t.equal(await addForm.getByLabel('Role').inputValue(), 'viewer', 'the form is ready for the next person, back to viewer');
  const vera = (await app.json('/api/v1/users?q=vera', { headers: who.headers })).body.data.items[0];
  t.equal(vera.role, 'editor');
  t.equal(vera.passwordSet, false, 'no password until the link is used');
  await page.locator('tr[data-user="vera@cafe.example"]').getByText('no password yet').waitFor();
  await checkAccessibility(t, page, 'users with a new link');
  await snapBoth(page, 'admin-users-link', t);

  // Vera opens the link (another browser, signed out): the token leaves the address bar, she sets a password once.
  const veraContext = await browser.newContext({ viewport: PHONE });
  const vp = await veraContext.newPage();
  await vp.goto(link);
  await vp.getByRole('heading', { name: 'Set your password' }).waitFor();
  await vp.getByText('For Vera Barista (vera@cafe.example).', { exact: false }).waitFor();
  t.equal(vp.url(), `${app.url}/set-password`, 'the token is gone from the address bar');
  await checkAccessibility(t, vp, 'set-password page');
  await snap(vp, 'set-password-390');
  await vp.getByLabel('New password').fill('steamed milk and espresso');
  await vp.getByLabel('Repeat the password').fill('steamed milk and espresso!');
  await vp.getByRole('button', { name: 'Set password' }).click();
  t.match(await vp.getByRole('alert').innerText(), /differ/, 'a mistyped repeat is caught before anything is sent');
  await vp.getByLabel('Repeat the password').fill('steamed milk and espresso');
  await vp.getByRole('button', { name: 'Set password' }).click();
  await vp.getByText('Your password is set.', { exact: false }).waitFor();
  await vp.getByRole('button', { name: 'Go to sign-in' }).click();
  await vp.getByLabel('Email', { exact: true }).fill('vera@cafe.example');
  await vp.getByLabel('Password', { exact: true }).fill('steamed milk and espresso');
  await vp.getByRole('button', { name: 'Sign in', exact: true }).click();
  await signedInAs(vp, 'Vera Barista');
  t.pass('Vera signs in with the password she chose');

  // The same link again: already used.
  const again = await (await browser.newContext({ viewport: LAPTOP })).newPage();
  await again.goto(link);
  await again.getByText('This link was already used.', { exact: false }).waitFor();
  t.equal(await again.getByLabel('New password').count(), 0, 'no form for a used link');
  await snap(again, 'set-password-used-1366');

  // The owner sets Vera's password from the Users page: Vera is signed out.
  await page.reload();
  const veraRow = page.locator('tr[data-user="vera@cafe.example"]');
  await veraRow.getByRole('button', { name: 'Password of Vera Barista' }).click();
  const dialog = page.getByRole('dialog', { name: 'Password for Vera Barista' });
  await dialog.waitFor();
  await checkAccessibility(t, page, 'password dialog');
  const setForm = dialog.getByRole('form', { name: 'Set a new password for Vera Barista' });
  await setForm.getByLabel('New password').fill('the owner chose this one');
  await setForm.getByRole('button', { name: 'Set password' }).click();
  await dialog.getByText('The new password is set.', { exact: false }).waitFor();
  t.equal((await login(app, 'vera@cafe.example', 'steamed milk and espresso')).status, 401, 'her old password no longer works');
  t.equal((await login(app, 'vera@cafe.example', 'the owner chose this one')).status, 200, 'the new one does');
  await vp.reload();
  await vp.getByRole('heading', { name: 'Sign in' }).waitFor();
  t.pass('Vera’s session ended');
  // ...or makes her a fresh link from the same dialog.
  await dialog.getByRole('button', { name: 'Make a set-password link' }).click();
  const second = await dialog.getByTestId('password-link').inputValue();
  t.not(second, link, 'a new link');
  t.equal(
    (await app.json('/api/v1/auth/password-link/check', { method: 'POST', json: { token: new URL(second).hash.slice('#token='.length) } })).status,
    200,
    'that works',
  );
  await snap(page, 'admin-users-password-dialog-1366', false);
  await page.setViewportSize(PHONE);
  await snap(page, 'admin-users-password-dialog-390', false);
  await page.setViewportSize(LAPTOP);
  await dialog.getByRole('button', { name: 'Close' }).click();

  // Change my own password: the current one is needed; my other sessions end, this one goes on.
  const elsewhere = await login(app, who.user.email, TEST_PASSWORD);
  const elsewhereHeaders = { cookie: cookieHeader(elsewhere) };
  await unfoldNav(page);
  await page.locator('details.user-menu summary', { hasText: who.user.displayName }).click();
  await page.getByRole('link', { name: 'Account & security' }).click();
  const pw = page.getByRole('form', { name: 'Change your password' });
  await pw.getByLabel('Current password').fill('not my password at all');
  await pw.getByLabel('New password', { exact: true }).fill('a fresh owner passphrase');
  await pw.getByLabel('Repeat the new password').fill('a fresh owner passphrase');
  await pw.getByRole('button', { name: 'Change password' }).click();
  await pw.getByText('This is not your current password.').waitFor();
  t.equal(await pw.getByLabel('Current password').getAttribute('aria-invalid'), 'true', 'the wrong field is marked');
  await pw.getByLabel('Current password').fill(TEST_PASSWORD);
  await pw.getByRole('button', { name: 'Change password' }).click();
  await pw.getByText('Your password is changed. You were signed out on 1 other browser or device.').waitFor();
  t.equal((await app.json('/api/v1/me/security', { headers: elsewhereHeaders })).status, 401, 'the other session ended');
  t.equal((await login(app, who.user.email, 'a fresh owner passphrase')).status, 200, 'the new password works');
  await page.getByLabel('Theme').selectOption('dark');
  await page.waitForFunction(() => (globalThis as any).document.documentElement.dataset.theme === 'dark');
  t.pass('this session goes on (its new CSRF token is used)');
  await page.getByLabel('Theme').selectOption('system');
  await page.waitForFunction(() => (globalThis as any).document.documentElement.dataset.theme === undefined);
  await page.waitForTimeout(500); // Pico's colour transitions settle before contrast is measured
  await checkAccessibility(t, page, 'account page');
  await snapBoth(page, 'account-password', t);
  t.same(errors, [], 'no script errors');
});

t.test('console: an admin has no password tools for an owner', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const owner = await signIn(app);
  const admin = await signIn(app, { role: 'admin' });
  const context = await browser.newContext({ viewport: LAPTOP });
  await context.addCookies(
    admin.headers.cookie
      .split('; ')
      .map((pair) => ({ name: pair.slice(0, pair.indexOf('=')), value: pair.slice(pair.indexOf('=') + 1), domain: '127.0.0.1', path: '/' })),
  );
  const page = await context.newPage();
  await page.goto(`${app.url}/users`);
  const ownerRow = page.locator(`tr[data-user="${owner.user.email}"]`);
  await ownerRow.waitFor();
  t.equal(await ownerRow.getByRole('button', { name: /Password of/ }).count(), 0, 'no Password… on an owner’s row');
  const roles = await page
    .getByRole('form', { name: 'Add a user', includeHidden: true })
    .getByLabel('Role')
    .locator('option')
    .evaluateAll((os) => os.map((o) => (o as any).value));
  t.same(roles, ['viewer', 'editor', 'publisher', 'admin'], 'an admin cannot make an owner; viewer comes first');
});
