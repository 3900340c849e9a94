/**
 * The browser player's data zones, pure logic (console/src/player), imported directly: the
 * manifest's `data[]` and zone outputs, caching them with the media (cache plan, service
 * worker paths, verification), reading an output document, formatting cells (numbers,
 * booleans, dates and date-times in the manifest's time zone, links, rich text), sizing the
 * type to the zone, paging rows that do not fit, and finding the cached picture of an image cell.
 */
import { createHash } from 'node:crypto';
import t from 'tap';
import { cacheKey, isMediaPath, planCache, verifyDownload } from '../console/src/player/cache-plan.js';
import {
  CellFormatter,
  cellAlign,
  cellImage,
  columnWidthsEm,
  estimateEm,
  imageIndex,
  MAX_COLUMN_EM,
  outputFor,
  PAGE_MS,
  pageSlice,
  planPages,
  plainText,
  readDataDocument,
  tableFontPx,
  THUMB_EM,
  thumbWidthEm,
} from '../console/src/player/data-table.js';
import { cacheEntries, readManifest } from '../console/src/player/manifest.js';

const BASE = 'https://placard.example/play';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const OUT1 = '0190f5a2-7b3c-7def-8abc-000000000001';
const OUT2 = '0190f5a2-7b3c-7def-8abc-000000000002';
const SRC = '0190f5a2-7b3c-7def-8abc-0000000000aa';

/** A manifest as the server builds it: one layout with a data zone and an image zone. */
function manifestWith(outputId: string, extraData: unknown[] = []) {
  return readManifest({
    revision: 7,
    timeZone: 'Europe/Berlin',
    timeline: [
      {
        startsAt: '2026-03-03T00:00:00.000Z',
        endsAt: '2026-03-05T00:00:00.000Z',
        source: { type: 'schedule', id: 's1' },
        layout: {
          id: 'l1',
          name: 'Menu board',
          width: 1920,
          height: 1080,
          zones: [
            { id: 'z1', name: 'Menu', x: 0, y: 0, width: 1400, height: 1080, zIndex: 0, playlist: null, data: { sourceId: SRC, viewKey: null, outputId } },
            { id: 'z2', name: 'Photo', x: 1400, y: 0, width: 520, height: 1080, zIndex: 0, playlist: null, data: null },
          ],
        },
      },
    ],
    media: [{ assetId: 'a1', variantId: 'v1', url: '/api/v1/player/assets/a1/variants/v1', contentType: 'image/webp', sizeBytes: 10, sha256: sha('img') }],
    data: [
      {
        outputId,
        sourceId: SRC,
        viewKey: null,
        revision: 3,
        url: `/api/v1/player/data-outputs/${outputId}`,
        sha256: sha(outputId).toUpperCase(),
        sizeBytes: 120,
      },
      ...extraData,
    ],
  });
}

t.test('manifest: data outputs are read with the zones that show them; bad entries are dropped and reported', async (t) => {
  const m = manifestWith(OUT1, [{ sourceId: SRC, url: '/x' }, 'nonsense', { outputId: OUT2 }]);
  t.equal(m.data.length, 1, 'only the well-formed entry');
  t.same(m.data[0], {
    outputId: OUT1,
    sourceId: SRC,
    viewKey: null,
    revision: 3,
    url: `/api/v1/player/data-outputs/${OUT1}`,
    sizeBytes: 120,
    sha256: sha(OUT1),
    contentType: 'application/json',
    images: [],
  });
  t.equal(m.problems.filter((p) => p.includes('data entry')).length, 3, 'each bad entry is reported');
  const seg = m.timeline[0]!;
  if (seg.content.type !== 'layout') throw new Error('expected a layout');
  t.same(seg.content.layout.zones[0]!.data, { sourceId: SRC, viewKey: null, outputId: OUT1 });
  t.equal(seg.content.layout.zones[1]!.data, null, 'a zone without data');
  // A zone's data without an output (malformed) is no data zone.
  const odd = readManifest({
    timeline: [
      {
        startsAt: '2026-03-03T00:00:00Z',
        endsAt: '2026-03-04T00:00:00Z',
        layout: { id: 'l', width: 100, height: 100, zones: [{ id: 'z', x: 0, y: 0, width: 10, height: 10, data: { sourceId: SRC } }] },
      },
    ],
  });
  t.same(odd.data, [], 'no data[] at all reads as none');
  const oddSeg = odd.timeline[0]!.content;
  t.equal(oddSeg.type === 'layout' ? oddSeg.layout.zones[0]!.data : 'x', null);
});

t.test('cache plan: data outputs are fetched, kept and evicted like media; the service worker serves them cache first', async (t) => {
  const before = manifestWith(OUT1);
  const entries = cacheEntries(before);
  t.same(
    entries.map((e) => e.url),
    ['/api/v1/player/assets/a1/variants/v1', `/api/v1/player/data-outputs/${OUT1}`],
    'media and data together',
  );
  let plan = planCache(entries, [], BASE);
  t.same(plan.fetch.map((e) => e.url).sort(), entries.map((e) => e.url).sort(), 'nothing cached: fetch both');
  t.same(plan.evict, []);
  // The data changed: a new output; the old one is dropped once the new manifest no longer lists it.
  const after = manifestWith(OUT2);
  const cached = entries.map((e) => cacheKey(e.url, BASE));
  plan = planCache(cacheEntries(after), cached, BASE);
  t.same(
    plan.fetch.map((e) => e.url),
    [`/api/v1/player/data-outputs/${OUT2}`],
    'the new output is fetched',
  );
  t.same(
    plan.keep.map((e) => e.url),
    ['/api/v1/player/assets/a1/variants/v1'],
    'the image is kept',
  );
  t.same(plan.evict, [`https://placard.example/api/v1/player/data-outputs/${OUT1}`], 'the old output is evicted');

  const entry = after.data[0]!;
  t.same(verifyDownload(entry, 120, sha(OUT2)), { ok: true }, 'size and sha256 match');
  t.equal(verifyDownload(entry, 121, sha(OUT2)).ok, false, 'a size that differs is refused');
  t.equal(verifyDownload(entry, 120, sha('other')).ok, false, 'a sha256 that differs is refused');

  t.ok(isMediaPath(`/api/v1/player/data-outputs/${OUT1}`), 'data outputs are served cache first');
  t.ok(isMediaPath('/api/v1/player/assets/a/variants/b'), 'media still is');
  t.notOk(isMediaPath(`/api/v1/player/data-outputs/${OUT1}/x`));
  t.notOk(isMediaPath('/api/v1/player/data-outputs/'));
  t.notOk(isMediaPath('/api/v1/data-sources/x/outputs'));
});

t.test('a zone finds its output: the one it names, else the one of its source and view', async (t) => {
  const m = manifestWith(OUT2, [
    { outputId: OUT1, sourceId: SRC, viewKey: 'abcdef0123456789', url: `/api/v1/player/data-outputs/${OUT1}`, sha256: sha('v'), sizeBytes: 1 },
  ]);
  t.equal(outputFor(m, { sourceId: SRC, viewKey: null, outputId: OUT2 })?.outputId, OUT2);
  t.equal(outputFor(m, { sourceId: SRC, viewKey: 'abcdef0123456789', outputId: 'gone' })?.outputId, OUT1, 'a newer manifest names a newer output');
  t.equal(outputFor(m, { sourceId: 'other', viewKey: null, outputId: 'gone' }), null);
});

t.test('data document: columns typed, unknown types as text, bad rows dropped, columns from rows when none are listed', async (t) => {
  const doc = readDataDocument({
    sourceId: SRC,
    viewKey: null,
    revision: 4,
    generatedAt: '2026-03-03T10:00:00.000Z',
    columns: [
      { name: 'name', type: 'text' },
      { name: 'price', type: 'number' },
      { name: 'odd', type: 'hologram' },
      { name: 'name', type: 'number' },
      { type: 'text' },
    ],
    rows: [{ name: 'Tea', price: 2 }, 'not a row', null, [1, 2], { name: 'Cake', price: 4 }],
  });
  t.same(doc.columns, [
    { name: 'name', type: 'text' },
    { name: 'price', type: 'number' },
    { name: 'odd', type: 'text' },
  ]);
  t.equal(doc.rows.length, 2);
  t.equal(doc.revision, 4);
  t.same(readDataDocument({ rows: [{ a: 1 }, { b: 2, a: 3 }] }).columns, [
    { name: 'a', type: 'text' },
    { name: 'b', type: 'text' },
  ]);
  t.same(readDataDocument({}).rows, [], 'an empty document has no rows');
  t.throws(() => readDataDocument([]), /not an object/);
  t.throws(() => readDataDocument('text'), /not an object/);
});

t.test('cells: numbers in the locale, booleans as a check mark, links and rich text as plain text', async (t) => {
  const now = Date.parse('2026-03-03T12:00:00Z');
  const us = new CellFormatter({ timeZone: 'UTC', now, locale: 'en-US' });
  const de = new CellFormatter({ timeZone: 'UTC', now, locale: 'de-DE' });
  t.equal(us.format(1234.5, 'number'), '1,234.5');
  t.equal(de.format(1234.5, 'number'), '1.234,5');
  t.equal(us.format(2, 'number'), '2');
  t.equal(us.format(1 / 3, 'number'), '0.333', 'at most three decimals');
  t.equal(us.format('n/a', 'number'), 'n/a', 'a value that is not a number is shown as it is');
  t.equal(us.format(true, 'boolean'), '✓');
  t.equal(us.format(false, 'boolean'), '');
  t.equal(us.format('maybe', 'boolean'), 'maybe');
  t.equal(us.format(null, 'text'), '');
  t.equal(us.format(undefined, 'number'), '', 'a missing cell is blank');
  t.equal(us.format({ nested: true }, 'text'), '', 'an object is not shown');
  t.equal(us.format(42, 'text'), '42');
  t.equal(us.format('https://example.com/menu/', 'url'), 'example.com/menu');
  t.equal(us.format('http://cdn.example.com/tea.jpg', 'image'), 'cdn.example.com/tea.jpg', 'images are text for now');
  t.equal(us.format('<p>Hot &amp; <b>fresh</b></p><script>alert(1)</script><p>daily&nbsp;&#8364;2</p>', 'richtext'), 'Hot & fresh daily €2');
  t.equal(plainText('a<br>b&lt;c&gt; &unknown; &#x1F600;'), 'a b<c> &unknown; 😀');
  t.same((['number', 'boolean', 'text', 'date', 'url'] as const).map(cellAlign), ['end', 'center', 'start', 'start', 'start']);
});

t.test('cells: dates as written, date-times in the manifest time zone (DST too), the year only when it is not this one', async (t) => {
  const now = Date.parse('2026-03-03T12:00:00Z');
  const berlin = new CellFormatter({ timeZone: 'Europe/Berlin', now, locale: 'en-GB' });
  const newYork = new CellFormatter({ timeZone: 'America/New_York', now, locale: 'en-GB' });
  t.equal(berlin.format('2026-03-03T13:30:00.000Z', 'datetime'), 'Tue 3 Mar, 14:30', 'UTC+1 in winter');
  t.equal(berlin.format('2026-07-03T13:30:00.000Z', 'datetime'), 'Fri 3 Jul, 15:30', 'UTC+2 in summer');
  t.equal(newYork.format('2026-03-03T13:30:00.000Z', 'datetime'), 'Tue 3 Mar, 08:30');
  t.equal(newYork.format('2026-03-03T02:00:00.000Z', 'datetime'), 'Mon 2 Mar, 21:00', 'the day is the zone’s day');
  t.equal(berlin.format('2026-03-03T14:30:00+01:00', 'datetime'), 'Tue 3 Mar, 14:30', 'an offset of its own');
  t.equal(berlin.format('2025-12-24T18:00:00Z', 'datetime'), 'Wed, 24 Dec 2025, 19:00', 'another year shows it');
  // A calendar date is the same date everywhere: no zone moves it a day.
  t.equal(newYork.format('2026-03-03', 'date'), 'Tue 3 Mar');
  t.equal(berlin.format('2026-03-03', 'date'), 'Tue 3 Mar');
  t.equal(berlin.format('2027-01-01', 'date'), 'Fri, 1 Jan 2027');
  // A date column holding an instant shows the zone's date of it.
  t.equal(newYork.format('2026-03-04T03:00:00Z', 'date'), 'Tue 3 Mar');
  // A date-time without an offset is a wall-clock time: shown as written, in any zone.
  t.equal(newYork.format('2026-03-03T14:30', 'datetime'), 'Tue 3 Mar, 14:30');
  t.equal(berlin.format('2026-03-03 09:05:00', 'datetime'), 'Tue 3 Mar, 09:05');
  // What is not a date is shown as it is.
  t.equal(berlin.format('soon', 'datetime'), 'soon');
  t.equal(berlin.format('2026-02-30', 'date'), '2026-02-30', 'no such day');
  t.equal(berlin.format(5, 'date'), '5');
  // The year is the zone's: on New Year's Eve in UTC it is already next year in Tokyo.
  const eve = new CellFormatter({ timeZone: 'Asia/Tokyo', now: Date.parse('2026-12-31T20:00:00Z'), locale: 'en-GB' });
  t.equal(eve.format('2027-01-01T10:00:00Z', 'datetime'), 'Fri 1 Jan, 19:00', 'this year in Tokyo');
  t.equal(eve.format('2026-12-31T10:00:00Z', 'datetime'), 'Thu, 31 Dec 2026, 19:00', 'last year in Tokyo');
});

t.test('sizing: columns take their widest cell, capped; the type fits the zone’s height and width, with a floor', async (t) => {
  const widths = columnWidthsEm(
    ['name', 'price', 'a very long header name indeed, longer than the cap'],
    [
      ['Tea', '2', 'x'.repeat(200)],
      ['Cheesecake', '12.5', 'y'],
    ],
  );
  t.equal(widths.length, 3);
  t.ok(widths[0]! > widths[1]!, 'the longer column is wider');
  t.equal(widths[0], estimateEm('Cheesecake', false) + 0.9, 'the widest cell and the padding');
  t.equal(widths[2], MAX_COLUMN_EM + 0.9, 'a long cell is capped');
  t.ok(columnWidthsEm(['description'], [['a']])[0]! > columnWidthsEm(['d'], [['a']])[0]!, 'the header counts');
  t.ok(columnWidthsEm(['x'], [])[0]! > 0.9, 'an empty column still has room');
  // The page measures in its own face: the measure decides.
  const calls: [string, boolean][] = [];
  const measured = columnWidthsEm(['n'], [['ab'], ['ab'], ['abcd']], (text, header) => (calls.push([text, header]), header ? 1 : text.length));
  t.same(measured, [4.9]);
  t.same(
    calls.filter(([, h]) => h),
    [['n', true]],
    'the header measured as a header',
  );
  t.equal(calls.filter(([x]) => x === 'ab').length, 1, 'a repeated text is measured once');

  const narrow = [4, 3];
  t.equal(tableFontPx({ width: 1920, height: 1080 }, narrow), 54, 'a full-screen zone with few columns: a twentieth of its height');
  t.equal(tableFontPx({ width: 3840, height: 2160 }, narrow), 72, 'at most 72 px');
  const wide = Array(10).fill(10);
  const f = tableFontPx({ width: 3000, height: 1080 }, wide, 1);
  t.ok(Math.abs(f - 3000 / 101) < 0.01, `many columns: the width decides (${f})`);
  t.equal(tableFontPx({ width: 300, height: 1080 }, wide, 1), 27, 'never below a fortieth of the height');
  t.equal(tableFontPx({ width: 200, height: 300 }, wide, 1), 12, 'nor below 12 px');
  t.equal(tableFontPx({ width: 1920, height: 200 }, narrow), 18, 'a short zone keeps a readable size');
  t.equal(tableFontPx({ width: 1920, height: 60 }, narrow), 12, 'a strip shows what fits');
});

t.test('paging: what fits is one page; more pages take the page line’s room; pages wrap', async (t) => {
  t.same(planPages(8, 900, 100, 40), { perPage: 8, pages: 1 }, 'all fit');
  t.same(planPages(9, 900, 100, 40), { perPage: 9, pages: 1 }, 'exactly fits');
  t.same(planPages(10, 900, 100, 40), { perPage: 8, pages: 2 }, 'the page line takes a row');
  t.same(planPages(25, 900, 100, 40), { perPage: 8, pages: 4 });
  t.same(planPages(0, 900, 100, 40), { perPage: 1, pages: 1 }, 'no rows: one page ("No rows")');
  t.same(planPages(5, 50, 100, 40), { perPage: 1, pages: 5 }, 'at least one row a page');
  t.same(planPages(5, 900, 0, 40), { perPage: 5, pages: 1 }, 'nothing measured (not laid out): one page');
  const rows = Array.from({ length: 25 }, (_, i) => i);
  const plan = planPages(25, 900, 100, 40);
  t.same(pageSlice(rows, plan, 0), [0, 1, 2, 3, 4, 5, 6, 7]);
  t.same(pageSlice(rows, plan, 3), [24], 'the last page holds the rest');
  t.same(pageSlice(rows, plan, 4), pageSlice(rows, plan, 0), 'and wraps');
  t.equal(PAGE_MS, 8_000, 'a page stays about eight seconds');
});

t.test('image cells: an address the output lists as media shows that cached variant; any other cell shows its text', async (t) => {
  const photo = 'https://cdn.example.com/menu/tea.png';
  const media = (variantId: string, contentType: string, width: number | null, height: number | null) => ({
    assetId: `a-${variantId}`,
    variantId,
    url: `/api/v1/player/assets/a-${variantId}/variants/${variantId}`,
    contentType,
    sizeBytes: 10,
    sha256: sha(variantId),
    width,
    height,
  });
  const m = readManifest({
    media: [media('v1', 'image/webp', 400, 200), media('v2', 'image/webp', null, null), media('v3', 'video/mp4', 640, 360)],
    data: [
      {
        outputId: OUT1,
        sourceId: SRC,
        url: `/api/v1/player/data-outputs/${OUT1}`,
        images: [
          { url: photo, assetId: 'a-v1', variantId: 'v1' },
          { url: 'https://cdn.example.com/cake.png', assetId: 'a-v2', variantId: 'v2' },
          { url: 'https://cdn.example.com/soon.png', assetId: 'a-v9', variantId: 'v9' },
          { url: 'https://cdn.example.com/clip.png', assetId: 'a-v3', variantId: 'v3' },
          { url: 'https://cdn.example.com/odd.png', assetId: 'a-v1', variantId: 'v2' },
          { url: 'https://cdn.example.com/no-variant.png', assetId: 'a-v1' },
          { assetId: 'a-v1', variantId: 'v1' },
          'nonsense',
        ],
      },
      { outputId: OUT2, sourceId: SRC, url: `/api/v1/player/data-outputs/${OUT2}`, images: 'nonsense' },
    ],
  });
  t.equal(m.data[0]!.images.length, 5, 'entries without an address, asset or variant are left out');
  t.same(m.data[1]!.images, [], 'images that are not a list read as none');

  const index = imageIndex(m, m.data[0]!);
  t.same([...index.keys()], [photo, 'https://cdn.example.com/cake.png'], 'only addresses whose variant is image media in the manifest');
  t.equal(cellImage(index, photo, 'image')?.variantId, 'v1', 'an image cell with a listed address: its variant');
  t.equal(cellImage(index, photo, 'url'), null, 'the same address in a url column stays text');
  t.equal(cellImage(index, photo, 'text'), null, 'and in a text column');
  t.equal(cellImage(index, `${photo}?x`, 'image'), null, 'another address stays text');
  t.equal(cellImage(index, photo.toUpperCase(), 'image'), null, 'addresses match exactly, as the document holds them');
  t.equal(cellImage(index, 'https://cdn.example.com/soon.png', 'image'), null, 'a variant not in media yet: text');
  t.equal(cellImage(index, 'https://cdn.example.com/clip.png', 'image'), null, 'a variant that is not an image: text');
  t.equal(cellImage(index, null, 'image'), null);
  t.equal(cellImage(index, 12, 'image'), null);
  t.equal(imageIndex(m, m.data[1]!).size, 0, 'an output without images: every cell is text');

  // Thumbnails are as high as a row and as wide as their aspect says.
  t.equal(THUMB_EM, 1.3, 'the row’s line height (player.css .pl-data)');
  t.equal(thumbWidthEm({ width: 400, height: 200 }), 2.6);
  t.equal(thumbWidthEm({ width: null, height: null }), (1.3 * 4) / 3, 'an unknown size: 4:3');
  t.equal(thumbWidthEm({ width: 10_000, height: 10 }), MAX_COLUMN_EM, 'a banner is capped like a long text');
  // An image column is as wide as its pictures, not as its long addresses (text cells still count).
  const cells = [[photo], ['short'], ['https://cdn.example.com/cake.png']];
  const fixed = (r: number) => (r === 0 ? 2.6 : r === 2 ? 1.7 : null);
  t.same(columnWidthsEm(['photo'], cells, estimateEm, 500, fixed), [Math.max(2.6, estimateEm('short', false), estimateEm('photo', true)) + 0.9]);
  t.ok(columnWidthsEm(['photo'], cells)[0]! > 15, 'without pictures the addresses decide');
});
