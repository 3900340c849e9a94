import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { startApp } from './helpers/harness.js';
import { DESKTOP, launchBrowser, PHONE, signedInContext, snap } from './helpers/browser.js';
import { sampleJunk, sampleMp4, samplePng } from './helpers/sample-media.js';
import { checkA11y } from './helpers/a11y.js';
import { writeFileSync } from 'node:fs';

t.test(
  'library: multi-file upload with progress, a real drop on the drop zone, processing, thumbnails, video and website previews, organise, archive',
  async (t) => {
    const browser = await launchBrowser(t);
    if (!browser) return;
    const app = await startApp(t);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-media-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const png = await samplePng(dir, 'poster-red.png');
    const mp4 = sampleMp4(app, dir, 'intro-clip.mp4');
    const context = await browser.newContext({ viewport: DESKTOP });
    await signedInContext(app, context, app.url);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    t.teardown(async () => {
      if (!t.passing()) await snap(page, 'failure-console-library').catch(() => {});
    });

    await page.goto(`${app.url}/library`);
    await page.getByRole('heading', { name: 'Library' }).waitFor();
    await page.getByText('Nothing here yet').waitFor();
    await checkA11y(page, t, 'library (empty)');

    // Both files at once: a progress bar each, then processing, then ready with a thumbnail.
    await page.getByTestId('file-input').setInputFiles([png, mp4]);
    const bars = page.getByRole('list', { name: 'Uploads' }).locator('progress');
    await bars.nth(1).waitFor(); // the files are checked (type, size) before they go
    t.equal(await bars.count(), 2, 'one progress bar per file');
    for (const name of ['poster-red.png', 'intro-clip.mp4']) {
      await page.locator(`li[data-upload="${name}"][data-state="done"]`).waitFor({ timeout: 60_000 });
      const max = await page
        .locator(`li[data-upload="${name}"] progress`)
        .evaluate((el) => (el as unknown as { value: number; max: number }).value / (el as unknown as { max: number }).max);
      t.equal(max, 1, `${name}: the bar is full`);
    }
    for (const name of ['poster-red.png', 'intro-clip.mp4']) {
      await page.locator(`li.asset-card[data-asset="${name}"][data-state="ready"]`).waitFor({ timeout: 90_000 });
      const img = page.locator(`li.asset-card[data-asset="${name}"] img`);
      await img.waitFor();
      await page.waitForFunction(
        (el) => (el as unknown as { complete: boolean; naturalWidth: number }).complete && (el as unknown as { naturalWidth: number }).naturalWidth > 0,
        await img.elementHandle(),
      );
      t.pass(`${name}: processed, thumbnail shown`);
    }
    // Drag and drop: a real drop event carrying a DataTransfer built in the page with a file in it.
    const dropped = readFileSync(await samplePng(dir, 'dropped-green.png', { r: 20, g: 200, b: 40 }));
    const zone = page.locator('.dropzone');
    const over = await zone.evaluate(async (el: any, b64: string) => {
      const w = globalThis as any;
      const bytes = Uint8Array.from(w.atob(b64), (c: string) => c.charCodeAt(0));
      const dt = new w.DataTransfer();
      dt.items.add(new w.File([bytes], 'dropped-green.png', { type: 'image/png' }));
      el.dispatchEvent(new w.DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      await new Promise((r) => w.requestAnimationFrame(r));
      const highlighted = el.classList.contains('over');
      el.dispatchEvent(new w.DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
      return highlighted;
    }, dropped.toString('base64'));
    t.ok(over, 'the drop zone lights up while a file is over it');
    await page.locator('li[data-upload="dropped-green.png"] progress').waitFor();
    t.pass('the dropped file gets its own progress bar');
    await page.locator('li.asset-card[data-asset="dropped-green.png"][data-state="ready"]').waitFor({ timeout: 60_000 });
    t.equal(await zone.evaluate((el: any) => el.classList.contains('over')), false, 'the highlight goes after the drop');
    await snap(page, 'library-1280-light');
    await checkA11y(page, t, 'library with uploads');

    // The video's preview plays from the server (metadata loaded, the picture has a size).
    await page.getByRole('button', { name: 'Open intro-clip.mp4' }).click();
    const video = page.getByRole('dialog').locator('video');
    await video.waitFor();
    await page.waitForFunction((el) => (el as any).readyState >= 1 && (el as any).videoWidth > 0, await video.elementHandle());
    t.equal(await video.evaluate((el: any) => el.videoWidth), 320, 'the video preview loads (its width from the file)');
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();

    // Open the image: preview and rename.
    await page.getByRole('button', { name: 'Open poster-red.png' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('img', { name: 'poster-red.png' }).waitFor();
    await dialog.getByLabel('Name').fill('Red poster');
    await dialog.getByLabel('Tags (comma-separated)').fill('lobby, promo');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('heading', { name: 'Red poster' }).waitFor();
    await snap(page, 'library-dialog-1280-light');
    await checkA11y(page, t, 'asset dialog');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await page.locator('li.asset-card[data-asset="Red poster"]').waitFor();

    // Search and tag filter.
    await page.getByLabel('Search the library').fill('intro');
    await page.locator('li.asset-card[data-asset="Red poster"]').waitFor({ state: 'detached' });
    t.equal(await page.locator('li.asset-card').count(), 1, 'search narrows the grid');
    await page.getByLabel('Search the library').fill('');
    await page.getByLabel('Tag', { exact: true }).selectOption('lobby');
    await page.locator('li.asset-card[data-asset="intro-clip.mp4"]').waitFor({ state: 'detached' });
    t.equal(await page.locator('li.asset-card').count(), 1, 'the tag filter narrows the grid');
    await page.getByLabel('Tag', { exact: true }).selectOption('');

    // A folder, and bulk move + archive.
    await page.getByText('New folder').click();
    await page.getByLabel('Folder name').fill('Lobby');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByLabel('Folder', { exact: true }).locator('option', { hasText: 'Lobby' }).waitFor({ state: 'attached' });
    await page.getByLabel('Select intro-clip.mp4').check();
    await page.getByLabel('Select Red poster').check();
    await page.getByText('2 selected').waitFor();
    const lobby = await page.getByLabel('Move selected to folder').locator('option', { hasText: 'Lobby' }).getAttribute('value');
    await page.getByLabel('Move selected to folder').selectOption(lobby!);
    await page.getByText('2 selected').waitFor({ state: 'detached' });
    await page.getByLabel('Folder', { exact: true }).selectOption(lobby!);
    // The grid of all assets stays until the folder's answer arrives: wait for the one left out to go.
    await page.locator('li.asset-card[data-asset="dropped-green.png"]').waitFor({ state: 'detached' });
    t.same(
      await page.locator('li.asset-card').evaluateAll((lis) => lis.map((li: any) => li.dataset.asset as string).sort()),
      ['Red poster', 'intro-clip.mp4'],
      'both moved into the folder',
    );
    await page.getByLabel('Select intro-clip.mp4').check();
    await page.getByRole('button', { name: 'Archive' }).click();
    // Asked first (nothing shows it: no screen, no playlist); Cancel keeps the selection.
    const ask = page.locator('dialog.confirm-dialog');
    await ask.getByRole('heading', { name: 'Archive 1 item?' }).waitFor();
    await ask.getByTestId('no-screens').waitFor();
    await ask.getByRole('button', { name: 'Cancel' }).click();
    t.ok(await page.getByLabel('Select intro-clip.mp4').isChecked(), 'cancelled: still selected, not archived');
    await page.getByRole('button', { name: 'Archive' }).click();
    await ask.getByRole('button', { name: 'Archive' }).click();
    await page.locator('li.asset-card[data-asset="intro-clip.mp4"]').waitFor({ state: 'detached' });
    await page.getByLabel('Archive', { exact: true }).selectOption('only');
    await page.locator('li.asset-card[data-asset="intro-clip.mp4"]').waitFor();
    t.pass('archived assets are listed under Archived');
    await page.getByLabel('Archive', { exact: true }).selectOption('exclude');

    // A website: a non-web address is refused on the form; a web address becomes an asset.
    await page.getByText('Add a website').click();
    await page.getByLabel('Website address').fill('ftp://files.example.com/menu');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    t.match(await page.locator('form[aria-label="Add a website"] [role=alert]').innerText(), /\S/, 'a non-http address is refused on the form');
    // The dashboard is a page of a local fake site, so its preview really renders.
    const site = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Sales</title><h1>Sales this week</h1>'),
    );
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise<void>((r) => site.close(() => r())));
    const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/sales`;
    await page.getByLabel('Website address').fill(siteUrl);
    await page.getByLabel('Website name').fill('Sales dashboard');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.locator('li.asset-card[data-asset="Sales dashboard"]').waitFor();
    t.pass('a website is added to the library');
    await page.getByRole('button', { name: 'Open Sales dashboard' }).click();
    const frame = page.getByRole('dialog').locator('iframe');
    t.equal(await frame.getAttribute('src'), siteUrl, 'the website preview frames its address');
    t.equal(await frame.getAttribute('sandbox'), 'allow-scripts allow-same-origin', 'in a sandbox (no top navigation, no forms)');
    await page.frameLocator('dialog iframe').getByRole('heading', { name: 'Sales this week' }).waitFor();
    t.pass('the framed page renders in the preview');
    await snap(page, 'library-website-preview-1280-light');
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();

    // An unsupported file: refused on its row before any byte is sent, with no Retry.
    const junk = sampleJunk(dir, 'notes.bin', 4096);
    await page.getByTestId('file-input').setInputFiles([junk]);
    const row = page.locator('li[data-upload="notes.bin"][data-state="refused"]');
    await row.waitFor({ timeout: 30_000 });
    t.match(await row.getByRole('alert').innerText(), /cannot go in the library/, 'the refusal is explained on the upload row');
    t.equal(await row.getByRole('button', { name: 'Retry' }).count(), 0, 'no Retry for a refusal');

    await page.emulateMedia({ colorScheme: 'dark' });
    await page.getByLabel('Folder', { exact: true }).selectOption('');
    await page.locator('li.asset-card[data-asset="Red poster"]').waitFor();
    await snap(page, 'library-1280-dark');
    await page.setViewportSize(PHONE);
    await snap(page, 'library-390-dark');
    const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
    t.ok(width <= PHONE.width, `no sideways scrolling at phone width (${width}px)`);
    t.same(errors, [], 'no uncaught errors in the page');
    await context.close();
  },
);

t.test('library: an upload interrupted by a page reload resumes from the server offset', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-media-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A PNG's first bytes (so the console lets it go, as the server's sniffer would) over junk (so processing fails after the upload).
  const big = path.join(dir, 'big-upload.png');
  writeFileSync(
    big,
    Buffer.concat([
      Buffer.from('89504e470d0a1a0a0000000d49484452000000100000001008060000001ff3ff61', 'hex'),
      readFileSync(sampleJunk(dir, 'junk.bin', 24 * 1024 * 1024)),
    ]),
  );
  const context = await browser.newContext({ viewport: DESKTOP });
  await signedInContext(app, context, app.url);
  const page: Page = await context.newPage();
  let creations = 0;
  let resumedAt = -1;
  let reloaded = false;
  page.on('request', (req) => {
    const u = new URL(req.url());
    if (req.method() === 'POST' && u.pathname === '/api/v1/uploads') creations++;
    if (reloaded && req.method() === 'PATCH' && resumedAt < 0) resumedAt = Number(req.headers()['upload-offset'] ?? -1);
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  // Slow the upload so a reload lands in the middle of it.
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 3 * 1024 * 1024 });
  await page.goto(`${app.url}/library`);
  await page.getByTestId('file-input').setInputFiles([big]);
  const row = page.locator('li[data-upload="big-upload.png"]');
  await page.waitForFunction(
    () => {
      const bar = (globalThis as any).document.querySelector('li[data-upload="big-upload.png"] progress');
      return bar && bar.value > 0 && bar.value / bar.max > 0.2;
    },
    undefined,
    { timeout: 60_000 },
  );
  await page.reload();
  reloaded = true;
  await page.getByText(/Unfinished uploads from before: big-upload\.png/).waitFor();
  t.pass('the unfinished upload is remembered across the reload');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
  await page.getByTestId('file-input').setInputFiles([big]);
  await row.locator('.badge', { hasText: 'resumed' }).waitFor();
  t.pass('choosing the same file resumes the upload');
  // The upload completes; the junk behind the PNG header fails processing, and the library says so on the card.
  await page.locator('li[data-upload="big-upload.png"][data-state="done"]').waitFor({ timeout: 60_000 });
  await page.locator('li.asset-card[data-asset="big-upload.png"][data-state="failed"]').waitFor({ timeout: 60_000 });
  t.equal(creations, 1, 'the resumed upload reused the first one (no second upload was created)');
  t.ok(resumedAt > 0, `the resumed PATCH started past zero (offset ${resumedAt})`);
  await context.close();
});
