import t from 'tap';
import { checkA11y } from './helpers/a11y.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApp } from './helpers/harness.js';
import { DESKTOP, launchBrowser, PHONE, signedInContext, snap } from './helpers/browser.js';
import { settledAsset, uploadAsset } from './helpers/media.js';
import { samplePng } from './helpers/sample-media.js';
import { pairScreen } from './helpers/screens.js';

t.test(
  'overview: fleet counts and screens needing attention, failed media, schedules on now and next, quick links; Groups & locations in the navigation; a theme load error is shown; a screen revoked from its page',
  async (t) => {
    const browser = await launchBrowser(t);
    if (!browser) return;
    const app = await startApp(t);
    const context = await browser.newContext({ viewport: DESKTOP });
    const owner = await signedInContext(app, context, app.url);

    // Three screens: one heartbeating, one that went quiet an hour ago, one never seen.
    const online = await pairScreen(app, owner, { name: 'Front window' });
    const quiet = await pairScreen(app, owner, { name: 'Back office' });
    await pairScreen(app, owner, { name: 'Still boxed' });
    for (const s of [online, quiet]) t.equal((await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json: {} })).status, 200);
    await app.deps.db
      .updateTable('screens')
      .set({ last_seen_ms: Date.now() - 3600_000 })
      .where('id', '=', quiet.screenId)
      .execute();

    // A picture that fails processing (a truncated PNG), and one that works.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-overview-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const png = readFileSync(await samplePng(dir, 'ok.png'));
    const broken = await settledAsset(app, owner, (await uploadAsset(app, owner, png.subarray(0, 60), 'broken-poster.png')).id);
    t.equal(broken.state, 'failed', 'the truncated file failed');
    const good = await settledAsset(app, owner, (await uploadAsset(app, owner, png, 'ok.png')).id);
    t.equal(good.state, 'ready');

    // A schedule on now and one tomorrow.
    const pl = (await app.json('/api/v1/playlists', { method: 'POST', headers: owner.headers, json: { name: 'Lunch menu' } })).body.data;
    const schedule = (name: string, from: number, to: number) =>
      app.json('/api/v1/schedules', {
        method: 'POST',
        headers: owner.headers,
        json: {
          name,
          content: { playlistId: pl.id },
          targets: { screenIds: [online.screenId] },
          startsAt: new Date(from).toISOString(),
          endsAt: new Date(to).toISOString(),
          timeZone: 'UTC',
        },
      });
    t.equal((await schedule('Lunch now', Date.now() - 600_000, Date.now() + 3600_000)).status, 201);
    t.equal((await schedule('Tomorrow lunch', Date.now() + 86_400_000, Date.now() + 90_000_000)).status, 201);

    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    t.teardown(async () => {
      if (!t.passing()) await snap(page, 'failure-console-overview').catch(() => {});
    });
    await page.goto(`${app.url}/`);
    await page.getByRole('heading', { name: /^Hello, / }).waitFor();
    const screensCard = page.getByTestId('overview-screens');
    await screensCard.locator('[data-status="online"][data-count]').waitFor();
    const count = async (status: string) => Number(await screensCard.locator(`[data-status="${status}"]`).getAttribute('data-count'));
    t.same(
      { online: await count('online'), stale: await count('stale'), offline: await count('offline'), pending: await count('pending') },
      { online: 1, stale: 0, offline: 1, pending: 1 },
      'the fleet counted by status',
    );
    const attention = screensCard.getByRole('list', { name: 'Screens that need attention' });
    t.same(
      await attention.locator('li[data-screen]').evaluateAll((lis) => lis.map((li: any) => li.dataset.screen as string)),
      ['Back office'],
      'the quiet screen needs attention; the others do not',
    );
    t.match(await attention.innerText(), /offline, last seen/, 'with why');
    const now = page.getByTestId('overview-now');
    t.match(await now.getByRole('list', { name: 'On now' }).innerText(), /Lunch now · Lunch menu/, 'the schedule on now, with what it plays');
    t.match(await now.getByRole('list', { name: 'Coming up' }).innerText(), /Tomorrow lunch/, 'the next one');
    t.notMatch(await now.getByRole('list', { name: 'On now' }).innerText(), /Tomorrow/, 'tomorrow is not on now');
    const media = page.getByTestId('overview-media');
    await media.locator('[data-failed="1"]').waitFor();
    t.equal(await media.locator('[data-processing]').getAttribute('data-processing'), '0', 'nothing processing');
    t.match(await media.getByRole('list', { name: 'Failed media' }).innerText(), /broken-poster\.png/, 'the failed file is named');
    await snap(page, 'overview-1280-light');
    await checkA11y(page, t, 'overview-1280-light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await snap(page, 'overview-1280-dark');
    await checkA11y(page, t, 'overview-1280-dark');
    await page.setViewportSize(PHONE);
    await snap(page, 'overview-390-dark');
    await checkA11y(page, t, 'overview-390-dark');
    const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
    t.ok(width <= PHONE.width, `no sideways scrolling at phone width (${width}px)`);
    await page.setViewportSize(DESKTOP);
    await page.emulateMedia({ colorScheme: 'light' });

    // A status count opens the fleet filtered by it.
    await screensCard.locator('[data-status="offline"]').click();
    await page.getByRole('heading', { name: 'Screens', exact: true }).waitFor();
    await page.locator('tr[data-screen="Back office"]').waitFor();
    t.equal(await page.locator('tr[data-screen]').count(), 1, 'only the offline screen is listed');
    t.equal(
      await page
        .locator('button.chip[aria-pressed="true"]')
        .innerText()
        .then((s) => s.trim()),
      '1 offline',
      'its chip is pressed',
    );

    // Groups and locations have their own entry in the navigation.
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Groups & locations' }).click();
    await page.getByRole('heading', { name: 'Groups', exact: true }).waitFor();
    t.equal(await nav.getByRole('link', { name: 'Groups & locations' }).getAttribute('aria-current'), 'page', 'marked current on Groups');
    await page.getByRole('navigation', { name: 'Groups and locations' }).getByRole('link', { name: 'Locations' }).click();
    await page.getByRole('heading', { name: 'Locations', exact: true }).waitFor();
    t.equal(await nav.getByRole('link', { name: 'Groups & locations' }).getAttribute('aria-current'), 'page', 'and on Locations');
    t.equal(await nav.getByRole('link', { name: 'Screens' }).getAttribute('aria-current'), null, 'Screens is not');

    // Revoke, from the screen's page: confirmed, then the screen is marked revoked and takes no commands.
    await page.goto(`${app.url}/screens`);
    await page.getByRole('link', { name: 'Still boxed' }).click();
    await page.getByRole('heading', { name: 'Still boxed' }).waitFor();
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    const ask = page.locator('dialog.confirm-dialog');
    await ask.getByRole('heading', { name: 'Revoke Still boxed?' }).waitFor();
    t.pass('revoking asks first');
    await ask.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('button', { name: 'Revoked', exact: true }).waitFor();
    t.equal(await page.getByRole('button', { name: 'Identify' }).count(), 0, 'no commands for a revoked screen');
    const boxed = (await app.json('/api/v1/screens?limit=50', { headers: owner.headers })).body.data.items.find(
      (x: { name: string }) => x.name === 'Still boxed',
    );
    t.equal(boxed.revoked, true, 'the server has it revoked');
    await snap(page, 'screen-revoked-1280-light');
    await checkA11y(page, t, 'revoked screen');

    // The theme preference cannot be read: the page says so, and Try again recovers.
    await page.route('**/api/v1/me/preferences', (route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({ error: { code: 'not_ready', message: 'The server is restoring a backup' } }),
      }),
    );
    await page.reload();
    const themeError = page.getByTestId('theme-error');
    await themeError.waitFor();
    t.match(await themeError.getByRole('alert').innerText(), /restoring a backup/, 'the API’s message is shown');
    await page.unroute('**/api/v1/me/preferences');
    await themeError.getByRole('button', { name: 'Try again' }).click();
    await themeError.waitFor({ state: 'detached' });
    t.pass('Try again loads the preference and the note goes');
    t.same(errors, [], 'no uncaught errors in the page');
  },
);
