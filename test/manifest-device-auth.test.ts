/**
 * The manifest route authenticates with the screen's context in one statement
 * (docs/performance.md "Manifest 304": `readsDeviceContextOnly`), the heartbeat and the liveness
 * ping, media and data downloads with the screen's id and state only (RouteDef `deviceIdOnly`), other device routes with the
 * credential and the screen's row in one statement. Both must answer exactly what the two
 * reads they replace did: the same statuses and envelopes for a wrong, unknown, revoked or
 * deleted credential and a disabled screen, the same context (zone, groups, display), the
 * same ETag, and the credential's last-used touch once a minute.
 */
import sharp from 'sharp';
import t from 'tap';
import { heartbeat } from './helpers/update-deployments.js';
import { signedInApp } from './helpers/auth.js';
import { pairScreen } from './helpers/screens.js';
import { settledAsset, uploadAsset } from './helpers/media.js';

const LOC = '0190f5a2-7b3c-7def-8abc-0000000000a1';

async function setup(t: Parameters<typeof signedInApp>[0]) {
  const { app, owner, call } = await signedInApp(t);
  const now = new Date().toISOString();
  await app.deps.db
    .insertInto('locations')
    .values({ id: LOC, name: 'Tokyo', address: null, time_zone: 'Asia/Tokyo', latitude: null, longitude: null, notes: null, created_at: now, updated_at: now })
    .execute();
  const b = (await call('POST', '/api/v1/screen-groups', { name: 'B group' })).body.data.id as string;
  const a = (await call('POST', '/api/v1/screen-groups', { name: 'A group' })).body.data.id as string;
  const { screenContext } = await import('../server/src/modules/content/screen-context.js');
  const { currentManifest } = await import('../server/src/modules/content/manifest.js');
  const { findScreen } = await import('../server/src/modules/screens/screens.repo.js');
  const { resolveDeviceCredential } = await import('../server/src/modules/screens/device-auth.js');
  return { app, owner, call, groups: [a, b], screenContext, currentManifest, findScreen, resolveDeviceCredential };
}

/** What a device route answered, without the request id. */
async function answer(res: Response) {
  const text = await res.text();
  const body = text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : null;
  return { status: res.status, code: body?.error?.code ?? null, message: body?.error?.message ?? null };
}

t.test('the manifest route and a heartbeat answer the same for every credential state', async (t) => {
  const { app, owner, call } = await setup(t);
  const screen = await pairScreen(app, owner, { name: 'Kiosk' });
  const manifest = (authorization: string) => app.fetch('/api/v1/player/manifest', { headers: { authorization } });
  const beat = (authorization: string) =>
    app.fetch('/api/v1/player/heartbeat', { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: '{}' });
  // The three ways of reading with the credential: the context (manifest), the screen's id only
  // (heartbeat, liveness: deviceIdOnly), the screen's row (config).
  const ping = (authorization: string) =>
    app.fetch('/api/v1/player/liveness', { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: '{}' });
  const config = (authorization: string) => app.fetch('/api/v1/player/config', { headers: { authorization } });
  // A media download (deviceIdOnly too, a template path): an image the screen's manifest lists.
  const image = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#ff0000' } })
    .png()
    .toBuffer();
  const asset = await settledAsset(app, owner, (await uploadAsset(app, owner, image, 'red.png')).id);
  const playlist = (await call('POST', '/api/v1/playlists', { name: 'Main', items: [{ assetId: asset.id }] })).body.data;
  t.equal((await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: playlist.id })).status, 200);
  const mediaUrl = (await app.json('/api/v1/player/manifest', { headers: screen.headers })).body.data.media[0].url as string;
  const download = (authorization: string) => app.fetch(mediaUrl, { headers: { authorization } });
  t.equal((await download(screen.headers.authorization)).status, 200, 'the media downloads');
  const both = async (authorization: string) => {
    const [m, h, p, c, d] = [
      await answer(await manifest(authorization)),
      await answer(await beat(authorization)),
      await answer(await ping(authorization)),
      await answer(await config(authorization)),
      await answer(await download(authorization)),
    ];
    t.same([p, c, d], [h, h, h], 'liveness, config and the media download answer as the heartbeat does');
    return [m, h];
  };
  const [publicId, secret] = screen.credential.slice('svc_device_'.length).split('.') as [string, string];

  const ok = await both(screen.headers.authorization);
  t.same(
    ok.map((a) => a.status),
    [200, 200],
    'a good credential',
  );
  t.equal((await app.fetch('/api/v1/player/config', { headers: screen.headers })).status, 200, 'the config too');
  const wrongSecret = `Bearer svc_device_${publicId}.${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
  for (const [what, authorization, status, code] of [
    ['a wrong secret', wrongSecret, 401, 'invalid_credential'],
    ['an unknown public id', `Bearer svc_device_unknown0000.${secret}`, 401, 'invalid_credential'],
    ['a malformed credential', 'Bearer svc_device_x', 401, 'invalid_credential'],
  ] as const) {
    const [m, h] = await both(authorization);
    t.same(m, h, `${what}: the same answer on both routes`);
    t.same([m!.status, m!.code], [status, code], what);
  }

  t.equal((await call('POST', `/api/v1/screens/${screen.screenId}/disable`)).status, 200);
  let [m, h] = await both(screen.headers.authorization);
  t.same(m, h, 'disabled: the same answer on both routes');
  t.same([m!.status, m!.code], [403, 'screen_disabled']);
  t.equal((await call('POST', `/api/v1/screens/${screen.screenId}/enable`)).status, 200);
  t.equal((await manifest(screen.headers.authorization)).status, 200, 'enabled again');

  // A credential revoked while its screen stays (the screen paired again elsewhere).
  await app.deps.db.updateTable('device_credentials').set({ revoked_at: new Date().toISOString() }).where('screen_id', '=', screen.screenId).execute();
  [m, h] = await both(screen.headers.authorization);
  t.same(m, h, 'credential revoked: the same answer on both routes');
  t.same([m!.status, m!.code], [401, 'credential_revoked']);
  await app.deps.db.updateTable('device_credentials').set({ revoked_at: null }).where('screen_id', '=', screen.screenId).execute();

  t.equal((await call('POST', `/api/v1/screens/${screen.screenId}/revoke`)).status, 200);
  [m, h] = await both(screen.headers.authorization);
  t.same(m, h, 'screen revoked: the same answer on both routes');
  t.same([m!.status, m!.code], [401, 'credential_revoked']);

  const other = await pairScreen(app, owner, { name: 'Gone' });
  t.equal((await call('DELETE', `/api/v1/screens/${other.screenId}`)).status, 204);
  [m, h] = await both(other.headers.authorization);
  t.same(m, h, 'screen deleted: the same answer on both routes');
  t.same([m!.status, m!.code], [401, 'invalid_credential']);
});

t.test('the context read with the credential is the screen context, and the ETag and 304 are unchanged', async (t) => {
  const { app, owner, groups, screenContext, currentManifest } = await setup(t);
  const screen = await pairScreen(app, owner, { name: 'Kiosk', locationId: LOC, groupIds: groups });
  await heartbeat(app, screen, { display: { width: 1280, height: 720 } });
  const auth = await import('../server/src/modules/screens/device-auth.js');
  const { context } = await auth.resolveDeviceContext(app.deps.db, screen.credential);
  const { contextOfRow } = await import('../server/src/modules/content/screen-context.js');
  const { inNetwork, ...fromAuth } = await contextOfRow(app.deps.db, context as typeof context & { id: string });
  const read = (await screenContext(app.deps.db, screen.screenId))!;
  t.same(fromAuth, read, 'the same context as screenContext reads');
  t.equal(inNetwork, false, 'and in no presentation network');
  t.equal(read.inNetwork, undefined, 'screenContext does not say');
  t.same(read.groupIds, [...groups].sort(), 'its groups, in order');
  t.equal(read.timeZone, 'Asia/Tokyo');
  t.same(read.display, { width: 1280, height: 720 }, 'the display its player reported');

  const first = await app.fetch('/api/v1/player/manifest', { headers: screen.headers });
  t.equal(first.status, 200);
  const etag = first.headers.get('etag')!;
  t.equal(etag, (await currentManifest(app.deps, read)).etag, 'the ETag of the manifest of the context screenContext reads');
  const again = await app.fetch('/api/v1/player/manifest', { headers: { ...screen.headers, 'if-none-match': etag } });
  t.equal(again.status, 304);
  t.equal(again.headers.get('etag'), etag);
  t.equal(again.headers.get('cache-control'), 'private, no-cache');
  t.equal(await again.text(), '', 'no body');
  const trailing = await app.fetch('/api/v1/player/manifest/', { headers: { ...screen.headers, 'if-none-match': etag } });
  t.equal(trailing.status, 304, 'a path the context-only declaration does not name reads the row, and answers the same');

  // A screen without a location runs in the default zone.
  const plain = await pairScreen(app, owner, { name: 'Plain' });
  const plainCtx = (await screenContext(app.deps.db, plain.screenId))!;
  const { context: plainRow } = await auth.resolveDeviceContext(app.deps.db, plain.credential);
  t.same(await contextOfRow(app.deps.db, plainRow as typeof plainRow & { id: string }), { ...plainCtx, inNetwork: false }, 'no location: the default zone');
  t.same(plainCtx.groupIds, []);
  t.equal(plainCtx.display, null, 'no display reported');
});

t.test('the credential row with its screen is the screen row findScreen reads', async (t) => {
  const { app, owner, findScreen, resolveDeviceCredential } = await setup(t);
  const screen = await pairScreen(app, owner, { name: 'Kiosk', locationId: LOC });
  await heartbeat(app, screen, { display: { width: 1920, height: 1080 } });
  const resolved = await resolveDeviceCredential(app.deps.db, screen.credential);
  const row = await findScreen(app.deps.db, screen.screenId);
  t.same(resolved.screen, row, 'every column');
  t.same(Object.keys(resolved.screen), Object.keys(row!), 'in the same order');
  const cred = await app.deps.db.selectFrom('device_credentials').select('id').where('screen_id', '=', screen.screenId).executeTakeFirstOrThrow();
  t.equal(resolved.credentialId, cred.id);
});

t.test('a manifest request touches the credential’s last use once a minute, like every device request', async (t) => {
  const { app, owner } = await setup(t);
  const screen = await pairScreen(app, owner, { name: 'Kiosk' });
  const lastUsed = async () =>
    (await app.deps.db.selectFrom('device_credentials').select('last_used_at').where('screen_id', '=', screen.screenId).executeTakeFirstOrThrow()).last_used_at;
  const old = new Date(Date.now() - 5 * 60_000).toISOString();
  await app.deps.db.updateTable('device_credentials').set({ last_used_at: old }).where('screen_id', '=', screen.screenId).execute();
  t.equal((await app.fetch('/api/v1/player/manifest', { headers: screen.headers })).status, 200);
  const touched = await lastUsed();
  t.ok(touched && touched > old, 'touched: it was five minutes old');
  const recent = new Date(Date.now() - 10_000).toISOString();
  await app.deps.db.updateTable('device_credentials').set({ last_used_at: recent }).where('screen_id', '=', screen.screenId).execute();
  t.equal((await app.fetch('/api/v1/player/manifest', { headers: screen.headers })).status, 200);
  t.equal(await lastUsed(), recent, 'not touched again within the minute');
  await app.deps.db.updateTable('device_credentials').set({ last_used_at: null }).where('screen_id', '=', screen.screenId).execute();
  t.equal((await app.fetch('/api/v1/player/manifest', { headers: screen.headers })).status, 200);
  t.ok(await lastUsed(), 'never used: touched');
});

t.test('a screen in a presentation network is known to be in one: its manifest carries the network', async (t) => {
  const { app, owner, call } = await setup(t);
  const a = await pairScreen(app, owner, { name: 'A' });
  const b = await pairScreen(app, owner, { name: 'B' });
  const auth = await import('../server/src/modules/screens/device-auth.js');
  const { contextOfRow } = await import('../server/src/modules/content/screen-context.js');
  const { manifestNetworkOf } = await import('../server/src/modules/content/manifest-network.js');
  const contextOf = async (s: typeof a) => {
    const { context } = await auth.resolveDeviceContext(app.deps.db, s.credential);
    return contextOfRow(app.deps.db, context as typeof context & { id: string });
  };
  t.equal((await contextOf(a)).inNetwork, false);
  t.equal(await manifestNetworkOf(app.deps, await contextOf(a)), null, 'in none: no network');
  const made = await call('POST', '/api/v1/presentation-networks', { name: 'Row', screenIds: [a.screenId, b.screenId] });
  t.equal(made.status, 201);
  const ctx = await contextOf(a);
  t.equal(ctx.inNetwork, true, 'a member');
  t.equal((await manifestNetworkOf(app.deps, ctx))?.id, made.body.data.id, 'the provider answers its network');
  t.same(await manifestNetworkOf(app.deps, ctx), await manifestNetworkOf(app.deps, a.screenId), 'as it does by id');
  const res = await app.json('/api/v1/player/manifest', { headers: a.headers });
  t.equal(res.status, 200);
  t.equal(res.body.data.presentationNetwork?.id, made.body.data.id, 'the manifest carries the network');
  t.equal(res.body.data.presentationNetwork?.memberCount, 2);
});
