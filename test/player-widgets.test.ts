/**
 * Widgets in the browser player (issue 19), end to end, in Debian's Chromium against the real
 * server on port 0: a clock, a ticker, a table bound to a manual table and a hostile custom
 * widget (in a playlist) on a layout scheduled on a paired /play page.
 * - Pixels: each widget zone's screenshot is not blank; the clock's digits change between two
 *   shots; the ticker moves. The table's frame shows the rows (read inside the frame).
 * - The frames are sandboxed (`allow-scripts`, never `allow-same-origin`: the frame cannot
 *   read the player or its cookies) and held to the no-network policy (`csp` attribute).
 * - A row change reaches the screen without a reload and without a blank moment, and the
 *   clock's frame stays the same element (its bundle did not change).
 * - The hostile template (<img> and CSS url() to a local beacon, a <script>) causes no request
 *   to the beacon and runs no script; even code injected into the frame cannot reach it.
 * - The server stops: a reload still shows the widgets, from the cache.
 * Screenshots: test/artifacts/player-widgets-*.png.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import sharp from 'sharp';
import type { Frame, Page } from 'playwright-core';
import { signedInApp } from './helpers/auth.js';
import { ARTIFACTS, launchBrowser, pairPlayPage, snap, waitUntil } from './helpers/browser.js';
import { createSource } from './helpers/data-sources.js';

const VIEWPORT = { width: 1280, height: 720 };
const ZONE = 'Asia/Kolkata';

async function until<T>(t: Test, what: string, fn: () => Promise<T | undefined | false | null>, ms = 20_000): Promise<T> {
  try {
    return await waitUntil(what, async () => (await fn()) ?? undefined, ms);
  } catch (err) {
    t.fail(String(err));
    throw err;
  }
}

/** The loaded widget frame on screen in a zone (the visible content, not one being built). */
const frameSelector = (zoneId: string) =>
  `.pl-content.pl-visible [data-zone-id="${zoneId}"] .pl-widget:not(.pl-widget-building) iframe.pl-widget-frame, .pl-content.pl-visible [data-zone-id="${zoneId}"] .pl-layer.pl-visible iframe.pl-widget-frame`;

async function frameIn(page: Page, zoneId: string): Promise<Frame | null> {
  const handle = await page.$(frameSelector(zoneId));
  return (await handle?.contentFrame()) ?? null;
}

/** The text the widget's document shows, read inside its (sandboxed) frame. */
async function frameText(page: Page, zoneId: string): Promise<string | null> {
  const frame = await frameIn(page, zoneId);
  return frame ? frame.evaluate(() => (globalThis as any).document.body?.innerText ?? '') : null;
}

/** A PNG of a zone as it is on screen, and how varied it is (a blank zone has one colour). */
async function shot(page: Page, zoneId: string, name?: string) {
  const png = await page.locator(`.pl-content.pl-visible [data-zone-id="${zoneId}"]`).screenshot();
  if (name) {
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(`${ARTIFACTS}/${name}.png`, png);
  }
  const stats = await sharp(png).greyscale().stats();
  const raw = await sharp(png).greyscale().raw().toBuffer();
  return { png, raw, spread: stats.channels[0]!.max - stats.channels[0]!.min, stdev: stats.channels[0]!.stdev };
}

const differs = (a: Buffer, b: Buffer) => {
  if (a.length !== b.length) return a.length;
  let n = 0;
  for (let i = 0; i < a.length; i++) if (Math.abs(a[i]! - b[i]!) > 40) n += 1;
  return n;
};

t.test('browser player: widgets render sandboxed, tick and scroll, follow their data, stay off the network, and play offline', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const { app, owner, call } = await signedInApp(t);
  t.equal((await call('PATCH', '/api/v1/settings', { timeZone: ZONE }, { 'if-match': '"0"' })).status, 200, 'the screens’ zone is Kolkata');

  // A beacon: any request here means a widget reached the network.
  const beacon: string[] = [];
  const beaconServer = http.createServer((req, res) => {
    beacon.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'image/gif' }).end();
  });
  await new Promise<void>((r) => beaconServer.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => beaconServer.close(() => r())));
  const BEACON = `http://127.0.0.1:${(beaconServer.address() as AddressInfo).port}`;

  const made = await createSource(app, owner, {
    name: 'Menu',
    provider: 'manual-table',
    config: {
      columns: [
        { name: 'dish', type: 'text' },
        { name: 'price', type: 'number' },
      ],
    },
    rows: [
      { dish: 'Masala dosa', price: 4.5 },
      { dish: 'Idli sambar', price: 3 },
      { dish: 'Filter coffee', price: 1.2 },
    ],
  });
  t.equal(made.status, 201, JSON.stringify(made.body));
  const sourceId: string = made.body.data.id;

  const widget = async (body: Record<string, unknown>) => {
    const res = await call('POST', '/api/v1/widgets', body);
    t.equal(res.status, 201, `${body.name}: ${JSON.stringify(res.body).slice(0, 400)}`);
    return res.body.data as { id: string; bundle: { id: string } | null };
  };
  const clock = await widget({ name: 'Clock', type: 'clock', settings: { seconds: true, background: '#0b2545', color: '#ffffff', fontSizePx: 120 } });
  const ticker = await widget({
    name: 'Ticker',
    type: 'ticker',
    settings: {
      text: 'Fresh filter coffee all day ✦ Lunch thali from noon ✦ Free wifi',
      speedPxPerSec: 300,
      background: '#111111',
      color: '#ffd166',
      fontSizePx: 48,
    },
  });
  const table = await widget({
    name: 'Menu board',
    type: 'table',
    binding: { sourceId, view: null },
    settings: {
      title: 'Menu',
      background: '#fdf6e3',
      color: '#222222',
      columns: [
        { name: 'dish', heading: 'Dish' },
        { name: 'price', heading: 'Price', format: { type: 'money', currency: 'EUR', decimals: 2 } },
      ],
    },
  });
  const hostile = await widget({
    name: 'Hostile',
    type: 'custom',
    template: `<div class="loud">Hostile widget</div><img src="${BEACON}/img" alt=""><script>document.title = 'pwned'; fetch('${BEACON}/script');</script><div style="background-image:url(${BEACON}/inline-css)">styled</div><a href="${BEACON}/link">link</a>`,
    settings: { css: `.loud{font-size:64px;background:url(${BEACON}/css) #7a1f1f;color:#fff}`, background: '#7a1f1f' },
  });

  // The hostile widget plays as a playlist item; the others fill layout zones.
  const playlist = await call('POST', '/api/v1/playlists', { name: 'Hostile loop' });
  t.equal(playlist.status, 201);
  const item = await call(
    'POST',
    `/api/v1/playlists/${playlist.body.data.id}/items`,
    { widgetId: hostile.id },
    { 'if-match': String(playlist.body.data.revision) },
  );
  t.equal(item.status, 201, JSON.stringify(item.body));

  const created = await call('POST', '/api/v1/layouts', { name: 'Café widgets' });
  const layoutId: string = created.body.data.id;
  const draft = await call(
    'PUT',
    `/api/v1/layouts/${layoutId}/draft`,
    {
      width: 1920,
      height: 1080,
      zones: [
        { name: 'Clock', x: 0, y: 0, width: 960, height: 360, content: { type: 'widget', widgetId: clock.id } },
        { name: 'Hostile', x: 0, y: 360, width: 960, height: 600, content: { type: 'playlist', playlistId: playlist.body.data.id } },
        { name: 'Menu', x: 960, y: 0, width: 960, height: 960, content: { type: 'widget', widgetId: table.id } },
        { name: 'Ticker', x: 0, y: 960, width: 1920, height: 120, content: { type: 'widget', widgetId: ticker.id } },
      ],
    },
    { 'if-match': String(created.body.data.revision) },
  );
  t.equal(draft.status, 200, JSON.stringify(draft.body));
  t.equal((await call('POST', `/api/v1/layouts/${layoutId}/publish`, {})).status, 200);
  const [clockZone, hostileZone, tableZone, tickerZone] = draft.body.data.draft.zones.map((z: { id: string }) => z.id) as string[];

  const context = await browser.newContext({ viewport: VIEWPORT, locale: 'en-GB', timezoneId: 'America/Los_Angeles' });
  const page = await context.newPage();
  const lines: string[] = [];
  page.on('console', (m: { type(): string; text(): string }) => lines.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e: Error) => lines.push(`pageerror: ${e.message}`));
  t.teardown(() => {
    if (!t.passing()) t.comment(`player console:\n${lines.slice(-40).join('\n')}`);
  });
  await page.goto(`${app.url}/play`);
  const screenId = await pairPlayPage(app, owner, page, 'Café');
  const sched = await call('POST', '/api/v1/schedules', {
    name: 'Widgets all day',
    content: { layoutId },
    targets: { screenIds: [screenId] },
    startsAt: new Date(Date.now() - 60_000).toISOString(),
  });
  t.equal(sched.status, 201, JSON.stringify(sched.body));

  for (const [name, zone] of Object.entries({ clock: clockZone!, hostile: hostileZone!, table: tableZone!, ticker: tickerZone! }))
    await until(t, `the ${name} widget’s frame`, async () => ((await frameText(page, zone))?.trim() ? true : null));
  await page.waitForTimeout(1_600); // the content's fade in
  await snap(page, 'player-widgets-full', false);

  await t.test('the frames: sandboxed without allow-same-origin, held to the no-network policy, fed the context', async (t) => {
    const attrs = await page.evaluate(() =>
      [...(globalThis as any).document.querySelectorAll('.pl-content.pl-visible iframe.pl-widget-frame')].map((f: any) => ({
        sandbox: f.getAttribute('sandbox'),
        csp: f.getAttribute('csp'),
        referrer: f.getAttribute('referrerpolicy'),
        src: f.getAttribute('src'),
        border: (globalThis as any).getComputedStyle(f).borderTopWidth,
      })),
    );
    t.equal(attrs.length, 4, 'four widget frames');
    for (const a of attrs) {
      t.equal(a.sandbox, 'allow-scripts', 'sandbox: scripts only, no allow-same-origin');
      t.match(a.csp, /^default-src 'none'; img-src data: blob:;.*script-src ('sha256-[^']+'|'none')/, 'the csp attribute: no network');
      t.equal(a.referrer, 'no-referrer');
      t.equal(a.src, null, 'srcdoc, no address');
      t.equal(a.border, '0px', 'no border');
    }
    // Inside: an opaque origin (no access to the player, its storage or cookies).
    // A string, not a function: nothing the test's compiler adds (helpers) may be needed inside.
    const inside = (await (await frameIn(page, clockZone!))!.evaluate(`(() => {
      const tryIt = (fn) => { try { fn(); return 'allowed'; } catch (err) { return err.name; } };
      return {
        origin: origin,
        parent: tryIt(() => parent.document.title),
        storage: tryIt(() => localStorage.getItem('placard.player.identity')),
        cookie: tryIt(() => document.cookie),
        context: JSON.parse(document.getElementById('placard-context')?.textContent ?? 'null'),
        size: [innerWidth, innerHeight],
      };
    })()`)) as { origin: string; parent: string; storage: string; cookie: string; context: unknown; size: number[] };
    t.equal(inside.origin, 'null', 'an opaque origin');
    t.equal(inside.parent, 'SecurityError', 'cannot read the player page');
    t.equal(inside.storage, 'SecurityError', 'nor its localStorage (the credential)');
    t.equal(inside.cookie, 'SecurityError', 'nor cookies');
    t.same(inside.context, { timeZone: ZONE, width: 960, height: 360, locale: 'en-GB' }, 'the context: the manifest’s zone, the zone’s size, the locale');
    t.same(inside.size, [960, 360], 'the frame is its zone’s size (canvas pixels)');
  });

  await t.test('pixels: not blank; the clock’s digits change; the ticker moves; the table shows the rows', async (t) => {
    const clock1 = await shot(page, clockZone!, 'player-widgets-clock-1');
    t.ok(clock1.spread > 100, `the clock zone is not blank (grey spread ${clock1.spread})`);
    const text1 = await frameText(page, clockZone!);
    // The clock in the manifest's zone (Kolkata), not the browser's (Los Angeles).
    const kolkata = new Intl.DateTimeFormat('en-GB', { timeZone: ZONE, hour: '2-digit', minute: '2-digit', hour12: false }).format(new Date());
    t.match(text1, kolkata.slice(0, 2), `the hours of Kolkata (${kolkata}) in "${text1}"`);
    await page.waitForTimeout(1_300);
    const clock2 = await shot(page, clockZone!, 'player-widgets-clock-2');
    const text2 = await frameText(page, clockZone!);
    t.not(text2, text1, `the clock ticks (${text1} → ${text2})`);
    t.ok(differs(clock1.raw, clock2.raw) > 20, 'its digits change on screen');

    const tick1 = await shot(page, tickerZone!, 'player-widgets-ticker-1');
    t.ok(tick1.spread > 100, `the ticker is not blank (spread ${tick1.spread})`);
    await page.waitForTimeout(500);
    const tick2 = await shot(page, tickerZone!, 'player-widgets-ticker-2');
    t.ok(differs(tick1.raw, tick2.raw) > 50, 'the ticker moved');

    const menu = await shot(page, tableZone!, 'player-widgets-table');
    t.ok(menu.spread > 100, `the table is not blank (spread ${menu.spread})`);
    const text = (await frameText(page, tableZone!)) ?? '';
    for (const dish of ['Masala dosa', 'Idli sambar', 'Filter coffee']) t.match(text, dish, `the row ${dish}`);
    t.match(text, /4[.,]50/, 'prices in the column’s format');

    const hostileShot = await shot(page, hostileZone!, 'player-widgets-hostile');
    t.ok(hostileShot.spread > 100, 'the hostile widget renders (its text)');
  });

  await t.test('hostile markup reaches no network and runs no script, even injected into its frame', async (t) => {
    const frame = (await frameIn(page, hostileZone!))!;
    const state = await frame.evaluate(() => ({ title: (globalThis as any).document.title, scripts: (globalThis as any).document.scripts.length }));
    t.not(state.title, 'pwned', 'the template’s script did not run');
    // Code run inside the frame (as a script that slipped through would) still cannot reach the network.
    const tried = await frame.evaluate(async (url: string) => {
      const g = globalThis as any;
      const img = new g.Image();
      img.src = `${url}/injected-img`;
      const f = await g.fetch(`${url}/injected-fetch`).then(
        () => 'fetched',
        (e: Error) => e.name,
      );
      const s = g.document.createElement('script');
      s.textContent = `document.title = 'injected'`;
      g.document.body.append(s);
      return { fetch: f, title: g.document.title };
    }, BEACON);
    t.equal(tried.fetch, 'TypeError', 'fetch is refused (connect-src none)');
    t.not(tried.title, 'injected', 'an inline script added later does not run (no hash)');
    await page.waitForTimeout(500);
    t.same(beacon, [], 'the beacon saw nothing');
  });

  await t.test('a row change reaches the table without a reload or a blank moment; the clock keeps its frame', async (t) => {
    const before = await page.evaluate(
      (ids) => {
        const g = globalThis as any;
        const frames = ids.map((id: string) => g.document.querySelector(`[data-zone-id="${id}"] iframe.pl-widget-frame`));
        g.__kept = frames;
        g.__blank = 0;
        g.__observer = new g.MutationObserver(() => {
          // A moment with no loaded table frame on screen is a blank moment.
          if (!g.document.querySelector(`[data-zone-id="${ids[1]}"] .pl-widget:not(.pl-widget-building) iframe`)) g.__blank += 1;
        });
        g.__observer.observe(g.document.querySelector('.pl-stage'), { childList: true, subtree: true, attributes: true, attributeFilter: ['class'] });
        return frames.map((f: any) => f.dataset.bundleId);
      },
      [clockZone!, tableZone!],
    );
    const navigations: string[] = [];
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations.push(f.url());
    });
    const changedAt = Date.now();
    const patched = await call('PATCH', `/api/v1/data-sources/${sourceId}`, {
      rows: [
        { dish: 'Masala dosa', price: 5.25 },
        { dish: 'Idli sambar', price: 3 },
        { dish: 'Filter coffee', price: 1.2 },
        { dish: 'Mango lassi', price: 2.75 },
      ],
    });
    t.equal(patched.status, 200, JSON.stringify(patched.body).slice(0, 300));
    const text = await until(t, 'the new rows in the table', async () => {
      const s = await frameText(page, tableZone!);
      return s?.includes('Mango lassi') ? s : null;
    });
    t.ok(Date.now() - changedAt < 10_000, `within a few seconds (${Date.now() - changedAt} ms)`);
    t.match(text, /5[.,]25/, 'the changed price');
    const after = await page.evaluate(
      (ids) => {
        const g = globalThis as any;
        g.__observer.disconnect();
        const frames = ids.map((id: string) => g.document.querySelector(`[data-zone-id="${id}"] .pl-widget:not(.pl-widget-building) iframe.pl-widget-frame`));
        return { same: frames.map((f: any, i: number) => f === g.__kept[i]), bundles: frames.map((f: any) => f.dataset.bundleId), blank: g.__blank };
      },
      [clockZone!, tableZone!],
    );
    t.same(navigations, [], 'no reload');
    t.not(after.bundles[1], before[1], 'the table shows a new bundle');
    t.equal(after.same[0], true, 'the clock’s frame is the same element: it kept running');
    t.equal(after.bundles[0], before[0]);
    t.equal(after.blank, 0, 'the table zone never showed a blank moment');
    await page.waitForTimeout(300);
    await snap(page, 'player-widgets-changed', false);
  });

  await t.test('the server stops: a reload still shows the widgets, from the cache', async (t) => {
    const before = await frameText(page, tableZone!);
    await app.server.close(500);
    await page.reload();
    for (const [name, zone] of Object.entries({ clock: clockZone!, hostile: hostileZone!, table: tableZone!, ticker: tickerZone! }))
      await until(t, `the ${name} widget again, offline`, async () => ((await frameText(page, zone))?.trim() ? true : null));
    t.equal(await frameText(page, tableZone!), before, 'the same rows, from the cache');
    const a = await frameText(page, clockZone!);
    await page.waitForTimeout(1_200);
    t.not(await frameText(page, clockZone!), a, 'the clock ticks offline');
    await page.waitForTimeout(1_600); // the content's fade in
    await snap(page, 'player-widgets-offline', false);
    const offline = await shot(page, tableZone!);
    t.ok(offline.spread > 100, 'the table drawn offline');
    t.same(beacon, [], 'still nothing reached the beacon');
  });
});
