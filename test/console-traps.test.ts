/**
 * Traps from the café owner's walk (issue 16), one by one, each shown gone in the browser:
 * deletes refused because something is in use list it with links; the screen page is live
 * and says what the player can and cannot do; the library does not claim to be empty when
 * the server cannot be reached. (The journey test covers pairing, uploads, archive/undo,
 * the phone menu; the playlists, layouts and schedules tests cover their own traps.)
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { startApp } from './helpers/harness.js';
import { checkA11y } from './helpers/a11y.js';
import { DESKTOP, launchBrowser, signedInContext, snap } from './helpers/browser.js';
import { pairScreen } from './helpers/screens.js';

async function confirmIn(page: Page, heading: RegExp | string, button: string): Promise<void> {
  const ask = page.locator('dialog.confirm-dialog');
  await ask.getByRole('heading', { name: heading }).waitFor();
  await ask.getByRole('button', { name: button, exact: true }).click();
  await ask.waitFor({ state: 'hidden' });
}

t.test('traps gone: in-use deletes list where (with links), the live screen page, commands per player, the offline library', async (t) => {
  t.setTimeout(240_000);
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'Europe/Paris' });
  const owner = await signedInContext(app, context, app.url);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-traps').catch(() => {});
  });
  const call = (method: string, path: string, json?: unknown) => app.json(path, { method, headers: owner.headers, ...(json === undefined ? {} : { json }) });

  const site = (await call('POST', '/api/v1/assets/websites', { url: 'example.org/today', name: 'Specials page' })).body.data;
  const pl = (await call('POST', '/api/v1/playlists', { name: 'Specials' })).body.data;
  await call('POST', `/api/v1/playlists/${pl.id}/items`, { assetId: site.id });
  const counter = await pairScreen(app, owner, { name: 'Counter', playerFamily: 'desktop-linux' });
  const tablet = await pairScreen(app, owner, { name: 'Tablet', playerFamily: 'android' });
  const sched = (
    await call('POST', '/api/v1/schedules', {
      name: 'Specials at noon',
      content: { playlistId: pl.id },
      targets: { screenIds: [counter.screenId] },
      startsAt: '2026-06-01T12:00:00',
      endsAt: '2026-06-01T14:00:00',
      rrule: 'FREQ=DAILY',
    })
  ).body.data;

  await t.test('deleting a playlist a schedule uses: asked first, then the refusal lists the schedule as a link that opens it', async (t) => {
    await page.goto(`${app.url}/playlists/${pl.id}`);
    await page.getByText('Rename or delete').click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const ask = page.locator('dialog.confirm-dialog');
    await ask.getByRole('heading', { name: 'Delete the playlist “Specials”?' }).waitFor();
    await ask.locator('li[data-usage="schedule"]').waitFor();
    t.equal(
      await ask.getByRole('link', { name: 'Specials at noon' }).getAttribute('href'),
      `/schedules?edit=${sched.id}`,
      'the confirmation already names the schedule',
    );
    await ask.getByRole('button', { name: 'Delete playlist' }).click();
    const refusal = page.locator('[role=alert][data-code="conflict"]');
    await refusal.waitFor();
    t.match(await refusal.innerText(), /in use by schedule "Specials at noon"/, 'the server’s refusal is shown');
    const link = refusal.getByRole('link', { name: 'Specials at noon' });
    t.equal(await link.getAttribute('href'), `/schedules?edit=${sched.id}`, 'with a link to the schedule');
    await checkA11y(page, t, 'refused playlist delete');
    await snap(page, 'traps-delete-in-use-1280');
    await link.click();
    const edit = page.getByRole('form', { name: 'Edit schedule' });
    await edit.waitFor();
    t.equal(await edit.getByLabel('Name', { exact: true }).inputValue(), 'Specials at noon', 'the link opens the schedule’s form');
    t.equal((await call('GET', `/api/v1/playlists/${pl.id}`)).status, 200, 'the playlist is still there');
  });

  await t.test('deleting the website the playlist holds, and the screen the schedule names: the same lists', async (t) => {
    await page.goto(`${app.url}/library`);
    await page.getByRole('button', { name: 'Open Specials page' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await confirmIn(page, 'Delete “Specials page” for good?', 'Delete');
    const refusal = page.getByRole('dialog').locator('[role=alert][data-code="conflict"]');
    await refusal.waitFor();
    t.equal(await refusal.getByRole('link', { name: 'Specials' }).getAttribute('href'), `/playlists/${pl.id}`, 'the asset’s refusal links the playlist');
    await page.keyboard.press('Escape');

    await page.goto(`${app.url}/screens/${counter.screenId}`);
    await page.getByRole('button', { name: 'Delete screen' }).click();
    await confirmIn(page, 'Delete Counter?', 'Delete screen');
    const screenRefusal = page.locator('[role=alert][data-code="conflict"]');
    await screenRefusal.waitFor();
    t.equal(
      await screenRefusal.getByRole('link', { name: 'Specials at noon' }).getAttribute('href'),
      `/schedules?edit=${sched.id}`,
      'the screen’s refusal links the schedule',
    );
    // With the schedule gone, the screen goes.
    t.equal((await call('DELETE', `/api/v1/schedules/${sched.id}`)).status, 204);
    await page.getByRole('button', { name: 'Delete screen' }).click();
    await confirmIn(page, 'Delete Counter?', 'Delete screen');
    await page.getByRole('heading', { name: 'Screens' }).waitFor();
    await page.locator('tr[data-screen="Counter"]').waitFor({ state: 'detached' });
    t.equal((await call('GET', `/api/v1/screens/${counter.screenId}`)).status, 404, 'deleted on the server');
  });

  await t.test('the screen page is live; it offers what the player can run; its report reads as words', async (t) => {
    await page.goto(`${app.url}/screens/${tablet.screenId}`);
    const line = page.getByTestId('screen-status-line');
    await line.getByText('Never seen').waitFor();
    // The player reports in; the open page follows without a reload.
    await app.json('/api/v1/player/heartbeat', {
      method: 'POST',
      headers: tablet.headers,
      json: {
        playerFamily: 'android',
        playerVersion: '2.4.0',
        display: { width: 1920, height: 1080 },
        cache: { items: 12, bytes: 48_000_000, missing: 1, failed: 0 },
        socketConnected: false,
        lastError: 'decoder stalled on clip 3',
      },
    });
    await line.getByText('Online').waitFor({ timeout: 15_000 });
    t.pass('online, without a reload');
    t.match(await line.innerText(), /Android player 2\.4\.0/, 'the player in words');
    const facts = page.getByTestId('player-facts');
    await facts.waitFor();
    const text = await facts.innerText();
    t.match(text, /Display\s+1920 × 1080 pixels/);
    t.match(text, /Media on the device\s+12 files, 46 MB \(1 still downloading\)/);
    t.match(text, /Instant updates\s+not connected/);
    t.match(text, /Last problem\s+decoder stalled on clip 3/);
    t.equal(await page.locator('pre.json').isVisible(), false, 'the raw report is behind a disclosure');
    await page.getByText('Everything the player reported (for support)').click();
    t.match(await page.locator('pre.json').innerText(), /"decoder stalled on clip 3"/, 'and there when opened');
    t.equal(await page.getByRole('button', { name: 'Reboot' }).count(), 1, 'an Android player is offered a reboot');
    t.equal(await page.getByTestId('unsupported-commands').count(), 0, 'and nothing is marked unavailable');
    await checkA11y(page, t, 'live screen page');
    await snap(page, 'traps-screen-live-1280');
    // The same player says it runs only two commands: the page follows.
    await app.json('/api/v1/player/heartbeat', {
      method: 'POST',
      headers: tablet.headers,
      json: { playerFamily: 'android', supportedCommands: ['reload', 'screenshot'] },
    });
    await page.getByTestId('unsupported-commands').waitFor({ timeout: 15_000 });
    t.equal(await page.getByRole('button', { name: 'Reboot' }).count(), 0, 'no reboot once the player says it cannot');
    t.match(await page.getByTestId('unsupported-commands').innerText(), /Reboot: not available\. This screen’s player reports that it cannot run this command/);
  });

  await t.test('the library offline: the error, not the empty-library hint', async (t) => {
    await page.route('**/api/v1/assets?**', (route) => route.abort('connectionrefused'));
    await page.goto(`${app.url}/library`);
    await page.getByRole('alert').filter({ hasText: 'The server cannot be reached' }).first().waitFor();
    t.equal(await page.getByText('Nothing here yet').count(), 0, 'no “Nothing here yet” while the server cannot be reached');
    await page.unroute('**/api/v1/assets?**');
  });
  t.same(errors, [], 'no uncaught errors in the page');
});
