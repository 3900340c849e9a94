/**
 * A message takeover on the browser player (/play in Chromium): the emergency message
 * fills the screen in red, large, and the player returns to what it showed when the
 * takeover is cancelled.
 */
import t from 'tap';
import { signIn } from './helpers/auth.js';
import { colourAt, dominant, launchBrowser, pairPlayPage, snap, waitUntil } from './helpers/browser.js';
import { startApp } from './helpers/harness.js';

t.test('an emergency message takes over /play and goes on cancel', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const owner = await signIn(app);
  const context = await browser.newContext({ viewport: { width: 960, height: 540 } });
  const page = await context.newPage();
  await page.goto(`${app.url}/play`);
  const screenId = await pairPlayPage(app, owner, page, 'Lobby');
  await page.locator('.pl-idle').first().waitFor({ state: 'visible' });

  const res = await app.json('/api/v1/takeovers', {
    method: 'POST',
    headers: owner.headers,
    json: { message: { text: 'Evacuate the building', severity: 'emergency' }, targets: { screenIds: [screenId] }, reason: 'fire alarm' },
  });
  t.equal(res.status, 201);
  const message = page.locator('.pl-message-emergency');
  await message.waitFor({ state: 'visible', timeout: 30_000 });
  t.match((await message.innerText()).toLowerCase(), 'evacuate the building');
  const box = await message.boundingBox();
  t.ok(box && box.width >= 900 && box.height >= 500, 'full screen');
  const fontPx = await page.locator('.pl-message-text').evaluate((e) => Number.parseFloat((globalThis as any).getComputedStyle(e).fontSize));
  t.ok(fontPx >= 48, `large text (${fontPx}px)`);
  // Once the fade-in is over, the screen is red.
  await waitUntil('a red screen', async () => dominant(await colourAt(page, 0.05, 0.05)) === 'red');
  t.pass('red background');
  await snap(page, 'play-takeover-emergency', false);

  t.equal(
    (await app.json(`/api/v1/takeovers/${res.body.data.id}/cancel`, { method: 'POST', headers: owner.headers, json: { reason: 'all clear' } })).status,
    200,
  );
  await waitUntil('the message is gone', async () => (await page.locator('.pl-message').count()) === 0);
  await page.locator('.pl-idle').first().waitFor({ state: 'visible' });
  t.pass('back to the idle slide');
});
