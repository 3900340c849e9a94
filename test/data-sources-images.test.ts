import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { dropUnusedImages, kickImageFetch } from '../server/src/modules/data-sources/images.service.js';
import { imageUrlsOf } from '../server/src/modules/data-sources/outputs.js';
import { signedInApp } from './helpers/auth.js';
import { waitUntil } from './helpers/browser.js';
import { createSource, diagnosticsOf, fakeFeed, refreshNow } from './helpers/data-sources.js';
import { samplePng } from './helpers/sample-media.js';
import { pairScreen } from './helpers/screens.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

t.test('image addresses: the image columns’ http(s) cells, distinct, in row order', async (t) => {
  const columns = [
    { name: 'name', type: 'text' as const },
    { name: 'photo', type: 'image' as const },
    { name: 'logo', type: 'image' as const },
  ];
  t.same(
    imageUrlsOf(columns, [
      { name: 'http://not-an-image-column/x.png', photo: 'https://a/1.png', logo: 'https://a/2.png' },
      { name: 'b', photo: 'https://a/1.png', logo: null },
      { name: 'c', photo: 'ftp://a/3.png', logo: 'data:image/png;base64,AAAA' },
      { name: 'd', photo: 'HTTP://a/4.png', logo: 12 },
    ]),
    ['https://a/1.png', 'https://a/2.png', 'HTTP://a/4.png'],
  );
  t.same(imageUrlsOf([{ name: 'n', type: 'text' }], [{ n: 'https://a/1.png' }]), [], 'no image column, no images');
});

t.test('images in rows are fetched once, processed as media, listed in the manifest next to the output, and dropped when no row uses them', async (t) => {
  const { app, owner, call } = await signedInApp(t, { config: { fetchAllowLoopback: true } });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-ds-images-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const png = readFileSync(await samplePng(dir, 'tea.png', { r: 20, g: 160, b: 60 }));
  const feed = await fakeFeed(t, {
    '/tea.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(png),
    '/notes.txt': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end('this is not a picture'),
  });
  let items = [
    { name: 'Tea', photo: `${feed.url}/tea.png` },
    { name: 'Cake', photo: `${feed.url}/gone.png` },
    { name: 'Soup', photo: `${feed.url}/notes.txt` },
  ];
  feed.routes.set('/menu.json', (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items })));
  const made = await createSource(app, owner, {
    name: 'Menu',
    provider: 'json',
    config: {
      url: `${feed.url}/menu.json`,
      rowsPath: '$.items[*]',
      columns: [
        { name: 'name', path: '$.name' },
        { name: 'photo', path: '$.photo', type: 'image' },
      ],
    },
  });
  t.equal(made.status, 201, JSON.stringify(made.body));
  const sourceId = made.body.data.id as string;
  await refreshNow(app, sourceId);

  const layout = (await call('POST', '/api/v1/layouts', { name: 'Board' })).body.data;
  await call(
    'PUT',
    `/api/v1/layouts/${layout.id}/draft`,
    { zones: [{ name: 'Menu', x: 0, y: 0, width: 1280, height: 720, content: { type: 'data', sourceId } }] },
    { 'if-match': String(layout.revision) },
  );
  await call('POST', `/api/v1/layouts/${layout.id}/publish`, {});
  const screen = await pairScreen(app, owner);
  await call('POST', '/api/v1/schedules', {
    name: 'Board',
    content: { layoutId: layout.id },
    targets: { screenIds: [screen.screenId] },
    startsAt: new Date(Date.now() - 60_000).toISOString(),
  });
  const manifest = async () => (await app.json('/api/v1/player/manifest', { headers: screen.headers })).body.data;

  // The first build notes the addresses and starts fetching; the image becomes an asset, then ready media.
  t.same((await manifest()).data[0].images, [], 'nothing cached yet');
  await kickImageFetch(app.deps);
  const m = await waitUntil('the image is in the manifest', async () => {
    const m = await manifest();
    return m.data[0]?.images.length ? m : undefined;
  });
  const [image] = m.data[0].images;
  t.equal(image.url, `${feed.url}/tea.png`);
  const media = m.media.find((x: any) => x.variantId === image.variantId);
  t.ok(media, 'its variant is listed in media');
  const bytes = Buffer.from(await (await fetch(`${app.url}${media.url}`, { headers: screen.headers })).arrayBuffer());
  t.equal(sha(bytes), media.sha256, 'and downloads with the device credential');
  t.equal(feed.requests.filter((r) => r.path === '/tea.png').length, 1, 'fetched once');

  // Diagnostics say which images could not be had, in words.
  const diag = await diagnosticsOf(app, owner, sourceId);
  t.equal(diag.images.ready, 1);
  t.equal(diag.images.pending + diag.images.failed, 2);
  t.match(
    diag.images.failures.find((f: any) => f.url.endsWith('/gone.png')),
    { error: /404/ },
  );
  t.match(
    diag.images.failures.find((f: any) => f.url.endsWith('/notes.txt')),
    { error: /not give an image/ },
  );
  t.equal(diag.outputs.length, 1);

  // The asset sits in the library's "Data source images" folder and says who uses it.
  const asset = (await call('GET', `/api/v1/assets/${image.assetId}`)).body.data;
  t.ok(asset.folderId, 'in a folder');
  const folder = (await call('GET', '/api/v1/content-folders')).body.data.items.find((f: any) => f.id === asset.folderId);
  t.equal(folder?.name, 'Data source images');
  const refused = await call('DELETE', `/api/v1/assets/${image.assetId}`);
  t.equal(refused.status, 409, 'deleting it without force is refused');
  t.match(refused.body.error.message, /Menu/);

  // Tea leaves the menu: once no kept output lists the image (three newer versions), it goes with its asset.
  for (const [i, name] of ['Coffee', 'Juice', 'Water'].entries()) {
    items = [{ name, photo: `${feed.url}/notes.txt?${i}` }];
    await refreshNow(app, sourceId);
  }
  t.equal(await dropUnusedImages(app.deps, Date.now()), 0, 'not in its first hour');
  t.ok((await dropUnusedImages(app.deps, Date.now() + 2 * 3600_000)) >= 1);
  t.equal((await call('GET', `/api/v1/assets/${image.assetId}`)).status, 404, 'the asset is gone');
  t.notOk(
    (await manifest()).media.some((x: any) => x.assetId === image.assetId),
    'and out of the manifest',
  );
});
