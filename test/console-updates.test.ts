import { randomBytes } from 'node:crypto';
import t from 'tap';
import { checkA11y } from './helpers/a11y.js';
import { alertText, DESKTOP, launchBrowser, PHONE, signedInContext, snap, waitUntil } from './helpers/browser.js';
import { startFakeReleaseSource } from './helpers/fake-release-source.js';
import { startApp } from './helpers/harness.js';
import { releaseFile, tarball, uploadRelease } from './helpers/release-files.js';
import { pairScreen } from './helpers/screens.js';

/**
 * The console's player updates pages (issue 23) in Chromium against a real server: releases
 * (upload through the form, a refused file, the release source's device flow against a fake
 * catalogue) and deployments (made from the form, followed live while the test plays the
 * screens' part: status reports and heartbeats; retry, cancel). docs/console-updates.md.
 */

t.test('releases: upload through the form with progress, a non-APK refused in place, bad input said before sending', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t, { config: { fetchAllowLoopback: true } });
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  const owner = await signedInContext(app, context, app.url);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-updates-releases').catch(() => {});
  });

  // The entry sits in the Administration menu (admins only), not as another top-level link.
  await page.goto(`${app.url}/`);
  const nav = page.getByRole('navigation', { name: 'Main' });
  await nav.locator('[data-testid=admin-menu] summary').click();
  await nav.getByRole('link', { name: 'Updates' }).click();
  await page.getByRole('heading', { name: 'Player updates', level: 1 }).waitFor();
  await page.getByText('No release yet').waitFor();
  t.equal(await page.getByRole('navigation', { name: 'Player updates' }).getByRole('link', { name: 'Releases' }).getAttribute('aria-current'), 'page');

  const form = page.locator('form[aria-label="Upload a release"]');
  // Nothing typed: said on the form, nothing sent.
  await form.getByRole('button', { name: 'Upload release' }).click();
  t.match(await alertText(page, 'form[aria-label="Upload a release"]'), /version/i, 'no version: said before sending');

  // A file that is not an APK, named .apk: the server's refusal shown in place.
  const fake = releaseFile(t, 'player.apk', Buffer.from('this is not a zip, only text named .apk\n'));
  await form.getByLabel('Player').selectOption('android');
  t.ok(await form.getByLabel('Architecture').isDisabled(), 'an APK fits every architecture: nothing to choose');
  await form.getByLabel('Version').fill('3.1.0');
  await form.getByLabel('File').setInputFiles(fake.file);
  await form.getByRole('button', { name: 'Upload release' }).click();
  await form.locator('[data-testid=upload-error] [role=alert]').waitFor();
  const refused = await form.locator('[data-testid=upload-error] [role=alert]').innerText();
  t.comment(`non-APK: ${refused}`);
  t.equal(await form.locator('[data-testid=upload-error] [role=alert]').getAttribute('data-code'), 'invalid_artifact', 'refused as not an artifact');
  t.match(refused, /apk|android|zip|manifest/i, 'the reason in words');
  t.same((await app.json('/api/v1/player-releases', { headers: owner.headers })).body.data, [], 'nothing stored');

  // A real Linux player tarball, per architecture, with notes: uploaded with progress, listed.
  // 3 MiB of noise inside (gzip cannot shrink it), so a throttled upload shows its bar part way.
  const bytes = await tarball({
    'placard-player/bin/placard-player': '#!/bin/sh\necho 2.0.0\n',
    'placard-player/lib/blob': randomBytes(3 * 1024 * 1024),
    'placard-player/VERSION': '2.0.0\n',
  });
  const linux = releaseFile(t, 'placard-player-2.0.0-x86_64.tar.gz', bytes);
  await form.getByLabel('Player').selectOption('desktop-linux');
  await form.getByLabel('Version').fill('2.0.0');
  await form.getByLabel('Architecture').selectOption('x86_64');
  await form.getByLabel('Release notes').fill('Faster video start.');
  await form.getByLabel('File').setInputFiles(linux.file);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 1024 * 1024 });
  await form.getByRole('button', { name: 'Upload release' }).click();
  const bar = page.getByTestId('release-upload-progress').locator('progress');
  await page.waitForFunction(() => {
    const p = (globalThis as any).document.querySelector('[data-testid=release-upload-progress] progress');
    return p && p.value > 0 && p.value < p.max;
  });
  t.match(await bar.getAttribute('aria-label'), /Upload progress/, 'the upload shows its progress part way');
  t.match(await page.getByTestId('release-upload-progress').innerText(), /Uploading \d+%[\s\S]* of 3(\.\d)? MB/, 'in words: percent and bytes');
  await snap(page, 'console-updates-uploading');
  await page.getByText('Uploaded: Linux player 2.0.0 is in the list.').waitFor();
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
  const row = page.locator('tr[data-release="desktop-linux 2.0.0"]');
  await row.waitFor();
  const text = await row.innerText();
  t.comment(text.replace(/\s+/g, ' '));
  t.match(text, /Linux player/, 'the family');
  t.match(text, /2\.0\.0\s+stable/, 'the version and channel');
  t.match(text, /Faster video start\./, 'the notes');
  t.match(text, /uploaded/, 'where it came from');
  t.match(
    text,
    new RegExp(`x86_64: tarball, [\\d.]+ (bytes|kB|MB), sha256 ${linux.sha256.slice(0, 12)}…`),
    'the file: architecture, kind, size, sha256 prefix',
  );
  t.equal(await row.getByTestId('cache-state').innerText(), 'here', 'an upload is stored here at once');
  t.equal(await row.getByRole('button', { name: 'Deploy' }).getAttribute('href'), `/updates/deployments?release=${(await listed(app, owner.headers))[0].id}`);
  const stored = (await listed(app, owner.headers))[0];
  t.match(stored, { family: 'desktop-linux', version: '2.0.0', channel: 'stable', notes: 'Faster video start.', source: 'upload', cached: true });
  t.match(stored.architectures, [{ architecture: 'x86_64', kind: 'tarball', sizeBytes: linux.size, sha256: linux.sha256, cacheState: 'cached' }]);

  // The same architecture twice: the server's 409 in place.
  await form.getByLabel('Version').fill('2.0.0');
  await form.getByLabel('File').setInputFiles(linux.file);
  await form.getByRole('button', { name: 'Upload release' }).click();
  await form.locator('[data-testid=upload-error] [role=alert][data-code=artifact_exists]').waitFor();
  t.pass('the same architecture twice is refused in place');

  await checkA11y(page, t, 'releases page');
  await snap(page, 'console-updates-releases-desktop');
  await page.setViewportSize(PHONE);
  await snap(page, 'console-updates-releases-phone');
  t.equal(
    await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth <= (globalThis as any).innerWidth),
    true,
    'no sideways scrolling at phone width',
  );

  // Others than admins get no such page.
  const editorContext = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  await signedInContext(app, editorContext, app.url, 'publisher');
  const editor = await editorContext.newPage();
  await editor.goto(`${app.url}/updates`);
  await editor.getByRole('heading', { name: /Nothing here|not found/i }).waitFor();
  t.equal(await editor.getByRole('link', { name: 'Updates' }).count(), 0, 'no Updates entry for a publisher');
  t.same(errors, [], 'no page errors');
});

t.test('the release source: connect by its code (a refusal, then approved on the fake), check for newer, download here, disconnect', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const fake = await startFakeReleaseSource(t, { interval: 1 });
  const app = await startApp(t, { config: { fetchAllowLoopback: true } });
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  const owner = await signedInContext(app, context, app.url);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-updates-source').catch(() => {});
  });
  // An edge screen on x86_64 runs 1.0.0; the source has 2.1.0 for it.
  const screen = await pairScreen(app, owner, { name: 'Lobby', playerFamily: 'edge', playerVersion: '1.0.0' });
  const beat = await app.json('/api/v1/player/heartbeat', {
    method: 'POST',
    headers: screen.headers,
    json: { playerFamily: 'edge', playerArchitecture: 'x86_64', playerVersion: '1.0.0' },
  });
  t.equal(beat.status, 200);
  const artifact = await tarball({ 'edge-player/VERSION': '2.1.0\n', 'edge-player/lib/blob': randomBytes(256 * 1024) });
  fake.addRelease({
    id: 'rel-edge-210',
    family: 'edge',
    version: '2.1.0',
    channel: 'stable',
    notes: 'From the catalogue',
    artifacts: [{ architecture: 'x86_64', kind: 'tarball', fileName: 'edge-2.1.0-x86_64.tar.gz', bytes: artifact }],
  });

  await page.goto(`${app.url}/updates`);
  const panel = page.getByTestId('release-source');
  const connectForm = panel.locator('form[aria-label="Connect the release source"]');
  await connectForm.waitFor();
  // No address and none configured: the server's refusal in place.
  await connectForm.getByRole('button', { name: 'Connect' }).click();
  await connectForm.locator('[role=alert][data-code=release_source_not_configured]').waitFor();
  t.pass('no address and no default: said in place');

  // The code, big, with the link; refused on the fake: said, with Try again.
  await connectForm.getByLabel('Catalogue address').fill(fake.url);
  await connectForm.getByRole('button', { name: 'Connect' }).click();
  await panel.getByTestId('user-code').waitFor();
  t.equal((await panel.getByTestId('user-code').innerText()).trim(), fake.userCode, 'the user code is shown');
  t.equal(await panel.getByTestId('verification-link').getAttribute('href'), `${fake.url}/activate?user_code=${fake.userCode}`, 'the link carries the code');
  t.equal((await panel.getByTestId('verification-link').innerText()).trim(), `${fake.url}/activate`, 'the short address is written');
  const fontSize = await panel.getByTestId('user-code').evaluate((e) => Number.parseFloat((globalThis as any).getComputedStyle(e).fontSize));
  t.ok(fontSize >= 28, `the code is big (${fontSize}px)`);
  await checkA11y(page, t, 'release source: code shown');
  await snap(page, 'console-updates-source-code');
  fake.deny();
  await panel.getByTestId('source-ended').waitFor();
  t.match(await panel.getByTestId('source-ended').innerText(), /refused/, 'the refusal said in words');
  t.equal(await panel.getByTestId('source-state').innerText(), 'refused');

  // Try again: a new code; approved on the fake, the page sees it by itself.
  await panel.getByRole('button', { name: 'Try again' }).click();
  await panel.getByTestId('user-code').waitFor();
  t.equal((await panel.getByTestId('user-code').innerText()).trim(), fake.userCode, 'a new code');
  fake.approve();
  await panel.getByTestId('source-connected').waitFor();
  t.equal(await panel.getByTestId('source-state').innerText(), 'connected');
  t.match(await panel.getByTestId('source-connected').innerText(), new RegExp(`Connected to ${fake.url.replace(/[.]/g, '\\.')}`), 'names the source');
  const polls = fake.tokenRequests();
  t.ok(
    polls.some((r) => r.error === 'access_denied'),
    'the fake answered access_denied to the first grant',
  );
  t.equal(polls.at(-1)?.status, 200, 'and a token to the second');

  // Check: the newer release in words, and listed (not here yet).
  await panel.getByRole('button', { name: 'Check for newer releases' }).click();
  const result = panel.getByTestId('check-result');
  await result.waitFor();
  t.match(await result.innerText(), /1 newer release[\s\S]*Edge player \(x86_64\): 2\.1\.0, screens run 1\.0\.0/, 'what is newer, in words');
  const row = page.locator('tr[data-release="edge 2.1.0"]');
  await row.waitFor();
  t.match(await row.innerText(), /release source[\s\S]*x86_64: tarball[\s\S]*not downloaded/, 'listed from the source, not downloaded');
  t.match(await row.innerText(), /From the catalogue/, 'with its notes');

  // Download to this server (cut once half way: the server resumes); the row follows by itself.
  fake.cutDownloadsAfter(100 * 1024, 1);
  await row.getByRole('button', { name: 'Download to this server' }).click();
  await row.getByTestId('cache-state').getByText('here').waitFor();
  await row.getByRole('button', { name: 'Deploy' }).waitFor();
  t.ok(
    fake.requests.some((r) => r.path.startsWith('/artifacts/') && r.range),
    'the download was resumed with a Range request',
  );
  const cached = (await listed(app, owner.headers)).find((r) => r.version === '2.1.0');
  t.match(cached, { source: 'release-source', cached: true, architectures: [{ cacheState: 'cached', cachedBytes: artifact.length }] });
  // A release whose bytes do not match what the source announced: the download fails, the row says why and offers it again.
  const good = await tarball({ 'edge-player/VERSION': '2.2.0\n' });
  fake.addRelease({
    id: 'rel-edge-220',
    family: 'edge',
    version: '2.2.0',
    channel: 'stable',
    artifacts: [{ architecture: 'x86_64', kind: 'tarball', fileName: 'edge-2.2.0-x86_64.tar.gz', bytes: good, servedBytes: randomBytes(good.length) }],
  });
  await panel.getByRole('button', { name: 'Check for newer releases' }).click();
  await result.getByText(/Edge player \(x86_64\): 2\.2\.0/).waitFor();
  const corrupt = page.locator('tr[data-release="edge 2.2.0"]');
  await corrupt.getByRole('button', { name: 'Download to this server' }).click();
  await corrupt.getByTestId('cache-state').getByText('download failed').waitFor();
  t.match(await corrupt.innerText(), /sha256 mismatch/, 'the failure says why');
  await corrupt.getByRole('button', { name: 'Download to this server' }).waitFor();
  t.equal(await corrupt.getByRole('button', { name: 'Deploy' }).count(), 0, 'nothing to deploy');
  await checkA11y(page, t, 'release source: connected');
  await snap(page, 'console-updates-source-connected');

  // Disconnect: asked first; the connect form comes back; the release stays.
  await panel.getByRole('button', { name: 'Disconnect' }).click();
  const dialog = page.locator('dialog.confirm-dialog');
  await dialog.waitFor();
  t.match(await dialog.innerText(), /Disconnect the release source\?[\s\S]*Releases already listed stay/, 'says what stays');
  await dialog.getByRole('button', { name: 'Disconnect' }).click();
  await connectForm.waitFor();
  t.equal((await app.json('/api/v1/player-releases', { headers: owner.headers })).body.releaseSource, null, 'forgotten on the server');
  await row.waitFor();

  // A code that is no longer wanted: Cancel forgets the grant.
  await connectForm.getByLabel('Catalogue address').fill(fake.url);
  await connectForm.getByRole('button', { name: 'Connect' }).click();
  await panel.getByTestId('user-code').waitFor();
  await panel.getByRole('button', { name: 'Cancel' }).click();
  await connectForm.waitFor();
  t.equal((await app.json('/api/v1/player-releases', { headers: owner.headers })).body.releaseSource, null, 'the grant is forgotten');

  // A code left until it expires: said, and Forget it clears it.
  await connectForm.getByRole('button', { name: 'Connect' }).click();
  await panel.getByTestId('user-code').waitFor();
  fake.expire();
  await panel.getByTestId('source-ended').getByText('The code expired before it was approved.').waitFor();
  t.equal(await panel.getByTestId('source-state').innerText(), 'the code expired');
  await panel.getByRole('button', { name: 'Forget it' }).click();
  await connectForm.waitFor();
  t.equal((await app.json('/api/v1/player-releases', { headers: owner.headers })).body.releaseSource, null, 'the expired grant is forgotten');
  t.same(errors, [], 'no page errors');
});

async function listed(app: { json: (p: string, i?: any) => Promise<{ body: any }> }, headers: Record<string, string>) {
  return (await app.json('/api/v1/player-releases', { headers })).body.data as any[];
}

t.test('deployments: made from the form, followed live per wave and per screen, a failure pauses it, retry, pause and resume, cancel', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'UTC' });
  const owner = await signedInContext(app, context, app.url);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  t.teardown(async () => {
    if (!t.passing()) await snap(page, 'failure-console-updates-deployments').catch(() => {});
  });

  // Screens: three edge players on x86_64 at 1.0.0, one on aarch64, one Linux player.
  const heartbeat = async (s: { headers: Record<string, string> }, body: Record<string, unknown>) => {
    const r = await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json: body });
    t.equal(r.status, 200, 'heartbeat');
  };
  const edge: Record<string, Awaited<ReturnType<typeof pairScreen>>> = {};
  for (const name of ['Lobby', 'Cafe', 'Garage']) {
    edge[name] = await pairScreen(app, owner, { name, playerFamily: 'edge', playerVersion: '1.0.0' });
    await heartbeat(edge[name], { playerFamily: 'edge', playerArchitecture: 'x86_64', playerVersion: '1.0.0' });
  }
  const arm = await pairScreen(app, owner, { name: 'Kiosk', playerFamily: 'edge', playerVersion: '1.0.0' });
  await heartbeat(arm, { playerFamily: 'edge', playerArchitecture: 'aarch64', playerVersion: '1.0.0' });
  const linux = await pairScreen(app, owner, { name: 'Office', playerFamily: 'desktop-linux', playerVersion: '1.0.0' });
  await heartbeat(linux, { playerFamily: 'desktop-linux', playerVersion: '1.0.0' });

  const bytes = await tarball({ 'edge-player/VERSION': '2.0.0\n' });
  const up = await uploadRelease(app, owner.headers, { family: 'edge', version: '2.0.0', architecture: 'x86_64' }, 'edge-2.0.0.tar.gz', bytes);
  t.equal(up.status, 201, `upload: ${JSON.stringify(up.body)}`);
  const release = up.body.data;

  // The Deploy link of the release opens the form with it chosen.
  await page.goto(`${app.url}/updates`);
  await page.locator('tr[data-release="edge 2.0.0"]').getByRole('button', { name: 'Deploy' }).click();
  const form = page.locator('form[aria-label="New deployment"]');
  await form.waitFor();
  await form.getByLabel('Release').locator('option', { hasText: 'Edge player 2.0.0' }).waitFor({ state: 'attached' });
  t.equal(await form.getByLabel('Release').inputValue(), release.id, 'the release is chosen');
  // Defaults: canary 1 screen, 50 %, 100 %.
  t.same(
    await form.locator('[data-testid=waves] input[type=number]').evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value)),
    ['1', '50', '100'],
    'default waves',
  );
  await checkA11y(page, t, 'new deployment form');
  await snap(page, 'console-updates-new-deployment');
  // No screens chosen: said on the form.
  await form.getByRole('button', { name: 'Review and deploy' }).click();
  t.match(await alertText(page, 'form[aria-label="New deployment"]'), /screens/i, 'no targets: said before sending');
  await form.getByLabel('Every screen').check();
  // A wave of 0 %: the browser holds it back (nothing sent).
  await form.getByLabel('Wave 2 size').fill('0');
  await form.getByRole('button', { name: 'Review and deploy' }).click();
  t.equal(
    await form.getByLabel('Wave 2 size').evaluate((e) => (e as unknown as { validity: { rangeUnderflow: boolean } }).validity.rangeUnderflow),
    true,
    'a wave under 1 is held back by the browser',
  );
  t.equal(await page.locator('dialog.confirm-dialog').isVisible(), false, 'nothing asked, nothing sent');
  // Canary then everyone else: remove the middle wave; no wait between waves.
  await form.getByRole('button', { name: 'Remove wave 2' }).click();
  await form.getByLabel('Wait between waves (minutes)').fill('0');
  await form.getByRole('button', { name: 'Review and deploy' }).click();
  const dialog = page.locator('dialog.confirm-dialog');
  await dialog.waitFor();
  t.match(await dialog.innerText(), /Deploy Edge player 2\.0\.0\?/, 'asks first, naming the release');
  await dialog.getByRole('button', { name: 'Start deployment' }).click();

  // The live detail page.
  await page.waitForURL(/\/updates\/deployments\/[0-9a-f-]+$/);
  const deploymentId = page.url().split('/').pop()!;
  const get = async () => (await app.json(`/api/v1/update-deployments/${deploymentId}`, { headers: owner.headers })).body.data;
  const created = await get();
  t.match(created, { releaseId: release.id, waves: [{ screens: 1 }, { percent: 100 }], waveWaitSec: 0, failureThreshold: 1, confirmTimeoutSec: 1800 });
  await page.getByRole('heading', { name: 'Deployment of Edge player 2.0.0' }).waitFor();
  const skipped = page.getByTestId('skipped');
  await skipped.waitFor();
  t.match(await skipped.locator('li[data-screen=Kiosk]').innerText(), /no build for its architecture/, 'the aarch64 screen skipped, and why');
  t.match(await skipped.locator('li[data-screen=Office]').innerText(), /another kind of player/, 'the Linux player skipped, and why');

  // The canary is offered by the rollout tick; the page follows by itself.
  const canary = await waitUntil('canary offered', async () => {
    const d = await get();
    return d.screens.find((s: any) => s.wave === 0 && s.state === 'offered');
  });
  const canaryScreen = edge[canary.name]!;
  const canaryRow = page.locator(`tr[data-screen="${canary.name}"]`);
  await canaryRow.locator('[data-testid=screen-state]', { hasText: 'offered' }).waitFor();
  t.match(await canaryRow.innerText(), /canary/, 'the canary row names its wave');
  const status = (s: { headers: Record<string, string> }, body: Record<string, unknown>) =>
    app.json(`/api/v1/player/update-deployments/${deploymentId}/status`, { method: 'POST', headers: s.headers, json: body });

  // Downloading with progress: a bar.
  t.equal((await status(canaryScreen, { state: 'downloading', progress: 0.4 })).status, 200);
  await canaryRow.locator('progress').waitFor();
  t.equal(await canaryRow.locator('progress').getAttribute('aria-label'), `${canary.name}: 40% downloaded`, 'the progress bar');
  await snap(page, 'console-updates-deployment-downloading');

  // It fails: the rollout pauses at the threshold (1), the page says why, Retry on the row.
  t.equal((await status(canaryScreen, { state: 'failed', error: 'disk full' })).status, 200);
  await page.getByTestId('paused-reason').waitFor();
  t.match(
    await page.getByTestId('paused-reason').innerText(),
    /Paused: too many failures \(1 failed; it pauses at 1\)\. Retry the failed screens/,
    'paused, in words',
  );
  t.equal(await page.getByRole('button', { name: 'Resume' }).count(), 0, 'no Resume while the failures are at the threshold');
  t.equal(await page.getByRole('button', { name: 'Pause' }).count(), 0, 'no Pause while paused');
  t.match(await canaryRow.innerText(), /failed[\s\S]*disk full/, 'the failure and its reason');
  await page.getByRole('button', { name: `Retry ${canary.name}` }).click();
  await canaryRow.locator('[data-testid=screen-state]', { hasText: 'offered' }).waitFor();
  await page.getByTestId('paused-reason').waitFor({ state: 'detached' });
  t.match(await get(), { state: 'running' }, 'running again once the failure is retried');

  // Paused by hand (an extension route): the canary carries on, the next wave (no wait) does not start.
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await page.getByTestId('paused-reason').waitFor();
  t.match(await page.getByTestId('paused-reason').innerText(), /^Paused by you\. Screens already offered the update carry on/, 'paused by hand, in words');
  t.match(await get(), { state: 'paused', pausedReason: 'manual' });
  t.equal(await page.getByRole('button', { name: 'Pause', exact: true }).count(), 0, 'Pause gives way to Resume');
  await checkA11y(page, t, 'deployment paused by hand');
  await snap(page, 'console-updates-deployment-paused');

  // It installs: the status report, then the heartbeat with the new version confirms it.
  t.equal((await status(canaryScreen, { state: 'installing' })).status, 200);
  t.equal((await status(canaryScreen, { state: 'installed', version: '2.0.0' })).status, 200);
  await heartbeat(canaryScreen, { playerFamily: 'edge', playerArchitecture: 'x86_64', playerVersion: '2.0.0' });
  await canaryRow.locator('[data-testid=screen-state]', { hasText: 'installed' }).waitFor();
  t.match(await canaryRow.innerText(), /1\.0\.0 → 2\.0\.0/, 'the versions');
  await page.locator('[data-testid=waves-table] tr[data-wave="0"]', { hasText: 'done' }).waitFor();
  for (let i = 0; i < 3; i++) await app.deps.periodic.runNow('update-deployments.tick');
  t.match(await get(), { state: 'paused', currentWave: 0, counts: { installed: 1, pending: 2, offered: 0 } }, 'no next wave while paused');
  for (const name of Object.keys(edge).filter((n) => n !== canary.name))
    t.equal(await page.locator(`tr[data-screen="${name}"] [data-testid=screen-state]`).innerText(), 'waiting for its wave', `${name} waits`);
  t.match(await page.locator('[data-testid=waves-table] tr[data-wave="1"]').innerText(), /waiting/, 'the next wave waits');
  await page.getByRole('button', { name: 'Resume' }).click();
  await page.getByTestId('paused-reason').waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Pause', exact: true }).waitFor();
  t.match(await get(), { state: 'running', pausedReason: null }, 'resumed');

  // The next wave (no wait) offers the other two; the canary wave is done.
  const others = Object.keys(edge).filter((n) => n !== canary.name);
  for (const name of others) await page.locator(`tr[data-screen="${name}"] [data-testid=screen-state]`, { hasText: 'offered' }).waitFor({ timeout: 30_000 });
  t.match(await page.locator('[data-testid=waves-table] tr[data-wave="0"]').innerText(), /done/, 'the canary wave is done');
  t.equal((await status(edge[others[0]!]!, { state: 'downloading', progress: 0.1 })).status, 200);
  await page.locator(`tr[data-screen="${others[0]}"] progress`).waitFor();
  await checkA11y(page, t, 'deployment page');
  await snap(page, 'console-updates-deployment-desktop');
  await page.setViewportSize(PHONE);
  await snap(page, 'console-updates-deployment-phone');
  await page.setViewportSize(DESKTOP);

  // Cancel: asked first; installed stays installed, the rest cancelled; no more buttons.
  await page.getByRole('button', { name: 'Cancel deployment' }).click();
  const ask = page.getByRole('dialog', { name: 'Cancel this deployment?' });
  await ask.waitFor();
  t.match(await ask.innerText(), /The 1 screen that installed it keep/, 'says what stays');
  await ask.getByRole('button', { name: 'Cancel deployment' }).click();
  await page.getByTestId('deployment-state').getByText('cancelled').waitFor();
  const final = await get();
  t.match(final, { state: 'cancelled', counts: { installed: 1, cancelled: 2, skipped: 2 } });
  t.equal(await canaryRow.locator('[data-testid=screen-state]').innerText(), 'installed', 'the installed screen stays installed');
  for (const name of others) t.equal(await page.locator(`tr[data-screen="${name}"] [data-testid=screen-state]`).innerText(), 'cancelled');
  t.equal(await page.getByRole('button', { name: 'Cancel deployment' }).count(), 0, 'nothing left to cancel');

  // The list.
  await page.getByRole('navigation', { name: 'Player updates' }).getByRole('link', { name: 'Deployments' }).click();
  const listRow = page.locator(`tr[data-deployment="${deploymentId}"]`);
  await listRow.waitFor();
  t.match(
    await listRow.innerText(),
    /Edge player 2\.0\.0[\s\S]*cancelled[\s\S]*1 of 3 installed, 2 cancelled, 2 skipped/,
    'the list row: release, state, counts',
  );
  await checkA11y(page, t, 'deployments list');
  await snap(page, 'console-updates-deployments-list');

  // Another deployment from the Deployments tab, to one screen, inside a maintenance window.
  await page.getByRole('button', { name: 'New deployment' }).click();
  const second = page.locator('form[aria-label="New deployment"]');
  await second.getByLabel('Release').locator('option', { hasText: 'Edge player 2.0.0' }).waitFor({ state: 'attached' });
  await second.getByLabel('Release').selectOption({ label: 'Edge player 2.0.0' });
  await second.getByLabel(new RegExp(`\\b${others[1]} \\(Edge player 1\\.0\\.0\\)`)).check();
  await second.getByLabel(/Only inside a maintenance window/).check();
  await second.getByLabel('From').fill('22:30');
  await second.getByLabel('Until').fill('04:15');
  await second.getByRole('button', { name: 'Review and deploy' }).click();
  await dialog.waitFor();
  t.match(await dialog.innerText(), /inside 22:30–04:15 its local time/, 'the window is in the question');
  await dialog.getByRole('button', { name: 'Start deployment' }).click();
  await page.waitForURL((u) => /\/updates\/deployments\/[0-9a-f-]+$/.test(u.pathname) && !u.pathname.endsWith(deploymentId));
  const secondId = page.url().split('/').pop()!;
  const windowed = (await app.json(`/api/v1/update-deployments/${secondId}`, { headers: owner.headers })).body.data;
  t.match(windowed, {
    maintenanceWindow: { start: '22:30', end: '04:15' },
    targets: { screenIds: [edge[others[1]!]!.screenId] },
    waves: [{ screens: 1 }, { percent: 50 }, { percent: 100 }],
  });
  await page.getByText(/only 22:30–04:15 each screen's local time/).waitFor();
  t.pass('the window is said on the deployment page');
  t.same(errors, [], 'no page errors');
});
