/**
 * A real /play page in Chromium, paired to the real server and playing an image, is offered a
 * web release (console/dist as a .tar.gz with another version.json, made here) through an
 * update deployment: it checks the release is served, reports downloading / downloaded /
 * installing, reloads into /play/v/<version>/ keeping its query, and the new build reports
 * installed and heartbeats its version; the deployment shows the screen installed with it, and
 * the new page plays the content (pixels). A page opened at /play later goes to the release.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { signIn, type SignedIn } from './helpers/auth.js';
import { CONSOLE_DIST, launchBrowser, snap } from './helpers/browser.js';
import { startApp, tempDataDir, type TestApp } from './helpers/harness.js';
import { settledAsset, uploadAsset } from './helpers/media.js';
import { until as deploymentUntil } from './helpers/update-deployments.js';
import { storeWebRelease, webReleaseTarball } from './helpers/web-release.js';

t.setTimeout(300_000);

const VIEWPORT = { width: 800, height: 450 };

async function until<T>(t: Test, what: string, check: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      t.fail(`${what}: not within ${ms} ms ${last ? String(last) : ''}`);
      throw new Error(`timed out: ${what}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

const player = (page: Page) =>
  page.evaluate(() => {
    const p = (globalThis as any).placardPlayer;
    return p ? { state: p.state, screenId: p.screenId, heartbeats: p.heartbeats, version: p.version, assetId: p.nowPlaying().assetId ?? null } : null;
  });

async function centre(page: Page): Promise<{ r: number; g: number; b: number }> {
  const { data } = await sharp(await page.screenshot())
    .extract({ left: VIEWPORT.width * 0.4, top: VIEWPORT.height * 0.4, width: VIEWPORT.width * 0.2, height: VIEWPORT.height * 0.2 })
    .resize(1, 1)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { r: data[0]!, g: data[1]!, b: data[2]! };
}
const isRed = (c: { r: number; g: number; b: number }) => c.r > 150 && c.g < 90 && c.b < 90;

async function screen(app: TestApp, admin: SignedIn, id: string) {
  return (await app.json(`/api/v1/screens/${id}`, { headers: admin.headers })).body.data;
}

t.test('a /play page updated to a web release through a deployment', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const admin = await signIn(app, { role: 'owner' });
  const bundled = JSON.parse(readFileSync(path.join(CONSOLE_DIST, 'version.json'), 'utf8')).version as string;
  const work = tempDataDir(t);
  const release = await storeWebRelease(app.deps.db, app.dataDir, '9.1.0', webReleaseTarball(work, '9.1.0'));

  const context = await browser.newContext({ viewport: VIEWPORT });
  const page = await context.newPage();
  const lines: string[] = [];
  page.on('console', (m) => lines.push(`${m.type()}: ${m.text()}`));
  t.teardown(() => {
    if (!t.passing()) t.comment(`player console:\n${lines.slice(-40).join('\n')}`);
  });
  // The player's reports to the deployment, in order (the page's own requests).
  const reports: any[] = [];
  page.on('request', (req) => {
    if (req.method() === 'POST' && /\/api\/v1\/player\/update-deployments\/[^/]+\/status$/.test(new URL(req.url()).pathname)) reports.push(req.postDataJSON());
  });

  // Paired, playing a red image, reporting the bundled build's version.
  await page.goto(`${app.url}/play?room=lobby`);
  const code = await until(t, 'pairing code', async () => {
    const text = ((await page.getByTestId('pairing-code').textContent()) ?? '').trim();
    return /^[A-Z0-9]{3}-[A-Z0-9]{3}$/.test(text) ? text : undefined;
  });
  const resolved = await app.json('/api/v1/screens/pairing/resolve', { method: 'POST', headers: admin.headers, json: { code } });
  const approved = await app.json(`/api/v1/screens/pairing/${resolved.body.data.id}/approve`, {
    method: 'POST',
    headers: admin.headers,
    json: { name: 'Lobby' },
  });
  t.equal(approved.status, 200);
  const screenId: string = approved.body.data.screen.id;
  await until(t, 'running', async () => (await player(page))?.state === 'running');
  t.equal((await player(page))!.version, bundled, 'the page reads its version from version.json');
  await until(t, 'the bundled version reported', async () => (await screen(app, admin, screenId)).playerVersion === bundled);

  const png = await sharp({ create: { width: 640, height: 360, channels: 3, background: { r: 220, g: 20, b: 20 } } })
    .png()
    .toBuffer();
  const asset = await uploadAsset(app, admin, png, 'red.png');
  t.equal((await settledAsset(app, admin, asset.id)).state, 'ready');
  const pl = (await app.json('/api/v1/playlists', { method: 'POST', headers: admin.headers, json: { name: 'Lobby' } })).body.data;
  t.equal(
    (
      await app.json(`/api/v1/playlists/${pl.id}/items`, {
        method: 'POST',
        headers: { ...admin.headers, 'if-match': String(pl.revision) },
        json: { assetId: asset.id, durationMs: 10_000 },
      })
    ).status,
    201,
  );
  t.equal(
    (await app.json(`/api/v1/screens/${screenId}/playlist-assignment`, { method: 'PUT', headers: admin.headers, json: { playlistId: pl.id } })).status,
    200,
  );
  await until(t, 'the image plays', async () => (await player(page))?.assetId === asset.id);
  await until(t, 'the image is on screen', async () => isRed(await centre(page)), 10_000);

  // The deployment: the page reloads into the release.
  const created = await app.json('/api/v1/update-deployments', {
    method: 'POST',
    headers: admin.headers,
    json: { releaseId: release, targets: { screenIds: [screenId] }, waves: [{ screens: 1 }], waveWaitSec: 0 },
  });
  t.equal(created.status, 201, JSON.stringify(created.body));
  const deploymentId: string = created.body.data.id;
  t.match(created.body.data.screens[0], { screenId, fromVersion: bundled, skipReason: null });
  await until(
    t,
    'the page moves to /play/v/9.1.0/',
    async () => {
      await app.deps.periodic.runNow('update-deployments.tick');
      return new URL(page.url()).pathname === '/play/v/9.1.0/';
    },
    60_000,
  );
  t.equal(new URL(page.url()).search, '?room=lobby', 'keeping its query');

  const done = await deploymentUntil(app, admin, deploymentId, (d) => d.screens[0].state === 'installed', 30_000);
  t.equal(done.screens[0].installedVersion, '9.1.0', 'the deployment shows the screen installed with the new version');
  t.equal(done.state, 'completed');
  const states = reports.map((r) => r.state);
  t.same(
    states.filter((s, i) => s !== states[i - 1]),
    ['downloading', 'downloaded', 'installing', 'installed'],
    `reported in order: ${JSON.stringify(reports)}`,
  );
  t.same(
    reports.filter((r) => r.state === 'downloading').map((r) => r.progress),
    [0, 0.5, 1],
    'with progress',
  );
  t.same(reports.at(-1), { state: 'installed', version: '9.1.0' }, 'the new build reports installed with its version');

  // The new build runs: same screen, its version heartbeated, the content on screen.
  const facts = await until(t, 'the new build runs', async () => {
    const f = await player(page);
    return f?.state === 'running' && f.heartbeats > 0 ? f : undefined;
  });
  t.equal(facts.version, '9.1.0', 'the release’s version.json');
  t.equal(facts.screenId, screenId, 'the same screen (no new pairing)');
  await until(t, 'the new version heartbeated', async () => (await screen(app, admin, screenId)).playerVersion === '9.1.0');
  await until(t, 'the image plays in the new build', async () => (await player(page))?.assetId === asset.id);
  await until(t, 'and is on screen', async () => isRed(await centre(page)), 10_000);
  t.pass('the new build shows the content (screenshot pixels)');
  await snap(page, 'play-web-update', false);
  const scripts = await page.evaluate(() => [...(globalThis as any).document.querySelectorAll('script[src]')].map((s: any) => s.src as string));
  t.ok(scripts.length > 0 && scripts.every((s) => new URL(s).pathname.startsWith('/play/v/9.1.0/assets/')), `its own build files: ${scripts.join(', ')}`);

  // The service worker (scope /play) controls the release's page too, and cached the bundled
  // page's build files it names relatively.
  const sw = await until(t, 'the service worker controls the page', async () => {
    const r = await page.evaluate(async () => {
      const nav = (globalThis as any).navigator;
      const reg = await nav.serviceWorker.getRegistration();
      const cache = await (globalThis as any).caches.open('placard-shell-v1');
      const keys = (await cache.keys()).map((k: any) => new URL(k.url).pathname as string);
      return { scope: reg?.scope ?? null, controlled: !!nav.serviceWorker.controller, keys };
    });
    return r.controlled ? r : undefined;
  });
  t.equal(sw.scope, `${app.url}/play`, 'its scope is /play');
  t.ok(
    sw.keys.some((k: string) => /^\/assets\/play-[^/]+\.js$/.test(k)),
    `the bundled page's ./assets/ files are cached: ${sw.keys.join(', ')}`,
  );
  t.ok(
    sw.keys.some((k: string) => k.startsWith('/play/v/9.1.0/')),
    'and the release’s page and files as they load',
  );

  // Opened at /play later (a restart of the browser on its start page): it goes to the release.
  const again = await context.newPage();
  await again.goto(`${app.url}/play?room=lobby`);
  await until(t, 'a new /play page moves to the screen’s web release', async () => new URL(again.url()).pathname === '/play/v/9.1.0/');
  await until(t, 'and runs there', async () => (await player(again))?.version === '9.1.0' && (await player(again))?.state === 'running');
  await again.close();
});

t.test('the Linux kiosk (?kiosk=1) reports the version its URL names and ignores web releases', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const admin = await signIn(app, { role: 'owner' });
  const work = tempDataDir(t);
  const release = await storeWebRelease(app.deps.db, app.dataDir, '9.2.0', webReleaseTarball(work, '9.2.0'));
  const context = await browser.newContext({ viewport: VIEWPORT });
  const page = await context.newPage();
  await page.goto(`${app.url}/play?kiosk=1&playerVersion=4.0.1`);
  const code = await until(t, 'pairing code', async () => {
    const text = ((await page.getByTestId('pairing-code').textContent()) ?? '').trim();
    return /^[A-Z0-9]{3}-[A-Z0-9]{3}$/.test(text) ? text : undefined;
  });
  const resolved = await app.json('/api/v1/screens/pairing/resolve', { method: 'POST', headers: admin.headers, json: { code } });
  const approved = await app.json(`/api/v1/screens/pairing/${resolved.body.data.id}/approve`, {
    method: 'POST',
    headers: admin.headers,
    json: { name: 'Kiosk' },
  });
  const screenId: string = approved.body.data.screen.id;
  const s = await until(t, 'reported', async () => {
    const r = await screen(app, admin, screenId);
    return r.playerVersion ? r : undefined;
  });
  t.equal(s.playerVersion, '4.0.1');
  t.equal(s.playerFamily, 'desktop-linux');
  const created = await app.json('/api/v1/update-deployments', {
    method: 'POST',
    headers: admin.headers,
    json: { releaseId: release, targets: { screenIds: [screenId] }, waveWaitSec: 0 },
  });
  t.equal(created.status, 201);
  t.equal(created.body.data.screens[0].skipReason, 'family_mismatch', 'a web release is not for the Linux player');
  t.equal(new URL(page.url()).pathname, '/play');
});
