import t from 'tap';
import type { Browser } from 'playwright-core';
import { checkA11y } from './helpers/a11y.js';
import type { SignedIn } from './helpers/auth.js';
import { DESKTOP, launchBrowser, PHONE, snap, waitUntil } from './helpers/browser.js';
import { startApp, type TestApp } from './helpers/harness.js';
import { publishingWorld } from './helpers/publishing.js';

/**
 * Drafts, submit and history on the content pages (issue 20), in Chromium against the real
 * server: a layout a screen plays through a schedule (publishingWorld). Approvals on: an
 * editor's save is a draft (the pill, the words next to Save), Publish is gone, Submit for
 * approval sends it with a message (pending) and the screen's manifest keeps publication 1;
 * submitting with nothing changed shows the server's words. Approvals off: the owner saves and
 * publishes, the pill goes, History lists publications with who/when, compare of two names the
 * changed width, Roll back to publication 1 publishes and the manifest plays it. Approvals on
 * again: the editor's roll back makes a submission and says so. axe; phone width.
 */

/** A browser page signed in as `who` (their session cookie copied in). */
async function pageAs(app: TestApp, browser: Browser, who: SignedIn, viewport = DESKTOP) {
  const context = await browser.newContext({ viewport, timezoneId: 'UTC' });
  const url = new URL(app.url);
  await context.addCookies(
    who.headers.cookie.split('; ').map((pair) => {
      const i = pair.indexOf('=');
      return { name: pair.slice(0, i), value: pair.slice(i + 1), domain: url.hostname, path: '/' };
    }),
  );
  const page = await context.newPage();
  return { context, page };
}

t.test('layouts: draft pill, submit for approval, history with compare and roll back', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const w = await publishingWorld(app, { approvals: false });
  const owner = w.as(w.owner);
  const settings = async (required: boolean) =>
    t.equal((await owner('PATCH', '/api/v1/settings', { approvals: { required } })).status, 200, `approvals ${required ? 'on' : 'off'}`);
  // Publication 1 (width 960) is what the screen plays before approvals are on.
  t.equal((await owner('POST', `/api/v1/layouts/${w.layout.id}/publish`, {})).status, 200, 'published once');
  t.same(await w.playing(), { number: 1, width: 960 }, 'the screen plays publication 1');
  await settings(true);

  const ed = await pageAs(app, browser, w.editor);
  t.teardown(() => ed.context.close());
  const page = ed.page;
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-publishing-items').catch(() => {});
  });
  await page.goto(`${app.url}/layouts/${w.layout.id}`);
  await page.getByRole('heading', { name: 'Board', level: 1 }).waitFor();
  await page.getByTestId('history-panel').locator('[data-publication="1"]').waitFor();
  t.equal(await page.getByRole('button', { name: 'Publish', exact: true }).count(), 0, 'approvals on: no Publish button');
  t.equal(await page.getByTestId('unpublished-badge').count(), 0, 'nothing unpublished yet: no pill');

  // Bad path: nothing changed since publication 1, the server refuses; its words are shown in the dialog.
  await page.getByRole('button', { name: 'Submit for approval' }).click();
  const dialog = page.getByTestId('submit-dialog');
  await dialog.getByRole('button', { name: 'Submit', exact: true }).click();
  const refusal = await dialog.getByRole('alert').innerText();
  t.match(refusal, /\w+ \w+/, `nothing to submit, in words: ${refusal}`);
  t.notMatch(refusal, /^conflict$|\{/, 'not a code or JSON');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' }); // while the modal is open the page behind is inert: typing there goes nowhere

  // The editor changes the zone's width and saves: a draft, said so next to Save, the pill shows.
  t.match(await page.getByTestId('draft-note').innerText(), /screens keep playing publication 1/, 'the note next to Save');
  const widthField = page.getByRole('group', { name: 'Selected zone' }).getByLabel('width', { exact: true });
  const saveButton = page.getByRole('button', { name: 'Save draft' });
  await widthField.fill('700');
  await widthField.press('Tab');
  t.equal(await widthField.inputValue(), '700', 'the width field took the edit');
  await saveButton.click();
  await page.getByText('Saved as a draft: screens keep playing publication 1.').waitFor();
  await page.getByTestId('unpublished-badge').waitFor();
  t.match(await page.getByTestId('unpublished-badge').innerText(), /Unpublished changes/i, 'the pill');

  // Submit with a message: pending; the screen still plays publication 1.
  await page.getByRole('button', { name: 'Submit for approval' }).click();
  await dialog.getByLabel('Message for the reviewer (optional)').fill('Narrower left zone');
  await dialog.getByRole('button', { name: 'Submit', exact: true }).click();
  await page.getByText('Submitted: pending approval.').waitFor();
  const subs = await w.as(w.publisher)('GET', `/api/v1/content-submissions?contentId=${w.layout.id}`);
  const sub = subs.body.data.items[0];
  t.match(sub, { state: 'pending', message: 'Narrower left zone', submittedBy: w.editor.user.id }, 'the server holds it, pending, with the message');
  t.same(await w.playing(), { number: 1, width: 960 }, 'the screen still plays publication 1');
  await checkA11y(page, t, 'layout editor with submit and history');
  await page.setViewportSize(PHONE);
  await snap(page, 'console-publishing-items-phone');
  await page.setViewportSize(DESKTOP);

  // Approvals off: the owner's Publish is back, no Submit; save and publish put it on the screen, the pill goes.
  await settings(false);
  const ow = await pageAs(app, browser, w.owner);
  t.teardown(() => ow.context.close());
  const op = ow.page;
  await op.goto(`${app.url}/layouts/${w.layout.id}`);
  await op.getByRole('heading', { name: 'Board', level: 1 }).waitFor();
  t.equal(await op.getByRole('button', { name: 'Submit for approval' }).count(), 0, 'approvals off: no Submit');
  t.equal(await op.getByTestId('draft-note').count(), 0, 'approvals off: no draft note');
  await op.getByRole('button', { name: 'Publish', exact: true }).click();
  await op.locator('dialog.confirm-dialog').getByRole('button', { name: 'Publish' }).click();
  await op.getByText('Published; screens showing this layout update now.').waitFor();
  t.equal(await op.getByTestId('unpublished-badge').count(), 0, 'published: no pill');
  await waitUntil('the screen plays publication 2', async () => (await w.playing())?.number === 2);
  t.same(await w.playing(), { number: 2, width: 700 }, 'the new width is on the screen');

  // History: both publications, who and when; compare 1 and 2 names the width.
  const history = op.getByTestId('history-panel');
  await history.locator('[data-publication="2"]').waitFor();
  t.match(await history.locator('[data-publication="1"]').innerText(), /Publication 1.*by you/s, 'publication 1: who');
  t.match(await history.locator('[data-publication="2"]').innerText(), /on screens.*\d{4}.*by you/s, 'publication 2: on screens, when, who');
  await history.getByLabel('Compare publication 1').check();
  await history.getByLabel('Compare publication 2').check();
  await history.getByRole('button', { name: 'Compare the two picked' }).click();
  const width = history.getByTestId('compare').locator('[data-field="width"]').first();
  await width.waitFor();
  t.match(await width.innerText(), /960[\s\S]*700/, 'compare: width 960 before, 700 after');
  await snap(op, 'console-publishing-items-compare');

  // Roll back to publication 1 (approvals off): publishes at once; the screen plays it.
  await history.locator('[data-publication="1"]').getByRole('button', { name: 'Roll back' }).click();
  // It asks first, saying screens switch; cancelling changes nothing.
  const ask = op.locator('dialog.confirm-dialog');
  t.match(await ask.innerText(), /Roll back to publication 1\?[\s\S]*screens playing it switch within seconds/);
  await ask.getByRole('button', { name: 'Cancel' }).click();
  await ask.waitFor({ state: 'hidden' });
  t.same(await w.playing(), { number: 2, width: 700 }, 'cancelled: the screen keeps publication 2');
  await history.locator('[data-publication="1"]').getByRole('button', { name: 'Roll back' }).click();
  await ask.getByRole('button', { name: 'Roll back' }).click();
  await history.locator('[role=status], [role=alert]').first().waitFor();
  t.equal(
    await history.locator('[role=status], [role=alert]').first().innerText(),
    'Rolled back: publication 3 (the content of publication 1) is on screens now.',
    'says it published',
  );
  await waitUntil('the screen plays publication 3', async () => (await w.playing())?.number === 3);
  t.same(await w.playing(), { number: 3, width: 960 }, 'publication 1’s width is back on the screen');

  // Approvals on: the editor's roll back is a submission, and says so; the screen keeps publication 3.
  await settings(true);
  await page.reload();
  const eh = page.getByTestId('history-panel');
  await eh.locator('[data-publication="3"]').waitFor();
  await eh.locator('[data-publication="2"]').getByRole('button', { name: 'Roll back' }).click();
  const askEditor = page.locator('dialog.confirm-dialog');
  t.match(await askEditor.innerText(), /Approvals are on: this makes a submission/);
  await askEditor.getByRole('button', { name: 'Submit the roll back' }).click();
  await eh.getByText(/A submission was made to roll back to publication 2; it is pending approval\./).waitFor();
  t.same(await w.playing(), { number: 3, width: 960 }, 'the screen keeps publication 3');
  t.same(errors, [], 'no page errors');
});

t.test('playlists: approvals off, a save publishes at once (no pill); approvals on, an edit is a draft with Submit', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const w = await publishingWorld(app, { approvals: false });
  const owner = w.as(w.owner);
  const ow = await pageAs(app, browser, w.owner);
  t.teardown(() => ow.context.close());
  const page = ow.page;
  const before = (await owner('GET', `/api/v1/playlists/${w.menu.id}`)).body.data.publication?.number ?? 0;
  await page.goto(`${app.url}/playlists/${w.menu.id}`);
  await page.getByRole('heading', { name: 'Menu', level: 1 }).waitFor();
  await page.getByText('Rename or delete').click();
  await page.getByLabel('Playlist name').fill('Lunch menu');
  await page.getByRole('button', { name: 'Rename' }).click();
  await page.getByRole('heading', { name: 'Lunch menu', level: 1 }).waitFor();
  const after = (await owner('GET', `/api/v1/playlists/${w.menu.id}`)).body.data;
  t.equal(after.publication?.number, before + 1, 'approvals off: the save published at once');
  t.equal(after.unpublishedChanges, false, 'nothing unpublished');
  t.equal(await page.getByTestId('unpublished-badge').count(), 0, 'no pill');
  t.equal(await page.getByRole('button', { name: 'Submit for approval' }).count(), 0, 'no Submit with approvals off');
  await page
    .getByTestId('history-panel')
    .locator(`[data-publication="${before + 1}"]`)
    .waitFor();

  // Approvals on: the editor's rename is a draft: the pill, the words, Submit; the publication stays.
  t.equal((await owner('PATCH', '/api/v1/settings', { approvals: { required: true } })).status, 200, 'approvals on');
  const ed = await pageAs(app, browser, w.editor);
  t.teardown(() => ed.context.close());
  const ep = ed.page;
  await ep.goto(`${app.url}/playlists/${w.menu.id}`);
  await ep.getByRole('heading', { name: 'Lunch menu', level: 1 }).waitFor();
  await ep.getByText('Rename or delete').click();
  await ep.getByLabel('Playlist name').fill('Dinner menu');
  await ep.getByRole('button', { name: 'Rename' }).click();
  await ep.getByTestId('unpublished-badge').waitFor();
  t.match(await ep.getByTestId('draft-note').innerText(), new RegExp(`screens keep playing publication ${before + 1}`), 'says screens keep the publication');
  const draft = (await owner('GET', `/api/v1/playlists/${w.menu.id}`)).body.data;
  t.match(draft, { unpublishedChanges: true, publication: { number: before + 1 } }, 'the server: a draft, the same publication');
  await ep.getByRole('button', { name: 'Submit for approval' }).click();
  await ep.getByTestId('submit-dialog').getByRole('button', { name: 'Submit', exact: true }).click();
  await ep.getByText('Submitted: pending approval.').waitFor();
  await checkA11y(ep, t, 'playlist with draft and history');
});
