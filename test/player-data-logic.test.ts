/**
 * The browser player's data zones, pure logic (console/src/player), imported directly: the
 * manifest's `data[]` and zone outputs, caching them with the media (cache plan, service
 * worker paths, verification).
 */
import { createHash } from 'node:crypto';
import t from 'tap';
import { cacheKey, isMediaPath, planCache, verifyDownload } from '../console/src/player/cache-plan.js';
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
