/**
 * The browser player end to end, in Debian's Chromium against the real server on port 0:
 * the page shows a pairing code, an admin approves it through the real API, the player
 * enrols and heartbeats (the server's screen record says online, with its family), plays
 * an image, a video (sliding in) and a website (a local fake site in a frame) uploaded through
 * the real API, follows a schedule change pushed as manifest.changed, picks up a change by
 * polling while its socket is down, and keeps playing (and even restarts) with the server stopped.
 * Screenshots land in test/artifacts/.
 */
import t, { type Test } from 'tap';
import sharp from 'sharp';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { startApp, type TestApp } from './helpers/harness.js';
import { signIn, type SignedIn } from './helpers/auth.js';
import { launchBrowser, snap } from './helpers/browser.js';
import { settledAsset, uploadAsset } from './helpers/media.js';
import { deriveStatus, findScreen } from '../server/src/modules/screens/screens.repo.js';

const VIEWPORT = { width: 960, height: 540 };

interface PlayerFacts {
  state: string;
  screenId: string | null;
  socketConnected: boolean;
  heartbeats: number;
  manifestRevision: string | null;
  cache: { items: number; bytes: number; missing: number; failed: number };
  nowPlaying: { playlistId?: string | null; itemId?: string | null; assetId?: string | null; scheduleId?: string | null };
  lastError: string | null;
}

async function facts(page: Page): Promise<PlayerFacts> {
  return page.evaluate(() => {
    const p = (globalThis as any).placardPlayer;
    return {
      state: p.state,
      screenId: p.screenId,
      socketConnected: p.socketConnected,
      heartbeats: p.heartbeats,
      manifestRevision: p.manifestRevision,
      cache: p.cache(),
      nowPlaying: p.nowPlaying(),
      lastError: p.lastError(),
    };
  });
}

/** Polls `check` until it answers a value (not undefined/false) or `ms` pass; fails with the last facts. */
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

/** The average colour of the middle of a screenshot of the page. */
async function centreColour(page: Page): Promise<{ r: number; g: number; b: number }> {
  const png = await page.screenshot();
  const { data, info } = await sharp(png)
    .extract({
      left: Math.floor(VIEWPORT.width * 0.4),
      top: Math.floor(VIEWPORT.height * 0.4),
      width: Math.floor(VIEWPORT.width * 0.2),
      height: Math.floor(VIEWPORT.height * 0.2),
    })
    .resize(1, 1, { kernel: 'nearest' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  void info;
  return { r: data[0]!, g: data[1]!, b: data[2]! };
}

/** The average colour of a small square around (fx, fy), fractions of the viewport. */
async function colourAt(page: Page, fx: number, fy: number): Promise<{ r: number; g: number; b: number }> {
  const png = await page.screenshot();
  const size = 20;
  const { data } = await sharp(png)
    .extract({ left: Math.floor(VIEWPORT.width * fx - size / 2), top: Math.floor(VIEWPORT.height * fy - size / 2), width: size, height: size })
    .resize(1, 1)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { r: data[0]!, g: data[1]!, b: data[2]! };
}

function dominant(c: { r: number; g: number; b: number }): 'red' | 'green' | 'blue' | 'magenta' | 'other' {
  if (c.r > 150 && c.b > 150 && c.g < 90) return 'magenta';
  if (c.r > 150 && c.g < 90 && c.b < 90) return 'red';
  if (c.g > 130 && c.r < 90 && c.b < 90) return 'green';
  if (c.b > 150 && c.r < 90 && c.g < 90) return 'blue';
  return 'other';
}

/** The server's record of a screen: the console's route when it exists, else the repository. */
async function screenRecord(
  app: TestApp,
  admin: SignedIn,
  id: string,
): Promise<{ status: string; playerFamily: string | null; playerVersion: string | null; lastStatus: any }> {
  const res = await app.json(`/api/v1/screens/${id}`, { headers: admin.headers });
  if (res.status === 200) return res.body.data;
  const row = await findScreen(app.deps.db, id);
  if (!row) throw new Error(`no screen ${id}`);
  return {
    status: deriveStatus(row),
    playerFamily: row.player_family,
    playerVersion: row.player_version,
    lastStatus: row.last_status ? JSON.parse(row.last_status) : null,
  };
}

async function pairPlayer(t: Test, app: TestApp, admin: SignedIn, page: Page, name: string): Promise<string> {
  const code = await until(t, 'pairing code shown', async () => {
    const text = (await page.getByTestId('pairing-code').textContent())?.trim() ?? '';
    return /^[A-Z0-9]{3}-[A-Z0-9]{3}$/.test(text) ? text : undefined;
  });
  // The console accepts the code as typed by a person: lower case, with the dash.
  const resolved = await app.json('/api/v1/screens/pairing/resolve', { method: 'POST', headers: admin.headers, json: { code: code.toLowerCase() } });
  t.equal(resolved.status, 200, 'the code resolves');
  const approved = await app.json(`/api/v1/screens/pairing/${resolved.body.data.id}/approve`, { method: 'POST', headers: admin.headers, json: { name } });
  t.equal(approved.status, 200, 'approved');
  const screenId: string = approved.body.data.screen.id;
  await until(t, 'player enrolled and heartbeating', async () => {
    const f = await facts(page);
    return f.state === 'running' && f.heartbeats > 0 && f.screenId === screenId;
  });
  return screenId;
}

t.test('browser player', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const app = await startApp(t);
  const admin = await signIn(app, { role: 'owner' });

  const context = await browser.newContext({ viewport: VIEWPORT });
  const page = await context.newPage();
  const consoleLines: string[] = [];
  page.on('console', (m: { type(): string; text(): string }) => consoleLines.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e: Error) => consoleLines.push(`pageerror: ${e.message}`));
  t.teardown(() => {
    if (t.passing()) return;
    t.comment(`player console:\n${consoleLines.slice(-60).join('\n')}`);
  });

  let screenId = '';

  await t.test('pairing screen, enrolment and heartbeats (kiosk)', async (t) => {
    await page.goto(`${app.url}/play?kiosk=1`);
    await until(t, 'code', async () => /^[A-Z0-9]{3}-[A-Z0-9]{3}$/.test((await page.getByTestId('pairing-code').textContent())?.trim() ?? ''));
    const box = await page.getByTestId('pairing-code').boundingBox();
    t.ok(box && box.height >= VIEWPORT.height * 0.15, `the code is large (${box?.height}px of ${VIEWPORT.height}px)`);
    const file = await snap(page, 'player-pairing', false);
    t.ok(readFileSync(file).length > 1000, 'pairing screenshot saved');

    screenId = await pairPlayer(t, app, admin, page, 'Lobby');
    const screen = await until(t, 'screen online', async () => {
      const s = await screenRecord(app, admin, screenId);
      return s.status === 'online' ? s : undefined;
    });
    t.equal(screen.playerFamily, 'desktop-linux', 'kiosk flag reported as desktop-linux');
    t.type(screen.playerVersion, 'string');
    t.match(
      screen.lastStatus,
      {
        playerFamily: 'desktop-linux',
        socketConnected: Boolean,
        display: { width: Number, height: Number },
        storage: { freeBytes: Number, totalBytes: Number },
      },
      'the status document the player sent (with the free room Chromium estimates)',
    );
    t.ok(screen.lastStatus.storage.freeBytes > 0 && screen.lastStatus.storage.freeBytes <= screen.lastStatus.storage.totalBytes);
    t.notOk(await page.getByTestId('pairing').isVisible(), 'pairing screen gone');
    await until(t, 'the socket is connected', async () => (await facts(page)).socketConnected);
    t.pass('socket connected with the bearer subprotocol');

    // The credential survives a reload: no new pairing, same screen.
    await page.reload();
    await until(t, 'running again after reload', async () => {
      const f = await facts(page);
      return f.state === 'running' && f.screenId === screenId && f.heartbeats > 0;
    });
  });

  await t.test('a plain browser reports no player family', async (t) => {
    const other = await browser.newContext({ viewport: VIEWPORT });
    t.teardown(() => other.close());
    const p2 = await other.newPage();
    // noise=1: the noise meter is on; headless Chromium has no microphone to give it.
    await p2.goto(`${app.url}/play?noise=1`);
    const id = await pairPlayer(t, app, admin, p2, 'Web');
    const screen = await until(t, 'online', async () => {
      const s = await screenRecord(app, admin, id);
      return s.status === 'online' ? s : undefined;
    });
    t.equal(screen.playerFamily, null, 'web family recorded as absent');
    const withNoise = await until(
      t,
      'noise meter state reported',
      async () => {
        const s = await screenRecord(app, admin, id);
        return s.lastStatus?.noiseMeter ? s : undefined;
      },
      20_000,
    );
    t.equal(withNoise.lastStatus.noiseMeter.status, 'unavailable', 'no microphone: reported unavailable, heartbeats go on');
    await until(t, 'socket up', async () => (await facts(p2)).socketConnected);

    // Commands: pushed as command.pending, acknowledged, answered.
    const command = async (type: string, params?: Record<string, unknown>) => {
      const res = await app.json(`/api/v1/screens/${id}/commands`, { method: 'POST', headers: admin.headers, json: { type, ...(params ? { params } : {}) } });
      t.equal(res.status, 201, `${type} queued`);
      return until(
        t,
        `${type} answered`,
        async () => {
          const c = await app.json(`/api/v1/screens/${id}/commands/${res.body.data.id}`, { headers: admin.headers });
          return ['succeeded', 'failed'].includes(c.body.data.state) ? c.body.data : undefined;
        },
        15_000,
      );
    };
    const identify = await command('identify', { seconds: 2 });
    t.equal(identify.state, 'succeeded');
    t.ok(await p2.getByTestId('identify').isVisible(), 'the identify banner is on screen');
    t.match(await p2.getByTestId('identify').textContent(), /^Web · /, 'with the screen name');
    const shot = await command('screenshot');
    t.equal(shot.state, 'succeeded', 'screenshot taken');
    t.ok(shot.screenshot?.url, 'the screenshot has a URL');
    const image = await app.fetch(shot.screenshot.url, { headers: admin.headers });
    t.equal(image.status, 200);
    t.equal(image.headers.get('content-type'), 'image/jpeg');
    const meta = await sharp(Buffer.from(await image.arrayBuffer())).metadata();
    t.equal(meta.width, VIEWPORT.width, 'the screenshot is the screen size');
    const reboot = await command('reboot');
    t.equal(reboot.state, 'failed', 'a page cannot reboot the machine');
    t.match(reboot.result?.message, /cannot run "reboot"/);

    // Revoked: the player forgets its credential and shows a new pairing code.
    const revoked = await app.json(`/api/v1/screens/${id}/revoke`, { method: 'POST', headers: admin.headers, json: {} });
    t.equal(revoked.status, 200, 'revoked');
    await until(t, 'back to pairing', async () => (await facts(p2)).state === 'pairing', 20_000);
    await until(t, 'a new code', async () => /^[A-Z0-9]{3}-[A-Z0-9]{3}$/.test((await p2.getByTestId('pairing-code').textContent())?.trim() ?? ''));
    t.match(await p2.getByTestId('pairing-reason').textContent(), /removed|not known/, 'says why, under the new code');
    await snap(p2, 'player-pairing-again', false);
    t.equal(await p2.evaluate(() => (globalThis as any).localStorage.getItem('placard.player.identity')), null, 'credential forgotten');
  });

  await t.test(
    'plays media from the API, follows a schedule change, survives the server stopping',
    { skip: !(await hasRoute(app, '/api/v1/player/manifest')) && 'manifest route not on this branch yet' },
    async (t) => {
      const work = mkdtempSync(path.join(os.tmpdir(), 'placard-player-e2e-'));
      t.teardown(() => rmSync(work, { recursive: true, force: true }));
      const red = path.join(work, 'red.png');
      const green = path.join(work, 'green.png');
      const blue = path.join(work, 'blue.mp4');
      await sharp({ create: { width: 640, height: 360, channels: 3, background: { r: 220, g: 20, b: 20 } } })
        .png()
        .toFile(red);
      await sharp({ create: { width: 640, height: 360, channels: 3, background: { r: 20, g: 200, b: 40 } } })
        .png()
        .toFile(green);
      execFileSync(app.deps.tools.ffmpeg!.path, [
        '-v',
        'error',
        '-f',
        'lavfi',
        '-i',
        'color=c=0x1428dc:s=640x360:d=4:r=25',
        '-pix_fmt',
        'yuv420p',
        '-c:v',
        'libx264',
        '-y',
        blue,
      ]);

      const redAsset = await upload(t, app, admin, red);
      const blueAsset = await upload(t, app, admin, blue);
      const greenAsset = await upload(t, app, admin, green);
      // A website item: a page served by a local fake site the test runs (magenta, so its pixels tell).
      const site = http.createServer((_req, res) =>
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<!doctype html><title>Specials</title><body style="margin:0;background:#e01ee0;height:100vh"><h1>Specials</h1></body>'),
      );
      await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
      t.teardown(() => new Promise<void>((r) => site.close(() => r())));
      const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/specials`;
      const website = await app.json('/api/v1/assets/websites', { method: 'POST', headers: admin.headers, json: { url: siteUrl } });
      t.equal(website.status, 201, 'website asset created');
      const siteAsset: string = website.body.data.id;

      const playlist = await app.json('/api/v1/playlists', { method: 'POST', headers: admin.headers, json: { name: 'Lobby loop' } });
      t.equal(playlist.status, 201);
      const pl = playlist.body.data;
      t.equal(
        (
          await app.json(`/api/v1/playlists/${pl.id}/items`, {
            method: 'POST',
            headers: { ...admin.headers, 'if-match': String(pl.revision) },
            json: { assetId: redAsset, durationMs: 3000 },
          })
        ).status,
        201,
      );
      const again = await app.json(`/api/v1/playlists/${pl.id}`, { headers: admin.headers });
      // The video comes on with a slide of 900 ms.
      t.equal(
        (
          await app.json(`/api/v1/playlists/${pl.id}/items`, {
            method: 'POST',
            headers: { ...admin.headers, 'if-match': String(again.body.data.revision) },
            json: { assetId: blueAsset, transition: { type: 'slide', durationMs: 900 } },
          })
        ).status,
        201,
      );
      t.equal(
        (await app.json(`/api/v1/playlists/${pl.id}/items`, { method: 'POST', headers: admin.headers, json: { assetId: siteAsset, durationMs: 3000 } })).status,
        201,
      );
      // Record each layer as it becomes visible: its asset, classes, transition duration, and how many layers were on screen.
      await page.evaluate(() => {
        const w = globalThis as any;
        w.__shown = [];
        new w.MutationObserver((records: any[]) => {
          for (const r of records) {
            const el = r.target;
            if (
              r.attributeName === 'class' &&
              el.classList?.contains('pl-layer') &&
              el.classList.contains('pl-visible') &&
              !(r.oldValue ?? '').includes('pl-visible')
            )
              w.__shown.push({
                assetId: el.dataset.assetId ?? null,
                kind: el.dataset.kind,
                classes: [...el.classList],
                duration: el.style.transitionDuration,
                layers: el.parentElement?.querySelectorAll('.pl-layer').length ?? 0,
              });
          }
        }).observe(w.document.body, { subtree: true, attributes: true, attributeFilter: ['class'], attributeOldValue: true });
      });
      const assigned = await app.json(`/api/v1/screens/${screenId}/playlist-assignment`, {
        method: 'PUT',
        headers: admin.headers,
        json: { playlistId: pl.id },
      });
      t.equal(assigned.status, 200, 'playlist assigned');

      await until(t, 'the image is on screen', async () => (await facts(page)).nowPlaying.assetId === redAsset, 30_000);
      await new Promise((r) => setTimeout(r, 1000));
      t.equal(dominant(await centreColour(page)), 'red', 'the image is visible (screenshot pixels)');
      await snap(page, 'player-image', false);
      await until(t, 'the video plays next', async () => (await facts(page)).nowPlaying.assetId === blueAsset, 20_000);
      await new Promise((r) => setTimeout(r, 1000));
      t.equal(dominant(await centreColour(page)), 'blue', 'the video is visible');
      await snap(page, 'player-video', false);
      t.ok(
        await page.evaluate(() => {
          const v = (globalThis as any).document.querySelector('.pl-layer.pl-visible video') as { muted: boolean; paused: boolean } | null;
          return !!v && v.muted && !v.paused;
        }),
        'the video plays, muted',
      );
      const shown = await page.evaluate(
        () => (globalThis as any).__shown as { assetId: string | null; kind: string; classes: string[]; duration: string; layers: number }[],
      );
      const videoIn = shown.find((x) => x.assetId === blueAsset);
      t.ok(videoIn, 'the video layer came on');
      t.ok(videoIn?.classes.includes('pl-slide'), `the video slides in (classes: ${videoIn?.classes.join(' ')})`);
      t.equal(videoIn?.duration, '900ms', 'with the item’s transition duration');
      t.ok((videoIn?.layers ?? 0) >= 2, 'the image is still there under it while it comes on (never blank)');
      // After `ended`, the website: the fake site's page in a frame.
      await until(t, 'the website plays after the video', async () => (await facts(page)).nowPlaying.assetId === siteAsset, 20_000);
      const frame = page.locator('.pl-layer.pl-visible iframe.pl-frame');
      t.equal(await frame.getAttribute('src'), siteUrl, 'the website item is a frame of its URL');
      t.match(await frame.getAttribute('sandbox'), /allow-scripts/, 'sandboxed');
      await until(t, 'the website painted', async () => dominant(await centreColour(page)) === 'magenta', 5_000);
      t.pass('the website is visible (screenshot pixels)');
      await snap(page, 'player-website', false);
      // Then the loop comes back to the image.
      await until(t, 'back to the image after the website', async () => (await facts(page)).nowPlaying.assetId === redAsset, 20_000);
      const fades = (await page.evaluate(() => (globalThis as any).__shown as { assetId: string | null; classes: string[]; duration: string }[])).filter(
        (x) => x.assetId === redAsset,
      );
      t.ok(fades.length >= 1 && fades.every((x) => !x.classes.includes('pl-slide')), 'the image (no transition set) does not slide');

      // A schedule for another playlist: pushed as manifest.changed, on screen within seconds.
      const pl2 = (await app.json('/api/v1/playlists', { method: 'POST', headers: admin.headers, json: { name: 'Promo' } })).body.data;
      t.equal(
        (
          await app.json(`/api/v1/playlists/${pl2.id}/items`, {
            method: 'POST',
            headers: { ...admin.headers, 'if-match': String(pl2.revision) },
            json: { assetId: greenAsset, durationMs: 5000 },
          })
        ).status,
        201,
      );
      t.ok((await facts(page)).socketConnected, 'the socket is up');
      const schedule = await app.json('/api/v1/schedules', {
        method: 'POST',
        headers: admin.headers,
        json: {
          name: 'Promo now',
          content: { playlistId: pl2.id },
          targets: { screenIds: [screenId] },
          startsAt: new Date(Date.now() - 60_000).toISOString(),
          endsAt: new Date(Date.now() + 3600_000).toISOString(),
          priority: 10,
          enabled: true,
        },
      });
      t.equal(schedule.status, 201, 'schedule created');
      await until(t, 'the scheduled playlist is on screen', async () => (await facts(page)).nowPlaying.assetId === greenAsset, 10_000);
      await new Promise((r) => setTimeout(r, 1000));
      t.equal(dominant(await centreColour(page)), 'green');
      t.equal((await facts(page)).nowPlaying.scheduleId, schedule.body.data.id, 'the heartbeat will name the schedule');

      // A layout with two zones (an asset, a playlist) on a scaled canvas, scheduled above.
      const layout = await app.json('/api/v1/layouts', {
        method: 'POST',
        headers: admin.headers,
        json: {
          name: 'Split',
          width: 1920,
          height: 1080,
          background: { color: '#000000' },
          zones: [
            { id: 'left', name: 'Left', x: 0, y: 0, width: 960, height: 1080, fit: 'cover', content: { type: 'asset', assetId: redAsset, durationMs: 5000 } },
            { id: 'right', name: 'Right', x: 960, y: 0, width: 960, height: 1080, fit: 'cover', content: { type: 'playlist', playlistId: pl2.id } },
          ],
        },
      });
      t.equal(layout.status, 201, 'layout created');
      t.equal(
        (await app.json(`/api/v1/layouts/${layout.body.data.id}/publish`, { method: 'POST', headers: admin.headers, json: {} })).status,
        200,
        'layout published',
      );
      const layoutSchedule = await app.json('/api/v1/schedules', {
        method: 'POST',
        headers: admin.headers,
        json: {
          name: 'Split now',
          content: { layoutId: layout.body.data.id },
          targets: { screenIds: [screenId] },
          startsAt: new Date(Date.now() - 60_000).toISOString(),
          endsAt: new Date(Date.now() + 3600_000).toISOString(),
          priority: 20,
          enabled: true,
        },
      });
      t.equal(layoutSchedule.status, 201, 'layout scheduled');
      await until(
        t,
        'the layout is on screen',
        async () => {
          const np = (await facts(page)).nowPlaying as { layoutId?: string | null };
          return np.layoutId === layout.body.data.id;
        },
        15_000,
      );
      await until(
        t,
        'both zones painted',
        async () => dominant(await colourAt(page, 0.25, 0.5)) === 'red' && dominant(await colourAt(page, 0.75, 0.5)) === 'green',
        10_000,
      );
      t.pass('left zone red, right zone green');
      await snap(page, 'player-layout', false);
      // The socket goes down while the server stays up: reconnections are refused (Playwright
      // closes them before they reach the server) and the server's hub drops the live one.
      // The next change has no socket to come by; the player's poll brings it.
      let refused = 0;
      await page.routeWebSocket(/\/api\/v1\/player\/socket/, (ws) => {
        refused++;
        ws.close({ code: 1013, reason: 'socket blocked by the test' });
      });
      app.deps.realtime!.closeScreen(screenId, 1012, 'the test drops the socket');
      await until(t, 'the socket is down', async () => !(await facts(page)).socketConnected, 10_000);
      await until(t, 'a reconnection refused', async () => refused >= 1, 15_000);
      const revisionBefore = (await facts(page)).manifestRevision;
      t.equal(
        (await app.json(`/api/v1/schedules/${layoutSchedule.body.data.id}/disable`, { method: 'POST', headers: admin.headers, json: {} })).status,
        200,
        'layout schedule disabled',
      );
      const arrived = await until(
        t,
        'back to the promo playlist, by polling',
        async () => {
          const f = await facts(page);
          return (f.nowPlaying as { layoutId?: string | null }).layoutId === null && f.nowPlaying.assetId === greenAsset ? f : undefined;
        },
        45_000,
      );
      t.notOk(arrived.socketConnected, 'the change arrived while the socket was down');
      t.not(arrived.manifestRevision, revisionBefore, 'a new manifest revision');
      const fetches = await page.evaluate(() => (globalThis as any).placardPlayer.manifestFetches() as { reasons: string[]; revision: string }[]);
      const fetched = fetches.find((f) => f.revision === arrived.manifestRevision);
      t.ok(
        fetched && fetched.reasons.length > 0 && fetched.reasons.every((r) => r === 'poll' || r === 'heartbeat'),
        `fetched by polling (the manifest poll or the heartbeat's revision), not the socket: ${JSON.stringify(fetched)}`,
      );
      t.equal((await facts(page)).socketConnected, false, `still no socket (${refused} reconnections refused)`);
      await until(t, 'full-screen green again', async () => dominant(await centreColour(page)) === 'green', 10_000);

      // The server goes away: playback carries on from the cache.
      await app.server.close(500);
      await new Promise((r) => setTimeout(r, 6000));
      t.equal(dominant(await centreColour(page)), 'green', 'still playing with the server stopped');
      await snap(page, 'player-offline', false);
      // Even a reload with the server gone starts the player from the service worker's cache.
      await page.reload();
      await until(t, 'playing again after an offline reload', async () => (await facts(page)).nowPlaying.assetId === greenAsset, 20_000);
      await new Promise((r) => setTimeout(r, 1500));
      t.equal(dominant(await centreColour(page)), 'green', 'offline reload plays from the cache');
      await snap(page, 'player-offline-reload', false);
    },
  );
});

async function hasRoute(app: TestApp, p: string): Promise<boolean> {
  const res = await app.fetch(p);
  await res.arrayBuffer();
  return res.status !== 404;
}

/** Uploads a file through tus (the media module's helpers) and waits until it is ready. */
async function upload(t: Test, app: TestApp, admin: SignedIn, file: string): Promise<string> {
  const asset = await uploadAsset(app, admin, readFileSync(file), path.basename(file));
  const settled = await settledAsset(app, admin, asset.id);
  t.equal(settled.state, 'ready', `${path.basename(file)} processed (${settled.failureReason ?? 'ok'})`);
  return asset.id;
}
