import t from 'tap';
import { checkA11y } from './helpers/a11y.js';
import { startApp } from './helpers/harness.js';
import {
  alertText,
  confirmTotp,
  DESKTOP,
  enrolPasskey,
  launchBrowser,
  luminance,
  PHONE,
  sessionHeaders,
  setUpOwner,
  signedInAs,
  signOut,
  snap,
  startTotp,
} from './helpers/browser.js';
import { totpNow } from './helpers/totp.js';

const OWNER = { name: 'Olivia Owner', email: 'olivia@venue.example', password: 'a long owner passphrase' };

t.test('console: first run, sign-in with every factor, account security, users', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  // WebAuthn needs a domain: the relying party is `localhost`, not an IP address.
  const base = app.url.replace('127.0.0.1', 'localhost');
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  t.teardown(async () => {
    if (t.passing()) return;
    await snap(page, 'failure-console-accounts').catch(() => {});
  });

  // First run: the setup form.
  await page.goto(`${base}/`);
  await page.getByRole('heading', { name: 'Welcome to Placard' }).waitFor();
  await snap(page, 'setup-1280-light');
  await checkA11y(page, t, 'setup-1280-light');
  await page.getByLabel('Your name').fill(OWNER.name);
  await page.getByLabel('Email', { exact: true }).fill(OWNER.email);
  await page.getByLabel('Password', { exact: true }).fill(OWNER.password);
  await page.getByLabel('Repeat the password').fill(`${OWNER.password}x`);
  await page.getByRole('button', { name: 'Create owner account' }).click();
  t.match(await alertText(page), /differ/, 'mismatched passwords are caught where they were typed');
  await setUpOwner(page, OWNER);
  t.pass('setup signs the owner in');
  await snap(page, 'overview-first-run-1280-light');
  await checkA11y(page, t, 'overview-first-run-1280-light');

  // Account security: TOTP by QR code; a wrong code is refused in place.
  const secret = await startTotp(page);
  t.match(await page.getByRole('img', { name: /QR code/ }).getAttribute('src'), /^data:image\/png;base64,/, 'the QR code is an image');
  t.match(secret, /^[A-Z2-7]{16,}$/, 'the key is shown for typing');
  await page.getByLabel('Code from the app').fill(totpNow(secret) === '000000' ? '111111' : '000000');
  await page.getByRole('button', { name: 'Turn on' }).click();
  t.match(await alertText(page, 'form[aria-label="Confirm the authenticator app"]'), /does not match/, 'the wrong code error shows on the form');
  await confirmTotp(page, secret);

  // Recovery codes, shown once.
  await page.getByRole('button', { name: 'Make recovery codes' }).click();
  // allInnerTexts does not wait: wait for the codes to be drawn (a loaded CI machine read none).
  await page.getByTestId('recovery-codes').locator('code').first().waitFor();
  const codes = await page.getByTestId('recovery-codes').locator('code').allInnerTexts();
  t.equal(codes.length, 10, 'ten recovery codes are shown');
  await snap(page, 'account-codes-1280-light');
  await checkA11y(page, t, 'account-codes-1280-light');
  await page.getByRole('button', { name: 'I have saved them' }).click();
  await page.getByText('10 unused codes left.').waitFor();
  t.equal(await page.getByTestId('recovery-codes').count(), 0, 'the codes are gone once dismissed');

  // Passkeys: register with Chromium's virtual authenticator, rename, and later sign in with it.
  await enrolPasskey(context, page, 'Laptop');
  await page.getByRole('button', { name: 'Rename Laptop' }).click();
  await page.getByLabel('New name for Laptop').fill('Work laptop');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('cell', { name: 'Work laptop', exact: true }).waitFor();
  t.pass('passkey registered and renamed');
  await snap(page, 'account-1280-light');
  await checkA11y(page, t, 'account-1280-light');

  // Dark theme from the user's preference; it sticks across reloads.
  await page.getByLabel('Theme').selectOption('dark');
  await page.waitForFunction(() => {
    const w = globalThis as any;
    return w.document.documentElement.dataset.theme === 'dark';
  });
  await page.reload();
  await page.getByRole('heading', { name: 'Account & security' }).waitFor();
  t.equal(
    await page.evaluate(() => {
      const w = globalThis as any;
      return w.document.documentElement.dataset.theme;
    }),
    'dark',
    'the theme preference survives a reload',
  );
  const bg = await page.evaluate(() => {
    const w = globalThis as any;
    return w.getComputedStyle(w.document.documentElement).backgroundColor;
  });
  t.ok(luminance(bg) < 0.3, `dark background (${bg})`);
  await snap(page, 'account-1280-dark');
  await checkA11y(page, t, 'account-1280-dark');
  await page.getByLabel('Theme').selectOption('system');
  await page.waitForFunction(() => {
    const w = globalThis as any;
    return w.document.documentElement.dataset.theme === undefined;
  });

  // Users: add an editor; a duplicate email is refused next to the form.
  await page.getByTestId('admin-menu').locator('summary').click();
  await page.getByTestId('admin-menu').getByRole('link', { name: 'Users' }).click();
  await page.getByRole('heading', { name: 'Users' }).waitFor();
  await page.getByText('Add a user').click();
  const addForm = page.getByRole('form', { name: 'Add a user' });
  const fill = async (email: string) => {
    await addForm.getByLabel('Name').fill('Eddie Editor');
    await addForm.getByLabel('Email').fill(email);
    await addForm.getByLabel('Role').selectOption('editor');
    await addForm.getByLabel('Type a password for them now').check();
    await addForm.getByLabel('First password').fill('an editor passphrase');
    await addForm.getByRole('button', { name: 'Add user' }).click();
  };
  await fill('eddie@venue.example');
  await page.locator('tr[data-user="eddie@venue.example"]').waitFor();
  await fill('eddie@venue.example');
  t.match(await alertText(page, 'form[aria-label="Add a user"]'), /exists/, 'duplicate email: the conflict shows on the form');
  const row = page.locator('tr[data-user="eddie@venue.example"]');
  await row.getByLabel('Role of Eddie Editor').selectOption('publisher');
  await row.getByText(/is now publisher/).waitFor();
  await row.getByRole('button', { name: 'Disable' }).click();
  await row.getByText('disabled', { exact: true }).waitFor();
  const listed = await app.json('/api/v1/users?q=eddie', { headers: await sessionHeaders(page) });
  t.equal(listed.body.data.items[0].role, 'publisher', 'the role change reached the server');
  t.equal(listed.body.data.items[0].disabled, true, 'disabling reached the server');
  await snap(page, 'users-1280-light');
  await checkA11y(page, t, 'users-1280-light');
  await page.emulateMedia({ colorScheme: 'dark' });
  await snap(page, 'users-1280-dark');
  await checkA11y(page, t, 'users-1280-dark');
  await page.emulateMedia({ colorScheme: 'light' });

  // Keyboard: the skip link is the first stop and moves focus to the content.
  await page.reload();
  await page.getByRole('heading', { name: 'Users' }).waitFor();
  await page.keyboard.press('Tab');
  t.equal(
    await page.evaluate(() => {
      const w = globalThis as any;
      return w.document.activeElement?.textContent;
    }),
    'Skip to content',
  );

  // Phone width.
  await page.setViewportSize(PHONE);
  await snap(page, 'users-390-light');
  await checkA11y(page, t, 'users-390-light');
  const usersWidth = await page.evaluate(() => {
    const w = globalThis as any;
    return w.document.documentElement.scrollWidth;
  });
  t.ok(usersWidth <= PHONE.width, `users page: no sideways scrolling at phone width (${usersWidth}px)`);
  await page.goto(`${base}/account`);
  await page.getByRole('heading', { name: 'Account & security' }).waitFor();
  await snap(page, 'account-390-light');
  await checkA11y(page, t, 'account-390-light');
  await page.setViewportSize(DESKTOP);

  // Sign out; a wrong password is refused with one generic message.
  await signOut(page);
  await page.getByLabel('Email', { exact: true }).fill(OWNER.email);
  await page.getByLabel('Password', { exact: true }).fill('not the password at all');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  t.match(await alertText(page), /incorrect/, 'wrong password: the error shows on the sign-in form');
  await snap(page, 'signin-error-1280-light');
  await checkA11y(page, t, 'signin-error-1280-light');

  // Password, then a recovery code as the second step.
  await page.getByLabel('Password', { exact: true }).fill(OWNER.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Second step' }).waitFor();
  await snap(page, 'second-step-1280-light');
  await checkA11y(page, t, 'second-step-1280-light');
  await page.getByRole('button', { name: 'Recovery code' }).click();
  await page.getByLabel(/recovery codes/).fill('not-a-code');
  await page.getByRole('button', { name: 'Use recovery code' }).click();
  t.match(await alertText(page), /not valid/, 'a bad recovery code is refused in place');
  await page.getByLabel(/recovery codes/).fill(codes[0]!);
  await page.getByRole('button', { name: 'Use recovery code' }).click();
  await signedInAs(page, OWNER.name);
  t.pass('signed in with password and recovery code');

  // Password, then the passkey as the second step.
  await signOut(page);
  await page.getByLabel('Email', { exact: true }).fill(OWNER.email);
  await page.getByLabel('Password', { exact: true }).fill(OWNER.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Passkey', exact: true }).click();
  await page.getByRole('button', { name: 'Use a passkey' }).click();
  await signedInAs(page, OWNER.name);
  t.pass('signed in with password and passkey');

  // A passkey alone (passwordless).
  await signOut(page);
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  await signedInAs(page, OWNER.name);
  t.pass('signed in with a passkey alone');

  // Remove the passkey.
  await page.goto(`${base}/account`);
  page.once('dialog', (d) => void d.accept());
  await page.getByRole('button', { name: 'Remove Work laptop' }).click();
  await page.getByText('No passkeys yet.').waitFor();
  t.pass('passkey removed');

  t.same(pageErrors, [], 'no uncaught errors in the page');
  await context.close();
});

t.test('console: phone-width setup and sign-in pages, dark', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const context = await browser.newContext({ viewport: PHONE, colorScheme: 'dark' });
  const page = await context.newPage();
  await page.goto(`${app.url}/`);
  await page.getByRole('heading', { name: 'Welcome to Placard' }).waitFor();
  const bg = await page.evaluate(() => {
    const w = globalThis as any;
    return w.getComputedStyle(w.document.documentElement).backgroundColor;
  });
  t.ok(luminance(bg) < 0.3, `the device's dark preference applies before sign-in (${bg})`);
  await snap(page, 'setup-390-dark');
  await checkA11y(page, t, 'setup-390-dark');
  const width = await page.evaluate(() => {
    const w = globalThis as any;
    return w.document.documentElement.scrollWidth;
  });
  t.ok(width <= PHONE.width, `no horizontal scrolling at phone width (${width}px)`);
  await context.close();
});
