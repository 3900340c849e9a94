import t from 'tap';
import { startApp } from './helpers/harness.js';
import { DESKTOP, launchBrowser, PHONE, signedInContext, snap } from './helpers/browser.js';
import { pairScreen } from './helpers/screens.js';

t.test('schedules: weekly recurrence from the form, the week preview shows it, bad input shown on the form; groups and locations', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const context = await browser.newContext({ viewport: DESKTOP });
  const owner = await signedInContext(app, context, app.url);
  await pairScreen(app, owner, { name: 'Bar screen' });
  const pl = await app.json('/api/v1/playlists', { method: 'POST', headers: owner.headers, json: { name: 'Happy hour' } });
  t.equal(pl.status, 201);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-schedules').catch(() => {});
  });

  // A location and a group, from their pages.
  await page.goto(app.url + '/locations');
  await page.getByLabel('Name', { exact: true }).fill('Main bar');
  await page.getByLabel('Time zone').selectOption('Europe/Berlin');
  await page.getByRole('button', { name: 'Add location' }).click();
  await page.locator('tr[data-location="Main bar"]').waitFor();
  t.pass('location added');
  await page.goto(app.url + '/groups');
  await page.getByLabel('New group name').fill('Bar');
  await page.getByRole('button', { name: 'Create group' }).click();
  await page.locator('article[data-group="Bar"]').waitFor();
  await page.getByLabel('Add a screen to Bar').selectOption({ label: 'Bar screen' });
  await page.locator('article[data-group="Bar"] a', { hasText: 'Bar screen' }).waitFor();
  t.pass('group created and the screen added to it');

  await page.goto(app.url + '/schedules');
  await page.getByRole('heading', { name: 'Schedules' }).waitFor();
  await page.getByText('New schedule').click();
  const form = page.getByRole('form', { name: 'New schedule' });
  await form.getByLabel('Name', { exact: true }).fill('Evenings');
  await form.getByLabel('Playlist').selectOption({ label: 'Happy hour' });
  await form.getByLabel('Bar screen').check();
  const today = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  const day = `${today.getFullYear()}-${pad(today.getMonth() + 1)}-${pad(today.getDate())}`;
  // Ends before it starts: the server refuses, the message shows on the form.
  await form.getByLabel('Starts').fill(`${day}T18:00`);
  await form.getByLabel('Ends').fill(`${day}T17:00`);
  await form.getByRole('button', { name: 'Create schedule' }).click();
  t.match(await form.getByRole('alert').innerText(), /\S/, 'an end before the start is refused on the form');
  await form.getByLabel('Ends').fill(`${day}T22:00`);
  await form.getByLabel('Repeats').selectOption('weekly');
  const dayCode = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'][today.getDay()]!;
  const dayLabel: string = ({ MO: 'Mon', TU: 'Tue', WE: 'Wed', TH: 'Thu', FR: 'Fri', SA: 'Sat', SU: 'Sun' } as Record<string, string>)[dayCode]!;
  await form.getByLabel(dayLabel, { exact: true }).check();
  await form.getByLabel('Time zone').selectOption('UTC');
  await form.getByRole('button', { name: 'Create schedule' }).click();
  const row = page.locator('tr[data-schedule="Evenings"]');
  await row.waitFor();
  t.match(await row.innerText(), new RegExp(`every week on ${dayLabel}`), 'the recurrence is described in words');
  const created = await app.json('/api/v1/schedules', { headers: owner.headers });
  t.equal(created.body.data.items[0].rrule, `FREQ=WEEKLY;BYDAY=${dayCode}`, 'the RRULE reached the server');

  // The week preview for the screen shows the scheduled playlist.
  await page.locator('.week .seg-schedule', { hasText: 'Happy hour' }).first().waitFor();
  t.pass('the week preview shows the scheduled playlist');
  await snap(page, 'schedules-1280-light');
  await page.emulateMedia({ colorScheme: 'dark' });
  await snap(page, 'schedules-1280-dark');
  await page.setViewportSize(PHONE);
  await snap(page, 'schedules-390-dark');
  const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
  t.ok(width <= PHONE.width, `no sideways scrolling at phone width (${width}px)`);
  await page.setViewportSize(DESKTOP);

  // Pause it.
  await row.getByRole('button', { name: 'Pause' }).click();
  await row.getByRole('button', { name: 'Resume' }).waitFor();
  t.same(errors, [], 'no uncaught errors in the page');
});
