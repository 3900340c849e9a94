/**
 * The browser player's widget frames at component level, in Chromium (issue 19): a real server
 * and a paired /play page, but the manifest, the bundles and one image are answered by the test
 * (Playwright routes), hand-made per the bundle contract, so the player's own defences are tested
 * without the server's sanitiser in front of them:
 * - a bundle with a raw <img> and CSS url() to a local beacon and an inline <script> reaches no
 *   network and runs no script, while the runtime script its policy names by hash does run;
 * - the context is written in (manifest zone, zone size, locale) and `placard-media:<assetId>`
 *   shows the cached variant as a data: URL (its colour on screen);
 * - a widget as a layout zone and as a playlist item;
 * - the same bundle in a new manifest keeps its frame (the same element, its counter running on);
 *   a new bundle is swapped in without a blank moment; a bundle whose bytes do not match its
 *   sha256 is never shown (the old frame stays); a bundle without its meta policy is still held
 *   by the frame's csp attribute (no request, no script).
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import sharp from 'sharp';
import type { Page, Route } from 'playwright-core';
import { signedInApp } from './helpers/auth.js';
import { launchBrowser, pairPlayPage, snap, waitUntil } from './helpers/browser.js';

const sha256 = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');
const W1 = '0190f5a2-7b3c-7def-8abc-00000000000a';
const W2 = '0190f5a2-7b3c-7def-8abc-00000000000b';
const ASSET = '0190f5a2-7b3c-7def-8abc-0000000000a1';

async function until<T>(t: Test, what: string, fn: () => Promise<T | undefined | false | null>, ms = 20_000): Promise<T> {
  try {
    return await waitUntil(what, async () => (await fn()) ?? undefined, ms);
  } catch (err) {
    t.fail(String(err));
    throw err;
  }
}

/** The runtime of a hand-made bundle: shows the context and a counter that ticks every 100 ms. */
const RUNTIME = `(function(){var c=JSON.parse(document.getElementById('placard-context').textContent||'{}');document.body.dataset.ran='1';document.getElementById('ctx').textContent=JSON.stringify(c);var n=0;setInterval(function(){document.getElementById('n').textContent=String(++n)},100);})();`;

/** A bundle per the contract: the policy first, the context script, the template, the runtime allowed by its hash. */
function bundle(label: string, background: string, template = ''): string {
  const hash = createHash('sha256').update(RUNTIME).digest('base64');
  const csp = `default-src 'none'; img-src data: blob:; media-src data: blob:; font-src data:; style-src 'unsafe-inline'; script-src 'sha256-${hash}'; base-uri 'none'; form-action 'none'`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${csp}"><script type="application/json" id="placard-context">{}</script><style>html,body{margin:0;width:100%;height:100%;overflow:hidden}body{background:${background};color:#fff;font:48px sans-serif}</style></head><body><div id="label">${label}</div><div id="n">0</div><div id="ctx"></div>${template}<script>${RUNTIME}</script></body></html>`;
}

t.test('browser player: widget frames (hand-made bundles): sandboxed, fed, kept, swapped, verified', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const { app, owner, call } = await signedInApp(t);

  const beacon: string[] = [];
  const beaconServer = http.createServer((req, res) => {
    beacon.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'image/gif' }).end();
  });
  await new Promise<void>((r) => beaconServer.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => beaconServer.close(() => r())));
  const BEACON = `http://127.0.0.1:${(beaconServer.address() as AddressInfo).port}`;

  const red = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 220, g: 20, b: 20 } } })
    .png()
    .toBuffer();
  const hostileTemplate = `<img id="pic" src="placard-media:${ASSET}" style="width:320px;height:240px;display:block"><img src="${BEACON}/img"><div style="width:10px;height:10px;background:url(${BEACON}/inline-css)"></div><style>#label{background-image:url('${BEACON}/css')}</style><script>document.title='pwned';fetch('${BEACON}/script')</script><img src="placard-media:0190f5a2-7b3c-7def-8abc-0000000000ff">`;
  const bundles = new Map<string, string>([
    ['b1', bundle('Zone widget', '#0b2545', hostileTemplate)],
    ['b2', bundle('Item widget', '#1b4332')],
    ['b3', bundle('Zone widget, new', '#3c1642')],
  ]);
  const entry = (widgetId: string, bundleId: string, tamper = false) => {
    const html = bundles.get(bundleId)!;
    return {
      widgetId,
      bundleId,
      revision: 1,
      url: `/api/v1/player/widget-bundles/${bundleId}`,
      sha256: tamper ? sha256(`${html}x`) : sha256(html),
      sizeBytes: Buffer.byteLength(html),
      contentType: 'text/html; charset=utf-8',
      images: widgetId === W1 ? [{ assetId: ASSET, variantId: 'v1' }] : [],
    };
  };
  /** The manifest the page gets: a layout with a widget zone and a playlist zone whose item is a widget. */
  let zoneEntry = entry(W1, 'b1');
  let revision = 1;
  const manifest = () => ({
    revision: `fake-${revision}`,
    generatedAt: new Date().toISOString(),
    timeZone: 'Pacific/Auckland',
    timeline: [
      {
        startsAt: new Date(Date.now() - 3_600_000).toISOString(),
        endsAt: new Date(Date.now() + 3_600_000).toISOString(),
        source: { type: 'schedule', id: 's1' },
        layout: {
          id: 'l1',
          width: 1920,
          height: 1080,
          zones: [
            { id: 'zw', x: 0, y: 0, width: 1200, height: 1080, zIndex: 0, playlist: null, data: null, widget: { widgetId: W1, bundleId: zoneEntry.bundleId } },
            {
              id: 'zp',
              x: 1200,
              y: 0,
              width: 720,
              height: 1080,
              zIndex: 0,
              data: null,
              widget: null,
              playlist: { id: 'p1', items: [{ id: 'i1', kind: 'widget', assetId: null, variantId: null, widgetId: W2, bundleId: 'b2', durationMs: 5000 }] },
            },
          ],
        },
      },
    ],
    media: [
      {
        assetId: ASSET,
        variantId: 'v1',
        url: `/api/v1/player/assets/${ASSET}/variants/v1`,
        contentType: 'image/png',
        sizeBytes: red.length,
        sha256: sha256(red),
      },
    ],
    data: [],
    widgets: [zoneEntry, entry(W2, 'b2')],
  });
  const served: string[] = [];
  const routes = async (page: Page) => {
    await page.route('**/api/v1/player/manifest', (route: Route) => {
      const etag = `"fake-${revision}"`;
      if (route.request().headers()['if-none-match'] === etag) return route.fulfill({ status: 304, headers: { etag } });
      return route.fulfill({ status: 200, headers: { etag, 'content-type': 'application/json' }, body: JSON.stringify({ data: manifest() }) });
    });
    await page.route('**/api/v1/player/widget-bundles/*', (route: Route) => {
      const id = new URL(route.request().url()).pathname.split('/').pop()!;
      served.push(id);
      const html = bundles.get(id);
      return html ? route.fulfill({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: html }) : route.fulfill({ status: 404 });
    });
    await page.route(`**/api/v1/player/assets/${ASSET}/variants/v1`, (route: Route) =>
      route.fulfill({ status: 200, headers: { 'content-type': 'image/png' }, body: red }),
    );
  };

  // No service worker: the test answers the player's downloads itself (routes do not see a worker's requests).
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, locale: 'fr-FR', serviceWorkers: 'block' });
  const page = await context.newPage();
  const lines: string[] = [];
  page.on('console', (m: { type(): string; text(): string }) => lines.push(`${m.type()}: ${m.text()}`));
  t.teardown(() => {
    if (!t.passing()) t.comment(`player console:\n${lines.slice(-30).join('\n')}`);
  });
  await page.goto(`${app.url}/play`);
  const screenId = await pairPlayPage(app, owner, page, 'Frames');
  await routes(page);
  const syncNow = async () => t.equal((await call('POST', `/api/v1/screens/${screenId}/commands`, { type: 'sync_now' })).status, 201, 'sync_now queued');
  await syncNow();

  const zoneFrame = async () => (await (await page.$('[data-zone-id="zw"] .pl-widget:not(.pl-widget-building) iframe'))?.contentFrame()) ?? null;
  const itemFrame = async () => (await (await page.$('[data-zone-id="zp"] .pl-layer.pl-visible iframe'))?.contentFrame()) ?? null;
  const read = (frame: Awaited<ReturnType<typeof zoneFrame>>) =>
    frame?.evaluate(() => {
      const d = (globalThis as any).document;
      const pic = d.getElementById('pic');
      return {
        ran: d.body.dataset.ran ?? '',
        label: d.getElementById('label')?.textContent ?? '',
        n: Number(d.getElementById('n')?.textContent ?? 0),
        ctx: d.getElementById('ctx')?.textContent ?? '',
        title: d.title,
        pic: pic ? { src: pic.getAttribute('src').slice(0, 22), width: pic.naturalWidth } : null,
        srcs: [...d.images].map((i: any) => (i.getAttribute('src') as string).slice(0, 22)),
      };
    }) ?? null;

  const zone = await until(t, 'the zone widget runs', async () => {
    const s = await read(await zoneFrame());
    return s?.ran === '1' && s.pic?.width ? s : null;
  });
  const item = await until(t, 'the playlist’s widget item runs', async () => {
    const s = await read(await itemFrame());
    return s?.ran === '1' ? s : null;
  });
  t.equal(item.label, 'Item widget');
  t.same(JSON.parse(zone.ctx), { timeZone: 'Pacific/Auckland', width: 1200, height: 1080, locale: 'fr-FR' }, 'the context: zone, size, locale');
  t.same(JSON.parse(item.ctx), { timeZone: 'Pacific/Auckland', width: 720, height: 1080, locale: 'fr-FR' }, 'an item’s context: its zone’s size');
  t.equal(zone.pic?.src, 'data:image/png;base64,', 'placard-media became a data: URL of the cached variant');
  t.equal(zone.pic?.width, 64, 'and it decoded');
  t.same(zone.srcs, ['data:image/png;base64,', `${BEACON}/img`.slice(0, 22), 'data:,'], 'an unlisted asset is an empty data: URL');
  t.not(zone.title, 'pwned', 'the template’s inline script did not run (not in the policy)');
  await page.waitForTimeout(1_600);
  const png = await snap(page, 'player-widgets-frame', false);
  // The red picture at the zone's top left (canvas 0..320 x 200..440 of 1920 scaled to 1280).
  const { data } = await sharp(png).extract({ left: 40, top: 180, width: 20, height: 20 }).resize(1, 1).raw().toBuffer({ resolveWithObject: true });
  t.ok(data[0]! > 180 && data[1]! < 80 && data[2]! < 80, `the cached picture on screen (rgb ${[...data.subarray(0, 3)]})`);
  t.same(beacon, [], 'nothing reached the beacon: <img>, CSS url() and fetch blocked');
  const np = await page.evaluate(() => (globalThis as any).placardPlayer.nowPlaying());
  t.equal(np.assetId, W2, 'the heartbeat names the widget item’s widget as its current asset');
  const attrs = await page.evaluate(() =>
    [...(globalThis as any).document.querySelectorAll('iframe.pl-widget-frame')].map((f: any) => [f.getAttribute('sandbox'), f.getAttribute('csp')]),
  );
  t.ok(
    attrs.length === 2 && attrs.every(([s, c]) => s === 'allow-scripts' && /^default-src 'none'/.test(c)),
    'both frames: allow-scripts only, the no-network csp',
  );

  await t.test('the same bundle keeps its frame; a new one is swapped in with no blank moment; a tampered one is never shown', async (t) => {
    await page.evaluate(() => {
      const g = globalThis as any;
      g.__zoneFrame = g.document.querySelector('[data-zone-id="zw"] iframe');
      g.__itemFrame = g.document.querySelector('[data-zone-id="zp"] iframe');
      g.__blank = 0;
      g.__observer = new g.MutationObserver(() => {
        if (!g.document.querySelector('[data-zone-id="zw"] .pl-widget:not(.pl-widget-building) iframe')) g.__blank += 1;
      });
      g.__observer.observe(g.document.querySelector('.pl-stage'), { childList: true, subtree: true, attributes: true });
    });
    const fetchesBefore = () => page.evaluate(() => (globalThis as any).placardPlayer.manifestFetches().length as number);
    let fetches = await fetchesBefore();
    revision = 2; // the same bundles, a new manifest
    await syncNow();
    await until(t, 'the second manifest', async () => (await fetchesBefore()) > fetches);
    await page.waitForTimeout(500);
    const kept = await page.evaluate(() => {
      const g = globalThis as any;
      return [
        g.document.querySelector('[data-zone-id="zw"] iframe') === g.__zoneFrame,
        g.document.querySelector('[data-zone-id="zp"] iframe') === g.__itemFrame,
      ];
    });
    t.same(kept, [true, true], 'the same bundles: the same frames');
    const running = await read(await zoneFrame());
    t.ok(running!.n > zone.n, `the counter ran on (${zone.n} → ${running!.n}), not restarted`);

    fetches = await fetchesBefore();
    zoneEntry = entry(W1, 'b3');
    revision = 3;
    await syncNow();
    const swapped = await until(t, 'the new bundle on', async () => {
      const s = await read(await zoneFrame());
      return s?.label === 'Zone widget, new' ? s : null;
    });
    t.equal(swapped.ran, '1');
    t.equal(await page.locator('[data-zone-id="zw"] iframe').count(), 1, 'the old frame left');
    t.equal(
      await page.evaluate(() => (globalThis as any).document.querySelector('[data-zone-id="zp"] iframe') === (globalThis as any).__itemFrame),
      true,
      'the other widget kept its frame',
    );

    // Bytes that do not match the sha256: never stored, never shown; the frame on screen stays.
    fetches = await fetchesBefore();
    bundles.set('b4', bundle('Tampered', '#000000'));
    zoneEntry = entry(W1, 'b4', true);
    revision = 4;
    await syncNow();
    await until(t, 'the tampered bundle fetched', async () => served.includes('b4'));
    await page.waitForTimeout(2_500);
    const still = await read(await zoneFrame());
    t.equal(still?.label, 'Zone widget, new', 'the tampered bundle is not shown');
    const cache = await page.evaluate(() => (globalThis as any).placardPlayer.cache());
    t.ok(cache.failed >= 1, `counted as failed (${JSON.stringify(cache)})`);
    // A bundle without its meta policy (a server bug): the frame's csp attribute alone keeps it off the
    // network and runs no script (no hash named: script-src 'none').
    bundles.set('b5', bundle('No meta', '#333333', `<img src="${BEACON}/no-meta">`).replace(/<meta http-equiv="Content-Security-Policy"[^>]*>/, ''));
    zoneEntry = entry(W1, 'b5');
    revision = 5;
    await syncNow();
    const bare = await until(t, 'the bundle without a meta policy on', async () => {
      const s = await read(await zoneFrame());
      return s?.label === 'No meta' ? s : null;
    });
    t.equal(bare.ran, '', 'its runtime did not run: the frame’s policy names no hash');
    const csp = await page.locator('[data-zone-id="zw"] iframe').getAttribute('csp');
    t.match(csp, /script-src 'none'$/, 'the csp attribute: no script');
    const blank = await page.evaluate(() => {
      const g = globalThis as any;
      g.__observer.disconnect();
      return g.__blank as number;
    });
    t.equal(blank, 0, 'the zone never showed a blank moment');
    t.same(beacon, [], 'still nothing reached the beacon');
  });
});
