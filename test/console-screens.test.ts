import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { startApp } from './helpers/harness.js';
import { DESKTOP, enrolPasskey, enrolTotp, launchBrowser, PHONE, sessionHeaders, setUpOwner, snap } from './helpers/browser.js';
import { sampleMp4, samplePng } from './helpers/sample-media.js';
import { checkA11y } from './helpers/a11y.js';

const PLAYER_VIEW = { width: 960, height: 540 };

async function centreColour(page: Page): Promise<{ r: number; g: number; b: number }> {
  const png = await page.screenshot();
  const { data } = await sharp(png)
    .extract({
      left: Math.floor(PLAYER_VIEW.width * 0.3),
      top: Math.floor(PLAYER_VIEW.height * 0.15),
      width: Math.floor(PLAYER_VIEW.width * 0.1),
      height: Math.floor(PLAYER_VIEW.height * 0.1),
    })
    .resize(1, 1)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { r: data[0]!, g: data[1]!, b: data[2]! };
}
const isRed = (c: { r: number; g: number; b: number }) => c.r > 150 && c.g < 90 && c.b < 90;

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

t.test(
  'console end to end: a new owner sets up, enrols TOTP and a passkey, pairs a /play page by its code, uploads, makes a playlist, assigns it; the player shows the image, also with the server gone',
  async (t) => {
    const browser = await launchBrowser(t);
    if (!browser) return;
    const app = await startApp(t);
    // localhost: a secure context for the player's service worker and for passkeys.
    const base = app.url.replace('127.0.0.1', 'localhost');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-e2e-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const png = await samplePng(dir, 'welcome-red.png', { r: 220, g: 20, b: 30 }, 1280, 720);
    const mp4 = sampleMp4(app, dir, 'teaser.mp4');

    const consoleCtx = await browser.newContext({ viewport: DESKTOP });
    const page = await consoleCtx.newPage();
    const nav = page.getByRole('navigation', { name: 'Main' });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const playerCtx = await browser.newContext({ viewport: PLAYER_VIEW });
    const player = await playerCtx.newPage();
    t.teardown(async () => {
      if (t.passing()) return;
      await snap(page, 'failure-console-screens').catch(() => {});
      await snap(player, 'failure-console-screens-player', false).catch(() => {});
    });

    // A new owner: the setup form, then TOTP (code computed from the key shown) and a passkey
    // (Chromium's virtual authenticator), all through the UI. console-accounts covers the
    // refusals and the sign-in paths; this flow needs the enrolments to stand.
    await page.goto(`${base}/`);
    await setUpOwner(page, { name: 'Nora Newowner', email: 'nora@venue.example', password: 'a fresh owner passphrase' });
    await enrolTotp(page);
    await enrolPasskey(consoleCtx, page, 'Front desk laptop');
    const security = await app.json('/api/v1/me/security', { headers: await sessionHeaders(page) });
    t.equal(security.body.data.totpEnabled, true, 'TOTP is on for the new owner');
    t.same(
      security.body.data.passkeys.map((p: { name: string }) => p.name),
      ['Front desk laptop'],
      'the passkey is registered',
    );

    // The fleet is empty; the player shows a code.
    await page.goto(`${base}/screens`);
    await page.getByText('No screens yet').waitFor();
    await player.goto(`${base}/play`);
    const code = await until('pairing code', async () => {
      const text = (await player.getByTestId('pairing-code').textContent())?.trim() ?? '';
      return /^[A-Z0-9]{3}-?[A-Z0-9]{3}$/.test(text) ? text : undefined;
    });

    // Add screen: a wrong code is refused in place, the right one (typed in lower case) works.
    await page.getByRole('button', { name: 'Add screen' }).click();
    await page.getByLabel('Code shown on the screen').fill('zzz-zzz');
    await page.getByRole('button', { name: 'Find screen' }).click();
    t.match(await page.locator('form[aria-label="Pairing code"] [role=alert]').innerText(), /\S/, 'an unknown code is refused where it was typed');
    await page.getByLabel('Code shown on the screen').fill(code.toLowerCase());
    await page.getByRole('button', { name: 'Find screen' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Lobby left');
    // No location yet: the form offers to make one; this screen goes without (it runs in the server's zone).
    await page.getByLabel('Location', { exact: true }).selectOption('');
    await snap(page, 'screens-add-1280-light');
    await checkA11y(page, t, 'add screen');
    await page.getByRole('button', { name: 'Add screen' }).click();
    await page.getByRole('heading', { name: 'Lobby left' }).waitFor();
    t.pass('screen approved from the console; its page opens');

    // Screen detail: a command, and disable/enable.
    await page.getByRole('button', { name: 'Identify' }).click();
    await page.locator('li[data-command="identify"]').waitFor();
    t.pass('a command is queued and listed');
    await checkA11y(page, t, 'screen page');
    await page.getByRole('button', { name: 'Disable' }).click();
    const ask = page.locator('dialog.confirm-dialog');
    await ask.getByRole('heading', { name: 'Disable Lobby left?' }).waitFor();
    await checkA11y(page, t, 'disable confirmation');
    await ask.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();
    t.pass('disable (asked first) and enable');

    // Upload an image and a video with visible progress.
    await nav.getByRole('link', { name: 'Library' }).click();
    await page.getByTestId('file-input').setInputFiles([png, mp4]);
    await page.getByRole('list', { name: 'Uploads' }).locator('progress').nth(1).waitFor();
    t.equal(await page.getByRole('list', { name: 'Uploads' }).locator('progress').count(), 2, 'a progress bar per file');
    for (const name of ['welcome-red.png', 'teaser.mp4'])
      await page.locator(`li.asset-card[data-asset="${name}"][data-state="ready"]`).waitFor({ timeout: 90_000 });

    // A playlist with both, the image first.
    await nav.getByRole('link', { name: 'Playlists' }).click();
    await page.getByLabel('New playlist name').fill('Lobby loop');
    await page.getByRole('button', { name: 'Create playlist' }).click();
    await page.getByRole('heading', { name: 'Lobby loop' }).waitFor();
    await page.getByRole('button', { name: 'Add teaser.mp4' }).click();
    await page.locator('ol.playlist-items li[data-item="teaser.mp4"]').waitFor();
    await page.getByRole('button', { name: 'Add welcome-red.png' }).click();
    await page.locator('ol.playlist-items li[data-item="welcome-red.png"]').waitFor();
    await page.getByRole('button', { name: 'Move welcome-red.png up' }).click();
    await page.waitForFunction(() => (globalThis as any).document.querySelector('ol.playlist-items li')?.dataset.item === 'welcome-red.png');
    t.pass('reordered with the keyboard-reachable move buttons');
    await page.getByLabel('Seconds for welcome-red.png').fill('30');
    await page.getByLabel('Seconds for welcome-red.png').press('Enter');
    await page.locator('ol.playlist-items li[data-item="welcome-red.png"] input[name="seconds"][value="30"]').waitFor();
    await checkA11y(page, t, 'playlist');
    await snap(page, 'playlist-1280-light');

    // Assign it on the screen's page.
    await nav.getByRole('link', { name: 'Screens' }).click();
    await page.getByRole('link', { name: 'Lobby left' }).click();
    await page.getByLabel('Default playlist').selectOption({ label: 'Lobby loop' });
    await page.getByText('Saved; the screen picks it up').waitFor();
    await snap(page, 'screen-detail-1280-light');

    // The player shows the image: checked on the pixels.
    await until('the red image on the player', async () => isRed(await centreColour(player)), 60_000);
    t.pass('the player shows the image (screenshot pixels)');
    await snap(player, 'e2e-player-image', false);

    // A screenshot command from the screen's page: its result is shown as an image, the picture the player drew.
    await page.getByRole('button', { name: 'Dismiss' }).click(); // the "Default playlist changed" toast (it would sit over the image)
    await page.getByRole('button', { name: 'Take screenshot' }).click();
    const shot = page.locator('li[data-command="screenshot"][data-state="succeeded"] img.screenshot');
    await shot.waitFor({ timeout: 30_000 });
    await page.waitForFunction((el) => (el as any).complete && (el as any).naturalWidth > 0, await shot.elementHandle());
    t.equal(await shot.evaluate((el: any) => el.naturalWidth), PLAYER_VIEW.width, 'the screenshot is shown, at the screen’s width');
    const shotPng = await shot.screenshot();
    const { data: shotPixel } = await sharp(shotPng).resize(1, 1).raw().toBuffer({ resolveWithObject: true });
    t.ok(isRed({ r: shotPixel[0]!, g: shotPixel[1]!, b: shotPixel[2]! }), 'the screenshot shows the red image');

    // The fleet page shows it online, with its player.
    await nav.getByRole('link', { name: 'Screens' }).click();
    await page.locator('tr[data-screen="Lobby left"] [data-status="online"]').waitFor({ timeout: 30_000 });
    t.pass('the fleet page shows the screen online');
    // "Showing": what the player reported (its playback ids), named by the server; not the plan's guess.
    const showing = page.locator('tr[data-screen="Lobby left"] .now-showing[data-planned="false"]');
    await showing.waitFor({ timeout: 45_000 });
    t.match(await showing.innerText(), /(welcome-red\.png|teaser\.mp4) · Lobby loop/, 'the fleet shows the reported asset and playlist by name');
    await snap(page, 'screens-1280-light');
    await checkA11y(page, t, 'screens (light)');
    await page.emulateMedia({ colorScheme: 'dark' });
    await snap(page, 'screens-1280-dark');
    await checkA11y(page, t, 'screens (dark)');
    await page.setViewportSize(PHONE);
    await snap(page, 'screens-390-dark');
    await checkA11y(page, t, 'screens (phone, dark)');
    const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
    t.ok(width <= PHONE.width, `fleet page: no sideways scrolling at phone width (${width}px)`);
    await page.setViewportSize(DESKTOP);
    await page.emulateMedia({ colorScheme: 'light' });

    // The server stops: the player keeps showing the image from its cache.
    await app.server.close(500);
    await new Promise((r) => setTimeout(r, 5000));
    t.ok(isRed(await centreColour(player)), 'still showing the image with the server stopped');
    await snap(player, 'e2e-player-offline', false);
    t.same(errors, [], 'no uncaught errors in the console page');
  },
);
