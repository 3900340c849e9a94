/**
 * The café owner's whole journey as a person clicks it (issue 16), at 1366×768 and on a
 * phone (390×844): setup, a location in Paris made while pairing a /play screen, uploads
 * (one refused before a byte is sent), a website typed without https://, a playlist
 * previewed in the console, a schedule in Paris time, the screen showing it (pixels), the
 * live screen page, archive with its confirmation and Undo. Then the same main path with
 * the keyboard only. axe-core checks every page on the way; screenshots land in
 * test/artifacts/journey-*.png.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { startApp } from './helpers/harness.js';
import { checkA11y } from './helpers/a11y.js';
import { colourAt, dominant, launchBrowser, PHONE, setUpOwner, signedInContext, snap, waitUntil } from './helpers/browser.js';
import { sampleJunk, sampleMp4, samplePng } from './helpers/sample-media.js';
import { settleDefaultTimeZone } from '../server/src/modules/system/settings.js';

const LAPTOP = { width: 1366, height: 768 };
const PLAYER_VIEW = { width: 960, height: 540 };

/** No sideways scrolling: the page fits its viewport. */
async function fits(page: Page): Promise<number> {
  return page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
}

t.test('the café journey, clicked as a person would, at 1366×768 and 390×844', async (t) => {
  t.setTimeout(420_000);
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  // A box in Paris, first start: the server's default zone is the box's.
  await settleDefaultTimeZone(app.deps.db, 'Europe/Paris');
  const base = app.url.replace('127.0.0.1', 'localhost');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-journey-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const png = await samplePng(dir, 'croissant-red.png', { r: 220, g: 20, b: 30 }, 1280, 720);
  const mp4 = sampleMp4(app, dir, 'coffee-pour.mp4');
  const junk = sampleJunk(dir, 'menu-notes.docx', 8192);

  const ctx = await browser.newContext({ viewport: LAPTOP, timezoneId: 'Europe/Paris', locale: 'en-GB' });
  const page = await ctx.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const uploadsCreated: string[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === '/api/v1/uploads') uploadsCreated.push(decodeURIComponent(r.headers()['upload-metadata'] ?? ''));
  });
  const notFound: string[] = [];
  page.on('response', (r) => {
    if (r.status() === 404 && new URL(r.url()).pathname.startsWith('/api/')) notFound.push(new URL(r.url()).pathname);
  });
  const playerCtx = await browser.newContext({ viewport: PLAYER_VIEW });
  const player = await playerCtx.newPage();
  t.teardown(async () => {
    if (t.passing()) return;
    await snap(page, 'failure-console-journey').catch(() => {});
    await snap(player, 'failure-console-journey-player', false).catch(() => {});
  });
  const nav = page.getByRole('navigation', { name: 'Main' });

  // 1. The owner sets up the server.
  await page.goto(`${base}/`);
  await checkA11y(page, t, 'setup');
  await setUpOwner(page, { name: 'Camille', email: 'camille@cafe.example', password: 'croissants at seven' });
  await checkA11y(page, t, 'overview');
  await snap(page, 'journey-01-overview-1366');

  // 2. A /play page shows a code; the owner adds it, making the café's location on the way.
  await player.goto(`${base}/play`);
  const code = await waitUntil('pairing code', async () => {
    const text = (await player.getByTestId('pairing-code').textContent())?.trim() ?? '';
    return /^[A-Z0-9]{3}-?[A-Z0-9]{3}$/.test(text) ? text : undefined;
  });
  await nav.getByRole('link', { name: 'Screens' }).click();
  await page.getByText('No screens yet').waitFor();
  await checkA11y(page, t, 'screens (empty)');
  await page.getByRole('button', { name: 'Add screen' }).first().click();
  await checkA11y(page, t, 'add screen');
  await page.getByLabel('Code shown on the screen').fill(code);
  await page.getByRole('button', { name: 'Find screen' }).click();
  const nameField = page.getByLabel('Name', { exact: true });
  await nameField.waitFor();
  const suggested = await nameField.inputValue();
  t.equal(suggested, 'Screen 1', `the name starts as “Screen 1”, not the pairing code or a user agent (${suggested})`);
  t.equal(await page.getByLabel('Location', { exact: true }).inputValue(), 'new', 'no location yet: the form offers to make one');
  await nameField.fill('Counter');
  await page.getByLabel('Location name').fill('Café Rivoli');
  t.equal(await page.getByLabel('Its time zone').inputValue(), 'Europe/Paris', 'the new location starts in the server’s zone (the box’s)');
  await checkA11y(page, t, 'approve screen with a new location');
  await snap(page, 'journey-02-add-screen-1366');
  await page.getByRole('button', { name: 'Add screen' }).click();
  await page.getByRole('heading', { name: 'Counter' }).waitFor();
  await page.getByText('Runs in Paris time (Europe/Paris) (its location’s)').waitFor();
  t.pass('the screen is in Café Rivoli, running in Paris time');
  const screenUrl = page.url();
  await checkA11y(page, t, 'screen page (new)');

  // 3. Uploads: a picture and a video; a Word file is refused before any byte is sent.
  await nav.getByRole('link', { name: 'Library' }).click();
  await page.getByText('Nothing here yet').waitFor();
  await checkA11y(page, t, 'library (empty)');
  await page.getByTestId('file-input').setInputFiles([png, mp4, junk]);
  const refused = page.locator('li[data-upload="menu-notes.docx"][data-state="refused"]');
  await refused.waitFor();
  t.match(await refused.getByRole('alert').innerText(), /cannot go in the library/, 'the refusal says why');
  t.equal(await refused.getByRole('button', { name: /Retry|Resume/ }).count(), 0, 'a refused upload offers no Retry');
  for (const name of ['croissant-red.png', 'coffee-pour.mp4'])
    await page.locator(`li.asset-card[data-asset="${name}"][data-state="ready"]`).waitFor({ timeout: 90_000 });
  t.notOk(
    uploadsCreated.some((m) => m.includes(Buffer.from('menu-notes.docx').toString('base64'))),
    'no upload was even created for the refused file',
  );
  t.equal(uploadsCreated.length, 2, 'two uploads went to the server');

  // A website typed as people type it.
  await page.getByText('Add a website').click();
  await page.getByLabel('Website address').fill('example.com/menu');
  await page.getByLabel('Website name').fill('Menu online');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page.locator('li.asset-card[data-asset="Menu online"]').waitFor();
  await page.getByText('Added Menu online (https://example.com/menu).').waitFor();
  t.pass('example.com/menu became https://example.com/menu');
  // Its thumbnail (a card: the test machine reaches no website) arrives without a reload.
  await page.locator('li.asset-card[data-asset="Menu online"] img').waitFor({ timeout: 30_000 });
  await checkA11y(page, t, 'library with media');
  await snap(page, 'journey-03-library-1366');

  // 4. A playlist with both, previewed in the console.
  await nav.getByRole('link', { name: 'Playlists' }).click();
  await checkA11y(page, t, 'playlists');
  await page.getByLabel('New playlist name').fill('Café loop');
  await page.getByRole('button', { name: 'Create playlist' }).click();
  await page.getByRole('heading', { name: 'Café loop' }).waitFor();
  await page.getByRole('button', { name: 'Add croissant-red.png' }).click();
  await page.locator('ol.playlist-items li[data-item="croissant-red.png"]').waitFor();
  await page.getByRole('button', { name: 'Add coffee-pour.mp4' }).click();
  await page.locator('ol.playlist-items li[data-item="coffee-pour.mp4"]').waitFor();
  t.notOk(await page.getByText(/revision \d/).count(), 'no “revision N” on the page');
  await page.getByText('Preview: play it here').click();
  const stage = page.getByTestId('player-stage');
  await stage.locator('img').waitFor();
  t.equal(await stage.getAttribute('data-item'), 'croissant-red.png', 'the preview plays the first item');
  await page.getByRole('button', { name: 'Next item' }).click();
  await stage.locator('video').waitFor();
  t.equal(await stage.getAttribute('data-item'), 'coffee-pour.mp4', 'and the next');
  await checkA11y(page, t, 'playlist with preview');
  await snap(page, 'journey-04-playlist-1366');

  // 5. A schedule, said in Paris time next to the times.
  await page.getByRole('button', { name: 'Schedule it' }).click();
  await page.getByRole('heading', { name: 'Schedules' }).waitFor();
  const form = page.getByRole('form', { name: 'New schedule' });
  await form.getByLabel('Name').fill('Breakfast');
  await form.getByLabel('Counter').check();
  await form.getByTestId('zone-note').getByText('Paris time (Europe/Paris)').waitFor();
  t.equal(await form.getByTestId('zone-warning').count(), 0, 'no warning: this browser is in Paris too');
  await form.getByLabel('Repeats').selectOption('daily');
  await checkA11y(page, t, 'schedules with the form');
  await snap(page, 'journey-05-schedule-form-1366');
  await form.getByRole('button', { name: 'Create schedule' }).click();
  await page.locator('tr[data-schedule="Breakfast"]').waitFor();
  t.match(await page.locator('tr[data-schedule="Breakfast"] [data-testid="next"]').innerText(), /on now/, 'on now, not a time in the past');

  // 6. The screen shows it (pixels), and its page follows live.
  await waitUntil('the croissant on the screen', async () => dominant(await colourAt(player, 0.3, 0.2)) === 'red', 90_000);
  t.pass('the /play screen shows the picture');
  await snap(player, 'journey-06-player', false);
  await page.goto(screenUrl);
  const now = page.getByTestId('now-card');
  await now.locator('.now-showing[data-planned="false"]').waitFor({ timeout: 60_000 });
  t.match(
    await now.innerText(),
    /(croissant-red\.png|coffee-pour\.mp4) · Café loop/,
    'the screen page says what it shows, reported by the player, without a reload',
  );
  await now.locator('img.now-thumb').first().waitFor();
  t.match(await page.getByTestId('player-facts').innerText(), /Display\s+960 × 540 pixels/, 'the player details read as words');
  t.equal(await page.getByRole('button', { name: 'Reboot' }).count(), 0, 'a web player is not offered a reboot');
  t.match(await page.getByTestId('unsupported-commands').innerText(), /Reboot: not available\. A web browser player cannot restart the machine/);
  await page.getByRole('button', { name: 'Take screenshot' }).click();
  await page.getByTestId('last-screenshot').waitFor({ timeout: 45_000 });
  t.pass('the last screenshot appears on the live page');
  await checkA11y(page, t, 'screen page (playing)');
  await snap(page, 'journey-07-screen-1366');
  await nav.getByRole('link', { name: 'Screens' }).click();
  await page.locator('tr[data-screen="Counter"] img.screen-thumb').waitFor();
  await checkA11y(page, t, 'screens list');
  await snap(page, 'journey-08-screens-1366');

  // 7. Archive the picture: asked first, naming the screen and the playlist; then Undo.
  await nav.getByRole('link', { name: 'Library' }).click();
  await page.getByRole('button', { name: 'Open croissant-red.png' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Archive' }).click();
  const confirm = page.locator('dialog.confirm-dialog');
  await confirm.getByRole('heading', { name: 'Archive “croissant-red.png”?' }).waitFor();
  await confirm.locator('[data-impact-screen="Counter"]').waitFor();
  t.equal(
    await confirm.getByRole('link', { name: 'Counter' }).getAttribute('href'),
    screenUrl.replace(base, ''),
    'the confirmation links the screen showing it',
  );
  t.equal(await confirm.getByRole('link', { name: 'Café loop' }).count(), 1, 'and the playlist it is in');
  await checkA11y(page, t, 'archive confirmation');
  await snap(page, 'journey-09-archive-confirm-1366', false);
  await confirm.getByRole('button', { name: 'Archive' }).click();
  await page.locator('li.asset-card[data-asset="croissant-red.png"]').waitFor({ state: 'detached' });
  const toast = page.getByTestId('toast').filter({ hasText: 'Archived “croissant-red.png”.' });
  await snap(page, 'journey-10-archived-toast-1366', false);
  await toast.getByRole('button', { name: 'Undo' }).click();
  await page.locator('li.asset-card[data-asset="croissant-red.png"][data-state="ready"]').waitFor();
  t.pass('Undo put it back');

  // 8. On a phone: the menu button, and every page fits.
  await page.setViewportSize(PHONE);
  await page.goto(`${base}/`);
  const menu = page.getByRole('button', { name: 'Menu' });
  await menu.waitFor();
  t.equal(await nav.getByRole('link', { name: 'Library' }).isVisible(), false, 'the links are folded away');
  await snap(page, 'journey-11-overview-390', false);
  await menu.click();
  t.equal(await menu.getAttribute('aria-expanded'), 'true');
  await snap(page, 'journey-12-menu-open-390', false);
  await nav.getByRole('link', { name: 'Screens' }).click();
  await page.locator('tr[data-screen="Counter"]').waitFor();
  t.equal(await nav.getByRole('link', { name: 'Library' }).isVisible(), false, 'the menu closes on the way');
  for (const [where, file] of [
    ['/screens', 'screens'],
    [screenUrl.replace(base, ''), 'screen'],
    ['/library', 'library'],
    ['/playlists', 'playlists'],
    ['/schedules', 'schedules'],
    ['/layouts', 'layouts'],
    ['/locations', 'locations'],
  ] as const) {
    await page.goto(base + where);
    await page.locator('main h1').first().waitFor();
    await page.waitForLoadState('networkidle').catch(() => {});
    const w = await fits(page);
    t.ok(w <= PHONE.width, `${where}: no sideways scrolling at 390 px (${w}px)`);
    await checkA11y(page, t, `${where} at 390 px`);
    await snap(page, `journey-13-${file}-390`);
  }
  t.same(
    notFound.filter((p) => p.includes('/thumbnail')),
    [],
    'no thumbnail answered 404 on the way',
  );
  t.same(errors, [], 'no uncaught errors in the console page');
});

/** Presses Tab until the focused element's accessible text matches, like a keyboard user looking for it. */
async function tabTo(page: Page, name: RegExp, max = 80, back = false): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    const label = await page.evaluate(() => {
      const el = (globalThis as any).document.activeElement;
      if (!el) return '';
      // Its accessible name, roughly: aria-label, else its label, else its text (links, buttons), else its placeholder.
      const text = el.tagName === 'SELECT' || el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' ? '' : el.textContent;
      return (el.getAttribute('aria-label') || el.labels?.[0]?.textContent || text || el.getAttribute('placeholder') || '').trim();
    });
    if (name.test(label)) return;
  }
  throw new Error(`Tab never reached ${name}`);
}

t.test('the main journey with the keyboard only: playlist, item, schedule, archive with its confirmation, undo', async (t) => {
  t.setTimeout(240_000);
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  await settleDefaultTimeZone(app.deps.db, 'Europe/Paris');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-keys-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const ctx = await browser.newContext({ viewport: LAPTOP, timezoneId: 'Europe/Paris' });
  const owner = await signedInContext(app, ctx, app.url);
  const loc = (await app.json('/api/v1/locations', { method: 'POST', headers: owner.headers, json: { name: 'Café Rivoli', timeZone: 'Europe/Paris' } })).body
    .data;
  const { pairScreen } = await import('./helpers/screens.js');
  await pairScreen(app, owner, { name: 'Window', locationId: loc.id });
  const page = await ctx.newPage();
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-journey-keyboard').catch(() => {});
  });
  // The picture arrives by the same upload path (the file chooser is the one step a keyboard hands to the system dialog).
  await page.goto(`${app.url}/library`);
  await page.getByTestId('file-input').setInputFiles([await samplePng(dir, 'tart-green.png', { r: 20, g: 190, b: 40 })]);
  await page.locator('li.asset-card[data-asset="tart-green.png"][data-state="ready"]').waitFor({ timeout: 60_000 });

  await page.goto(`${app.url}/`);
  await page.getByRole('heading', { name: /Hello/ }).waitFor();
  // The skip link comes first.
  await page.keyboard.press('Tab');
  t.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent), 'Skip to content', 'the first Tab reaches the skip link');
  await tabTo(page, /^Playlists$/);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Playlists' }).waitFor();
  await tabTo(page, /New playlist name/);
  await page.keyboard.type('Afternoon');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Afternoon' }).waitFor();
  await tabTo(page, /Add tart-green\.png/);
  await page.keyboard.press('Enter');
  await page.locator('ol.playlist-items li[data-item="tart-green.png"]').waitFor();
  t.pass('a playlist and its item, by keyboard');
  // The item's switch: Space turns it off, and it says so.
  await tabTo(page, /tart-green\.png plays/);
  await page.keyboard.press('Space');
  await page.locator('ol.playlist-items li[data-item="tart-green.png"] .badge', { hasText: 'skipped' }).waitFor();
  await page.keyboard.press('Space');
  await page.locator('ol.playlist-items li[data-item="tart-green.png"] .badge', { hasText: 'skipped' }).waitFor({ state: 'detached' });
  t.pass('the item switch works from the keyboard and shows its state');
  await tabTo(page, /Schedule it/, 80, true);
  await page.keyboard.press('Enter');
  await page.getByRole('form', { name: 'New schedule' }).waitFor();
  await tabTo(page, /^Name/);
  await page.keyboard.type('Afternoon tea');
  await tabTo(page, /^Window$/);
  await page.keyboard.press('Space');
  await tabTo(page, /Create schedule/);
  await page.keyboard.press('Enter');
  await page.locator('tr[data-schedule="Afternoon tea"]').waitFor();
  t.pass('a schedule made with the keyboard');
  // Pause asks first: the dialog opens on Cancel; Tab to Pause, Enter.
  await tabTo(page, /Pause Afternoon tea/);
  await page.keyboard.press('Enter');
  const dialog = page.locator('dialog.confirm-dialog');
  await dialog.waitFor();
  t.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent), 'Cancel', 'the confirmation opens with Cancel focused');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  t.equal(await page.locator('tr[data-schedule="Afternoon tea"].disabled').count(), 0, 'Escape cancels: still running');

  // Archive from the library, with the keyboard: open, Archive, confirm, then Undo.
  await tabTo(page, /^Library$/, 120, true);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Library' }).waitFor();
  await tabTo(page, /Open tart-green\.png/);
  await page.keyboard.press('Enter');
  await page.getByRole('dialog').getByRole('heading', { name: 'tart-green.png' }).waitFor();
  await tabTo(page, /^Archive$/);
  await page.keyboard.press('Enter');
  await dialog.getByRole('heading', { name: /Archive/ }).waitFor();
  await dialog.getByRole('link', { name: 'Afternoon' }).waitFor();
  await page.keyboard.press('Tab'); // from Cancel to Archive
  await page.keyboard.press('Enter');
  await page.locator('li.asset-card[data-asset="tart-green.png"]').waitFor({ state: 'detached' });
  await tabTo(page, /^Undo$/, 200);
  await page.keyboard.press('Enter');
  await page.locator('li.asset-card[data-asset="tart-green.png"][data-state="ready"]').waitFor();
  t.pass('archived and restored with the keyboard only');
  await checkA11y(page, t, 'library after keyboard use');
});
