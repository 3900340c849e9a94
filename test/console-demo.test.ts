import t from 'tap';
import { checkA11y } from './helpers/a11y.js';
import { signIn } from './helpers/auth.js';
import { DESKTOP, launchBrowser, signedInContext, snap } from './helpers/browser.js';
import { demoSeeded } from './helpers/demo.js';
import { startApp } from './helpers/harness.js';

const BANNER = 'Demo mode: sample data, reset any time.';

t.test('console: the demo banner on every page, and an admin resets the demo data', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t, { config: { demo: true } });
  const owner = await signIn(app); // the first user (setup), so the console shows sign-in
  await demoSeeded(app);
  const errors: string[] = [];

  // Signed out: the sign-in page shows the banner, without a reset button.
  const anonymous = await browser.newContext({ viewport: DESKTOP });
  const signin = await anonymous.newPage();
  signin.on('pageerror', (e) => errors.push(e.message));
  await signin.goto(`${app.url}/`);
  const anonBanner = signin.getByRole('complementary', { name: 'Demo mode' });
  await anonBanner.getByText(BANNER).waitFor();
  await signin.getByRole('heading', { name: 'Sign in' }).waitFor();
  t.equal(await anonBanner.getByRole('button', { name: 'Reset demo data' }).count(), 0, 'no reset button before sign-in');

  // An editor sees the banner but may not reset.
  const editorContext = await browser.newContext({ viewport: DESKTOP });
  await signedInContext(app, editorContext, app.url, 'editor');
  const editorPage = await editorContext.newPage();
  await editorPage.goto(`${app.url}/playlists`);
  await editorPage.getByText(BANNER).waitFor();
  t.equal(await editorPage.getByRole('button', { name: 'Reset demo data' }).count(), 0, 'no reset button for an editor');

  // An admin: change something, then reset from the banner on the screens page.
  const screens = await app.json('/api/v1/screens', { headers: owner.headers });
  const counter = (screens.body.data.items as any[]).find((s) => s.name === 'Counter');
  t.equal((await app.json(`/api/v1/screens/${counter.id}`, { method: 'PATCH', headers: owner.headers, json: { name: 'Renamed till' } })).status, 200);
  const context = await browser.newContext({ viewport: DESKTOP });
  await signedInContext(app, context, app.url, 'admin');
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-demo').catch(() => {});
  });
  await page.goto(`${app.url}/screens`);
  await page.getByText('Renamed till').first().waitFor();
  const banner = page.getByRole('complementary', { name: 'Demo mode' });
  await banner.getByText(BANNER).waitFor();
  const button = banner.getByRole('button', { name: 'Reset demo data' });

  // Cancelling the confirmation changes nothing.
  const resetRequests: string[] = [];
  page.on('request', (r) => {
    if (r.url().endsWith('/api/v1/demo/reset')) resetRequests.push(r.method());
  });
  page.once('dialog', (d) => void d.dismiss());
  await button.click();
  t.same(resetRequests, [], 'a cancelled confirm sends nothing');
  t.equal((await app.json('/api/v1/demo')).body.data.lastResetAt, null, 'a cancelled confirm does not reset');

  const dialogs: string[] = [];
  page.once('dialog', (d) => {
    dialogs.push(d.message());
    void d.accept();
  });
  await button.click();
  await banner
    .getByRole('status')
    .getByText(/Demo data restored: 3 screens, 4 assets, 2 playlists, 1 layout, 1 schedule/)
    .waitFor({ timeout: 120_000 });
  t.match(dialogs[0], /Reset the demo data\?/, 'asked to confirm');
  t.same(resetRequests, ['POST'], 'one reset request');
  const after = (await app.json('/api/v1/demo')).body.data;
  t.ok(after.lastResetAt, 'the server recorded the reset');
  t.same(after.contents.screens.names, ['Counter', 'Menu board', 'Window'], 'the renamed screen is back');
  await snap(page, 'console-demo-banner');
  await checkA11y(page, t, 'console-demo-banner');

  await banner.getByRole('link', { name: 'Reload the page' }).click();
  await page.getByText('Counter', { exact: true }).first().waitFor();
  t.equal(await page.getByText('Renamed till').count(), 0, 'the page shows the restored set');
  await page.getByRole('complementary', { name: 'Demo mode' }).getByText(BANNER).waitFor();
  t.same(errors, [], 'no page errors');
});

t.test('console: no banner when demo mode is off', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const context = await browser.newContext({ viewport: DESKTOP });
  await signedInContext(app, context, app.url, 'owner');
  const page = await context.newPage();
  const demoAnswers: number[] = [];
  page.on('response', (r) => {
    if (r.url().endsWith('/api/v1/demo')) demoAnswers.push(r.status());
  });
  const asked = page.waitForResponse((r) => r.url().endsWith('/api/v1/demo'));
  await page.goto(`${app.url}/playlists`);
  await asked;
  await page.getByRole('heading', { name: 'Playlists' }).first().waitFor();
  t.ok(demoAnswers.includes(200), 'the console asked GET /api/v1/demo');
  t.equal(await page.getByRole('complementary', { name: 'Demo mode' }).count(), 0, 'no banner');
});
