/**
 * Plugin overlays on the browser player (/play in Chromium, a real server): a brand bug in its
 * corner with its opacity, a countdown bar whose width shrinks, a noise meter on a fake
 * microphone playing a loud tone (the level shown, the loud message, heartbeats whose buckets
 * reach noise_buckets; a new display style and microphone settings), a brand bug hidden during a
 * full-screen video, and the overlays drawn again after the server stops (from the cache).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { signIn } from './helpers/auth.js';
import { CHROMIUM, CHROMIUM_ARGS, colourAt, dominant, ensureConsoleBuilt, pairPlayPage, snap, waitUntil } from './helpers/browser.js';
import { startApp, tempDataDir } from './helpers/harness.js';
import { noiseBuckets } from './helpers/noise.js';
import { settledAsset, uploadAsset } from './helpers/media.js';
import { sampleMp4 } from './helpers/sample-media.js';

/** A 16-bit mono WAV of a loud 440 Hz tone (Chromium loops it as the fake microphone). */
function loudTone(file: string): void {
  const rate = 48_000;
  const samples = rate * 2;
  const buf = Buffer.alloc(44 + samples * 2);
  buf.write('RIFF', 0);
  buf.writeUInt32LE(36 + samples * 2, 4);
  buf.write('WAVEfmt ', 8);
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(1, 20);
  buf.writeUInt16LE(1, 22);
  buf.writeUInt32LE(rate, 24);
  buf.writeUInt32LE(rate * 2, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write('data', 36);
  buf.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++) buf.writeInt16LE(Math.round(0.9 * 32767 * Math.sin((2 * Math.PI * 440 * i) / rate)), 44 + i * 2);
  writeFileSync(file, buf);
}

t.test('overlays on /play: brand bug, countdown bar, noise meter; still drawn offline', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.pass(`${CHROMIUM} is missing`, { skip: 'no Chromium' });
    return;
  }
  await ensureConsoleBuilt();
  const wav = path.join(tempDataDir(t), 'loud.wav');
  loudTone(wav);
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [...CHROMIUM_ARGS, '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wav}`],
    headless: true,
  });
  t.teardown(() => browser.close());

  const app = await startApp(t);
  const owner = await signIn(app);
  const call = (method: string, p: string, json?: unknown) => app.json(p, { method, headers: owner.headers, ...(json !== undefined ? { json } : {}) });
  for (const p of ['countdown-bar', 'brand-bug', 'noise-meter']) t.equal((await call('POST', `/api/v1/plugins/${p}/install`)).status, 200, `${p} installed`);
  const logoPng = await sharp({ create: { width: 400, height: 400, channels: 3, background: '#00c000' } })
    .png()
    .toBuffer();
  const logo = await settledAsset(app, owner, (await uploadAsset(app, owner, logoPng, 'logo.png')).id);
  t.equal(logo.state, 'ready');

  const context = await browser.newContext({ viewport: { width: 960, height: 540 } });
  await context.grantPermissions(['microphone']);
  const page = await context.newPage();
  await page.goto(`${app.url}/play`);
  const screenId = await pairPlayPage(app, owner, page, 'Class room');
  await page.locator('.pl-idle').first().waitFor({ state: 'visible' });
  await page.waitForTimeout(1_000); // the idle slide's fade-in
  // The logo's spot before the bug: its centre is at 2% + 5% of the width, 19 px + 48 px down.
  const spot = { fx: (0.02 * 960 + 48) / 960, fy: (0.02 * 960 + 48) / 540 };
  const under = await colourAt(page, spot.fx, spot.fy);

  const create = async (plugin: string, body: unknown) => {
    const res = await call('POST', `/api/v1/plugins/${plugin}/instances`, body);
    t.equal(res.status, 201, `${plugin} instance created`);
    return res.body.data;
  };

  await t.test('the brand bug: the cached logo in its corner, at its opacity', async (t) => {
    await create('brand-bug', {
      name: 'Logo',
      targets: { all: true },
      config: { assetId: logo.id, corner: 'top-left', sizePct: 10, marginPct: 2, opacity: 0.5 },
    });
    const img = page.locator('.pl-overlay-brand-bug img');
    await waitUntil('the logo loaded from the cache', () =>
      img.evaluate((e: any) => e.complete && e.naturalWidth > 0 && e.src.startsWith('blob:')).catch(() => false),
    );
    const box = await img.boundingBox();
    t.ok(box && Math.abs(box.x - 19.2) < 2 && Math.abs(box.y - 19.2) < 2 && Math.abs(box.width - 96) < 2, `top-left, 10% wide (${JSON.stringify(box)})`);
    const c = await colourAt(page, spot.fx, spot.fy);
    // Half of #00c000 over what was there.
    const expect = { r: under.r * 0.5, g: 192 * 0.5 + under.g * 0.5, b: under.b * 0.5 };
    t.ok(
      Math.abs(c.r - expect.r) < 16 && Math.abs(c.g - expect.g) < 16 && Math.abs(c.b - expect.b) < 16,
      `50% green (${JSON.stringify(c)} ~ ${JSON.stringify(expect)})`,
    );
    await page.locator('.pl-overlay-brand-bug').evaluate((e: any) => {
      e.__kept = true;
    });
  });

  await t.test('the countdown bar: its colours at its position, its width shrinking', async (t) => {
    const at = new Date(Date.now() + 30 * 60_000).toISOString();
    await create('countdown-bar', {
      name: 'Break',
      targets: { screenIds: [screenId] },
      config: { target: { type: 'at', at }, label: 'Break', windowMin: 60, heightPct: 10, colors: { bar: '#ff0000', background: '#0000ff', text: '#ffffff' } },
    });
    const fill = page.locator('.pl-countdown-fill');
    await fill.waitFor({ state: 'visible', timeout: 30_000 });
    const width = () => fill.evaluate((e: any) => e.getBoundingClientRect().width as number);
    const first = await width();
    t.ok(first > 0.45 * 960 && first < 0.52 * 960, `about half the screen (${first})`);
    await waitUntil('red bar at the left, blue background at the right', async () => {
      return dominant(await colourAt(page, 0.2, 0.95)) === 'red' && dominant(await colourAt(page, 0.8, 0.95)) === 'blue';
    });
    t.pass('bar and background drawn');
    await waitUntil('the bar shrinks', async () => (await width()) < first);
    t.pass('shrinking');
    t.match(await page.locator('.pl-countdown-text').innerText(), /^Break (29|30):\d\d$/);
    t.ok(await page.locator('.pl-overlay-brand-bug').evaluate((e: any) => e.__kept === true), 'the brand bug kept its node through the unrelated change');
  });

  let noiseId = '';
  await t.test('the noise meter: the loud level, its message, buckets at the server', async (t) => {
    noiseId = (
      await create('noise-meter', {
        name: 'Noise',
        targets: { all: true },
        config: { warningLevel: 55, loudLevel: 70, display: 'traffic-light', corner: 'top-right', loudMessage: 'Quiet!' },
      })
    ).id;
    const meter = page.locator('.pl-noise');
    await waitUntil('a loud level shown', async () => (await meter.getAttribute('data-status').catch(() => null)) === 'loud');
    const level = Number(await meter.getAttribute('data-level'));
    t.ok(level >= 70, `level ${level}`);
    const banner = page.locator('.pl-noise-banner');
    await banner.waitFor({ state: 'visible' });
    t.equal(await banner.innerText(), 'Quiet!');
    t.equal(dominant(await colourAt(page, 0.2, 0.5)), 'red', 'the loud banner drawn (centred)');
    t.equal(dominant(await colourAt(page, 0.95, 0.07)), 'other', 'meter box present');
    const lit = await page.locator('.pl-noise-light[data-status=loud]').evaluate((e: any) => (globalThis as any).getComputedStyle(e).backgroundColor);
    t.equal(lit, 'rgb(220, 38, 38)', 'the loud light is lit');
    await snap(page, 'play-overlays', false);
    const rows = await waitUntil(
      'noise buckets stored',
      async () => {
        const r = await noiseBuckets(app.database.db, screenId);
        return r.length > 0 ? r : undefined;
      },
      90_000,
    );
    t.ok(
      rows.some((r: any) => r.peak_level >= 70),
      'a loud bucket stored',
    );
  });

  await t.test('a new display style and microphone settings: redrawn as a bar, the capture restarted, still loud', async (t) => {
    const put = await call('PUT', `/api/v1/plugins/noise-meter/instances/${noiseId}`, {
      name: 'Noise',
      targets: { all: true },
      config: { warningLevel: 55, loudLevel: 70, display: 'bar', corner: 'top-right', loudMessage: 'Quiet!', microphone: { echoCancellation: true } },
    });
    t.equal(put.status, 200);
    const fill = page.locator('.pl-noise-bar .pl-noise-fill');
    await waitUntil('the bar, red and wide', async () => {
      const got = await fill
        .evaluate((e: any) => ({ colour: (globalThis as any).getComputedStyle(e).backgroundColor, width: e.getBoundingClientRect().width }))
        .catch(() => null);
      return got && got.colour === 'rgb(220, 38, 38)' && got.width > 0 ? got : undefined;
    });
    const config = await page.evaluate(() => (globalThis as any).placardPlayer.noise().config);
    t.equal(config.microphone.echoCancellation, true, 'the meter runs with the new microphone settings');
    t.equal(await page.locator('.pl-noise-light').count(), 0, 'the lights are gone');
    await waitUntil(
      'loud again after the restart',
      async () =>
        (await page
          .locator('.pl-noise')
          .getAttribute('data-status')
          .catch(() => null)) === 'loud',
    );
    t.pass('measuring again');
  });

  await t.test('a full-screen video hides the brand bug that asks for it, not the other', async (t) => {
    const clip = await settledAsset(app, owner, (await uploadAsset(app, owner, readFileSync(sampleMp4(app, tempDataDir(t))), 'clip.mp4')).id, 120_000);
    t.equal(clip.state, 'ready');
    const hiding = await create('brand-bug', {
      name: 'Logo hidden in videos',
      targets: { all: true },
      config: { assetId: logo.id, corner: 'bottom-left', sizePct: 5, marginPct: 12, opacity: 1, hideDuringFullScreenVideo: true },
    });
    const hidingBug = page.locator(`.pl-overlay-brand-bug[data-instance-id="${hiding.id}"]`);
    await waitUntil('the second bug shown over the idle slide', () => hidingBug.isVisible());
    const playlist = (await call('POST', '/api/v1/playlists', { name: 'Video' })).body.data;
    t.equal((await call('POST', `/api/v1/playlists/${playlist.id}/items`, { assetId: clip.id })).status, 201);
    t.equal((await call('PUT', `/api/v1/screens/${screenId}/playlist-assignment`, { playlistId: playlist.id })).status, 200);
    await waitUntil('the video playing full screen', () =>
      page.evaluate(() => [...(globalThis as any).document.querySelectorAll('.pl-stage video')].some((v: any) => !v.paused && v.currentTime > 0)),
    );
    await waitUntil('the bug that asks for it is hidden', async () => !(await hidingBug.isVisible()));
    t.pass('hidden during the video');
    t.ok(await page.locator('.pl-overlay-brand-bug').first().isVisible(), 'the other bug stays');
    t.equal((await call('DELETE', `/api/v1/screens/${screenId}/playlist-assignment`)).status, 204);
    await page.locator('.pl-idle').first().waitFor({ state: 'visible', timeout: 30_000 });
    await waitUntil('shown again after the video', () => hidingBug.isVisible());
    t.pass('back with the idle slide');
  });

  await t.test('the server stops: after a reload the overlays draw from the cached manifest', async (t) => {
    await app.server.close(500);
    await page.reload();
    const img = page.locator('.pl-overlay-brand-bug img').first();
    await waitUntil('the logo from the cache, offline', () =>
      img.evaluate((e: any) => e.complete && e.naturalWidth > 0 && e.src.startsWith('blob:')).catch(() => false),
    );
    await page.waitForTimeout(1_000);
    const c = await colourAt(page, spot.fx, spot.fy);
    t.ok(c.g > c.r + 40 && c.g > c.b + 40, `green logo offline (${JSON.stringify(c)})`);
    await page.locator('.pl-countdown-fill').waitFor({ state: 'visible' });
    t.pass('the countdown bar too');
  });
});
