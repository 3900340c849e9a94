import sharp from 'sharp';
import t, { type Test } from 'tap';
import { signedInApp } from './helpers/auth.js';
import { contended } from './helpers/harness.js';

const setup = (t: Test) => signedInApp(t);

t.test('draft, publish, revisions, restore, duplicate', async (t) => {
  const { call } = await setup(t);
  const playlist = (await call('POST', '/api/v1/playlists', { name: 'Menu' })).body.data;
  const made = await call('POST', '/api/v1/layouts', {
    name: 'Split',
    width: 1920,
    height: 1080,
    background: { color: '#102030' },
    zones: [{ id: 'main', name: 'Main', x: 0, y: 0, width: 1280, height: 1080, content: { type: 'playlist', playlistId: playlist.id } }],
  });
  t.equal(made.status, 201);
  const id = made.body.data.id;
  t.match(made.body.data, { revision: 1, orientation: 'landscape', zoneCount: 1, publishedRevisionId: null, hasUnpublishedChanges: true, published: null });
  t.match(made.body.data.draft.zones[0], { id: 'main', zIndex: 0, fit: 'contain', muted: true });
  t.equal(made.headers.get('etag'), '"1"');

  const draft2 = {
    width: 1920,
    height: 1080,
    background: { color: '#000000' },
    zones: [
      { id: 'main', name: 'Main', x: 0, y: 0, width: 1280, height: 1080, content: { type: 'playlist', playlistId: playlist.id } },
      { name: 'Side', x: 1280, y: 0, width: 640, height: 1080, zIndex: 2 },
    ],
  };
  const put = await call('PUT', `/api/v1/layouts/${id}/draft`, draft2, { 'if-match': '1' });
  t.equal(put.status, 200);
  t.equal(put.body.data.revision, 2);
  t.match(put.body.data.draft.zones[1].id, /^[0-9a-f-]{36}$/, 'the server names a zone without id');
  t.equal((await call('PUT', `/api/v1/layouts/${id}/draft`, draft2, { 'if-match': '1' })).status, 412, 'stale draft refused');

  const outside = await call('PUT', `/api/v1/layouts/${id}/draft`, { ...draft2, zones: [{ name: 'Wide', x: 1000, y: 0, width: 1000, height: 100 }] });
  t.equal(outside.status, 400);
  t.match(outside.body.error.message, /outside/);
  const dup = await call('PUT', `/api/v1/layouts/${id}/draft`, {
    ...draft2,
    zones: [
      { id: 'a', x: 0, y: 0, width: 10, height: 10 },
      { id: 'a', x: 0, y: 0, width: 10, height: 10 },
    ],
  });
  t.equal(dup.status, 400);
  const ghost = await call('PUT', `/api/v1/layouts/${id}/draft`, {
    ...draft2,
    zones: [{ x: 0, y: 0, width: 10, height: 10, content: { type: 'playlist', playlistId: '0190f5a2-7b3c-7def-8abc-0123456789ab' } }],
  });
  t.equal(ghost.status, 400);
  const widget = await call('PUT', `/api/v1/layouts/${id}/draft`, {
    ...draft2,
    zones: [{ x: 0, y: 0, width: 10, height: 10, content: { type: 'widget', widgetId: '0190f5a2-7b3c-7def-8abc-0123456789ab' } }],
  });
  t.equal(widget.status, 400, 'a zone naming no widget');
  t.match(widget.body.error.message, /widget 0190f5a2/);
  t.same(
    widget.body.error.details.issues.map((i: any) => [i.code, i.path]),
    [['invalid_reference', ['zones', 0, 'content', 'widgetId']]],
  );

  const pub1 = await call('POST', `/api/v1/layouts/${id}/publish`, { note: 'first' });
  t.equal(pub1.status, 200);
  t.equal(pub1.body.data.publishedRevisionNumber, 1);
  t.equal(pub1.body.data.hasUnpublishedChanges, false);
  t.equal(pub1.body.data.published.zones.length, 2);

  await call('PUT', `/api/v1/layouts/${id}/draft`, { ...draft2, zones: [draft2.zones[0]] });
  const pub2 = await call('POST', `/api/v1/layouts/${id}/publish`, {});
  t.equal(pub2.body.data.publishedRevisionNumber, 2);
  const revs = await call('GET', `/api/v1/layouts/${id}/revisions`);
  t.same(
    revs.body.data.items.map((r: any) => [r.number, r.current, r.content.zones.length, r.source]),
    [
      [2, true, 1, 'edit'],
      [1, false, 2, 'edit'],
    ],
  );
  t.equal(revs.body.data.items[1].note, 'first');

  const restored = await call('POST', `/api/v1/layouts/${id}/revisions/${revs.body.data.items[1].id}/restore`);
  t.equal(restored.status, 200);
  t.equal(restored.body.data.draft.zones.length, 2, 'draft is revision 1 again');
  t.equal(restored.body.data.published.zones.length, 1, 'screens keep revision 2 until publish');
  t.equal(restored.body.data.hasUnpublishedChanges, true);
  t.equal((await call('POST', `/api/v1/layouts/${id}/revisions/0190f5a2-7b3c-7def-8abc-0123456789ab/restore`)).status, 404);

  const copy = await call('POST', `/api/v1/layouts/${id}/duplicate`, {});
  t.equal(copy.status, 201);
  t.equal(copy.body.data.name, 'Split (copy)');
  t.equal(copy.body.data.publishedRevisionId, null);
  t.same(copy.body.data.draft, restored.body.data.draft);

  const list = await call('GET', '/api/v1/layouts');
  t.same(
    list.body.data.items.map((l: any) => [l.name, l.publishedRevisionNumber]),
    [
      ['Split', 2],
      ['Split (copy)', null],
    ],
  );

  // A playlist shown by a layout cannot be deleted.
  const del = await call('DELETE', `/api/v1/playlists/${playlist.id}`);
  t.equal(del.status, 409);
  t.same(
    del.body.error.details.usedBy.map((u: any) => u.type),
    ['layout', 'layout'],
    'the layout and its copy',
  );
  t.equal((await call('DELETE', `/api/v1/layouts/${copy.body.data.id}`)).status, 204);
});

t.test('preview image: rendered from the zones, replaced by an upload', async (t) => {
  const { app, owner, call } = await setup(t);
  const made = await call('POST', '/api/v1/layouts', {
    name: 'Preview',
    width: 1920,
    height: 1080,
    background: { color: '#ff0000' },
    zones: [{ name: 'Left', x: 0, y: 0, width: 960, height: 1080 }],
  });
  const id = made.body.data.id;
  const res = await app.fetch(`/api/v1/layouts/${id}/preview-image`, { headers: owner.headers });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'image/png');
  const png = Buffer.from(await res.arrayBuffer());
  const meta = await sharp(png).metadata();
  t.same([meta.width, meta.height], [960, 540], 'scaled to 960 on the long side');
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  const pixel = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
  t.same(pixel(900, 500), [255, 0, 0], 'background colour outside the zone');
  t.not(pixel(200, 100).join(), '255,0,0', 'the zone is drawn over the background');
  const etag = res.headers.get('etag')!;
  t.equal((await app.fetch(`/api/v1/layouts/${id}/preview-image`, { headers: { ...owner.headers, 'if-none-match': etag } })).status, 304);
  t.equal((await app.fetch(`/api/v1/layouts/${id}/preview-image?source=published`, { headers: owner.headers })).status, 404, 'not published yet');
  t.equal((await app.fetch(`/api/v1/layouts/${id}/preview-image?source=uploaded`, { headers: owner.headers })).status, 404);

  const upload = await sharp({ create: { width: 320, height: 180, channels: 3, background: '#00ff00' } })
    .jpeg()
    .toBuffer();
  const put = await app.fetch(`/api/v1/layouts/${id}/preview-image`, {
    method: 'PUT',
    headers: { ...owner.headers, 'content-type': 'image/jpeg' },
    body: upload,
  });
  t.equal(put.status, 200);
  t.equal(((await put.json()) as any).data.hasCustomPreview, true);
  const got = await app.fetch(`/api/v1/layouts/${id}/preview-image`, { headers: owner.headers });
  const gotMeta = await sharp(Buffer.from(await got.arrayBuffer())).metadata();
  t.same([gotMeta.width, gotMeta.height, gotMeta.format], [320, 180, 'png']);

  const bad = await app.fetch(`/api/v1/layouts/${id}/preview-image`, {
    method: 'PUT',
    headers: { ...owner.headers, 'content-type': 'image/png' },
    body: 'not an image',
  });
  t.equal(bad.status, 400);
  const wrongType = await app.fetch(`/api/v1/layouts/${id}/preview-image`, {
    method: 'PUT',
    headers: { ...owner.headers, 'content-type': 'text/plain' },
    body: 'x',
  });
  t.equal(wrongType.status, 415);
  const big = await app.fetch(`/api/v1/layouts/${id}/preview-image`, {
    method: 'PUT',
    headers: { ...owner.headers, 'content-type': 'image/png' },
    body: Buffer.alloc(10 * 1024 * 1024 + 1),
  });
  t.equal(big.status, 413);
  const draft = await app.fetch(`/api/v1/layouts/${id}/preview-image?source=draft`, { headers: owner.headers });
  t.equal((await sharp(Buffer.from(await draft.arrayBuffer())).metadata()).width, 960, 'source=draft still renders');
});

t.test('If-Match is checked in the write: concurrent draft edits and publishes with one revision', async (t) => {
  const { app, call } = await setup(t);
  const made = (await call('POST', '/api/v1/layouts', { name: 'Race', zones: [] })).body.data;
  const draft = (i: number) => ({ width: 1920, height: 1080, zones: [{ id: `z${i}`, name: `Zone ${i}`, x: 0, y: 0, width: 100, height: 100 }] });
  const results = await contended(app, () => [0, 1, 2, 3, 4].map((i) => call('PUT', `/api/v1/layouts/${made.id}/draft`, draft(i), { 'if-match': '1' })));
  t.same(results.map((r) => r.status).sort(), [200, 412, 412, 412, 412], 'exactly one PUT draft wins');
  const winner = results.find((r) => r.status === 200)!.body.data;
  const now = (await call('GET', `/api/v1/layouts/${made.id}`)).body.data;
  t.equal(now.revision, 2);
  t.same(now.draft, winner.draft, 'the stored draft is the winner’s');
  for (const r of results.filter((r) => r.status === 412)) t.match(r.body.error, { code: 'version_conflict', details: { currentRevision: 2 } });

  const pubs = await contended(app, () => [0, 1, 2].map(() => call('POST', `/api/v1/layouts/${made.id}/publish`, {}, { 'if-match': '2' })));
  t.same(pubs.map((r) => r.status).sort(), [200, 412, 412], 'exactly one publish');
  t.equal((await call('GET', `/api/v1/layouts/${made.id}/revisions`)).body.data.items.length, 1, 'one revision made');
});

t.test('layout writes refuse a stale If-Match; delete and restore name what is in the way', async (t) => {
  const { call } = await setup(t);
  const gone = (await call('POST', '/api/v1/playlists', { name: 'Soon gone' })).body.data;
  const made = (
    await call('POST', '/api/v1/layouts', {
      name: 'Guarded',
      zones: [{ id: 'a', x: 0, y: 0, width: 100, height: 100, content: { type: 'playlist', playlistId: gone.id } }],
    })
  ).body.data;
  const pub = await call('POST', `/api/v1/layouts/${made.id}/publish`, { note: 'with the playlist' }, { 'if-match': '1' });
  t.equal(pub.status, 200);
  const rev1 = (await call('GET', `/api/v1/layouts/${made.id}/revisions`)).body.data.items[0].id;
  const current = (await call('GET', `/api/v1/layouts/${made.id}`)).body.data;
  t.equal(current.revision, 2);
  const stale = { 'if-match': '1' };
  for (const [label, method, path, body] of [
    ['PATCH', 'PATCH', `/api/v1/layouts/${made.id}`, { name: 'Renamed' }],
    ['publish', 'POST', `/api/v1/layouts/${made.id}/publish`, {}],
    ['restore', 'POST', `/api/v1/layouts/${made.id}/revisions/${rev1}/restore`, undefined],
    ['DELETE', 'DELETE', `/api/v1/layouts/${made.id}`, undefined],
  ] as const) {
    const res = await call(method, path, body, stale);
    t.equal(res.status, 412, label);
    t.match(res.body.error, { code: 'version_conflict', details: { currentRevision: 2 } }, label);
  }
  t.same((await call('GET', `/api/v1/layouts/${made.id}`)).body.data, current, 'nothing changed');
  t.equal((await call('GET', `/api/v1/layouts/${made.id}/revisions`)).body.data.items.length, 1, 'no revision made');

  // Revision 2 drops the playlist; the playlist is deleted; revision 1 cannot come back.
  t.equal(
    (await call('PUT', `/api/v1/layouts/${made.id}/draft`, { zones: [{ id: 'a', x: 0, y: 0, width: 100, height: 100 }] }, { 'if-match': '2' })).status,
    200,
  );
  t.equal((await call('POST', `/api/v1/layouts/${made.id}/publish`, {})).status, 200);
  t.equal((await call('DELETE', `/api/v1/playlists/${gone.id}`)).status, 204, 'no draft or published revision uses it now');
  const before = (await call('GET', `/api/v1/layouts/${made.id}`)).body.data;
  const restore = await call('POST', `/api/v1/layouts/${made.id}/revisions/${rev1}/restore`);
  t.equal(restore.status, 409);
  t.match(restore.body.error, { code: 'conflict', message: /Revision 1 refers to what no longer exists/, details: { missing: [`playlist ${gone.id}`] } });
  t.same((await call('GET', `/api/v1/layouts/${made.id}`)).body.data, before, 'the draft is untouched');

  // A layout a schedule uses cannot be deleted; the schedule is named.
  const groupId = (await call('POST', '/api/v1/screen-groups', { name: 'Everywhere' })).body.data.id;
  const s = (
    await call('POST', '/api/v1/schedules', {
      name: 'Board hours',
      content: { layoutId: made.id },
      targets: { groupIds: [groupId] },
      startsAt: '2026-06-01T09:00:00Z',
      timeZone: 'UTC',
    })
  ).body.data;
  const del = await call('DELETE', `/api/v1/layouts/${made.id}`);
  t.equal(del.status, 409);
  t.same(del.body.error.details.usedBy, [{ type: 'schedule', id: s.id, name: 'Board hours' }]);
  t.match(del.body.error.message, /"Board hours"/);
  t.equal((await call('DELETE', `/api/v1/schedules/${s.id}`)).status, 204);
  t.equal((await call('DELETE', `/api/v1/layouts/${made.id}`, undefined, { 'if-match': String(before.revision) })).status, 204);
  t.equal((await call('GET', `/api/v1/layouts/${made.id}`)).status, 404);
});

t.test('preview image: published when asked, and auto prefers the published revision to the draft', async (t) => {
  const { app, owner, call } = await setup(t);
  const made = (await call('POST', '/api/v1/layouts', { name: 'Colours', width: 1920, height: 1080, background: { color: '#ff0000' }, zones: [] })).body.data;
  const colourOf = async (query: string) => {
    const res = await app.fetch(`/api/v1/layouts/${made.id}/preview-image${query}`, { headers: owner.headers });
    t.equal(res.status, 200, query);
    const { data } = await sharp(Buffer.from(await res.arrayBuffer()))
      .raw()
      .toBuffer({ resolveWithObject: true });
    return [...data.subarray(0, 3)].join();
  };
  t.equal(await colourOf('?source=auto'), '255,0,0', 'unpublished: auto draws the draft');
  t.equal((await call('POST', `/api/v1/layouts/${made.id}/publish`, {})).status, 200);
  t.equal((await call('PUT', `/api/v1/layouts/${made.id}/draft`, { width: 1920, height: 1080, background: { color: '#0000ff' }, zones: [] })).status, 200);
  t.equal(await colourOf('?source=published'), '255,0,0', 'published: the published revision');
  t.equal(await colourOf('?source=draft'), '0,0,255', 'draft: the draft');
  t.equal(await colourOf(''), '255,0,0', 'auto: the published revision over the newer draft');
  const upload = await sharp({ create: { width: 64, height: 36, channels: 3, background: '#00ff00' } })
    .png()
    .toBuffer();
  t.equal(
    (await app.fetch(`/api/v1/layouts/${made.id}/preview-image`, { method: 'PUT', headers: { ...owner.headers, 'content-type': 'image/png' }, body: upload }))
      .status,
    200,
  );
  t.equal(await colourOf(''), '0,255,0', 'auto: an uploaded image first');
  t.equal(await colourOf('?source=published'), '255,0,0', 'published still draws the revision');
});
