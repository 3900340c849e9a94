/**
 * The browser player's widgets, pure logic (console/src/player/widget-frame.ts and the
 * manifest reader), imported directly (issue 19): the manifest's `widgets[]`, widget items
 * and widget zones; bundles cached, verified and evicted like media and served cache first by
 * the service worker; the context written into a bundle; `placard-media:` references replaced
 * by data: URLs (never an address); the frame's policy; keep or swap a frame.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { cacheKey, isMediaPath, planCache, verifyDownload } from '../console/src/player/cache-plan.js';
import { cacheEntries, readManifest } from '../console/src/player/manifest.js';
import { itemDurationMs } from '../console/src/player/schedule.js';
import {
  contextJson,
  FRAME_SANDBOX,
  frameDecision,
  framePolicy,
  injectContext,
  MISSING_MEDIA,
  mediaRefs,
  scriptHashes,
  substituteMedia,
  widgetDocument,
  widgetEntryFor,
  widgetImages,
  widgetOf,
} from '../console/src/player/widget-frame.js';

const BASE = 'https://placard.example/play';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const W1 = '0190f5a2-7b3c-7def-8abc-00000000000a';
const W2 = '0190f5a2-7b3c-7def-8abc-00000000000b';
const B1 = '0190f5a2-7b3c-7def-8abc-000000000b01';
const B2 = '0190f5a2-7b3c-7def-8abc-000000000b02';
const ASSET = '0190f5a2-7b3c-7def-8abc-0000000000a1';
const RUNTIME_HASH = "'sha256-AbCdEf0123456789+/AbCdEf0123456789+/AbCdE='";

/** A bundle as docs/widgets.md's format has it: the policy first, the context script, images by reference. */
function bundle(body: string, csp = `default-src 'none'; img-src data: blob:; script-src ${RUNTIME_HASH}; base-uri 'none'; form-action 'none'`) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${csp}"><script type="application/json" id="placard-context">{}</script><style>html,body{margin:0}</style></head><body>${body}<script>/*runtime*/</script></body></html>`;
}

const bundleEntry = (widgetId: string, bundleId: string, extra: Record<string, unknown> = {}) => ({
  widgetId,
  bundleId,
  revision: 2,
  url: `/api/v1/player/widget-bundles/${bundleId}`,
  sha256: sha(bundleId).toUpperCase(),
  sizeBytes: 900,
  images: [{ assetId: ASSET, variantId: 'v1' }],
  ...extra,
});

/** A manifest as the contract has it: a layout with a widget zone, and a playlist item of kind widget. */
function manifestWith(bundleId: string, extraWidgets: unknown[] = []) {
  return readManifest({
    revision: 9,
    timeZone: 'Asia/Kolkata',
    timeline: [
      {
        startsAt: '2026-03-03T00:00:00.000Z',
        endsAt: '2026-03-04T00:00:00.000Z',
        layout: {
          id: 'l1',
          width: 1920,
          height: 1080,
          zones: [
            { id: 'z1', x: 0, y: 0, width: 1200, height: 1080, zIndex: 0, playlist: null, data: null, widget: { widgetId: W1, bundleId } },
            {
              id: 'z2',
              x: 1200,
              y: 0,
              width: 720,
              height: 1080,
              zIndex: 0,
              widget: null,
              playlist: {
                id: 'p1',
                items: [
                  { id: 'i1', kind: 'widget', assetId: null, variantId: null, widgetId: W2, bundleId: B2, name: 'Ticker', durationMs: null },
                  { id: 'i2', kind: 'image', assetId: ASSET, variantId: 'v1', durationMs: 5000 },
                ],
              },
            },
          ],
        },
      },
      {
        startsAt: '2026-03-04T00:00:00.000Z',
        endsAt: '2026-03-05T00:00:00.000Z',
        // An older shape: the zone's content names the widget.
        layout: { id: 'l2', width: 100, height: 100, zones: [{ id: 'z9', x: 0, y: 0, width: 100, height: 100, content: { type: 'widget', widgetId: W1 } }] },
      },
    ],
    media: [
      { assetId: ASSET, variantId: 'v1', url: `/api/v1/player/assets/${ASSET}/variants/v1`, contentType: 'image/png', sizeBytes: 10, sha256: sha('img') },
    ],
    data: [],
    widgets: [bundleEntry(W1, bundleId), bundleEntry(W2, B2, { images: [] }), ...extraWidgets],
  });
}

t.test('manifest: widgets, widget items and widget zones are read; bad widget entries are dropped and reported', async (t) => {
  const m = manifestWith(B1, [
    { widgetId: W1, url: '/x' },
    'nonsense',
    { bundleId: B1, url: '/y' },
    { widgetId: 'w', bundleId: 'b', url: '/z', images: [{ assetId: 'a' }, 7] },
  ]);
  t.equal(m.widgets.length, 3, 'the well-formed entries (one with only bad images)');
  t.same(m.widgets[0], {
    widgetId: W1,
    bundleId: B1,
    revision: 2,
    url: `/api/v1/player/widget-bundles/${B1}`,
    sizeBytes: 900,
    sha256: sha(B1),
    contentType: 'text/html; charset=utf-8',
    images: [{ assetId: ASSET, variantId: 'v1' }],
  });
  t.same(m.widgets[2]!.images, [], 'an image without its variant is left out');
  t.equal(m.problems.filter((p) => p.includes('widget entry')).length, 3, 'each bad entry is reported');
  const [seg, older] = m.timeline;
  if (seg?.content.type !== 'layout' || older?.content.type !== 'layout') throw new Error('expected layouts');
  const [z1, z2] = seg.content.layout.zones;
  t.same(z1!.widget, { widgetId: W1, bundleId: B1 }, 'a widget zone');
  t.equal(z1!.playlist, null);
  t.equal(z2!.widget, null, 'a playlist zone is no widget zone');
  const item = z2!.playlist!.items[0]!;
  t.equal(item.kind, 'widget');
  t.equal(item.widgetId, W2);
  t.equal(item.bundleId, B2);
  t.equal(item.assetId, null);
  t.equal(itemDurationMs(item), 10_000, 'no duration of its own or its bundle’s: ten seconds');
  t.equal(z2!.playlist!.items[1]!.widgetId, null, 'an image item has no widget');
  t.same(older.content.layout.zones[0]!.widget, { widgetId: W1, bundleId: null }, 'a zone whose content is a widget');
  t.same(readManifest({}).widgets, [], 'a manifest without widgets');
});

t.test('cache plan: bundles are fetched, verified, kept and evicted like media; the service worker serves them cache first', async (t) => {
  const before = manifestWith(B1);
  const entries = cacheEntries(before);
  t.same(
    entries.map((e) => e.url),
    [`/api/v1/player/assets/${ASSET}/variants/v1`, `/api/v1/player/widget-bundles/${B1}`, `/api/v1/player/widget-bundles/${B2}`],
    'media and bundles together',
  );
  // W1's bundle is rebuilt (its data changed): the new one is fetched, the old dropped once no manifest lists it.
  const after = manifestWith('0190f5a2-7b3c-7def-8abc-000000000b03');
  const plan = planCache(
    cacheEntries(after),
    entries.map((e) => cacheKey(e.url, BASE)),
    BASE,
  );
  t.same(
    plan.fetch.map((e) => e.url),
    ['/api/v1/player/widget-bundles/0190f5a2-7b3c-7def-8abc-000000000b03'],
  );
  t.same(plan.keep.map((e) => e.url).sort(), [`/api/v1/player/assets/${ASSET}/variants/v1`, `/api/v1/player/widget-bundles/${B2}`].sort());
  t.same(plan.evict, [`https://placard.example/api/v1/player/widget-bundles/${B1}`], 'the old bundle is evicted');
  const entry = after.widgets[0]!;
  t.same(verifyDownload({ ...entry, sha256: sha('html') }, 900, sha('html')), { ok: true });
  t.equal(verifyDownload({ ...entry, sha256: sha('html') }, 900, sha('tampered')).ok, false, 'a bundle whose sha256 differs is not stored');
  t.equal(verifyDownload(entry, 901, null).ok, false, 'nor one whose size differs');

  t.ok(isMediaPath(`/api/v1/player/widget-bundles/${B1}`), 'bundles are served cache first');
  t.notOk(isMediaPath(`/api/v1/player/widget-bundles/${B1}/x`));
  t.notOk(isMediaPath('/api/v1/player/widget-bundles/'));
  t.notOk(isMediaPath(`/api/v1/widgets/${W1}`));
  // The worker is self-contained: its copy of the pattern must say the same.
  const sw = readFileSync(new URL('../console/src/player/sw.ts', import.meta.url), 'utf8');
  const cp = readFileSync(new URL('../console/src/player/cache-plan.ts', import.meta.url), 'utf8');
  const pattern = (src: string) => /\/\^\\\/api\\\/v1\\\/player\\\/\(([^)]*)\)\$\//.exec(src)?.[1];
  t.ok(pattern(sw)?.includes('widget-bundles'), 'sw.ts serves bundles cache first');
  t.equal(pattern(sw), pattern(cp), 'sw.ts and cache-plan.ts agree');
});

t.test('a widget’s bundle: the one the manifest lists for it now, found by widgetId', async (t) => {
  const m = manifestWith(B1);
  const seg = m.timeline[0]!;
  if (seg.content.type !== 'layout') throw new Error('layout');
  t.equal(widgetOf(m, seg.content.layout.zones[0]!)?.bundleId, B1, 'a zone');
  t.equal(widgetOf(m, seg.content.layout.zones[1]!.playlist!.items[0]!)?.bundleId, B2, 'an item');
  t.equal(widgetOf(m, seg.content.layout.zones[1]!), null, 'a zone without a widget');
  t.equal(widgetOf(m, { widgetId: null }), null, 'an item without a widget');
  // The manifest moved on: the item still names the old bundle, the widget's current one is shown.
  const next = manifestWith(B1, []);
  next.widgets[1] = { ...next.widgets[1]!, bundleId: 'b-new' };
  t.equal(widgetEntryFor(next, W2, B2)?.bundleId, 'b-new');
  t.equal(widgetEntryFor(next, 'unknown'), null, 'a widget the manifest does not list (widget_unavailable)');
});

t.test('context: written into the #placard-context script only, escaped so it cannot close the script', async (t) => {
  const html = bundle('<p>{}</p>');
  const out = injectContext(html, { timeZone: 'Asia/Kolkata', width: 1200.4, height: 1080, locale: 'en-GB' });
  t.match(out, '<script type="application/json" id="placard-context">{"timeZone":"Asia/Kolkata","width":1200,"height":1080,"locale":"en-GB"}</script>');
  t.match(out, '<p>{}</p>', 'the template’s own {} is left alone');
  t.equal(out.length - html.length, contextJson({ timeZone: 'Asia/Kolkata', width: 1200, height: 1080, locale: 'en-GB' }).length - 2, 'nothing else changed');

  const hostile = injectContext(html, { timeZone: 'UTC', width: 1, height: 1, locale: '</script><script>alert(1)</script>$&$1' });
  t.equal(hostile.split('</script>').length, html.split('</script>').length, 'no extra </script>: `<` is \\u003c');
  t.match(hostile, '\\u003c/script>\\u003cscript>alert(1)\\u003c/script>$&$1', 'and `$` is not a replacement pattern');
  const json = /id="placard-context">([^<]*)<\/script>/.exec(hostile)?.[1] ?? '';
  t.equal(JSON.parse(json).locale, '</script><script>alert(1)</script>$&$1', 'the runtime reads the value back intact');
  t.equal(JSON.parse(contextJson({ timeZone: 'UTC', width: -5, height: Number.NaN, locale: 'de' })).width, 0, 'no negative size');

  const twice = `${html}<script type="application/json" id="placard-context">{}</script>`;
  t.equal(injectContext(twice, { timeZone: 'UTC', width: 1, height: 1, locale: 'de' }).match(/\{\}<\/script>/g)?.length, 1, 'only the first');
  const none = '<!doctype html><p>no context</p>';
  t.equal(injectContext(none, { timeZone: 'UTC', width: 1, height: 1, locale: 'de' }), none, 'a bundle without one is left as it is');
});

t.test('images: every placard-media reference becomes a data: URL of its cached variant, never an address', async (t) => {
  const other = '0190f5a2-7b3c-7def-8abc-0000000000a2';
  const html = bundle(
    `<img src="placard-media:${ASSET}" alt=""><div style="background:url(placard-media:${ASSET})"></div><style>.x{background-image:url('placard-media:${other}')}</style>`,
  );
  t.same(mediaRefs(html), [ASSET, other], 'each asset once');
  const png = 'data:image/png;base64,iVBORw0KGgo=';
  const out = substituteMedia(html, new Map([[ASSET, png]]));
  t.equal(out.split(png).length - 1, 2, 'the image and the CSS url() both');
  t.match(out, `url('${MISSING_MEDIA}')`, 'an asset without a cached variant is an empty data: URL');
  t.notMatch(out, 'placard-media:', 'no reference left');
  t.notMatch(out, /https?:/, 'no address');

  const m = manifestWith(B1);
  const images = widgetImages(m, m.widgets[0]!);
  t.same([...images.keys()], [ASSET]);
  t.equal(images.get(ASSET)?.url, `/api/v1/player/assets/${ASSET}/variants/v1`, 'the variant the manifest names for it');
  t.equal(widgetImages({ media: [] }, m.widgets[0]!).size, 0, 'a variant not in media is no image');
  t.equal(widgetImages(m, { images: [{ assetId: ASSET, variantId: 'other' }] }).size, 0, 'nor another variant of the asset');

  const doc = widgetDocument(html, { timeZone: 'UTC', width: 10, height: 20, locale: 'fr' }, new Map([[ASSET, png]]));
  t.match(doc, '{"timeZone":"UTC","width":10,"height":20,"locale":"fr"}', 'the whole document: context');
  t.match(doc, `<img src="${png}"`, 'and images');
});

t.test('the frame’s policy: no network, scripts only by the runtime’s hash, whatever the bundle says', async (t) => {
  t.equal(FRAME_SANDBOX, 'allow-scripts', 'sandboxed with scripts, never allow-same-origin');
  const html = bundle('');
  t.same(scriptHashes(html), [RUNTIME_HASH]);
  const policy = framePolicy(html);
  t.equal(
    policy,
    `default-src 'none'; img-src data: blob:; media-src data: blob:; font-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; script-src ${RUNTIME_HASH}`,
  );
  const wide = bundle('', `default-src *; img-src *; script-src 'unsafe-inline' https: ${RUNTIME_HASH} 'unsafe-eval'; connect-src *`);
  const widePolicy = framePolicy(wide);
  t.equal(widePolicy, policy, 'a bundle cannot widen it: only its hashes are taken');
  t.notMatch(widePolicy, /\*|https:|unsafe-eval|connect-src/);
  t.equal(framePolicy('<!doctype html><p>x</p>').endsWith("script-src 'none'"), true, 'no policy in the bundle: no script at all');
  t.same(scriptHashes(bundle('', "default-src 'none'; script-src 'nonce-abc'")), [], 'a nonce is not a hash');
  t.same(scriptHashes(`<meta content="script-src 'sha256-abc='" http-equiv='Content-Security-Policy'>`), ["'sha256-abc='"], 'attributes in any order');
});

t.test('keep or swap: the same bundle keeps its frame, another is built and swapped, nothing listed keeps what is on', async (t) => {
  t.equal(frameDecision(B1, { bundleId: B1 }), 'keep', 'same bundle: the ticker runs on');
  t.equal(frameDecision(B1, { bundleId: B2 }), 'swap', 'a new bundle: built hidden, swapped when loaded');
  t.equal(frameDecision(null, { bundleId: B1 }), 'build', 'nothing on yet');
  t.equal(frameDecision(B1, null), 'wait', 'no bundle listed: the frame on screen stays');
  t.equal(frameDecision(null, null), 'wait');
});
