import t from 'tap';
import { startApp } from './helpers/harness.js';
import { alertText, contextAs, DESKTOP, launchBrowser, PHONE, signedInContext, snap } from './helpers/browser.js';
import { checkA11y } from './helpers/a11y.js';
import { pairScreen } from './helpers/screens.js';

/** The manifest segment playing now (one clock read). */
function current(m: any) {
  const now = Date.now();
  return m.timeline.find((s: any) => Date.parse(s.startsAt) <= now && Date.parse(s.endsAt) > now);
}

t.test('takeovers page: the red flow asks first and names the screens; on air, ended; overrides start and stop; editors cannot take over', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  const owner = await signedInContext(app, context, app.url);
  const call = async (method: string, path: string, json?: unknown) =>
    app.json(path, { method, headers: owner.headers, ...(json === undefined ? {} : { json }) });
  const site = (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id;
  const party = (await call('POST', '/api/v1/playlists', { name: 'Private party', items: [{ assetId: site }] })).body.data.id;
  const lobby = await pairScreen(app, owner, { name: 'Lobby' });
  const bar = await pairScreen(app, owner, { name: 'Bar' });
  const manifest = async (s = lobby) => (await app.json('/api/v1/player/manifest', { headers: s.headers })).body.data;

  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-takeovers').catch(() => {});
  });

  await page.goto(`${app.url}/`);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Takeovers' }).click();
  await page.getByRole('heading', { name: 'Takeovers', level: 1 }).waitFor();
  await page.getByText('No override is running.').waitFor();
  await page.getByRole('button', { name: 'Take over screens' }).click();
  const form = page.locator('form[aria-label="Take over screens"]');
  await form.waitFor();
  t.ok(await form.getByLabel('Every screen').isChecked(), 'every screen is the starting point');

  // Bad paths: nothing to show, then no reason: said in place, nothing sent.
  await form.getByRole('button', { name: 'Review and take over' }).click();
  t.match(await alertText(page, 'form[aria-label="Take over screens"]'), /Write the message/, 'an empty message is explained');
  await form.getByRole('textbox', { name: 'Message' }).fill('Fire drill: please leave by the nearest exit.');
  await form.getByRole('button', { name: 'Review and take over' }).click();
  t.match(await alertText(page, 'form[aria-label="Take over screens"]'), /Say why/, 'a missing reason is explained');
  await form.getByLabel('Why').fill('Monthly fire drill');

  // The confirmation names every screen; saying no sends nothing.
  await form.getByRole('button', { name: 'Review and take over' }).click();
  const dialog = page.locator('dialog.confirm-dialog');
  await dialog.getByText('Take over every screen now?').waitFor();
  const named = await dialog.innerText();
  t.match(named, /Lobby/, 'the confirmation names Lobby');
  t.match(named, /Bar/, 'and Bar');
  t.match(named, /Fire drill: please leave/, 'and quotes the message');
  await snap(page, 'takeover-confirm-1280-light');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  t.equal((await call('GET', '/api/v1/takeovers')).body.data.items.length, 0, 'cancelling the confirmation starts nothing');

  await form.getByRole('button', { name: 'Review and take over' }).click();
  await dialog.getByRole('button', { name: 'Take over now' }).click();
  await page.getByText('Takeover started.').waitFor();
  const onAir = page.getByTestId('active-takeovers');
  await onAir.getByText(/On air: Emergency: “Fire drill/).waitFor();
  t.match(await onAir.innerText(), /Every screen[\s\S]*Monthly fire drill/, 'the card says where and why');
  const list = (await call('GET', '/api/v1/takeovers')).body.data.items;
  t.equal(list.length, 1);
  t.match(list[0], { state: 'active', message: { severity: 'emergency' }, targets: { all: true }, reason: 'Monthly fire drill', endsAt: null });
  for (const s of [lobby, bar]) {
    const seg = current(await manifest(s));
    t.match(seg, { source: { type: 'takeover', id: list[0].id }, content: { type: 'message' } }, 'the screen plays the message now');
  }
  await checkA11y(page, t, 'takeovers page with a takeover on air');
  await snap(page, 'takeovers-on-air-1280-light');

  // Ending it asks, then the screens go back; it moves to the recent list with who ended it.
  await onAir.getByRole('button', { name: 'End takeover' }).click();
  await dialog.getByRole('button', { name: 'End takeover' }).click();
  await page.getByText('Takeover ended.').waitFor();
  await page.getByTestId('past-takeovers').getByText('Monthly fire drill').waitFor();
  t.equal(await page.getByTestId('active-takeovers').count(), 0, 'nothing on air');
  t.equal((await call('GET', `/api/v1/takeovers/${list[0].id}`)).body.data.state, 'cancelled');
  t.not(current(await manifest()).source.type, 'takeover', 'Lobby is back to its own content');

  // An override: content on one screen for an hour, then stopped.
  await page.getByRole('button', { name: 'Override screens for a while' }).click();
  const over = page.locator('form[aria-label="Override screens"]');
  await over.getByLabel('Shows').selectOption({ label: 'Private party' });
  await over.getByRole('button', { name: 'Start override' }).click();
  t.match(await alertText(page, 'form[aria-label="Override screens"]'), /Choose where/, 'no target is explained');
  await over.getByLabel('Lobby').check();
  await over.getByRole('button', { name: 'Start override' }).click();
  await page.getByText('Override started.').waitFor();
  const row = page.getByTestId('overrides').locator('tbody tr');
  t.match(await row.innerText(), /Playlist “Private party”\s+Lobby/, 'the override is listed with what and where');
  t.match(current(await manifest()), { source: { type: 'override' }, content: { type: 'playlist', id: party } }, 'Lobby plays the party');
  t.not(current(await manifest(bar)).source.type, 'override', 'Bar is untouched');
  await row.getByRole('button', { name: 'Stop' }).click();
  await page.getByText('Override stopped.').waitFor();
  await page.getByText('No override is running.').waitFor();
  t.not(current(await manifest()).source.type, 'override', 'Lobby is back');

  // Phone width: the red button and the form still fit.
  await page.setViewportSize(PHONE);
  await page.getByRole('button', { name: 'Take over screens' }).click();
  await form.waitFor();
  const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);
  t.ok(width <= PHONE.width, `no sideways scroll at 390 px (${width})`);
  await snap(page, 'takeover-form-390-light');
  t.same(errors, [], 'no page errors');

  // An editor sees what is on air but cannot take over.
  const editor = await contextAs(app, browser, 'editor');
  await editor.page.goto(`${app.url}/takeovers`);
  await editor.page.getByText('Taking over screens needs the publisher role.').waitFor();
  t.equal(await editor.page.getByRole('button', { name: 'Take over screens' }).count(), 0, 'no red button for an editor');
  t.equal(await editor.page.getByRole('button', { name: 'Override screens for a while' }).count(), 1, 'an editor may override');
  await editor.context.close();
});
