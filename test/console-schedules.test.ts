import t from 'tap';
import { startApp } from './helpers/harness.js';
import { DESKTOP, launchBrowser, PHONE, signedInContext, snap } from './helpers/browser.js';
import { pairScreen } from './helpers/screens.js';
import { checkA11y } from './helpers/a11y.js';

t.test('schedules: weekly recurrence from the form, the week preview shows it, bad input shown on the form; groups and locations', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  // One zone for the page and the expectations below (the month grid is in the browser's zone).
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  const owner = await signedInContext(app, context, app.url);
  await pairScreen(app, owner, { name: 'Bar screen' });
  // Something to play: a playlist with nothing playable is passed over by the preview (docs/content.md).
  const site = await app.json('/api/v1/assets/websites', { method: 'POST', headers: owner.headers, json: { url: 'https://example.org/' } });
  const pl = await app.json('/api/v1/playlists', {
    method: 'POST',
    headers: owner.headers,
    json: { name: 'Happy hour', items: [{ assetId: site.body.data.id }] },
  });
  t.equal(pl.status, 201);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-schedules').catch(() => {});
  });

  // A location and a group, from their pages.
  await page.goto(`${app.url}/locations`);
  await page.getByLabel('Name', { exact: true }).fill('Main bar');
  await page.getByLabel('Time zone').selectOption('Europe/Berlin');
  await page.getByRole('button', { name: 'Add location' }).click();
  await page.locator('tr[data-location="Main bar"]').waitFor();
  t.pass('location added');
  await checkA11y(page, t, 'locations');
  await page.goto(`${app.url}/groups`);
  await page.getByLabel('New group name').fill('Bar');
  await page.getByRole('button', { name: 'Create group' }).click();
  await page.locator('article[data-group="Bar"]').waitFor();
  await page.getByLabel('Add a screen to Bar').selectOption({ label: 'Bar screen' });
  await page.locator('article[data-group="Bar"] a', { hasText: 'Bar screen' }).waitFor();
  t.pass('group created and the screen added to it');
  await checkA11y(page, t, 'groups');
  // The group's default playlist: shown (read back from the server), also after a reload.
  const groupCard = page.locator('article[data-group="Bar"]');
  t.match(await groupCard.getByTestId('group-default').innerText(), /No default playlist/);
  await groupCard.getByLabel('Group playlist').selectOption({ label: 'Happy hour' });
  await groupCard.getByTestId('group-default').getByText('Plays Happy hour by default', { exact: false }).waitFor();
  await page.reload();
  await page.locator('article[data-group="Bar"]').getByTestId('group-default').getByText('Plays Happy hour by default', { exact: false }).waitFor();
  t.equal(
    await page.locator('article[data-group="Bar"]').getByLabel('Group playlist').inputValue(),
    pl.body.data.id,
    'the select shows the assignment after a reload',
  );
  // A screen that never reported: the fleet shows what its plan says, marked planned.
  await page.goto(`${app.url}/screens`);
  const planned = page.locator('tr[data-screen="Bar screen"] .now-showing[data-planned="true"]');
  await planned.waitFor();
  t.match(await planned.innerText(), /Happy hour\s+planned/, 'never seen: the group playlist, marked planned');
  await page.goto(`${app.url}/groups`);
  // Back to none, so the previews below show the schedule against the idle slide.
  await page.locator('article[data-group="Bar"]').getByLabel('Group playlist').selectOption('');
  await page.locator('article[data-group="Bar"]').getByTestId('group-default').getByText('No default playlist', { exact: false }).waitFor();

  await page.goto(`${app.url}/schedules`);
  await page.getByRole('heading', { name: 'Schedules' }).waitFor();
  await page.getByText('New schedule').click();
  const form = page.getByRole('form', { name: 'New schedule' });
  await form.getByLabel('Name', { exact: true }).fill('Evenings');
  await form.getByLabel('Plays').selectOption({ label: 'Happy hour' });
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

  // The month view: the weekly recurrence (expanded by the server's preview) on the right days, keyboard first.
  const monthButton = page.getByRole('button', { name: 'Month', exact: true });
  await monthButton.focus();
  await page.keyboard.press('Enter');
  t.equal(await monthButton.getAttribute('aria-pressed'), 'true', 'Month is pressed');
  const grid = page.getByRole('table', { name: /^Month preview/ });
  await grid.locator('li.occ', { hasText: 'Happy hour' }).first().waitFor();
  await page.emulateMedia({ colorScheme: 'light' });
  const expectedDays = (cells: { date: string; occ: string[] }[]) =>
    cells.map((c) => ({
      date: c.date,
      expected: c.date >= day && new Date(`${c.date}T12:00:00Z`).getUTCDay() === today.getDay(),
      shown: c.occ.some((o) => o.includes('Happy hour')),
    }));
  const readCells = () =>
    grid
      .locator('td[data-date]')
      .evaluateAll((tds) =>
        tds.map((td: any) => ({ date: td.dataset.date as string, occ: [...td.querySelectorAll('li.occ')].map((li: any) => li.textContent as string) })),
      );
  let cells = await readCells();
  t.ok(cells.length >= 28 && cells.length <= 42 && cells.length % 7 === 0, `whole weeks around the month (${cells.length} days)`);
  t.ok(
    cells.some((c) => c.date === day),
    'today is in the grid',
  );
  let checks = expectedDays(cells);
  t.same(
    checks.filter((c) => c.expected !== c.shown),
    [],
    'the schedule shows on every matching weekday from its start, and on no other day',
  );
  t.ok(checks.filter((c) => c.shown).length >= 1, 'at least one occurrence shown');
  const todayCell = grid.locator(`td[data-date="${day}"]`);
  t.equal(await todayCell.getAttribute('aria-current'), 'date', 'today is marked');
  t.match(await todayCell.locator('li.occ').first().innerText(), /18:00.*22:00.*Happy hour|Happy hour/, 'times and playlist name');
  await snap(page, 'schedules-month-1280-light');
  await page.emulateMedia({ colorScheme: 'dark' });
  await snap(page, 'schedules-month-1280-dark');
  await page.setViewportSize(PHONE);
  await snap(page, 'schedules-month-390-dark');
  const monthWidth = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
  t.ok(monthWidth <= PHONE.width, `month: no sideways scrolling at phone width (${monthWidth}px)`);
  t.ok(await todayCell.locator('li.occ', { hasText: 'Happy hour' }).isVisible(), 'phone: the day with the schedule is listed');
  await page.setViewportSize(DESKTOP);
  await page.emulateMedia({ colorScheme: 'light' });

  // Next month: the recurrence goes on; its first matching weekday has it.
  const firstDate = cells[0]!.date;
  await page.getByRole('button', { name: 'Next month' }).click();
  await page.waitForFunction((first) => (globalThis as any).document.querySelector('table.month td[data-date]')?.dataset.date !== first, firstDate);
  await grid.locator('li.occ', { hasText: 'Happy hour' }).first().waitFor();
  cells = await readCells();
  checks = expectedDays(cells);
  t.same(
    checks.filter((c) => c.expected !== c.shown),
    [],
    'next month: every matching weekday, no other day',
  );

  // Today comes back; a day's number opens its week.
  await page.getByRole('button', { name: 'Today' }).click();
  await todayCell.waitFor();
  await todayCell.getByRole('button', { name: /^Week of / }).click();
  await page.locator('.week .seg-schedule', { hasText: 'Happy hour' }).first().waitFor();
  t.equal(await page.getByRole('button', { name: 'Week', exact: true }).getAttribute('aria-pressed'), 'true', 'a day opens the week view');

  await checkA11y(page, t, 'schedules (week)');
  // Pause it: asked first, then a toast offers Undo.
  await row.getByRole('button', { name: 'Pause' }).click();
  const ask = page.locator('dialog.confirm-dialog');
  await ask.getByRole('heading', { name: 'Pause “Evenings”?' }).waitFor();
  await checkA11y(page, t, 'pause confirmation');
  await ask.getByRole('button', { name: 'Pause' }).click();
  await row.getByRole('button', { name: 'Resume' }).waitFor();
  t.equal(await row.getByTestId('next').innerText(), 'paused', 'a paused schedule has no “next”');
  await page.getByTestId('toast').getByRole('button', { name: 'Undo' }).click();
  await row.getByRole('button', { name: 'Pause' }).waitFor();
  t.pass('Undo resumed it');
  await row.getByRole('button', { name: 'Pause' }).click();
  await ask.getByRole('button', { name: 'Pause' }).click();
  await row.getByRole('button', { name: 'Resume' }).waitFor();

  // Edit it: name, content (a published layout), targets, times, monthly, priority.
  const layout = await app.json('/api/v1/layouts', {
    method: 'POST',
    headers: owner.headers,
    json: { name: 'Bar wall', zones: [{ name: 'All', x: 0, y: 0, width: 1920, height: 1080, content: { type: 'playlist', playlistId: pl.body.data.id } }] },
  });
  t.equal((await app.json(`/api/v1/layouts/${layout.body.data.id}/publish`, { method: 'POST', headers: owner.headers, json: {} })).status, 200);
  await page.reload();
  await row.getByRole('button', { name: 'Edit Evenings' }).click();
  const edit = page.getByRole('form', { name: 'Edit schedule' });
  t.equal(await edit.getByLabel('Name', { exact: true }).inputValue(), 'Evenings', 'the form opens filled in');
  t.equal(await edit.getByLabel('Starts').inputValue(), `${day}T18:00`, 'the start in the schedule’s zone');
  t.equal(await edit.getByLabel('Repeats').inputValue(), 'weekly', 'the recurrence read back');
  t.ok(await edit.getByLabel(dayLabel, { exact: true }).isChecked(), 'its weekday ticked');
  t.ok(await edit.getByLabel('Bar screen').isChecked(), 'its screen ticked');
  // Bad input on edit: shown on the form, nothing saved.
  await edit.getByLabel('Ends').fill(`${day}T17:00`);
  await edit.getByRole('button', { name: 'Save schedule' }).click();
  t.match(await edit.getByRole('alert').innerText(), /endsAt must be after startsAt/, 'an end before the start is refused on the edit form');
  await edit.getByLabel('Name', { exact: true }).fill('Late evenings');
  await edit.getByLabel('Plays').selectOption({ label: 'Bar wall' });
  await edit.getByLabel('Bar screen').uncheck();
  await edit.getByLabel('Group Bar').check();
  await edit.getByLabel('Starts').fill(`${day}T19:00`);
  await edit.getByLabel('Ends').fill(`${day}T23:00`);
  await edit.getByLabel('Repeats').selectOption('monthly');
  await edit.getByLabel('Priority').fill('7');
  await edit.getByRole('button', { name: 'Save schedule' }).click();
  const edited = page.locator('tr[data-schedule="Late evenings"]');
  await edited.waitFor();
  t.equal(await edit.count(), 0, 'the edit form closes once saved');
  t.match(await edited.innerText(), new RegExp(`every month on the ${today.getUTCDate()}(st|nd|rd|th)`), 'monthly, in words');
  const afterEdit = (await app.json('/api/v1/schedules', { headers: owner.headers })).body.data.items[0];
  t.match(
    afterEdit,
    {
      name: 'Late evenings',
      content: { type: 'layout', id: layout.body.data.id },
      targets: { screenIds: [], groupIds: [String] },
      rrule: 'FREQ=MONTHLY',
      priority: 7,
      enabled: false,
      startsAt: new Date(`${day}T19:00:00Z`).toISOString(),
      endsAt: new Date(`${day}T23:00:00Z`).toISOString(),
    },
    'every change reached the server; still paused',
  );
  await snap(page, 'schedules-edited-1280-light');

  // Someone else changes it while the form is open: the save is refused, not lost silently.
  await edited.getByRole('button', { name: 'Edit Late evenings' }).click();
  t.equal(await edit.getByLabel('Repeats').inputValue(), 'monthly', 'monthly is read back as the monthly choice');
  t.equal((await app.json(`/api/v1/schedules/${afterEdit.id}`, { method: 'PATCH', headers: owner.headers, json: { priority: 9 } })).status, 200);
  await edit.getByLabel('Priority').fill('8');
  await edit.getByRole('button', { name: 'Save schedule' }).click();
  t.match(await edit.getByRole('alert').innerText(), /Someone else changed this schedule/, 'a stale edit is explained');
  const other = (await app.json(`/api/v1/schedules/${afterEdit.id}`, { headers: owner.headers })).body.data;
  t.equal(other.priority, 9, 'the other change stands');
  t.equal(other.enabled, false, 'a PATCH that leaves `enabled` out keeps the schedule paused');
  await page.getByRole('button', { name: 'Cancel' }).click();
  t.equal(await edit.count(), 0, 'Cancel closes the form');

  // Traps from the walk, gone: "Weekly on…" with no day, a refusal that stays after the form changed,
  // and times whose zone the form did not say.
  const again = page.getByRole('form', { name: 'New schedule' });
  if (!(await again.isVisible())) await page.getByText('New schedule').click();
  await again.getByLabel('Name', { exact: true }).fill('Lunch at the bar');
  await again.getByLabel('Plays').selectOption({ label: 'Happy hour' });
  await again.getByLabel('Location Main bar').check();
  await again.getByLabel('Starts').fill(`${day}T12:00`);
  await again.getByLabel('Ends').fill(`${day}T14:00`);
  await again.getByLabel('Repeats').selectOption('weekly');
  const ticked = await again.locator('input[name="byday"]:checked').count();
  t.equal(ticked, 1, 'weekly starts with the start’s weekday ticked');
  await again.locator('input[name="byday"]:checked').uncheck();
  await again.getByRole('button', { name: 'Create schedule' }).click();
  t.match(await again.getByRole('alert').innerText(), /Tick at least one day/, 'weekly with no day is refused on the form');
  t.equal((await app.json('/api/v1/schedules', { headers: owner.headers })).body.data.items.length, 1, 'nothing was saved');
  await again.getByLabel(dayLabel, { exact: true }).check();
  t.equal(await again.getByRole('alert').count(), 0, 'the refusal goes as soon as the form changes');
  // The zone in words: Main bar is in Berlin; this browser is in UTC, so the form warns and converts.
  const note = again.getByTestId('zone-note');
  t.match(await note.innerText(), /Times are in Berlin time \(Europe\/Berlin\)/, 'the zone the times are read in, in plain words');
  t.match(
    await again.getByTestId('zone-warning').innerText(),
    /This browser is in UTC, 1 hour behind: 12:00 there is 11:00 here/,
    'and a warning that this browser is elsewhere',
  );
  await again.getByLabel('Time zone').selectOption('UTC');
  t.equal(await again.getByTestId('zone-warning').count(), 0, 'no warning once the times are in this browser’s zone');
  await checkA11y(page, t, 'new schedule form with a zone note');
  t.same(errors, [], 'no uncaught errors in the page');
});
