import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import { checkA11y } from './helpers/a11y.js';
import { alertText, CHROMIUM, CHROMIUM_ARGS, DESKTOP, launchBrowser, PHONE, pairPlayPage, signedInContext, snap, waitUntil } from './helpers/browser.js';
import { startApp, type TestApp } from './helpers/harness.js';
import { type PairedScreen, pairScreen } from './helpers/screens.js';
import { screenNum } from './helpers/noise.js';
import { settledAsset, uploadAsset } from './helpers/media.js';

/** The average colour of a small square at the centre of `selector`'s box, from a real screenshot. */
async function colourIn(page: Page, selector: string) {
  const { default: sharp } = await import('sharp');
  await page.locator(selector).first().scrollIntoViewIfNeeded();
  const box = (await page.locator(selector).first().boundingBox())!;
  const size = Math.max(2, Math.min(8, Math.floor(box.height / 2), Math.floor(box.width / 2)));
  const png = await page.screenshot({ clip: { x: box.x + box.width / 2 - size / 2, y: box.y + box.height / 2 - size / 2, width: size, height: size } });
  const { data } = await sharp(png).resize(1, 1).raw().toBuffer({ resolveWithObject: true });
  return { r: data[0]!, g: data[1]!, b: data[2]! };
}

/** A mono 16-bit WAV of a 440 Hz tone at `amplitude` (0..1): the fake microphone's sound. */
function toneWav(file: string, seconds: number, amplitude: number): void {
  const rate = 16_000;
  const n = rate * seconds;
  const b = Buffer.alloc(44 + n * 2);
  b.write('RIFF', 0);
  b.writeUInt32LE(36 + n * 2, 4);
  b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22); // mono
  b.writeUInt32LE(rate, 24);
  b.writeUInt32LE(rate * 2, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36);
  b.writeUInt32LE(n * 2, 40);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / rate) * amplitude * 32_767), 44 + i * 2);
  writeFileSync(file, b);
}

const heartbeat = (app: TestApp, s: PairedScreen, body: unknown) => app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json: body });

t.test('plugins page: install, a countdown bar made through the form with its preview, edit, uninstall refused (409) and done', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  const owner = await signedInContext(app, context, app.url);
  const call = async (method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
    app.json(path, { method, headers: { ...owner.headers, ...headers }, ...(json === undefined ? {} : { json }) });
  const lobby = await pairScreen(app, owner, { name: 'Lobby' });
  await pairScreen(app, owner, { name: 'Hall' });
  // The Lobby's player reported a 1280 x 720 display: the preview takes that size.
  t.equal((await heartbeat(app, lobby, { playerFamily: 'desktop-linux', display: { width: 1280, height: 720 } })).status, 200);

  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-plugins').catch(() => {});
  });

  await page.goto(`${app.url}/`);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Plugins' }).click();
  await page.getByRole('heading', { name: 'Plugins', level: 1 }).waitFor();
  const card = (id: string) => page.locator(`article[data-plugin="${id}"]`);
  await card('countdown-bar').waitFor();
  t.match(await card('countdown-bar').getByTestId('install-state').innerText(), /Not installed/, 'nothing is installed at first');
  t.match(await card('countdown-bar').innerText(), /Overlay layer|overlay-core/i, 'the card says what it needs');

  // Install: it brings the overlay layer it needs.
  await card('countdown-bar')
    .getByRole('button', { name: /^Install/ })
    .click();
  await page.getByText(/Countdown bar installed/i).waitFor();
  await card('countdown-bar').getByTestId('install-state').getByText('Installed').waitFor();
  t.match(await card('overlay-core').getByTestId('install-state').innerText(), /Installed/, 'the dependency was installed with it');
  await checkA11y(page, t, 'plugins catalog');
  await snap(page, 'console-plugins-catalog-1280');

  // A new countdown bar through the form: bad inputs said in place, then made.
  await card('countdown-bar')
    .getByRole('button', { name: /Overlays/ })
    .click();
  await page.getByText('No overlays yet.').waitFor();
  await page.getByRole('button', { name: /New countdown bar/i }).click();
  const form = page.locator('form[aria-label="New overlay"]');
  await form.waitFor();
  await form.getByRole('button', { name: 'Create overlay' }).click();
  t.match(await alertText(page, 'form[aria-label="New overlay"]'), /name/i, 'a missing name is explained');
  await form.getByLabel('Name').fill('Lunch');
  await form.getByLabel('Label').fill('Lunch in');
  await form.getByLabel('Time', { exact: true }).fill('12:30');
  await form.getByLabel('Mon').check();
  await form.getByLabel('Fri').check();
  await form.getByLabel('Position').selectOption('top');
  await form.getByLabel('Every screen').uncheck();
  await form.getByRole('button', { name: 'Create overlay' }).click();
  t.match(await alertText(page, 'form[aria-label="New overlay"]'), /where/i, 'no target is explained');
  await form.getByLabel('Lobby').check();

  // The preview at the Lobby's reported size: the bar on top, in its colour.
  const preview = page.getByTestId('overlay-preview');
  await preview.getByLabel('At the size of').selectOption({ label: 'Lobby (1280 × 720)' });
  const screenBox = preview.locator('.preview-screen');
  t.equal(await screenBox.getAttribute('data-width'), '1280', 'the preview takes the screen’s width');
  t.equal(await screenBox.getAttribute('data-height'), '720', 'and height');
  const boxes = await page.evaluate(() => {
    const doc = (globalThis as any).document;
    const scr = doc.querySelector('.preview-screen').getBoundingClientRect();
    const bar = doc.querySelector('.ov-countdown').getBoundingClientRect();
    return { ratio: scr.width / scr.height, barTop: bar.top - scr.top, barShare: bar.height / scr.height };
  });
  t.ok(Math.abs(boxes.ratio - 1280 / 720) < 0.02, `the box has the screen’s shape (${boxes.ratio.toFixed(3)})`);
  t.ok(Math.abs(boxes.barTop) < 1, 'the bar is at the top');
  t.ok(Math.abs(boxes.barShare - 0.06) < 0.01, `the bar is 6% of the screen high (${boxes.barShare.toFixed(3)})`);
  const fill = await colourIn(page, '.ov-countdown-fill');
  t.ok(fill.r > 180 && fill.g < 120 && fill.b < 90, `the bar is drawn in its colour #e4572e (${JSON.stringify(fill)})`);
  t.match(await preview.locator('.ov-countdown').textContent(), /Lunch in 30:00/, 'half the window left, with the label');
  await checkA11y(page, t, 'new countdown bar form');
  await snap(page, 'console-plugins-countdown-form-1280');

  await form.getByRole('button', { name: 'Create overlay' }).click();
  await page.getByText(/“Lunch” created/).waitFor();
  const row = page.locator('tr[data-instance="Lunch"]');
  // The targets show as ids until the screens list has loaded: wait for the name.
  await row.getByText('Lobby').waitFor();
  t.match(await row.innerText(), /“Lunch in” to 12:30 on Mon, Fri[\s\S]*Lobby/, 'listed with what and where');
  const stored = (await call('GET', '/api/v1/plugins/countdown-bar/instances')).body.data;
  const list = Array.isArray(stored) ? stored : stored.items;
  t.equal(list.length, 1);
  const made = list[0];
  t.match(made, {
    name: 'Lunch',
    targets: { screenIds: [lobby.screenId] },
    config: { target: { type: 'daily', time: '12:30', weekdays: [1, 5] }, label: 'Lunch in', position: 'top', windowMin: 60 },
  });
  const manifest = (await app.json('/api/v1/player/manifest', { headers: lobby.headers })).body.data;
  t.match(manifest.overlays, [{ instanceId: made.id, pluginId: 'countdown-bar' }], 'the Lobby’s manifest carries it');

  // Edit: the stored overlay opens with its values; a change is saved with its revision.
  await row.getByRole('link', { name: 'Lunch' }).click();
  const edit = page.locator('form[aria-label="Edit overlay"]');
  await edit.waitFor();
  t.equal(await edit.getByLabel('Label').inputValue(), 'Lunch in');
  await edit.getByLabel('Label').fill('Lunch break in');
  await edit.getByRole('button', { name: 'Save' }).click();
  await page.getByText(/^Saved/).waitFor();
  const after = (await call('GET', `/api/v1/plugins/countdown-bar/instances/${made.id}`)).body.data;
  t.equal(after.config.label, 'Lunch break in', 'the change was saved');
  t.ok(after.revision > made.revision, 'with a new revision');
  // A stale save (changed elsewhere meanwhile) is refused in words, nothing overwritten.
  t.equal(
    (await call('PUT', `/api/v1/plugins/countdown-bar/instances/${made.id}`, { ...after, name: 'Elsewhere' }, { 'if-match': `"${after.revision}"` })).status,
    200,
  );
  await edit.getByLabel('Label').fill('Mine');
  await edit.getByRole('button', { name: 'Save' }).click();
  t.match(await alertText(page, 'form[aria-label="Edit overlay"]'), /changed|revision|meanwhile|reload|conflict|version/i, 'a stale save is refused in words');
  t.equal((await call('GET', `/api/v1/plugins/countdown-bar/instances/${made.id}`)).body.data.name, 'Elsewhere', 'nothing overwritten');

  // Uninstalling the layer others need: the 409 is said plainly, naming them.
  await page.getByRole('link', { name: '← Countdown bar' }).click();
  await page.getByRole('link', { name: '← Plugins' }).click();
  await card('overlay-core')
    .getByRole('button', { name: /^Uninstall/ })
    .click();
  const dialog = page.locator('dialog.confirm-dialog');
  await dialog.getByRole('button', { name: 'Uninstall' }).click();
  const refused = page.getByTestId('plugin-required');
  await refused.waitFor();
  t.match(await refused.innerText(), /Countdown bar/, 'the refusal names the plugin that needs it');
  t.match(await card('overlay-core').getByTestId('install-state').innerText(), /Installed/, 'still installed');
  await checkA11y(page, t, 'plugins catalog with a refusal');
  await snap(page, 'console-plugins-refused-1280');

  // Uninstalling the countdown bar: the confirmation says what is kept; keeping is the default.
  await card('countdown-bar')
    .getByRole('button', { name: /^Uninstall/ })
    .click();
  await dialog.waitFor();
  const said = await dialog.innerText();
  t.match(said, /kept/i, 'the confirmation says the overlays are kept');
  t.match(said, /delete/i, 'and offers to delete them');
  t.notOk(await dialog.getByLabel(/Also delete/).isChecked(), 'keeping is the default');
  await dialog.getByRole('button', { name: 'Uninstall' }).click();
  await page.getByText('Countdown bar uninstalled.').waitFor();
  await card('countdown-bar').getByTestId('install-state').getByText('Not installed').waitFor();
  const kept = (await call('GET', '/api/v1/plugins/countdown-bar/instances')).body.data;
  t.equal((Array.isArray(kept) ? kept : kept.items).length, 1, 'the overlay is kept');
  t.same((await app.json('/api/v1/player/manifest', { headers: lobby.headers })).body.data.overlays, [], 'and no longer delivered');

  // A brand bug: the logo picked from the library, drawn in its corner at its size in the preview.
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100" viewBox="0 0 200 100"><rect width="200" height="100" fill="#1e40af"/></svg>';
  const logo = await settledAsset(app, owner, (await uploadAsset(app, owner, Buffer.from(svg), 'logo.svg', { name: 'ACME logo' })).id);
  t.equal(logo.state, 'ready', 'the SVG logo is in the library');
  await card('brand-bug')
    .getByRole('button', { name: /^Install/ })
    .click();
  await card('brand-bug').getByTestId('install-state').getByText('Installed').waitFor();
  await page.goto(`${app.url}/plugins/brand-bug/new`);
  const bugForm = page.locator('form[aria-label="New overlay"]');
  await bugForm.getByLabel('Name').fill('Logo');
  await bugForm.getByLabel('ACME logo').check();
  await bugForm.getByLabel('Corner').selectOption('bottom-left');
  const bug = await page.evaluate(() => {
    const doc = (globalThis as any).document;
    const scr = doc.querySelector('.preview-screen').getBoundingClientRect();
    const img = doc.querySelector('.ov-brand');
    const r = img.getBoundingClientRect();
    return {
      loaded: img.complete && img.naturalWidth > 0,
      width: r.width / scr.width,
      left: (r.left - scr.left) / scr.width,
      bottom: (scr.bottom - r.bottom) / scr.width,
    };
  });
  t.ok(bug.loaded, 'the logo image loaded');
  t.ok(Math.abs(bug.width - 0.12) < 0.005, `12% of the screen wide (${bug.width.toFixed(3)})`);
  t.ok(Math.abs(bug.left - 0.02) < 0.005 && Math.abs(bug.bottom - 0.02) < 0.005, 'bottom left, 2% in');
  const blue = await colourIn(page, '.ov-brand');
  t.ok(blue.b > 120 && blue.r < 90, `the logo’s pixels are drawn (${JSON.stringify(blue)})`);
  await bugForm.getByRole('button', { name: 'Create overlay' }).click();
  await page.locator('tr[data-instance="Logo"]').waitFor();
  const bugs = (await call('GET', '/api/v1/plugins/brand-bug/instances')).body.data.items;
  t.match(bugs, [{ name: 'Logo', targets: { all: true }, config: { assetId: logo.id, corner: 'bottom-left', sizePct: 12 } }], 'saved as chosen');
  await page.goto(`${app.url}/plugins`);

  // Uninstalling with the purge box ticked deletes its overlays for good.
  await card('brand-bug')
    .getByRole('button', { name: /^Uninstall/ })
    .click();
  await dialog.getByLabel(/Also delete/).check();
  await dialog.getByRole('button', { name: 'Uninstall' }).click();
  await page.getByText('Brand bug uninstalled, its overlays deleted.').waitFor();
  t.same((await call('GET', '/api/v1/plugins/brand-bug/instances')).body.data.items, [], 'purged: its overlays are gone');

  // Phone width: the catalog still fits.
  await page.setViewportSize(PHONE);
  const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);
  t.ok(width <= PHONE.width, `no sideways scroll at 390 px (${width})`);
  await snap(page, 'console-plugins-catalog-390');
  t.same(errors, [], 'no page errors');

  // A viewer reads but neither installs nor makes overlays.
  const viewerContext = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  await signedInContext(app, viewerContext, app.url, 'viewer');
  const viewer = await viewerContext.newPage();
  await viewer.goto(`${app.url}/plugins`);
  await viewer.getByText('Installing and uninstalling plugins needs the admin role.').waitFor();
  t.equal(await viewer.getByRole('button', { name: /^Install/ }).count(), 0, 'no install button for a viewer');
  await viewerContext.close();
});

t.test('noise report: summary figures as the API answers them, a drawn chart, the per-screen table sorted by the server, a CSV download', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC', acceptDownloads: true });
  const owner = await signedInContext(app, context, app.url);
  const call = async (method: string, path: string, json?: unknown) =>
    app.json(path, { method, headers: owner.headers, ...(json === undefined ? {} : { json }) });
  const lobby = await pairScreen(app, owner, { name: 'Lobby' });
  const hall = await pairScreen(app, owner, { name: 'Hall' });
  t.equal((await call('POST', '/api/v1/plugins/noise-meter/install', {})).status, 200);
  const made = await call('POST', '/api/v1/plugins/noise-meter/instances', { name: 'Classroom', targets: { all: true }, config: {} });
  t.equal(made.status, 201);
  const id = made.body.data.id;

  // Buckets through real heartbeats: the Lobby loud for a while, the Hall quieter, with a gap.
  const now = Date.now(); // the one clock read
  const base = Math.floor(now / 10_000) * 10_000 - 3 * 3600_000;
  const bucket = (i: number, avg: number, loud = 0) => ({
    startedAt: new Date(base + i * 10_000).toISOString(),
    averageLevel: avg,
    peakLevel: Math.min(100, avg + 12),
    monitoredMs: 10_000,
    warningMs: avg >= 60 ? 10_000 - loud : 0,
    loudMs: loud,
    triggerCount: loud ? 1 : 0,
  });
  const lobbyBuckets = Array.from({ length: 60 }, (_, i) => bucket(i, 50 + (i % 30), i % 30 > 24 ? 6000 : 0));
  const hallBuckets = [...Array.from({ length: 20 }, (_, i) => bucket(i, 35)), ...Array.from({ length: 20 }, (_, i) => bucket(i + 400, 45))];
  for (const [s, buckets] of [
    [lobby, lobbyBuckets],
    [hall, hallBuckets],
  ] as const) {
    const r = await heartbeat(app, s, { playerFamily: 'desktop-linux', noiseMeter: { status: 'active', currentLevel: 40, pendingHistory: buckets } });
    t.equal(r.status, 200);
    t.equal(r.body.data.noiseHistory.accepted, buckets.length, 'the server took the buckets');
  }

  // A real /play page whose microphone is Chromium's fake device playing a loud tone: the player
  // starts its meter because its manifest carries the noise-meter overlay, and reports buckets.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-mic-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const wav = path.join(dir, 'tone.wav');
  toneWav(wav, 5, 0.5);
  const { chromium } = await import('playwright-core');
  const micBrowser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      ...CHROMIUM_ARGS,
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${wav}`,
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
  t.teardown(() => micBrowser.close());
  const micContext = await micBrowser.newContext({ viewport: { width: 960, height: 540 }, permissions: ['microphone'] });
  const player = await micContext.newPage();
  await player.goto(`${app.url}/play`);
  const micId = await pairPlayPage(app, owner, player, 'Mic');
  t.equal((await call('PUT', `/api/v1/screens/${micId}/policy`, { heartbeatIntervalSec: 10 })).status, 200, 'heartbeats every 10 s');
  const micBuckets = await waitUntil(
    'the player reported noise buckets',
    async () => {
      const r = await call('GET', `/api/v1/screens/${micId}`);
      const n = r.body.data.lastStatus?.noiseMeter;
      return n &&
        n.status === 'loud' &&
        (await app.deps.db.selectFrom('noise_buckets').select('started_ms').where('screen_num', '=', screenNum(micId)).execute()).length >= 2
        ? n
        : undefined;
    },
    90_000,
  );
  t.match(micBuckets, { status: 'loud' }, 'the fake microphone’s tone is loud');
  // Stop the player so the figures hold still while the page and the API are compared.
  await micContext.close();
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-noise-report').catch(() => {});
  });
  await page.goto(`${app.url}/plugins/noise-meter`);
  await page.locator('tr[data-instance="Classroom"]').getByRole('link', { name: 'Noise report' }).click();
  await page.getByRole('heading', { name: 'Noise report: Classroom', level: 1 }).waitFor();

  // The page's range: the last seven days in the browser's zone (UTC here), to the end of today.
  const day = new Date(now).toISOString().slice(0, 10);
  const from = new Date(Date.parse(`${day}T00:00:00Z`) - 6 * 86_400_000).toISOString();
  const to = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString();
  const range = `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&timeZone=UTC`;
  const history = `/api/v1/plugins/noise-meter/instances/${id}/history`;
  const summary = (await call('GET', `${history}/summary?${range}`)).body.data;
  const figures = page.getByTestId('summary');
  await figures.waitFor();
  const figure = async (name: string) => (await figures.locator(`[data-figure="${name}"] dd`).innerText()).trim();
  t.equal(await figure('average'), String(Math.round(summary.averageLevel * 10) / 10), 'the average level is the API’s');
  t.equal(await figure('peak'), String(Math.round(summary.peakLevel * 10) / 10), 'the peak level is the API’s');
  t.equal(await figure('triggers'), String(summary.triggerCount), 'the trigger count is the API’s');
  t.equal(await figure('coverage'), `${Math.round(summary.coverage * 1000) / 10}%`, 'the coverage is the API’s');
  t.equal(await page.getByTestId('loudest').locator('li').count(), summary.loudestPeriods.length, 'the loudest periods are listed');
  t.ok(summary.monitoredMs > (lobbyBuckets.length + hallBuckets.length) * 10_000, 'the API counted the sent buckets and the player’s');
  t.match(
    await figure('monitored'),
    // The page rounds to whole seconds, then says the whole minutes (under an hour).
    new RegExp(`^${Math.floor(Math.round(summary.monitoredMs / 1000) / 60)} minutes`),
    `the monitored time is the API’s (${summary.monitoredMs} ms)`,
  );

  // The series chart: a canvas with pixels drawn on it.
  const chart = page.getByTestId('series-chart');
  await chart.locator('canvas').waitFor();
  const drawn = await waitUntil('chart drawn', () =>
    chart.evaluate((el: any) => {
      const c = el.querySelector('canvas');
      const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
      return n > 500 ? n : false;
    }),
  );
  t.ok(drawn > 500, `the series chart has pixels drawn (${drawn})`);
  await page.getByTestId('daily-chart').locator('canvas').waitFor();

  // The per-screen table in the server's order; a click on a column sorts by it (asked of the server).
  const names = () => page.locator('[data-testid=screens-table] tbody tr').evaluateAll((rows) => rows.map((r: any) => r.getAttribute('data-screen')));
  await page.locator('tr[data-screen="Hall"]').waitFor();
  await page.locator('tr[data-screen="Mic"]').waitFor();
  t.same(await names(), ['Mic', 'Lobby', 'Hall'], 'loudest average first');
  await page.getByRole('button', { name: /^Average/ }).click();
  await waitUntil('sorted ascending', async () => JSON.stringify(await names()) === JSON.stringify(['Hall', 'Lobby', 'Mic']));
  t.equal(await page.locator('th[aria-sort="ascending"]').innerText(), 'Average ▲', 'the header says the order');

  await checkA11y(page, t, 'noise report');
  await snap(page, 'console-noise-report-1280');

  // The CSV: downloaded with the same range, a header row first.
  const link = page.getByTestId('csv-link');
  t.match(await link.getAttribute('href'), `from=${encodeURIComponent(from)}`, 'the link carries the range');
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  const csv = readFileSync((await download.path())!, 'utf8');
  const [header, ...lines] = csv.trim().split(/\r?\n/);
  t.match(header, /startsAt|time|start/i, `a header row: ${header}`);
  t.ok(lines.length > 0, 'and rows');
  t.match(download.suggestedFilename(), /\.csv$/, `named as a CSV (${download.suggestedFilename()})`);

  // Phone width: the charts shrink with the page, the tables scroll in their own box.
  await page.setViewportSize(PHONE);
  await waitUntil('the chart follows the width', () => chart.evaluate((el: any) => el.querySelector('canvas').getBoundingClientRect().width <= 390));
  const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);
  t.ok(width <= PHONE.width, `no sideways scroll at 390 px (${width})`);
  await snap(page, 'console-noise-report-390');
  t.same(errors, [], 'no page errors');
});
