import type http from 'node:http';
import t from 'tap';
import { checkA11y } from './helpers/a11y.js';
import { alertText, DESKTOP, launchBrowser, PHONE, signedInContext, snap } from './helpers/browser.js';
import { fakeFeed } from './helpers/data-sources.js';
import { startApp } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';
import { nwsGeoJson, served } from './helpers/weather-feeds.js';

t.test('weather alerts: monitor, a failing poll said in words, zones, a rule with confirmation, confirm -> takeover', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t, { config: { fetchAllowLoopback: true } });
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  const owner = await signedInContext(app, context, app.url);
  const call = async (method: string, path: string, json?: unknown) =>
    app.json(path, { method, headers: owner.headers, ...(json === undefined ? {} : { json }) });
  const lobby = await pairScreen(app, owner, { name: 'Lobby' });
  await pairScreen(app, owner, { name: 'Cafe' });
  const now = Date.now();
  const iso = (min: number) => new Date(now + min * 60_000).toISOString();
  const alerts = [{ id: 'urn:oid:2.49.0.1.840.0.console.001.1', event: 'Tornado Warning', sent: iso(-5), expires: iso(40), ends: iso(60) }];
  const feed = await fakeFeed(t, {
    '/alerts/active': served('application/geo+json', () => nwsGeoJson(alerts)),
    '/broken': (_req: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(503, { 'content-type': 'text/plain' }).end('down'),
  });

  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-weather').catch(() => {});
  });

  await page.goto(`${app.url}/`);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Weather alerts' }).click();
  await page.getByRole('heading', { name: 'Weather alerts', level: 1 }).waitFor();
  await page.getByText('No feed is set up yet.').waitFor();
  const monitorForm = page.locator('form[aria-label="Feed monitor"]');

  // Bad input: a feed address that is not http(s) is the server's 400, said in place.
  await monitorForm.getByLabel('Feed address').fill('ftp://example.org/alerts');
  await monitorForm.getByRole('button', { name: 'Save monitor' }).click();
  const refused = await alertText(page, 'form[aria-label="Feed monitor"]');
  t.comment(`ftp feed: ${refused}`);
  t.match(refused, /feed|url|http/i, 'a non-http feed is refused in words');
  t.equal((await call('GET', '/api/v1/alerts/weather')).body.data.monitor, null, 'nothing saved');
  // Bad input: an interval under 30 s.
  await monitorForm.getByLabel('Feed address').fill(`${feed.url}/broken`);
  await monitorForm.getByLabel('Poll every (seconds)').fill('5');
  await monitorForm.getByRole('button', { name: 'Save monitor' }).click();
  t.equal(
    await monitorForm.getByLabel('Poll every (seconds)').evaluate((e) => (e as unknown as { validity: { rangeUnderflow: boolean } }).validity.rangeUnderflow),
    true,
    'the browser holds back an interval under 30 s',
  );
  await monitorForm.getByLabel('Poll every (seconds)').fill('600');
  await monitorForm.getByRole('button', { name: 'Save monitor' }).click();
  await page.getByText('Monitor saved.').waitFor();

  // A failing feed: Poll now says it failed and why; the monitor shows the error.
  await page.getByRole('button', { name: 'Poll now' }).click();
  const failed = await page.getByTestId('poll-said').innerText();
  t.comment(`failed poll: ${failed}`);
  t.match(failed, /The poll failed; nothing changed\. Error: .+/, 'the failure is said with its reason');
  await page.getByTestId('monitor-error').waitFor();

  // The real feed: one new alert; its zones are offered with their area names.
  await monitorForm.getByLabel('Feed address').fill(`${feed.url}/alerts/active`);
  await monitorForm.getByRole('button', { name: 'Save monitor' }).click();
  await page.getByTestId('monitor-error').waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Poll now' }).click();
  await page
    .getByTestId('poll-said')
    .getByText(/1 new alert/)
    .waitFor();
  t.match(await page.getByTestId('poll-said').innerText(), /The feed answered with a new document\. 1 new alert\./, 'what changed, in words');
  const picks = page.getByTestId('zone-picks');
  await picks.waitFor();
  t.match(await picks.innerText(), /OKC109\s+Oklahoma \(UGC\)/, 'zones come with their area');
  await picks.getByLabel(/OKC109/).check();
  t.equal(await monitorForm.getByLabel('Zones watched').inputValue(), 'OKC109', 'ticking a zone types it');
  await monitorForm.getByRole('button', { name: 'Save monitor' }).click();
  await page.getByText('Monitor saved.').first().waitFor();
  t.same((await call('GET', '/api/v1/alerts/weather')).body.data.monitor.zones, ['OKC109'], 'the zone was saved');
  const row = page.locator('table[data-testid=active-alerts] tr[data-alert="Tornado Warning"]');
  await row.waitFor();
  t.match(
    await row.innerText(),
    /Tornado Warning issued by NWS Norman OK[\s\S]*Extreme[\s\S]*Oklahoma; Cleveland[\s\S]*NWS Norman OK[\s\S]*No rule matched/,
    'the alert row',
  );

  // A rule: bad inputs first (no name; no screens), then one that waits for a person.
  await page.getByRole('button', { name: 'Add a rule' }).click();
  const ruleForm = page.locator('form[aria-label="Weather alert rule"]');
  await ruleForm.getByRole('button', { name: 'Add rule' }).click();
  const noName = await alertText(page, 'form[aria-label="Weather alert rule"]');
  t.comment(`no name: ${noName}`);
  t.match(noName, /name/i, 'a rule without a name is refused in words');
  await ruleForm.getByLabel('Rule name').fill('Tornadoes');
  await ruleForm.getByLabel('Events').fill('Tornado Warning');
  await ruleForm.getByLabel('Every screen').uncheck();
  await ruleForm.getByRole('button', { name: 'Add rule' }).click();
  await ruleForm
    .locator('[role=alert]')
    .getByText(/screen/i)
    .waitFor();
  t.match(await alertText(page, 'form[aria-label="Weather alert rule"]'), /name the screens|screen/i, 'a rule without screens is refused in words');
  await ruleForm.getByLabel('Lobby').check();
  t.ok(await ruleForm.getByLabel('A person confirms before it goes on the screens').isChecked(), 'confirmation is on by default');
  await ruleForm.getByRole('button', { name: 'Add rule' }).click();
  await page.locator('tr[data-rule="Tornadoes"]').waitFor();
  const rules = (await call('GET', '/api/v1/alerts/weather')).body.data.rules;
  t.match(
    rules,
    [
      {
        name: 'Tornadoes',
        match: { events: ['Tornado Warning'], severities: ['Extreme', 'Severe'] },
        targets: { screenIds: [lobby.screenId] },
        requireConfirmation: true,
      },
    ],
    'the rule was saved',
  );

  // The alert waits for a person: Confirm asks first, naming the screen.
  const pending = page.getByTestId('pending');
  await pending.waitFor();
  await checkA11y(page, t, 'weather page');
  await snap(page, 'console-weather-desktop');
  await page.setViewportSize(PHONE);
  await snap(page, 'console-weather-phone');
  await page.setViewportSize(DESKTOP);
  await pending.getByRole('button', { name: 'Confirm: take over screens' }).click();
  const dialog = page.locator('dialog.confirm-dialog');
  await dialog.waitFor();
  t.match(await dialog.innerText(), /Take over 1 screen now\?[\s\S]*Lobby/, 'the confirmation names the screen');
  await dialog.getByRole('button', { name: 'Take over now' }).click();
  await page.getByText('The alert is on the screens now.').waitFor();
  await pending.waitFor({ state: 'detached' });
  await row.getByText(/Tornadoes: on the screens \(confirmed by/).waitFor();
  await row.getByRole('link', { name: 'See takeovers' }).click();
  await page.getByRole('heading', { name: 'Takeovers', level: 1 }).waitFor();
  const onAir = page.getByTestId('active-takeovers');
  await onAir.waitFor();
  t.match(await onAir.innerText(), /Tornado Warning/, 'the takeover is on /takeovers');

  // A viewer reads the page but gets no buttons.
  const viewerContext = await browser.newContext({ viewport: PHONE, timezoneId: 'UTC' });
  await signedInContext(app, viewerContext, app.url, 'viewer');
  const viewer = await viewerContext.newPage();
  await viewer.goto(`${app.url}/weather`);
  await viewer.locator('tr[data-rule="Tornadoes"]').waitFor();
  t.equal(await viewer.getByRole('button', { name: 'Poll now' }).count(), 0, 'a viewer cannot poll');
  t.equal(await viewer.locator('form[aria-label="Feed monitor"]').count(), 0, 'nor change the monitor');
  t.equal(await viewer.getByRole('button', { name: 'Add a rule' }).count(), 0, 'nor add rules');
  t.same(errors, [], 'no page errors');
});
