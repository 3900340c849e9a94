/**
 * Data zones in the browser player, end to end, in Debian's Chromium against the real server
 * on port 0: a JSON data source on a local fake feed, a layout whose zone shows it, scheduled
 * on the paired /play page. The table shows the feed's rows (read from the DOM), formatted
 * in the manifest's time zone; a feed change reaches the table without a reload and without
 * an empty moment; a long list pages; a narrow zone beside a view of the source; image cells
 * whose pictures the server keeps as media show them from the player's cache; then the
 * server stops and a reload still shows the rows and pictures, from the cache. Screenshots:
 * test/artifacts/player-data-*.png.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { signedInApp } from './helpers/auth.js';
import { ARTIFACTS, launchBrowser, pairPlayPage, snap, waitUntil } from './helpers/browser.js';
import { kickImageFetch } from '../server/src/modules/data-sources/images.service.js';
import { createSource, fakeFeed, jsonDoc, refreshNow } from './helpers/data-sources.js';

const VIEWPORT = { width: 1920, height: 1080 };
const ZONE = 'America/New_York';

/** A café's board: every column type the player formats. */
function dish(i: number, name: string, price: number) {
  return {
    name,
    price,
    vegan: i % 3 === 0,
    served: `2026-03-${String(1 + (i % 28)).padStart(2, '0')}`,
    // 13:30 UTC: 08:30 in New York (the manifest's zone), whatever the browser's own zone.
    nextBatch: `2026-03-03T13:${String(30 + (i % 30)).padStart(2, '0')}:00.000Z`,
    photo: `https://cdn.example.com/menu/${name.toLowerCase().replace(/\W+/g, '-')}.jpg`,
    notes: `<p>${i % 2 ? 'Baked <b>this morning</b>' : 'House &amp; seasonal'}</p>`,
  };
}
const NAMES = [
  'Espresso',
  'Flat white',
  'Chai latte',
  'Green tea',
  'Hot chocolate',
  'Croissant',
  'Banana bread',
  'Cheesecake',
  'Lemon tart',
  'Soup of the day',
  'Sourdough toast',
  'Granola bowl',
];
const MORE = [
  'Shakshuka',
  'Club sandwich',
  'Falafel wrap',
  'Caesar salad',
  'Quiche Lorraine',
  'Carrot cake',
  'Brownie',
  'Scone',
  'Apple pie',
  'Iced latte',
  'Lemonade',
  'Smoothie',
  'Affogato',
  'Mocha',
  'Cortado',
  'Matcha',
  'Bagel',
  'Porridge',
];

type Cells = string[][];

/** The rows a zone's table shows now (each row's cell texts), or null when it shows no table. */
async function tableOf(page: Page, zoneId: string): Promise<{ head: string[]; rows: Cells; page: string; outputId: string } | null> {
  return page.evaluate((id) => {
    const g = globalThis as any;
    const zone = g.document.querySelector(`.pl-content.pl-visible [data-zone-id="${id}"]`);
    const wrap = zone?.querySelector('.pl-data');
    const table = wrap?.querySelector('table');
    if (!wrap || !table) return null;
    return {
      head: [...table.querySelectorAll('th')].map((th: any) => th.textContent ?? ''),
      rows: [...table.querySelectorAll('tbody tr')].map((tr: any) => [...tr.querySelectorAll('td')].map((td: any) => td.textContent ?? '')),
      page: wrap.querySelector('.pl-data-page')?.hidden ? '' : (wrap.querySelector('.pl-data-page')?.textContent ?? ''),
      outputId: wrap.dataset.outputId ?? '',
    };
  }, zoneId);
}

/** A zone's image cells that show a picture, and the height of each of its rows (canvas pixels on screen). */
async function picturesOf(page: Page, zoneId: string) {
  return page.evaluate((id) => {
    const g = globalThis as any;
    const zone = g.document.querySelector(`.pl-content.pl-visible [data-zone-id="${id}"]`);
    const rows = [...(zone?.querySelectorAll('.pl-data tbody tr') ?? [])];
    return {
      rowHeights: rows.map((tr: any) => tr.getBoundingClientRect().height as number),
      pictures: rows.flatMap((tr: any, row: number) =>
        [...tr.querySelectorAll('td')].flatMap((td: any, column: number) => {
          const img = td.querySelector('img');
          if (!img) return [];
          const style = g.getComputedStyle(td);
          const room = td.getBoundingClientRect().height - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom) - parseFloat(style.borderBottomWidth);
          return [
            {
              row,
              column,
              src: img.src as string,
              complete: img.complete as boolean,
              naturalWidth: img.naturalWidth as number,
              height: img.getBoundingClientRect().height as number,
              room,
              text: td.textContent as string,
              title: td.title as string,
            },
          ];
        }),
      ),
    };
  }, zoneId);
}

/** Header cells whose text is wider than the room their column leaves it (shown with an ellipsis). */
async function cutHeaders(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const g = globalThis as any;
    return [...g.document.querySelectorAll('.pl-content.pl-visible .pl-data th')]
      .filter((th: any) => {
        const range = g.document.createRange();
        range.selectNodeContents(th);
        const style = g.getComputedStyle(th);
        const room = th.getBoundingClientRect().width - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        return range.getBoundingClientRect().width > room + 0.5;
      })
      .map((th: any) => th.textContent as string);
  });
}

async function until<T>(t: Test, what: string, fn: () => Promise<T | undefined | false | null>, ms = 15_000): Promise<T> {
  try {
    return await waitUntil(what, async () => (await fn()) ?? undefined, ms);
  } catch (err) {
    t.fail(String(err));
    throw err;
  }
}

t.test('browser player: data zones show a source’s rows, follow changes, page, and play from the cache offline', async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const { app, owner, call } = await signedInApp(t, { config: { fetchAllowLoopback: true } });
  t.equal((await call('PATCH', '/api/v1/settings', { timeZone: ZONE }, { 'if-match': '"0"' })).status, 200, 'the screens’ zone is New York');

  const feed = await fakeFeed(t);
  let doc = { items: NAMES.map((n, i) => dish(i, n, 2 + i * 0.5)) };
  feed.routes.set('/menu.json', (req, res) => jsonDoc(doc)(req, res));
  const made = await createSource(app, owner, { name: 'Menu', provider: 'json', config: { url: `${feed.url}/menu.json`, rowsPath: '$.items[*]' } });
  t.equal(made.status, 201, JSON.stringify(made.body));
  const sourceId: string = made.body.data.id;
  await refreshNow(app, sourceId);

  // One data zone filling a 1920×1080 canvas.
  const created = await call('POST', '/api/v1/layouts', { name: 'Café board' });
  const layoutId: string = created.body.data.id;
  const draft = await call(
    'PUT',
    `/api/v1/layouts/${layoutId}/draft`,
    { width: 1920, height: 1080, zones: [{ name: 'Menu', x: 0, y: 0, width: 1920, height: 1080, content: { type: 'data', sourceId } }] },
    { 'if-match': String(created.body.data.revision) },
  );
  t.equal(draft.status, 200, JSON.stringify(draft.body));
  const published = await call('POST', `/api/v1/layouts/${layoutId}/publish`, {});
  t.equal(published.status, 200, JSON.stringify(published.body));
  const menuZone: string = draft.body.data.draft.zones[0].id;

  // Chromium in Tokyo, English (UK): the table must use the manifest's zone, not the browser's.
  const context = await browser.newContext({ viewport: VIEWPORT, locale: 'en-GB', timezoneId: 'Asia/Tokyo' });
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
    name: 'Board all day',
    content: { layoutId },
    targets: { screenIds: [screenId] },
    startsAt: new Date(Date.now() - 60_000).toISOString(),
  });
  t.equal(sched.status, 201, JSON.stringify(sched.body));

  const first = await until(t, 'the table shows the feed’s rows', async () => {
    const table = await tableOf(page, menuZone);
    return table && table.rows.length > 0 ? table : null;
  });
  t.same(first.head, ['name', 'price', 'vegan', 'served', 'nextBatch', 'photo', 'notes'], 'a header cell per column');
  t.same(
    first.rows.map((r) => r[0]),
    NAMES,
    'every row, in the feed’s order, on one page',
  );
  t.equal(first.page, '', 'no page line when everything fits');
  t.same(first.rows[1], ['Flat white', '2.5', '', 'Mon 2 Mar', 'Tue 3 Mar, 08:31', 'cdn.example.com/menu/flat-white.jpg', 'Baked this morning']);
  t.equal(first.rows[0]![2], '✓', 'a true boolean is a check mark');
  t.equal(first.rows[2]![4], 'Tue 3 Mar, 08:32', 'date-times in the manifest’s zone (New York), not the browser’s (Tokyo)');
  t.equal(first.rows[2]![6], 'House & seasonal', 'rich text as plain text');
  const align = await page.evaluate((id) => {
    const g = globalThis as any;
    const cells = g.document.querySelectorAll(`[data-zone-id="${id}"] tbody tr:first-child td`);
    return [...cells].map((c) => g.getComputedStyle(c).textAlign as string);
  }, menuZone);
  t.same(align.slice(0, 3), ['start', 'end', 'center'], 'text left, numbers right, check marks centred');
  const fontPx = await page.evaluate(
    (id) => parseFloat((globalThis as any).getComputedStyle((globalThis as any).document.querySelector(`[data-zone-id="${id}"] .pl-data`)).fontSize),
    menuZone,
  );
  t.ok(fontPx >= 20, `legible on a 1920×1080 zone (${fontPx.toFixed(1)} px)`);
  const fits = await page.evaluate((id) => {
    const g = globalThis as any;
    const zone = g.document.querySelector(`[data-zone-id="${id}"]`).getBoundingClientRect();
    const table = g.document.querySelector(`[data-zone-id="${id}"] table`).getBoundingClientRect();
    return table.right <= zone.right + 1 && table.bottom <= zone.bottom + 1;
  }, menuZone);
  t.ok(fits, 'the table stays inside its zone');
  t.same(await cutHeaders(page), [], 'no header is cut short');
  await page.waitForTimeout(1_600); // the content's fade in
  await snap(page, 'player-data-full', false);

  await t.test('a feed change reaches the table without a reload and without an empty moment; a long list pages', async (t) => {
    // Watch the zone: any moment it shows no table is a flash of an empty zone.
    await page.evaluate((id) => {
      const w = globalThis as any;
      w.__blank = 0;
      w.__observer = new w.MutationObserver(() => {
        if (!w.document.querySelector(`[data-zone-id="${id}"] .pl-data-table`)) w.__blank += 1;
      });
      w.__observer.observe(w.document.querySelector('.pl-stage'), { childList: true, subtree: true });
    }, menuZone);
    const navigations: string[] = [];
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations.push(f.url());
    });
    doc = { items: [...NAMES, ...MORE].map((n, i) => dish(i, n, i === 0 ? 2.8 : 2 + i * 0.5)) };
    const changedAt = Date.now();
    await refreshNow(app, sourceId);
    const changed = await until(t, 'the new rows on screen', async () => {
      const table = await tableOf(page, menuZone);
      return table && table.outputId !== first.outputId ? table : null;
    });
    t.ok(Date.now() - changedAt < 10_000, `within a few seconds (${Date.now() - changedAt} ms)`);
    t.same(navigations, [], 'no reload');
    t.equal(changed.rows[0]![1], '2.8', 'the changed price');
    const total = NAMES.length + MORE.length;
    t.ok(changed.rows.length < total, `${total} rows do not fit: ${changed.rows.length} on the first page`);
    t.same(
      changed.rows.map((r) => r[0]),
      [...NAMES, ...MORE].slice(0, changed.rows.length),
      'the first page holds the first rows',
    );
    const pages = Math.ceil(total / changed.rows.length);
    t.equal(changed.page, `1 / ${pages}`, 'a page line says where the list is');
    const fetches = await page.evaluate(() => (globalThis as any).placardPlayer.manifestFetches() as { reasons: string[] }[]);
    t.ok(
      fetches.at(-1)?.reasons.some((r) => r.startsWith('socket:')),
      `told by the socket: ${JSON.stringify(fetches.at(-1))}`,
    );
    await snap(page, 'player-data-page-1', false);
    const second = await until(
      t,
      'the second page after about eight seconds',
      async () => {
        const table = await tableOf(page, menuZone);
        return table?.page === `2 / ${pages}` && table.rows[0]![0] !== 'Espresso' ? table : null;
      },
      12_000,
    );
    t.equal(second.rows[0]![0], [...NAMES, ...MORE][changed.rows.length], 'page two starts where page one ended');
    const blank = await page.evaluate(() => {
      const w = globalThis as any;
      w.__observer.disconnect();
      return w.__blank as number;
    });
    t.equal(blank, 0, 'the zone never showed an empty moment');
  });

  let cheapZone = '';
  await t.test('a narrow zone beside a wide one: a view of the source, legible, paging when it must', async (t) => {
    const layout = (await call('GET', `/api/v1/layouts/${layoutId}`)).body.data;
    const cheap = { filter: [{ field: 'price', op: 'lt', value: 5 }], sort: [{ field: 'price', direction: 'asc' }], fields: ['name', 'price'] };
    const next = await call(
      'PUT',
      `/api/v1/layouts/${layoutId}/draft`,
      {
        width: 1920,
        height: 1080,
        zones: [
          { name: 'Menu', x: 0, y: 0, width: 1440, height: 1080, content: { type: 'data', sourceId, view: { fields: ['name', 'price', 'vegan', 'notes'] } } },
          { name: 'Under 5', x: 1440, y: 0, width: 480, height: 760, content: { type: 'data', sourceId, view: cheap } },
          {
            name: 'Specials',
            x: 1440,
            y: 760,
            width: 480,
            height: 320,
            content: { type: 'data', sourceId, view: { filter: [{ field: 'price', op: 'gt', value: 1000 }] } },
          },
        ],
      },
      { 'if-match': String(layout.revision) },
    );
    t.equal(next.status, 200, JSON.stringify(next.body));
    t.equal((await call('POST', `/api/v1/layouts/${layoutId}/publish`, {})).status, 200);
    const wideZone: string = next.body.data.draft.zones[0].id;
    cheapZone = next.body.data.draft.zones[1].id;
    const emptyZone: string = next.body.data.draft.zones[2].id;
    const narrow = await until(t, 'the narrow zone’s table', async () => {
      const table = await tableOf(page, cheapZone);
      return table && table.rows.length > 0 ? table : null;
    });
    t.same(narrow.head, ['name', 'price'], 'the view’s fields');
    t.same(
      narrow.rows.slice(0, 3).map((r) => r[1]),
      ['2.5', '2.8', '3'],
      'the view’s order: cheapest first',
    );
    const empty = await until(t, 'the empty view’s table', () => tableOf(page, emptyZone));
    t.same(empty.rows, [['No rows']], 'no rows: a quiet line, not a blank zone');
    t.same(empty.head, [], 'and no header over nothing');
    const wide = await until(t, 'the wide zone’s table', () => tableOf(page, wideZone));
    t.same(wide.head, ['name', 'price', 'vegan', 'notes']);
    const sizes = await page.evaluate(
      (ids) =>
        ids.map((id) => {
          const g = globalThis as any;
          const zone = g.document.querySelector(`[data-zone-id="${id}"]`);
          const table = zone.querySelector('table')!;
          const z = zone.getBoundingClientRect();
          const r = table.getBoundingClientRect();
          return { font: parseFloat(g.getComputedStyle(zone.querySelector('.pl-data')).fontSize), inside: r.right <= z.right + 1 && r.bottom <= z.bottom + 1 };
        }),
      [wideZone, cheapZone, emptyZone],
    );
    for (const [i, s] of sizes.entries()) {
      t.ok(s.inside, `zone ${i}: the table stays inside`);
      // The third is a strip of seven columns in 480 px: as small as the width needs.
      if (i < 2) t.ok(s.font >= 20, `zone ${i}: legible (${s.font.toFixed(1)} px)`);
    }
    t.same(await cutHeaders(page), [], 'no header is cut short');
    await page.waitForTimeout(1_600); // the content's fade in
    await snap(page, 'player-data-narrow', false);

    // The screenshot command draws the tables' text (not the black of an undrawable zone).
    const queued = await call('POST', `/api/v1/screens/${screenId}/commands`, { type: 'screenshot' });
    t.equal(queued.status, 201, JSON.stringify(queued.body));
    const done = await until(t, 'the screenshot command answered', async () => {
      const c = (await call('GET', `/api/v1/screens/${screenId}/commands/${queued.body.data.id}`)).body.data;
      return ['succeeded', 'failed'].includes(c.state) ? c : null;
    });
    t.equal(done.state, 'succeeded', JSON.stringify(done.result));
    const jpeg = Buffer.from(await (await app.fetch(done.screenshot.url, { headers: owner.headers })).arrayBuffer());
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(path.join(ARTIFACTS, 'player-data-command-screenshot.jpg'), jpeg);
    const { width = 0, height = 0 } = await sharp(jpeg).metadata();
    // The narrow zone's rows (canvas x 1440-1920, y 60-500): light text on the dark table.
    const region = await sharp(jpeg)
      .extract({ left: Math.round(width * 0.77), top: Math.round(height * 0.06), width: Math.round(width * 0.2), height: Math.round(height * 0.4) })
      .greyscale()
      .stats();
    t.ok(region.channels[0]!.max > 180, `the narrow zone's text is drawn (brightest ${region.channels[0]!.max})`);
  });

  await t.test('image cells: pictures the server keeps as media are shown from the cache, the others stay text', async (t) => {
    // The cheap dishes get photos on the feed (one of them missing there); the narrow zone shows the column.
    const png = async (r: number, g: number, b: number) =>
      sharp({ create: { width: 320, height: 240, channels: 3, background: { r, g, b } } })
        .png()
        .toBuffer();
    const slug = (name: string) => name.toLowerCase().replace(/\W+/g, '-');
    const cheapNames = ['Espresso', 'Flat white', 'Chai latte', 'Green tea', 'Hot chocolate', 'Croissant'];
    const colours: Record<string, [number, number, number]> = {
      Espresso: [120, 72, 40],
      'Flat white': [230, 210, 180],
      'Green tea': [90, 170, 80],
      'Hot chocolate': [90, 50, 30],
      Croissant: [230, 170, 60],
    };
    for (const [name, [r, g, b]] of Object.entries(colours)) {
      const body = await png(r, g, b);
      feed.routes.set(`/photos/${slug(name)}.png`, (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(body));
    }
    doc = { items: doc.items.map((d) => (cheapNames.includes(d.name) ? { ...d, photo: `${feed.url}/photos/${slug(d.name)}.png` } : d)) };
    const layout = (await call('GET', `/api/v1/layouts/${layoutId}`)).body.data;
    const zones = layout.draft.zones.map((z: any) => ({ name: z.name, x: z.x, y: z.y, width: z.width, height: z.height, content: z.content }));
    zones[1].content = { ...zones[1].content, view: { ...zones[1].content.view, fields: ['name', 'photo', 'price'] } };
    const next = await call('PUT', `/api/v1/layouts/${layoutId}/draft`, { width: 1920, height: 1080, zones }, { 'if-match': String(layout.revision) });
    t.equal(next.status, 200, JSON.stringify(next.body));
    t.equal((await call('POST', `/api/v1/layouts/${layoutId}/publish`, {})).status, 200);
    cheapZone = next.body.data.draft.zones[1].id;
    await refreshNow(app, sourceId);

    // The server fetches the photos and keeps them as media: the manifest lists them with the zone's output.
    let lastSeen = '';
    t.teardown(() => {
      if (!t.passing()) t.comment(lastSeen);
    });
    const credential: string = await page.evaluate(() => JSON.parse((globalThis as any).localStorage.getItem('placard.player.identity')).credential);
    await kickImageFetch(app.deps);
    const manifest = await until(
      t,
      'the manifest lists the photos',
      async () => {
        const got = await app.json('/api/v1/player/manifest', { headers: { authorization: `Bearer ${credential}` } });
        const m = got.body.data;
        const zone = m.timeline.flatMap((seg: any) => seg.layout?.zones ?? []).find((z: any) => z.id === cheapZone);
        const output = m.data.find((d: any) => d.outputId === zone?.data?.outputId);
        lastSeen = JSON.stringify({ status: got.status, zones: m.timeline.map((s: any) => s.layout?.zones.map((z: any) => [z.id, z.data])), data: m.data });
        return output?.images.length === 5 ? { m, output } : null;
      },
      30_000,
    );
    const variants = new Set(manifest.output.images.map((i: any) => i.variantId));
    t.equal(manifest.m.media.filter((x: any) => variants.has(x.variantId)).length, 5, 'their variants are in media');

    // The player redraws the same output with the pictures, from its cache.
    const shown = await until(
      t,
      'five pictures drawn in the narrow zone',
      async () => {
        const p = await picturesOf(page, cheapZone);
        return p.pictures.length === 5 && p.pictures.every((x) => x.complete && x.naturalWidth > 0) ? p : null;
      },
      20_000,
    );
    const table = (await tableOf(page, cheapZone))!;
    t.same(table.head, ['name', 'photo', 'price']);
    t.same(
      shown.pictures.map((x) => table.rows[x.row]![0]),
      ['Flat white', 'Espresso', 'Green tea', 'Hot chocolate', 'Croissant'],
      'a picture for each dish with a photo the server could have (cheapest first)',
    );
    t.ok(
      shown.pictures.every((x) => x.column === 1 && x.src.startsWith('blob:') && x.text === ''),
      'in the photo column, from the media cache (blob URLs), instead of the address',
    );
    t.ok(
      shown.pictures.every((x) => x.title.endsWith(`/photos/${slug(table.rows[x.row]![0]!)}.png`)),
      'the address stays in the cell’s title',
    );
    const chai = table.rows.find((r) => r[0] === 'Chai latte');
    t.equal(chai?.[1], `${feed.url.replace('http://', '')}/photos/chai-latte.png`, 'a photo the feed does not have stays its address');
    const heights = shown.rowHeights;
    t.ok(Math.max(...heights) - Math.min(...heights) < 0.5, `rows with and without a picture are as high (${heights.map((h) => h.toFixed(1)).join(', ')})`);
    t.ok(
      shown.pictures.every((x) => x.height > 0 && x.height <= x.room + 0.5),
      'each picture fits its row’s line',
    );
    const fetched = feed.requests.filter((r) => r.path.startsWith('/photos/')).map((r) => r.path);
    t.equal(fetched.filter((p) => p === '/photos/espresso.png').length, 1, 'the server fetched each photo once; the player never asked the feed');
    await page.waitForTimeout(600);
    await snap(page, 'player-data-images', false);
  });

  await t.test('the server stops: a reload still shows the rows, from the cache', async (t) => {
    const before = await until(t, 'the narrow table', () => tableOf(page, cheapZone));
    await app.server.close(500);
    await page.reload();
    const after = await until(t, 'the rows again after an offline reload', async () => {
      const table = await tableOf(page, cheapZone);
      return table && table.rows.length > 0 ? table : null;
    });
    t.equal(after.outputId, before.outputId, 'the same output');
    t.same(after.rows, before.rows, 'the same rows, from the cache');
    const pictures = await until(t, 'the pictures again, offline', async () => {
      const p = await picturesOf(page, cheapZone);
      return p.pictures.length === 5 && p.pictures.every((x) => x.complete && x.naturalWidth > 0) ? p : null;
    });
    t.ok(
      pictures.pictures.every((x) => x.src.startsWith('blob:')),
      'drawn from the cache with the server gone',
    );
    const state = await page.evaluate(() => (globalThis as any).placardPlayer.state);
    t.equal(state, 'running');
    await page.waitForTimeout(1_600); // the content's fade in
    await snap(page, 'player-data-offline', false);
  });
});
