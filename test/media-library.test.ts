import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { addAssetChangeHook, addAssetUsageFinder, type AssetChangeEvent } from '../server/src/modules/media/hooks.js';
import { getAsset, listVariants } from '../server/src/modules/media/media.repo.js';
import { MediaService, mediaServiceOf } from '../server/src/modules/media/service.js';
import { realStoreIo } from '../server/src/platform/media/store.js';
import { JobQueue } from '../server/src/platform/jobs/queue.js';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { settledAsset, sha256, tusUpload, uploadAsset } from './helpers/media.js';
import { pairScreen } from './helpers/screens.js';

const png = (color: string, w = 64, h = 48) =>
  sharp({ create: { width: w, height: h, channels: 3, background: color } })
    .png()
    .toBuffer();

t.test('folders, collections, tags, list filters and bulk organize', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const h = owner.headers;

  const lobby = await app.json('/api/v1/content-folders', { method: 'POST', headers: h, json: { name: 'Lobby' } });
  t.equal(lobby.status, 201);
  const winter = await app.json('/api/v1/content-folders', { method: 'POST', headers: h, json: { name: 'Winter', parentId: lobby.body.data.id } });
  t.equal(winter.status, 201);
  t.same(winter.body.data.path, ['Lobby']);
  const dup = await app.json('/api/v1/content-folders', { method: 'POST', headers: h, json: { name: 'lobby' } });
  t.equal(dup.status, 409, 'names are unique per parent, case-insensitively');
  const orphan = await app.json('/api/v1/content-folders', {
    method: 'POST',
    headers: h,
    json: { name: 'X', parentId: '0190f5a2-7b3c-7def-8abc-0123456789ab' },
  });
  t.equal(orphan.status, 400);
  const cycle = await app.json(`/api/v1/content-folders/${lobby.body.data.id}`, { method: 'PATCH', headers: h, json: { parentId: winter.body.data.id } });
  t.equal(cycle.status, 409, 'a folder cannot move into its own subfolder');
  const renamed = await app.json(`/api/v1/content-folders/${winter.body.data.id}`, {
    method: 'PATCH',
    headers: h,
    json: { name: 'Winter 2026', parentId: null },
  });
  t.equal(renamed.status, 200);
  t.same([renamed.body.data.name, renamed.body.data.parentId], ['Winter 2026', null]);

  const a = await settledAsset(
    app,
    owner,
    (await uploadAsset(app, owner, await png('#f00'), 'red sale.png', { folderId: lobby.body.data.id, tags: ['sale'] })).id,
  );
  const b = await settledAsset(app, owner, (await uploadAsset(app, owner, await png('#0f0'), 'green.png')).id);
  const c = await settledAsset(app, owner, (await uploadAsset(app, owner, await png('#00f'), 'blue SALE.png')).id);
  t.equal(a.folderId, lobby.body.data.id);

  const byFolder = await app.json(`/api/v1/assets?folderId=${lobby.body.data.id}`, { headers: h });
  t.same(
    byFolder.body.data.items.map((x: any) => x.id),
    [a.id],
  );
  const root = await app.json('/api/v1/assets?folderId=none', { headers: h });
  t.same(root.body.data.items.map((x: any) => x.id).sort(), [b.id, c.id].sort());
  const search = await app.json('/api/v1/assets?q=sale', { headers: h });
  t.same(search.body.data.items.map((x: any) => x.id).sort(), [a.id, c.id].sort(), 'text search, case-insensitive');
  const odd = await app.json('/api/v1/assets?q=%25', { headers: h });
  t.same(odd.body.data.items, [], 'a % is a literal, not a wildcard');
  const paged = await app.json('/api/v1/assets?limit=2', { headers: h });
  t.equal(paged.body.data.items.length, 2);
  t.ok(paged.body.data.nextCursor);
  const next = await app.json(`/api/v1/assets?limit=2&cursor=${paged.body.data.nextCursor}`, { headers: h });
  t.equal(next.body.data.items.length, 1);
  t.equal(next.body.data.nextCursor, null);
  t.same(
    [...paged.body.data.items, ...next.body.data.items].map((x: any) => x.id),
    [c.id, b.id, a.id],
    'newest first, no overlap',
  );

  const col = await app.json('/api/v1/content-collections', { method: 'POST', headers: h, json: { name: 'Spring campaign' } });
  t.equal(col.status, 201);
  const bulk = await app.json('/api/v1/assets/bulk-organize', {
    method: 'POST',
    headers: h,
    json: { assetIds: [b.id, c.id], moveTo: { folderId: winter.body.data.id }, addTags: ['Sale', 'spring'], addToCollections: [col.body.data.id] },
  });
  t.equal(bulk.status, 200);
  for (const x of bulk.body.data.items) {
    t.equal(x.folderId, winter.body.data.id);
    t.same(x.tags, ['sale', 'spring'], 'the existing tag "sale" is reused, case-insensitively');
    t.same(x.collectionIds, [col.body.data.id]);
  }
  const byTag = await app.json('/api/v1/assets?tag=SALE', { headers: h });
  t.equal(byTag.body.data.items.length, 3);
  const byCol = await app.json(`/api/v1/assets?collectionId=${col.body.data.id}`, { headers: h });
  t.same(byCol.body.data.items.map((x: any) => x.id).sort(), [b.id, c.id].sort());

  // All or nothing: one unknown asset, nothing changes.
  const partial = await app.json('/api/v1/assets/bulk-organize', {
    method: 'POST',
    headers: h,
    json: { assetIds: [a.id, '0190f5a2-7b3c-7def-8abc-0123456789ab'], removeTags: ['sale'] },
  });
  t.match(partial, { status: 400, body: { error: { code: 'validation_failed', details: { missing: ['0190f5a2-7b3c-7def-8abc-0123456789ab'] } } } });
  t.same((await app.json(`/api/v1/assets/${a.id}`, { headers: h })).body.data.tags, ['sale']);
  const badCol = await app.json('/api/v1/assets/bulk-organize', {
    method: 'POST',
    headers: h,
    json: { assetIds: [a.id], addTags: ['x'], addToCollections: ['0190f5a2-7b3c-7def-8abc-0123456789ab'] },
  });
  t.equal(badCol.status, 400);
  t.same((await app.json(`/api/v1/assets/${a.id}`, { headers: h })).body.data.tags, ['sale'], 'the tag of the failed request was rolled back');
  const nothing = await app.json('/api/v1/assets/bulk-organize', { method: 'POST', headers: h, json: { assetIds: [a.id] } });
  t.equal(nothing.status, 400);

  const untag = await app.json('/api/v1/assets/bulk-organize', {
    method: 'POST',
    headers: h,
    json: { assetIds: [a.id, b.id], removeTags: ['SALE'], removeFromCollections: [col.body.data.id] },
  });
  t.same(untag.body.data.items.map((x: any) => x.tags).sort(), [[], ['spring']]);

  const tags = await app.json('/api/v1/content-tags', { headers: h });
  t.same(
    tags.body.data.items.map((x: any) => [x.name, x.assetCount]),
    [
      ['sale', 1],
      ['spring', 2],
    ],
  );
  const newTag = await app.json('/api/v1/content-tags', { method: 'POST', headers: h, json: { name: 'Menu', color: '#ff8800' } });
  t.equal(newTag.status, 201);
  t.equal((await app.json('/api/v1/content-tags', { method: 'POST', headers: h, json: { name: 'menu' } })).status, 409);
  const folders = await app.json('/api/v1/content-folders', { headers: h });
  t.same(
    folders.body.data.items.map((f: any) => [f.name, f.assetCount]),
    [
      ['Lobby', 1],
      ['Winter 2026', 2],
    ],
  );
  const cols = await app.json('/api/v1/content-collections', { headers: h });
  t.same(
    cols.body.data.items.map((f: any) => [f.name, f.assetCount]),
    [['Spring campaign', 1]],
  );

  const patched = await app.json(`/api/v1/assets/${a.id}`, { method: 'PATCH', headers: h, json: { name: 'Red', folderId: null, tags: ['x', 'y'] } });
  t.equal(patched.status, 200);
  t.same([patched.body.data.name, patched.body.data.folderId, patched.body.data.tags], ['Red', null, ['x', 'y']]);
  const notEmpty = await app.json(`/api/v1/content-folders/${winter.body.data.id}`, { method: 'DELETE', headers: h });
  t.equal(notEmpty.status, 409);
  t.equal((await app.fetch(`/api/v1/content-folders/${lobby.body.data.id}`, { method: 'DELETE', headers: h })).status, 204);

  const viewer = await signIn(app, { role: 'viewer' });
  t.equal((await app.json('/api/v1/assets', { headers: viewer.headers })).status, 200);
  t.equal((await app.json('/api/v1/content-folders', { method: 'POST', headers: viewer.headers, json: { name: 'Nope' } })).status, 403);
});

t.test('archive, restore, delete: usage conflicts, forced deletes, shared files, change hooks', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const events: AssetChangeEvent[] = [];
  const hook = (_deps: unknown, e: AssetChangeEvent) => void events.push(e);
  addAssetChangeHook(app.deps, hook);

  const bytes = await png('#123456');
  const one = await settledAsset(app, owner, (await uploadAsset(app, owner, bytes, 'one.png')).id);
  const two = await settledAsset(app, owner, (await uploadAsset(app, owner, bytes, 'two.png')).id);
  t.equal(one.sha256, two.sha256, 'same bytes, same stored file');
  t.ok(
    events.some((e) => e.change === 'ready' && e.assetIds.includes(one.id)),
    'ready fired',
  );

  const archived = await app.json('/api/v1/assets/archive', { method: 'POST', headers: editor.headers, json: { ids: [one.id] } });
  t.equal(archived.status, 200);
  t.equal(archived.body.data.items[0].state, 'archived');
  t.ok(archived.body.data.items[0].archivedAt);
  t.ok(events.some((e) => e.change === 'archived'));
  const listed = await app.json('/api/v1/assets', { headers: owner.headers });
  t.same(
    listed.body.data.items.map((x: any) => x.id),
    [two.id],
    'archived assets are hidden by default',
  );
  const only = await app.json('/api/v1/assets?archived=only', { headers: owner.headers });
  t.same(
    only.body.data.items.map((x: any) => x.id),
    [one.id],
  );
  t.equal((await app.json('/api/v1/assets?archived=include', { headers: owner.headers })).body.data.items.length, 2);
  const missing = await app.json('/api/v1/assets/archive', {
    method: 'POST',
    headers: owner.headers,
    json: { ids: [two.id, '0190f5a2-7b3c-7def-8abc-0123456789ab'] },
  });
  t.match(missing, { status: 400, body: { error: { code: 'validation_failed', details: { issues: [{ path: ['ids', 1] }] } } } });
  t.equal((await getAsset(app.deps.db, two.id))!.state, 'ready', 'nothing archived when one id is unknown');
  const restored = await app.json('/api/v1/assets/restore', { method: 'POST', headers: owner.headers, json: { ids: [one.id] } });
  t.equal(restored.body.data.items[0].state, 'ready', 'back to the state it had');
  t.ok(events.some((e) => e.change === 'restored'));

  // A playlist uses `one`: delete is refused with where, unless an admin forces it.
  const finder = async (_db: unknown, ids: readonly string[]) =>
    ids.includes(one.id) ? [{ assetId: one.id, type: 'playlist', id: 'p1', name: 'Lobby loop' }] : [];
  // Registered in this app only (deps.scope): no other test's app sees it.
  addAssetUsageFinder(app.deps, finder);
  const refused = await app.json(`/api/v1/assets/${one.id}`, { method: 'DELETE', headers: editor.headers });
  t.equal(refused.status, 409);
  t.same(refused.body.error.details.usages, [{ assetId: one.id, type: 'playlist', id: 'p1', name: 'Lobby loop' }]);
  const editorForce = await app.json(`/api/v1/assets/${one.id}?force=true`, { method: 'DELETE', headers: editor.headers });
  t.equal(editorForce.status, 403, 'editors cannot force');
  const variants = await listVariants(app.deps.db, one.id);
  const forced = await app.fetch(`/api/v1/assets/${one.id}?force=true`, { method: 'DELETE', headers: owner.headers });
  t.equal(forced.status, 204);
  t.equal(await getAsset(app.deps.db, one.id), undefined);
  t.ok(events.some((e) => e.change === 'deleted' && e.assetIds.includes(one.id)));
  const file = (sha: string) => path.join(app.dataDir, 'media', sha.slice(0, 2), sha.slice(2, 4), sha);
  t.ok(fs.existsSync(file(two.sha256)), 'the shared original stays while `two` uses it');
  t.ok(
    variants.every((v) => fs.existsSync(file(v.sha256))),
    'identical variants are shared too',
  );

  const gone = await app.fetch(`/api/v1/assets/${two.id}`, { method: 'DELETE', headers: editor.headers });
  t.equal(gone.status, 204);
  t.notOk(fs.existsSync(file(two.sha256)), 'the last reference gone: the file is deleted');
  t.ok(
    variants.every((v) => !fs.existsSync(file(v.sha256))),
    'and its variants',
  );
  t.equal((await app.deps.db.selectFrom('media_files').select('sha256').execute()).length, 0);
  t.equal((await app.fetch(`/api/v1/assets/${two.id}`, { method: 'DELETE', headers: owner.headers })).status, 404);
});

t.test('player download route: device credential, the manifest guard, Range, ETag', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const screen = await pairScreen(app, owner);
  const asset = await settledAsset(app, owner, (await uploadAsset(app, owner, await png('#abcdef', 2500, 100), 'strip.png')).id);
  const v = asset.variants.find((x: any) => x.purpose === 'player' && x.contentType === 'image/webp' && x.width === 1920);
  const url = `/api/v1/player/assets/${asset.id}/variants/${v.id}`;
  t.equal((await app.fetch(url, { headers: screen.headers })).status, 404, "not in the screen's manifest: not served");

  // Put the asset on the screen: a playlist assigned to it (the content module's guard).
  const call = (method: string, p: string, json?: unknown) => app.json(p, { method, headers: owner.headers, ...(json ? { json } : {}) });
  const playlist = (await call('POST', '/api/v1/playlists', { name: 'Lobby' })).body.data;
  t.equal((await call('POST', `/api/v1/playlists/${playlist.id}/items`, { assetId: asset.id })).status, 201);
  t.equal((await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: playlist.id })).status, 200);

  const res = await app.fetch(url, { headers: screen.headers });
  t.equal(res.status, 200);
  const body = Buffer.from(await res.arrayBuffer());
  t.equal(sha256(body), v.sha256, 'the bytes hash to the variant sha256');
  t.equal(body.length, v.sizeBytes);
  t.equal(res.headers.get('etag'), `"${v.sha256}"`);
  t.match(res.headers.get('cache-control'), /immutable/);
  const head = await app.fetch(url, { method: 'HEAD', headers: screen.headers });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-length'), String(v.sizeBytes));
  const part = await app.fetch(url, { headers: { ...screen.headers, range: 'bytes=5-' } });
  t.equal(part.status, 206);
  t.same(Buffer.from(await part.arrayBuffer()), body.subarray(5));
  t.equal((await app.fetch(url, { headers: { ...screen.headers, 'if-none-match': `"${v.sha256}"` } })).status, 304);

  t.equal((await app.fetch(url, { headers: owner.headers })).status, 401, 'a console session is not a device');
  t.equal((await app.fetch(url)).status, 401);
  const other = await settledAsset(app, owner, (await uploadAsset(app, owner, await png('#000'), 'other.png')).id);
  t.equal((await app.fetch(`/api/v1/player/assets/${other.id}/variants/${v.id}`, { headers: screen.headers })).status, 404, 'a variant of another asset');
  const ov = other.variants.find((x: any) => x.purpose === 'player');
  t.equal(
    (await app.fetch(`/api/v1/player/assets/${other.id}/variants/${ov.id}`, { headers: screen.headers })).status,
    404,
    'an asset the screen does not show',
  );

  // The deleting-in-use path with the content module's real usage finder.
  const inUse = await call('DELETE', `/api/v1/assets/${asset.id}`);
  t.equal(inUse.status, 409);
  t.same(
    inUse.body.error.details.usages.map((u: any) => [u.type, u.id]),
    [['playlist', playlist.id]],
  );

  await call('POST', '/api/v1/assets/archive', { ids: [asset.id] });
  t.equal((await app.fetch(url, { headers: screen.headers })).status, 404, 'archived assets are not served to players');
});

t.test('the store sweep removes files no row references (a crash between store and commit)', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const kept = await settledAsset(app, owner, (await uploadAsset(app, owner, await png('#0a0'), 'kept.png')).id);
  const media = new MediaService(app.deps, new JobQueue(app.deps.db, app.deps.logger, { concurrency: 1 }));
  const stray = await media.store.put(Buffer.from('left behind by a crash'));
  const file = media.store.pathOf(stray.sha256);
  t.equal(await media.sweepStore(), 0, 'young strays are left alone (a job may be about to commit)');
  t.ok(fs.existsSync(file));
  t.equal(await media.sweepStore(0), 1);
  t.notOk(fs.existsSync(file));
  t.ok(fs.existsSync(media.store.pathOf(kept.sha256)), 'referenced files stay');
});

t.test('asset list: kind and state filters', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const h = owner.headers;
  const image = await settledAsset(app, owner, (await uploadAsset(app, owner, await png('#c00'), 'image.png')).id);
  const broken = await settledAsset(app, owner, (await uploadAsset(app, owner, (await png('#0c0')).subarray(0, 60), 'broken.png')).id);
  t.equal(broken.state, 'failed');
  const site = (await app.json('/api/v1/assets/websites', { method: 'POST', headers: h, json: { url: 'https://example.test/board' } })).body.data;
  const shelved = await settledAsset(app, owner, (await uploadAsset(app, owner, await png('#00c'), 'shelved.png')).id);
  t.equal((await app.json('/api/v1/assets/archive', { method: 'POST', headers: h, json: { ids: [shelved.id] } })).status, 200);
  const ids = async (query: string) => {
    const res = await app.json(`/api/v1/assets?${query}`, { headers: h });
    t.equal(res.status, 200, query);
    return res.body.data.items.map((x: any) => x.id).sort();
  };
  t.same(await ids('kind=website'), [site.id]);
  t.same(await ids('kind=image'), [image.id, broken.id].sort(), 'images, archived ones hidden');
  t.same(await ids('kind=image&archived=include'), [image.id, broken.id, shelved.id].sort());
  t.same(await ids('kind=video'), []);
  t.same(await ids('state=failed'), [broken.id]);
  t.same(await ids('state=ready'), [image.id, site.id].sort());
  t.same(await ids('state=archived'), [shelved.id], 'the archived state names them');
  t.same(await ids('kind=image&state=ready'), [image.id], 'filters combine');
  t.same(await ids('kind=website&state=failed'), []);
  for (const bad of ['kind=movie', 'state=done', 'kind=', 'state=READY']) {
    const res = await app.json(`/api/v1/assets?${bad}`, { headers: h });
    t.equal(res.status, 400, `${bad}: refused`);
    t.equal(res.body.error.code, 'validation_failed');
  }
});

t.test('removing orphans never takes a file an upload is adopting (stored, row not committed yet)', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const media = mediaServiceOf(app.deps)!;
  const bytes = await png('#123456', 80, 60);
  const sha = sha256(bytes);
  // Hold complete between putting the file in the store and committing its row.
  let linked!: () => void;
  const inStore = new Promise<void>((r) => (linked = r));
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  media.store.io = {
    ...realStoreIo(),
    async link(a, b) {
      await fs.promises.link(a, b);
      linked();
      await gate;
    },
  };
  const id = await tusUpload(app, owner, bytes, { filename: 'adopted.png' });
  const completing = app.json(`/api/v1/uploads/${id}/complete`, { method: 'POST', headers: owner.headers, json: {} });
  await inStore;
  t.ok(fs.existsSync(media.store.pathOf(sha)), 'the file is in the store, no row references it yet');
  // Meanwhile something deletes another asset with those bytes and removes what it left orphaned.
  let removed = false;
  const removing = media.removeOrphans([sha]).then(() => (removed = true));
  await new Promise((r) => setTimeout(r, 150));
  t.notOk(removed, 'the removal waits for the adoption');
  open();
  await removing;
  const res = await completing;
  t.equal(res.status, 201);
  t.ok(fs.existsSync(media.store.pathOf(sha)), 'the file stays: the asset committed meanwhile references it');
  t.equal((await settledAsset(app, owner, res.body.data.id)).state, 'ready');
  // Once nothing references it, it does go.
  t.equal((await app.fetch(`/api/v1/assets/${res.body.data.id}`, { method: 'DELETE', headers: owner.headers })).status, 204);
  t.notOk(fs.existsSync(media.store.pathOf(sha)));
});
