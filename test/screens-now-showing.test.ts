import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { settledAsset, uploadAsset } from './helpers/media.js';
import { samplePng } from './helpers/sample-media.js';
import { pairScreen } from './helpers/screens.js';

t.test('nowShowing: planned from assignments and schedules, reported from the heartbeat with names, planned again when offline', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const call = async (method: string, url: string, json?: unknown) =>
    app.json(url, { method, headers: owner.headers, ...(json === undefined ? {} : { json }) });
  const showing = async (screenId: string) => {
    const list = await call('GET', '/api/v1/screens');
    t.equal(list.status, 200);
    const one = await call('GET', `/api/v1/screens/${screenId}`);
    t.same(list.body.data.items.find((s: any) => s.id === screenId).nowShowing, one.body.data.nowShowing, 'the list and the screen agree');
    return one.body.data.nowShowing;
  };

  const group = await call('POST', '/api/v1/screen-groups', { name: 'Foyer' });
  t.equal(group.status, 201);
  const groupId = group.body.data.id;
  const screen = await pairScreen(app, owner, { name: 'Foyer left', groupIds: [groupId] });
  const beat = (json: unknown) => app.json('/api/v1/player/heartbeat', { method: 'POST', headers: screen.headers, json });
  t.equal(await showing(screen.screenId), null, 'nothing reported, nothing planned: null');

  // Each playlist has something to play (one with nothing playable is passed over: docs/content.md).
  const site = (await call('POST', '/api/v1/assets/websites', { url: 'https://example.org/' })).body.data.id as string;
  const playlist = async (name: string) => (await call('POST', '/api/v1/playlists', { name, items: [{ assetId: site }] })).body.data.id as string;
  const groupLoop = await playlist('Group loop');
  const ownLoop = await playlist('Own loop');
  const lunch = await playlist('Lunch menu');

  // The group's assignment: readable (the console's group page), and what the member plans to play.
  let ga = await call('GET', `/api/v1/screen-groups/${groupId}/playlist-assignment`);
  t.equal(ga.status, 200);
  t.same(ga.body.data, { groupId, playlistId: null, playlistName: null, updatedAt: null }, 'no group assignment yet');
  t.equal((await call('PUT', `/api/v1/screen-groups/${groupId}/playlist-assignment`, { playlistId: groupLoop })).status, 200);
  ga = await call('GET', `/api/v1/screen-groups/${groupId}/playlist-assignment`);
  t.match(ga.body.data, { groupId, playlistId: groupLoop, playlistName: 'Group loop', updatedAt: String });
  t.equal((await call('GET', '/api/v1/screen-groups/01900000-0000-7000-8000-000000000000/playlist-assignment')).status, 404, 'unknown group: 404');
  t.equal((await call('GET', '/api/v1/screen-groups/nope/playlist-assignment')).status, 404, 'malformed id: 404');
  t.match(
    await showing(screen.screenId),
    { planned: true, reportedAt: null, playlistId: groupLoop, playlistName: 'Group loop', assetId: null, scheduleId: null },
    'never seen: the group assignment, planned',
  );

  // Kept across requests, but a change that reaches the screen shows at once: a schedule on its group, then paused.
  const breakfast = await playlist('Breakfast');
  const groupSched = await call('POST', '/api/v1/schedules', {
    name: 'Group mornings',
    content: { playlistId: breakfast },
    targets: { groupIds: [groupId] },
    startsAt: new Date(Date.now() - 60_000).toISOString(),
    endsAt: new Date(Date.now() + 3600_000).toISOString(),
    timeZone: 'UTC',
  });
  t.equal(groupSched.status, 201);
  t.match(
    await showing(screen.screenId),
    { planned: true, playlistName: 'Breakfast', scheduleName: 'Group mornings' },
    'a new schedule on its group shows at once',
  );
  t.equal((await call('PATCH', `/api/v1/schedules/${groupSched.body.data.id}`, { enabled: false })).status, 200);
  t.match(await showing(screen.screenId), { planned: true, playlistName: 'Group loop', scheduleId: null }, 'paused: back to the group playlist');

  t.equal((await call('PUT', `/api/v1/screens/${screen.screenId}/playlist-assignment`, { playlistId: ownLoop })).status, 200);
  t.match(await showing(screen.screenId), { planned: true, playlistName: 'Own loop' }, 'its own assignment wins over the group’s');

  // A schedule running now wins, and is named.
  const hour = 3600_000;
  const sched = await call('POST', '/api/v1/schedules', {
    name: 'Lunchtime',
    content: { playlistId: lunch },
    targets: { screenIds: [screen.screenId] },
    startsAt: new Date(Date.now() - hour).toISOString(),
    endsAt: new Date(Date.now() + hour).toISOString(),
    timeZone: 'UTC',
    priority: 1,
  });
  t.equal(sched.status, 201);
  t.match(
    await showing(screen.screenId),
    { planned: true, playlistName: 'Lunch menu', scheduleId: sched.body.data.id, scheduleName: 'Lunchtime' },
    'the schedule running now',
  );

  // The player reports what it plays (the spec's playback identifiers): names, not planned.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-showing-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const png = await samplePng(dir, 'welcome.png');
  const asset = await uploadAsset(app, owner, readFileSync(png), 'welcome.png');
  await settledAsset(app, owner, asset.id);
  const hb = await beat({
    currentPlaylistId: ownLoop.toUpperCase(),
    currentAssetId: asset.id,
    currentScheduleId: sched.body.data.id,
    currentItemId: 'not-an-id',
  });
  t.equal(hb.status, 200);
  t.same(hb.body.data.ignoredFields, ['currentItemId']);
  const screenDoc = (await call('GET', `/api/v1/screens/${screen.screenId}`)).body.data;
  t.same(
    screenDoc.nowShowing,
    {
      planned: false,
      reportedAt: screenDoc.lastHeartbeatAt,
      assetId: asset.id,
      assetName: asset.name,
      playlistId: ownLoop,
      playlistName: 'Own loop',
      layoutId: null,
      layoutName: null,
      scheduleId: sched.body.data.id,
      scheduleName: 'Lunchtime',
    },
    'reported by the player, resolved to names server-side',
  );
  t.equal(asset.name.length > 0, true);

  // An id the server does not know keeps its id, without a name.
  const ghost = '01900000-0000-7000-8000-0000000000aa';
  t.equal((await beat({ currentPlaylistId: ghost })).status, 200);
  t.match(await showing(screen.screenId), { planned: false, playlistId: ghost, playlistName: null, assetId: null });

  // Only malformed ids: nothing current was reported, so the plan answers.
  const bad = await beat({ currentPlaylistId: 'x', currentAssetId: 42 });
  t.same(bad.body.data.ignoredFields.sort(), ['currentAssetId', 'currentPlaylistId']);
  t.match(await showing(screen.screenId), { planned: true, playlistName: 'Lunch menu' }, 'reported nothing: planned');

  // Reported, then gone quiet for an hour (offline): the report is old news, the plan answers.
  await beat({ currentPlaylistId: ownLoop, currentAssetId: asset.id });
  t.match(await showing(screen.screenId), { planned: false, assetName: asset.name });
  await app.deps.db
    .updateTable('screens')
    .set({ last_seen_ms: Date.now() - hour, last_seen_at: new Date(Date.now() - hour).toISOString() })
    .where('id', '=', screen.screenId)
    .execute();
  t.equal((await call('GET', `/api/v1/screens/${screen.screenId}`)).body.data.status, 'offline');
  t.match(await showing(screen.screenId), { planned: true, reportedAt: null, assetId: null, playlistName: 'Lunch menu' }, 'offline: planned');
  // The schedule is moved to tomorrow: the screen's own playlist again.
  const moved = await call('PATCH', `/api/v1/schedules/${sched.body.data.id}`, {
    startsAt: new Date(Date.now() + 24 * hour).toISOString(),
    endsAt: new Date(Date.now() + 25 * hour).toISOString(),
  });
  t.equal(moved.status, 200);
  t.match(await showing(screen.screenId), { planned: true, playlistName: 'Own loop', scheduleId: null }, 'an edited schedule shows at once');
});
