import t from 'tap';
import type { Page } from 'playwright-core';
import { checkA11y } from './helpers/a11y.js';
import { signIn } from './helpers/auth.js';
import { colourAt, contextAs, dominant, launchBrowser, PHONE, pairPlayPage, snap, waitUntil } from './helpers/browser.js';
import { startApp } from './helpers/harness.js';

/**
 * The approvals inbox for content and the notification bell (issue 20), in Chromium, against
 * the real server with approvals on. A /play page shows a layout (red background) through a
 * schedule. An editor changes the draft to blue and submits it in the console; a publisher, in the console,
 * sees it in /approvals (and in the nav badge), opens it (the compare names the background,
 * before and after), approves and schedules it ~8 s ahead: the /play page stays red until then
 * and turns blue after. A second submission is sent back for changes (a comment is required):
 * the editor's bell counts it, lists it, and its link shows the comment. A publisher approving
 * their own submission is refused with the server's words. axe on /approvals; phone width.
 */

const RED = '#dd1111';
const BLUE = '#1133dd';
const GREEN = '#11bb33';

/** "YYYY-MM-DDTHH:MM:SS" in UTC (the console contexts run in UTC). */
const localInput = (ms: number) => new Date(ms).toISOString().slice(0, 19);

t.test('content approvals: compare, approve, schedule (pixels), request changes, bell, self-approval', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  app.deps.periodic.start(); // the scheduler that publishes scheduled submissions, as main.ts runs it
  const base = app.url.replace('127.0.0.1', 'localhost');
  const owner = await signIn(app);
  const as = (who: { headers: Record<string, string> }) => (method: string, path: string, json?: unknown) =>
    app.json(path, { method, headers: who.headers, ...(json === undefined ? {} : { json }) });
  const ownerCall = as(owner);

  // The world: a layout with a red background (one small empty zone), published, scheduled on a /play page.
  const menu = (await ownerCall('POST', '/api/v1/playlists', { name: 'Menu' })).body.data;
  const zones = [{ id: 'corner', name: 'Corner', x: 0, y: 0, width: 192, height: 108, content: { type: 'playlist', playlistId: menu.id } }];
  const made = await ownerCall('POST', '/api/v1/layouts', { name: 'Board', background: { color: RED, assetId: null }, zones });
  t.equal(made.status, 201, JSON.stringify(made.body));
  const layoutId: string = made.body.data.id;
  t.equal((await ownerCall('POST', `/api/v1/layouts/${layoutId}/publish`, {})).status, 200, 'published before approvals are on');
  const playerCtx = await browser.newContext({ viewport: { width: 960, height: 540 } });
  t.teardown(() => playerCtx.close());
  const player = await playerCtx.newPage();
  await player.goto(`${base}/play`);
  const screenId = await pairPlayPage(app, owner, player, 'Lobby');
  const sched = await ownerCall('POST', '/api/v1/schedules', {
    name: 'Board',
    content: { layoutId },
    targets: { screenIds: [screenId] },
    startsAt: new Date(Date.now() - 3600_000).toISOString(),
    endsAt: new Date(Date.now() + 5 * 3600_000).toISOString(),
    timeZone: 'UTC',
  });
  t.equal(sched.status, 201, JSON.stringify(sched.body));
  t.equal((await ownerCall('PATCH', '/api/v1/settings', { approvals: { required: true } })).status, 200, 'approvals on');
  const colour = async () => dominant(await colourAt(player, 0.6, 0.6));
  await waitUntil('the /play page shows the red layout', async () => (await colour()) === 'red', 20_000);

  // The editor (a browser context, for the bell later) changes the draft (through the API: the
  // colour) and submits it in the console, from the layout's page.
  const editor = await contextAs(app, browser, 'editor');
  const editorCall = as(editor.who);
  const draft = (color: string) => editorCall('PUT', `/api/v1/layouts/${layoutId}/draft`, { background: { color, assetId: null }, zones });
  t.equal((await draft(BLUE)).status, 200, 'draft changed');
  await editor.page.goto(`${app.url}/layouts/${layoutId}`);
  await editor.page.getByRole('button', { name: 'Submit for approval' }).click();
  const submitDialog = editor.page.getByTestId('submit-dialog');
  await submitDialog.getByLabel('Message for the reviewer (optional)').fill('Blue for the winter menu');
  await submitDialog.getByRole('button', { name: 'Submit', exact: true }).click();
  await editor.page.getByText('Submitted: pending approval.').waitFor();
  const pending = (await editorCall('GET', `/api/v1/content-submissions?contentId=${layoutId}`)).body.data.items;
  t.match(pending, [{ state: 'pending', message: 'Blue for the winter menu', submittedBy: editor.who.user.id }], 'submitted from the console');
  const sub1 = { body: { data: pending[0] } };
  t.equal(await colour(), 'red', 'a draft and a submission do not reach the screen');

  // The publisher sees it in /approvals and in the nav badge.
  const pub = await contextAs(app, browser, 'publisher');
  const page = pub.page;
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (t.passing()) return;
    await snap(page, 'failure-console-inbox-publisher').catch(() => {});
    await snap(editor.page, 'failure-console-inbox-editor').catch(() => {});
    await snap(player, 'failure-console-inbox-player', false).catch(() => {});
  });
  await page.goto(`${app.url}/approvals`);
  const item = page.locator(`[data-submission="${sub1.body.data.id}"]`);
  await item.waitFor();
  t.match(await item.innerText(), /layout[\s\S]*Board[\s\S]*Pending[\s\S]*Blue for the winter menu/, 'type, name, state and message listed');
  t.match(await item.innerText(), /Test editor/, 'who submitted');
  t.equal((await page.getByTestId('nav-count').innerText()).replace(/\D/g, ''), '1', 'the nav badge counts the pending submission');

  // Open: the compare names the background, before and after.
  await item.getByRole('button', { name: 'Open the submission of Board' }).click();
  const detail = page.getByTestId('submission-detail');
  const row = detail.locator('tr[data-field="background"]');
  await row.waitFor();
  t.match(await row.locator('.compare-before').innerText(), RED, 'before: the published colour');
  t.match(await row.locator('.compare-after').innerText(), BLUE, 'after: the submitted colour');
  t.match(page.url(), `submission=${sub1.body.data.id}`, 'the detail has its own address');
  await checkA11y(page, t, '/approvals with a submission open');
  await snap(page, 'console-inbox-compare');

  // Approve, then schedule ~8 s ahead at a local date-time.
  await detail.getByRole('button', { name: 'Approve', exact: true }).click();
  await detail.and(page.locator('[data-state="approved"]')).waitFor();
  const at = Math.ceil((Date.now() + 8_000) / 1000) * 1000;
  await detail.getByLabel(/Or publish at/).fill(localInput(at));
  await detail.getByRole('button', { name: 'Schedule', exact: true }).click();
  await detail.and(page.locator('[data-state="scheduled"]')).waitFor();
  const stored = (await ownerCall('GET', `/api/v1/content-submissions/${sub1.body.data.id}`)).body.data;
  t.equal(stored.publishAt, new Date(at).toISOString(), 'sent as the ISO instant of the local time typed');
  t.ok(Date.now() < at - 1000, 'still before the time');
  t.equal(await colour(), 'red', 'the screen still shows the old version before the time');
  await detail.getByRole('button', { name: 'Cancel schedule' }).waitFor();
  const blueAt = await waitUntil('the /play page turns blue', async () => ((await colour()) === 'blue' ? Date.now() : undefined), 40_000);
  t.ok(blueAt >= at, `blue only after the scheduled time (${blueAt - at} ms after)`);
  t.equal((await ownerCall('GET', `/api/v1/content-submissions/${sub1.body.data.id}`)).body.data.state, 'published');

  // A second submission is sent back: a comment is required.
  t.equal((await draft(GREEN)).status, 200);
  const sub2 = await editorCall('POST', `/api/v1/content-submissions/layout/${layoutId}`, { message: 'Green instead?' });
  t.equal(sub2.status, 201);
  await page.goto(`${app.url}/approvals?submission=${sub2.body.data.id}`);
  await detail.and(page.locator('[data-state="pending"]')).waitFor();
  await detail.getByRole('button', { name: 'Request changes' }).click();
  t.match(await detail.locator('[role=alert]').innerText(), 'Say in the comment what should change', 'no comment: refused before asking');
  await detail.getByLabel(/^Comment/).fill('Green clashes with the logo, keep blue');
  await detail.getByRole('button', { name: 'Request changes' }).click();
  await detail.and(page.locator('[data-state="changes_requested"]')).waitFor();
  t.equal((await ownerCall('GET', `/api/v1/content-submissions/${sub2.body.data.id}`)).body.data.state, 'changes_requested');

  // The editor's bell counts it; the popover lists it; its link shows the comment; Escape closes it.
  const ep = editor.page;
  await ep.goto(`${app.url}/`);
  const bell = ep.getByTestId('bell');
  const unread = (await editorCall('GET', '/api/v1/notifications?unread=true')).body.data.items.length;
  t.ok(unread >= 2, `the editor has unread notifications (${unread})`);
  await waitUntil('the bell counts them', async () => (await bell.getAttribute('aria-label')) === `Notifications, ${unread} unread`);
  await bell.click();
  const popover = ep.getByRole('region', { name: 'Notifications' });
  const changes = popover.getByTestId('notification').filter({ hasText: 'Changes requested' });
  await changes.waitFor();
  t.match(await changes.innerText(), 'Green clashes with the logo', 'the notification carries the comment');
  await checkA11y(ep, t, 'the notification popover open', { include: '.site-header' });
  await snap(ep, 'console-inbox-bell', false);
  await ep.keyboard.press('Escape');
  await popover.waitFor({ state: 'detached' });
  t.ok(await bell.evaluate((b) => b === (globalThis as any).document.activeElement), 'Escape closes the popover and focus returns to the bell');
  await bell.click();
  await changes.getByRole('link').click();
  const editorDetail = ep.getByTestId('submission-detail');
  await editorDetail.waitFor();
  t.match(await editorDetail.getByTestId('decision-comment').innerText(), 'Green clashes with the logo, keep blue', 'the editor sees the comment');
  t.equal(await editorDetail.getByRole('button', { name: 'Approve' }).count(), 0, 'an editor has no decision buttons');
  await snap(ep, 'console-inbox-editor');
  t.match(await ep.locator(`[data-submission="${sub2.body.data.id}"]`).innerText(), 'Green clashes', 'their list shows the decision comment too');
  // A published submission compares its publication with the one before.
  await ep.goto(`${app.url}/approvals?submission=${sub1.body.data.id}`);
  await editorDetail.and(ep.locator('[data-state="published"]')).waitFor();
  t.match(await editorDetail.getByTestId('compare').innerText(), /Publication 1[\s\S]*Publication 2/, 'published: publication 1 against 2');
  t.match(await editorDetail.locator('tr[data-field="background"] .compare-after').innerText(), BLUE, 'what it published');
  await bell.click();
  await popover.getByRole('button', { name: 'Mark all read' }).click();
  await waitUntil('marked read', async () => (await bell.getAttribute('aria-label')) === 'Notifications, none unread');
  t.equal((await editorCall('GET', '/api/v1/notifications?unread=true')).body.data.items.length, 0, 'the server marked them read');

  // Stale: the editor changes the draft after submitting; approving is refused (409) in words and the submission says so.
  t.equal((await draft(GREEN)).status, 200);
  const sub3 = await editorCall('POST', `/api/v1/content-submissions/layout/${layoutId}`, { message: 'Green, really' });
  t.equal(sub3.status, 201);
  t.equal((await draft(BLUE)).status, 200, 'the draft moved on');
  await page.goto(`${app.url}/approvals?submission=${sub3.body.data.id}`);
  await detail.and(page.locator('[data-state="pending"]')).waitFor();
  await detail.getByRole('button', { name: 'Approve', exact: true }).click();
  const stale = detail.locator('[role=alert][data-code="conflict"]');
  await stale.waitFor();
  t.match(await stale.innerText(), /resubmit/i, 'the 409 shown in the server’s words');
  await detail.and(page.locator('[data-state="stale"]')).waitFor();
  t.match(await detail.getByTestId('submission-state').innerText(), 'Stale', 'the submission now says it is stale');

  // Self-approval: the publisher submits their own change; approving it is refused in words.
  t.equal((await as(pub.who)('PUT', `/api/v1/layouts/${layoutId}/draft`, { background: { color: RED, assetId: null }, zones })).status, 200);
  const own = await as(pub.who)('POST', `/api/v1/content-submissions/layout/${layoutId}`, { message: 'Back to red' });
  t.equal(own.status, 201);
  await page.goto(`${app.url}/approvals?submission=${own.body.data.id}`);
  await detail.and(page.locator('[data-state="pending"]')).waitFor();
  await detail.getByRole('button', { name: 'Approve', exact: true }).click();
  const refusal = detail.locator('[role=alert][data-code="forbidden"]');
  await refusal.waitFor();
  t.match(await refusal.innerText(), 'another publisher must approve it', 'the 403 shown in the server’s words');
  t.equal((await ownerCall('GET', `/api/v1/content-submissions/${own.body.data.id}`)).body.data.state, 'pending', 'still pending');
  await checkA11y(page, t, '/approvals with a refusal shown');

  // Another publisher approves it (API); here it is scheduled at the offered time, then the schedule is cancelled.
  t.equal((await ownerCall('POST', `/api/v1/content-submissions/${own.body.data.id}/approve`, {})).status, 200);
  await page.reload();
  await detail.and(page.locator('[data-state="approved"]')).waitFor();
  await detail.getByRole('button', { name: 'Schedule', exact: true }).click();
  await detail.and(page.locator('[data-state="scheduled"]')).waitFor();
  const offered = Date.parse((await ownerCall('GET', `/api/v1/content-submissions/${own.body.data.id}`)).body.data.publishAt) - Date.now();
  t.ok(offered > 50 * 60_000 && offered <= 3600_000, 'the time offered is about an hour ahead');
  await detail.getByRole('button', { name: 'Cancel schedule' }).click();
  await detail.and(page.locator('[data-state="approved"]')).waitFor();
  t.match((await ownerCall('GET', `/api/v1/content-submissions/${own.body.data.id}`)).body.data, { state: 'approved', publishAt: null }, 'cancelled');

  // The filters: Done holds the published, the sent back and the stale; Approved the one just unscheduled.
  await page.getByRole('button', { name: 'Done', exact: true }).click();
  for (const s of [sub1, sub2, sub3]) await page.locator(`li[data-submission="${s.body.data.id}"]`).waitFor();
  t.equal(await page.locator(`li[data-submission="${own.body.data.id}"]`).count(), 0, 'an approved one is not done');
  await page.getByRole('button', { name: 'Approved', exact: true }).click();
  await page.locator(`li[data-submission="${own.body.data.id}"]`).waitFor();
  t.equal(await page.locator('li[data-submission]').count(), 1, 'Approved lists only the approved one');

  // Phone width: the inbox and the bell fit, nothing scrolls sideways.
  const phone = await contextAs(app, browser, 'publisher', PHONE);
  await phone.page.goto(`${app.url}/approvals?submission=${own.body.data.id}`);
  await phone.page.getByTestId('submission-detail').locator('[data-testid="compare"]').waitFor();
  t.ok(await phone.page.getByTestId('bell').isVisible(), 'the bell shows at phone width (outside the folded menu)');
  t.ok(await fitsWidth(phone.page), 'no sideways scrolling at phone width');
  await checkA11y(phone.page, t, '/approvals at phone width');
  await snap(phone.page, 'console-inbox-phone');
  t.same(errors, [], 'no page errors');
});

const fitsWidth = (page: Page) =>
  page.evaluate(() => {
    const d = (globalThis as any).document.documentElement;
    return d.scrollWidth <= d.clientWidth;
  });
