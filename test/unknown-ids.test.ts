import t, { type Test } from 'tap';
import { signedInApp } from './helpers/auth.js';
import { pairScreen } from './helpers/screens.js';

/**
 * One rule for ids that name nothing (issue 15; docs/api-conventions.md, "Unknown ids"): an
 * id in the path is the resource asked for, so an unknown one is 404 `not_found`; an id
 * inside the body is part of the client's input, so an unknown one is 400
 * `validation_failed` with an issue per field (`code: 'invalid_reference'`, `path` down to
 * the field, list positions included). The screens module answered 404 for these and the
 * content module 400; every module is walked here.
 */

const NOPE = '0190f5a2-7b3c-7def-8abc-0123456789ab';
const NOPE2 = '0190f5a2-7b3c-7def-8abc-0000000000ee';

const setup = (t: Test) => signedInApp(t);

/** 400 validation_failed whose issues are exactly `paths` (location body, code invalid_reference). */
function refused(t: Test, res: { status: number; body: any }, paths: (string | number)[][], label: string) {
  t.equal(res.status, 400, `${label}: 400`);
  t.equal(res.body?.error?.code, 'validation_failed', `${label}: validation_failed`);
  const issues = res.body?.error?.details?.issues ?? [];
  t.same(
    issues.map((i: any) => i.path),
    paths,
    `${label}: names ${paths.map((p) => p.join('.')).join(', ')}`,
  );
  for (const i of issues) t.match(i, { location: 'body', code: 'invalid_reference', message: String }, `${label}: issue shape`);
}

t.test('screens module: groups, screens, pairing, spans', async (t) => {
  const { app, owner, call } = await setup(t);
  const screen = await pairScreen(app, owner);

  refused(t, await call('POST', '/api/v1/screen-groups', { name: 'G', screenIds: [screen.screenId, NOPE] }), [['screenIds', 1]], 'create a group');
  t.equal((await call('GET', '/api/v1/screen-groups')).body.data.items.length, 0, 'nothing made');
  const group = (await call('POST', '/api/v1/screen-groups', { name: 'G', screenIds: [screen.screenId] })).body.data;
  refused(
    t,
    await call('POST', `/api/v1/screen-groups/${group.id}/screens`, { screenIds: [NOPE, screen.screenId, NOPE2] }),
    [
      ['screenIds', 0],
      ['screenIds', 2],
    ],
    'add members',
  );
  t.match(
    await call('POST', `/api/v1/screen-groups/${NOPE}/screens`, { screenIds: [screen.screenId] }),
    { status: 404, body: { error: { code: 'not_found' } } },
    'the path id stays 404',
  );

  refused(t, await call('PATCH', `/api/v1/screens/${screen.screenId}`, { locationId: NOPE }), [['locationId']], 'move a screen');
  t.equal((await call('PATCH', `/api/v1/screens/${NOPE}`, { name: 'x' })).status, 404, 'an unknown screen in the path is 404');

  refused(
    t,
    await call('PUT', `/api/v1/screen-groups/${group.id}/span`, {
      rows: 1,
      columns: 1,
      panel: { widthPx: 1920, heightPx: 1080 },
      cells: [{ screenId: NOPE, row: 0, column: 0 }],
    }),
    [['cells', 0, 'screenId']],
    'span',
  );

  const session = (await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: {} })).body.data;
  refused(
    t,
    await call('POST', `/api/v1/screens/pairing/${session.id}/approve`, { name: 'x', locationId: NOPE, groupIds: [group.id, NOPE2], screenId: NOPE }),
    [['locationId'], ['groupIds', 1], ['screenId']],
    'approve a pairing',
  );
  t.equal(
    (await call('POST', `/api/v1/screens/pairing/${session.id}/approve`, { name: 'ok', groupIds: [group.id] })).status,
    200,
    'the session is still pending',
  );
  t.equal((await call('POST', `/api/v1/screens/pairing/${NOPE}/approve`, { name: 'x' })).status, 404, 'an unknown session in the path is 404');
});

t.test('media module: folders (parentId is named parentId), bulk organisation, archive, assets, uploads', async (t) => {
  const { call } = await setup(t);
  refused(t, await call('POST', '/api/v1/content-folders', { name: 'F', parentId: NOPE }), [['parentId']], 'make a folder in an unknown parent');
  const folder = (await call('POST', '/api/v1/content-folders', { name: 'F' })).body.data;
  const moved = await call('PATCH', `/api/v1/content-folders/${folder.id}`, { parentId: NOPE });
  refused(t, moved, [['parentId']], 'move a folder into an unknown parent');
  t.match(moved.body.error.message, /parentId/, 'the message says parentId, not folderId');
  t.equal((await call('PATCH', `/api/v1/content-folders/${NOPE}`, { name: 'x' })).status, 404, 'an unknown folder in the path is 404');

  const site = (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data;
  const bulk = await call('POST', '/api/v1/assets/bulk-organize', { assetIds: [site.id, NOPE], addTags: ['x'] });
  refused(t, bulk, [['assetIds', 1]], 'bulk-organize an unknown asset');
  t.same(bulk.body.error.details.missing, [NOPE], 'details.missing lists them');
  refused(
    t,
    await call('POST', '/api/v1/assets/bulk-organize', { assetIds: [site.id], moveTo: { folderId: NOPE } }),
    [['moveTo', 'folderId']],
    'move into an unknown folder',
  );
  refused(
    t,
    await call('POST', '/api/v1/assets/bulk-organize', { assetIds: [site.id], addToCollections: [NOPE2] }),
    [['addToCollections', 0]],
    'add to an unknown collection',
  );
  refused(t, await call('POST', '/api/v1/assets/archive', { ids: [NOPE] }), [['ids', 0]], 'archive an unknown asset');
  refused(t, await call('POST', '/api/v1/assets/restore', { ids: [site.id, NOPE] }), [['ids', 1]], 'restore an unknown asset');
  refused(t, await call('PATCH', `/api/v1/assets/${site.id}`, { folderId: NOPE }), [['folderId']], 'file an asset in an unknown folder');
  t.same((await call('GET', `/api/v1/assets/${site.id}`)).body.data.tags, [], 'nothing changed');
});

t.test('content module: schedules, previews, playlists, assignments, layouts', async (t) => {
  const { app, owner, call } = await setup(t);
  const screen = await pairScreen(app, owner);
  const playlist = (await call('POST', '/api/v1/playlists', { name: 'P' })).body.data;
  const schedule = {
    name: 'S',
    content: { playlistId: playlist.id },
    targets: { screenIds: [screen.screenId, NOPE], groupIds: [NOPE2] },
    startsAt: '2026-06-01T09:00:00Z',
    endsAt: '2026-06-01T17:00:00Z',
  };
  refused(
    t,
    await call('POST', '/api/v1/schedules', schedule),
    [
      ['targets', 'screenIds', 1],
      ['targets', 'groupIds', 0],
    ],
    'schedule unknown targets',
  );
  refused(
    t,
    await call('POST', '/api/v1/schedules', { ...schedule, content: { playlistId: NOPE } }),
    [['content', 'playlistId']],
    'schedule an unknown playlist',
  );
  refused(t, await call('POST', '/api/v1/schedules', { ...schedule, content: { layoutId: NOPE } }), [['content', 'layoutId']], 'schedule an unknown layout');
  const window = { from: '2026-06-01T00:00:00Z', to: '2026-06-02T00:00:00Z' };
  refused(t, await call('POST', '/api/v1/schedules/preview', { screenId: NOPE, ...window }), [['screenId']], 'preview an unknown screen');
  refused(t, await call('POST', '/api/v1/schedules/preview', { groupId: NOPE, ...window }), [['groupId']], 'preview an unknown group');

  refused(t, await call('POST', `/api/v1/playlists/${playlist.id}/items`, { assetId: NOPE }), [['assetId']], 'an item of an unknown asset');
  refused(t, await call('POST', `/api/v1/playlists/${playlist.id}/items`, { playlistId: NOPE }), [['playlistId']], 'an item of an unknown playlist');
  refused(t, await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: NOPE }), [['playlistId']], 'assign an unknown playlist');
  t.equal((await call('PUT', `/api/v1/screens/${NOPE}/playlist-assignment`, { playlistId: playlist.id })).status, 404, 'to an unknown screen (path): 404');

  const zone = (i: number, content: unknown) => ({ id: `z${i}`, name: `Z${i}`, x: 0, y: 0, width: 10, height: 10, content });
  refused(
    t,
    await call('POST', '/api/v1/layouts', {
      name: 'L',
      background: { color: '#000000', assetId: NOPE },
      zones: [
        zone(0, { type: 'playlist', playlistId: playlist.id }),
        zone(1, { type: 'playlist', playlistId: NOPE }),
        zone(2, { type: 'asset', assetId: NOPE2 }),
      ],
    }),
    [
      ['background', 'assetId'],
      ['zones', 1, 'content', 'playlistId'],
      ['zones', 2, 'content', 'assetId'],
    ],
    'a layout naming what does not exist',
  );
});
