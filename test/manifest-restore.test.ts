import t from 'tap';
import { signedInApp } from './helpers/auth.js';
import { pairScreen } from './helpers/screens.js';

/**
 * A restore replaces the database under the manifest caches (the per-screen cache, the
 * builds shared by a context, the recorded dependency sets). What could fail: a screen served
 * the manifest built from the data the restore threw away, because its restored revision
 * misses the per-screen cache and the shared build of the same context and change count is
 * still there.
 */
t.test('after a restore, screens get manifests of the restored data', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const site = (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id as string;
  const group = (await call('POST', '/api/v1/screen-groups', { name: 'Floor' })).body.data.id as string;
  const playlist = (await call('POST', '/api/v1/playlists', { name: 'Floor', items: [{ assetId: site, durationMs: 7000 }] })).body.data;
  t.equal((await call('PUT', `/api/v1/screen-groups/${group}/playlist-assignment`, { playlistId: playlist.id })).status, 200);
  const a = await pairScreen(app, owner, { name: 'A', groupIds: [group] });
  const b = await pairScreen(app, owner, { name: 'B', groupIds: [group] });
  const duration = async (s: { headers: Record<string, string> }) => {
    const res = await app.json('/api/v1/player/manifest', { headers: s.headers });
    t.equal(res.status, 200);
    return res.body.data.timeline[0].playlist.items[0].durationMs as number;
  };
  t.equal(await duration(a), 7000);

  const backup = await call('POST', '/api/v1/system/maintenance/backup', { wait: true, options: {} });
  t.equal(backup.body.data.state, 'succeeded', JSON.stringify(backup.body));
  const name = backup.body.data.result.backup.name as string;

  // After the backup: the item plays 9 s, both screens fetch it (one shared build).
  const items = (await call('GET', `/api/v1/playlists/${playlist.id}`)).body.data.items;
  t.equal((await call('PATCH', `/api/v1/playlists/${playlist.id}/items/${items[0].id}`, { durationMs: 9000 })).status, 200);
  t.equal(await duration(a), 9000);
  t.equal(await duration(b), 9000);

  const started = await call('POST', '/api/v1/system/maintenance/restore', { options: { backup: name } });
  t.equal(started.status, 202, JSON.stringify(started.body));
  let run = started.body.data;
  while (run.state === 'running') {
    await new Promise((r) => setTimeout(r, 10));
    const res = await call('GET', `/api/v1/system/maintenance/runs/${run.id}`);
    if (res.status === 200) run = res.body.data;
  }
  t.equal(run.state, 'succeeded', JSON.stringify(run.error));

  t.equal(await duration(b), 7000, 'B gets the restored playlist, not the build made before the restore');
  t.equal(await duration(a), 7000, 'A too');
});
