import t from 'tap';
import type { Page } from 'playwright-core';
import { startApp } from './helpers/harness.js';
import { alertText, DESKTOP, launchBrowser, PHONE, signedInContext, snap, waitUntil } from './helpers/browser.js';
import { checkA11y } from './helpers/a11y.js';
import { signIn } from './helpers/auth.js';
import { pairScreen } from './helpers/screens.js';

const DAY = 86_400_000;
/** A datetime-local value for `ms` (the page runs in UTC). */
const local = (ms: number) => new Date(ms).toISOString().slice(0, 16);

async function save(page: Page) {
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.getByText('Draft saved; the checklist below was run again.').waitFor();
}

t.test('campaigns: create, content and placement, preflight blocks a past window, publish, manifest, restore, delete', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  const owner = await signedInContext(app, context, app.url);
  const call = async (method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
    app.json(path, { method, headers: { ...owner.headers, ...headers }, ...(json === undefined ? {} : { json }) });
  const site = (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id;
  const promo = (await call('POST', '/api/v1/playlists', { name: 'Spring promo', items: [{ assetId: site }] })).body.data.id;
  const prices = (await call('POST', '/api/v1/playlists', { name: 'Price list', items: [{ assetId: site }] })).body.data.id;
  const lobby = await pairScreen(app, owner, { name: 'Lobby' });

  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-campaigns').catch(() => {});
  });

  // The nav leads to the list; an empty name is refused by the form, a new campaign opens its editor.
  await page.goto(`${app.url}/`);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).click();
  await page.getByRole('heading', { name: 'Campaigns', level: 1 }).waitFor();
  await page.getByText('No campaigns yet.').waitFor();
  await page.getByLabel('New campaign name').fill('Spring sale');
  await page.getByRole('button', { name: 'Create campaign' }).click();
  await page.getByRole('heading', { name: 'Spring sale', level: 1 }).waitFor();
  const id = new URL(page.url()).pathname.split('/').pop()!;
  t.match(await page.getByTestId('campaign-state').innerText(), /never released/, 'a new campaign is a draft never released');
  // A fresh draft: the checklist says what is missing, and Publish is off with the reason.
  await page.locator('[data-testid=preflight-errors] li[data-code=no_window]').waitFor();
  t.ok(await page.getByRole('button', { name: 'Publish', exact: true }).isDisabled(), 'Publish is disabled while errors block');

  // Bad path: a window with a start and no end is refused in plain words before anything is sent.
  await page.getByLabel('Starts').fill(local(Date.now() - 3 * DAY));
  await page.getByRole('button', { name: 'Save draft' }).click();
  t.match(await alertText(page, 'form[aria-label="Campaign draft"]'), /Set both the start and the end/, 'half a window is explained');
  t.equal((await call('GET', `/api/v1/campaigns/${id}`)).body.data.revision, 1, 'nothing was saved');

  // A window in the past, what plays, one more content item, one placement on the screen.
  await page.getByLabel('Ends').fill(local(Date.now() - DAY));
  await page.getByLabel('Plays').selectOption({ label: 'Spring promo' });
  await page.getByLabel('Add content').selectOption({ label: 'Price list' });
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page.getByRole('button', { name: 'Add placement' }).click();
  const placement = page.locator('fieldset[data-placement="1"]');
  await placement.getByLabel('Lobby').check();
  await placement.getByLabel('Priority').fill('5');
  await save(page);
  const saved = (await call('GET', `/api/v1/campaigns/${id}`)).body.data;
  t.same(saved.draft.show, { type: 'playlist', id: promo }, 'the show was saved');
  t.same(saved.draft.content, [{ type: 'playlist', id: prices }], 'the content list was saved');
  t.match(saved.draft.placements, [{ targets: { screenIds: [lobby.screenId] }, priority: 5 }], 'the placement targets the screen');
  t.ok(Date.parse(saved.draft.window.endsAt) < Date.now(), 'the window was sent as an instant (in the past)');

  // The checklist ran again: the past window blocks publishing, said in words, with the reason on the button.
  const past = page.locator('[data-testid=preflight-errors] li[data-code=window_past]');
  await past.waitFor();
  t.match(await past.innerText(), /The window:.*already ended/, 'the error says what it concerns and why');
  t.equal(await page.locator('[data-testid=preflight-errors] li').count(), 1, 'only the window blocks');
  const publishButton = page.getByRole('button', { name: 'Publish', exact: true });
  t.ok(await publishButton.isDisabled(), 'Publish is disabled');
  t.equal(await publishButton.getAttribute('aria-describedby'), 'publish-why', 'the button is described by its reason');
  t.match(await page.getByTestId('publish-why').innerText(), /Fix the error in the checklist first/);
  // (The publish route itself does not refuse a past window today: only the checklist and this button stop it.)
  await checkA11y(page, t, 'campaign editor');
  await snap(page, 'campaign-editor-1280-light');

  // Fix the window: while unsaved, Publish waits (the checklist is about the saved draft);
  // once saved the checklist has no error left (warnings only), and Publish releases it.
  await page.getByLabel('Ends').fill(local(Date.now() + 7 * DAY));
  await page.getByRole('button', { name: 'Check again' }).click();
  await page.locator('[data-testid=preflight-errors] li[data-code=window_past]').waitFor();
  t.ok(await publishButton.isDisabled(), 'an unsaved fix does not enable Publish');
  await save(page);
  await page.getByTestId('preflight-clean').waitFor();
  t.ok(await page.locator('[data-testid=preflight-warnings] li').count(), 'warnings are listed (e.g. the screen never seen)');
  t.match(await page.locator('[data-testid=preflight-warnings] li[data-code=target_offline]').innerText(), /screen “Lobby”/, 'a warning names its screen');
  await waitUntil('Publish enabled', async () => !(await publishButton.isDisabled()));
  await page.getByLabel('Release note').fill('x');
  await page.getByLabel('Description').fill('Sale on spring items');
  t.match(await page.getByTestId('publish-why').innerText(), /Save the draft first/, 'an unsaved edit holds Publish back, with why');
  t.ok(await publishButton.isDisabled());
  await save(page);
  await waitUntil('Publish enabled again', async () => !(await publishButton.isDisabled()));
  await page.getByLabel('Release note').fill('first run');
  await publishButton.click();
  const ask = page.locator('dialog.confirm-dialog');
  t.match(await ask.innerText(), /Publish “Spring sale”\?[\s\S]*all at once/, 'Publish asks first');
  await ask.getByRole('button', { name: 'Publish' }).click();
  await page.getByText('Published release 1; its screens update now.').waitFor();
  const release1 = page.locator('[data-testid=releases] li[data-release="1"]');
  await release1.waitFor();
  t.match(await release1.innerText(), /Release 1.*on screens.*\(you\).*first run/s, 'the release is listed with who and the note');
  t.match(await page.getByTestId('campaign-state').innerText(), /Published/);

  // The paired screen's manifest plays the campaign's show.
  const entry = await waitUntil('the campaign in the manifest', async () => {
    const m = (await app.json('/api/v1/player/manifest', { headers: lobby.headers })).body.data;
    return m.timeline.find((e: any) => e.campaign?.id === id);
  });
  t.match(entry, { campaign: { id, name: 'Spring sale' }, content: { type: 'playlist', id: promo } }, 'the screen plays the campaign’s show');

  // A second draft plays the price list; restoring release 1 puts the promo back in the draft.
  await page.getByLabel('Plays').selectOption({ label: 'Price list' });
  await save(page);
  t.match(await page.getByTestId('campaign-state').innerText(), /Unpublished changes/, 'the edited draft differs from the release');
  await release1.getByRole('button', { name: 'Restore release 1 to the draft' }).click();
  t.match(await ask.innerText(), /Make release 1 the draft again\?[\s\S]*not released are lost/, 'restoring over unreleased changes asks first');
  await ask.getByRole('button', { name: 'Replace the draft' }).click();
  await page.getByText(/Release 1 is the draft again/).waitFor();
  t.same((await call('GET', `/api/v1/campaigns/${id}`)).body.data.draft.show, { type: 'playlist', id: promo }, 'the draft is release 1 again');
  t.equal(await page.getByLabel('Plays').inputValue(), `playlist:${promo}`, 'the editor shows the restored draft');
  t.match(await page.getByTestId('campaign-state').innerText(), /Published/, 'and it matches what screens play');

  // Bad path: someone saves meanwhile; our save is refused in words and offers a reload.
  const current = (await call('GET', `/api/v1/campaigns/${id}`)).body.data;
  t.equal((await call('PATCH', `/api/v1/campaigns/${id}/draft`, { description: 'by someone else' }, { 'if-match': `"${current.revision}"` })).status, 200);
  await page.getByLabel('Name', { exact: true }).fill('Spring sale 2');
  await page.getByRole('button', { name: 'Save draft' }).click();
  t.match(await alertText(page, 'form[aria-label="Campaign draft"]'), /Someone else changed this campaign/, 'a stale save is explained');
  await page.getByRole('button', { name: 'Reload the campaign' }).click();
  await waitUntil('the other change shown', async () => (await page.getByLabel('Description').inputValue()) === 'by someone else');

  await page.emulateMedia({ colorScheme: 'dark' });
  await page.setViewportSize(PHONE);
  await snap(page, 'campaign-editor-390-dark');
  const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
  t.ok(width <= PHONE.width, `no sideways scrolling at phone width (${width}px)`);
  await page.setViewportSize(DESKTOP);
  await page.emulateMedia({ colorScheme: 'light' });

  // The list: name, window, state, last release; axe; delete refused while stale, then done.
  await page.getByRole('link', { name: 'Campaigns', exact: true }).first().click();
  const row = page.locator('tr[data-campaign="Spring sale"]');
  await row.waitFor();
  t.match(await row.innerText(), /Spring sale.*–.*Unpublished changes.*Release 1/s, 'the list shows window, state and last release');
  await checkA11y(page, t, 'campaigns list');
  await snap(page, 'campaigns-list-1280-light');
  const wide = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
  t.ok(wide <= DESKTOP.width, `no sideways scrolling at 1280 px with the Campaigns entry in the nav (${wide}px)`);
  await page.setViewportSize(PHONE);
  await snap(page, 'campaigns-list-390-light');
  await page.setViewportSize(DESKTOP);
  const now = (await call('GET', `/api/v1/campaigns/${id}`)).body.data;
  await call('PATCH', `/api/v1/campaigns/${id}/draft`, { description: 'changed again' }, { 'if-match': `"${now.revision}"` });
  await row.getByRole('button', { name: 'Delete Spring sale' }).click();
  await ask.getByRole('button', { name: 'Delete campaign' }).click();
  t.match(await alertText(page), /Someone else changed this campaign/, 'a stale delete is refused in words');
  t.equal((await call('GET', `/api/v1/campaigns/${id}`)).status, 200, 'it still exists');
  await page.reload();
  await row.getByRole('button', { name: 'Delete Spring sale' }).click();
  await ask.getByRole('button', { name: 'Delete campaign' }).click();
  await page.getByText('No campaigns yet.').waitFor();
  t.equal((await call('GET', `/api/v1/campaigns/${id}`)).status, 404, 'the campaign is gone');
  t.notOk(
    (await app.json('/api/v1/player/manifest', { headers: lobby.headers })).body.data.timeline.some((e: any) => e.campaign),
    'the screen no longer plays it',
  );
  t.same(errors, [], 'no uncaught errors in the page');
});

t.test('campaigns: viewers read, editors do not publish', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const owner = await signIn(app, { role: 'owner' });
  const site = (await app.json('/api/v1/assets/websites', { method: 'POST', headers: owner.headers, json: { url: 'https://example.org/', name: 'Site' } })).body
    .data.id;
  const pl = (await app.json('/api/v1/playlists', { method: 'POST', headers: owner.headers, json: { name: 'Leaves', items: [{ assetId: site }] } })).body.data
    .id;
  const window = { startsAt: new Date(Date.now() - DAY).toISOString(), endsAt: new Date(Date.now() + DAY).toISOString() };
  const made = await app.json('/api/v1/campaigns', {
    method: 'POST',
    headers: owner.headers,
    json: { name: 'Autumn', window, show: { type: 'playlist', id: pl } },
  });
  t.equal(made.status, 201);
  const id = made.body.data.id;

  const viewerContext = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  await signedInContext(app, viewerContext, app.url, 'viewer');
  const viewer = await viewerContext.newPage();
  await viewer.goto(`${app.url}/campaigns`);
  await viewer.locator('tr[data-campaign="Autumn"]').waitFor();
  t.equal(await viewer.getByLabel('New campaign name').count(), 0, 'a viewer cannot create');
  t.equal(await viewer.getByRole('button', { name: /^Delete/ }).count(), 0, 'nor delete');
  await viewer.goto(`${app.url}/campaigns/${id}`);
  await viewer.getByRole('heading', { name: 'Autumn', level: 1 }).waitFor();
  t.equal(await viewer.getByRole('button', { name: 'Save draft' }).count(), 0, 'nor save');
  t.ok(await viewer.getByLabel('Name', { exact: true }).isDisabled(), 'the draft is read-only');

  const editorContext = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  await signedInContext(app, editorContext, app.url, 'editor');
  const editor = await editorContext.newPage();
  await editor.goto(`${app.url}/campaigns/${id}`);
  await editor.getByRole('heading', { name: 'Autumn', level: 1 }).waitFor();
  await editor.getByTestId('preflight-clean').waitFor();
  t.ok(await editor.getByRole('button', { name: 'Publish', exact: true }).isDisabled(), 'an editor sees Publish disabled on a clean checklist');
  t.equal(await editor.getByTestId('publish-why').innerText(), 'Publishing needs the publisher role.', 'and why');

  // A campaign id that names nothing says so.
  await editor.goto(`${app.url}/campaigns/0190f5a2-7b3c-7def-8abc-0123456789ab`);
  const missing = await alertText(editor);
  t.comment(`missing campaign: ${missing}`);
  t.match(missing, /campaign|not found|no such/i, 'a missing campaign is said in words');
});

t.test('campaigns with approvals on: Submit for approval instead of Publish, an editor cannot delete a released one (said in words)', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const owner = await signIn(app, { role: 'owner' });
  const ownerCall = async (method: string, path: string, json?: unknown) =>
    app.json(path, { method, headers: owner.headers, ...(json === undefined ? {} : { json }) });
  const site = (await ownerCall('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id;
  const pl = (await ownerCall('POST', '/api/v1/playlists', { name: 'Winter', items: [{ assetId: site }] })).body.data.id;
  const window = { startsAt: new Date(Date.now() - DAY).toISOString(), endsAt: new Date(Date.now() + DAY).toISOString() };
  const id = (await ownerCall('POST', '/api/v1/campaigns', { name: 'Winter', window, show: { type: 'playlist', id: pl } })).body.data.id;
  t.equal((await ownerCall('POST', `/api/v1/campaigns/${id}/publish`, {})).status, 201, 'released before approvals are required');
  t.equal((await ownerCall('PATCH', '/api/v1/settings', { approvals: { required: true } })).status, 200);

  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  await signedInContext(app, context, app.url, 'editor');
  const page = await context.newPage();
  await page.goto(`${app.url}/campaigns/${id}`);
  await page.getByRole('heading', { name: 'Winter', level: 1 }).waitFor();
  await page.getByRole('heading', { name: 'Publish' }).waitFor();
  t.match(
    await page.locator('article', { has: page.getByRole('heading', { name: 'Publish' }) }).innerText(),
    /Approvals are on/,
    'the panel says approvals are on',
  );
  t.equal(await page.getByRole('button', { name: 'Publish', exact: true }).count(), 0, 'no Publish button while approvals are on');
  // An editor changes the draft: unsaved, the submission waits; saved, it goes to a publisher.
  await page.getByLabel('Description').fill('Hot drinks');
  t.match(await page.getByTestId('publish-why').innerText(), /Save the draft first/, 'an unsaved draft is not submitted');
  t.equal(await page.getByRole('button', { name: 'Submit for approval' }).count(), 0);
  await save(page);
  await page.getByRole('button', { name: 'Submit for approval' }).click();
  const dialog = page.getByTestId('submit-dialog');
  await dialog.getByLabel('Message for the reviewer (optional)').fill('winter menu');
  await dialog.getByRole('button', { name: 'Submit', exact: true }).click();
  await page.getByText('Submitted: pending approval.').waitFor();
  const pending = (await ownerCall('GET', '/api/v1/content-submissions?state=pending')).body.data.items;
  t.match(pending, [{ type: 'campaign', contentId: id, state: 'pending', message: 'winter menu' }], 'a publisher has it to approve');

  await page.goto(`${app.url}/campaigns`);
  const row = page.locator('tr[data-campaign="Winter"]');
  await row.getByRole('button', { name: 'Delete Winter' }).click();
  await page.locator('dialog.confirm-dialog').getByRole('button', { name: 'Delete campaign' }).click();
  const said = await alertText(page);
  t.match(said, /^Could not delete “Winter”: .*published.*only a publisher, admin or owner may delete/, `the 403 is said in words (${said})`);
  t.equal((await ownerCall('GET', `/api/v1/campaigns/${id}`)).status, 200, 'it still exists');
});
