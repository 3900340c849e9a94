import t from 'tap';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';

t.test('groups: create, members, patch, delete', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const a = await pairScreen(app, owner, { name: 'A' });
  const b = await pairScreen(app, owner, { name: 'B' });
  const g = await app.json('/api/v1/screen-groups', { method: 'POST', headers: owner.headers, json: { name: 'Wall', screenIds: [b.screenId] } });
  t.equal(g.status, 201);
  t.match(g.body.data, { name: 'Wall', screenIds: [b.screenId], memberCount: 1, hasSpan: false, hasPolicy: false });
  const id = g.body.data.id;
  t.equal(
    (
      await app.json('/api/v1/screen-groups', {
        method: 'POST',
        headers: owner.headers,
        json: { name: 'X', screenIds: ['0190f5a2-7b3c-7def-8abc-0123456789ab'] },
      })
    ).status,
    400,
    'an unknown screen in the body is invalid input',
  );
  const added = await app.json(`/api/v1/screen-groups/${id}/screens`, {
    method: 'POST',
    headers: owner.headers,
    json: { screenIds: [a.screenId, b.screenId] },
  });
  t.same(added.body.data.screenIds, [a.screenId, b.screenId], 'members by name; adding twice is fine');
  t.same((await app.json(`/api/v1/screens/${a.screenId}`, { headers: owner.headers })).body.data.groupIds, [id]);
  const renamed = await app.json(`/api/v1/screen-groups/${id}`, {
    method: 'PATCH',
    headers: owner.headers,
    json: { name: 'Video wall', description: 'lobby' },
  });
  t.match(renamed.body.data, { name: 'Video wall', description: 'lobby' });
  const listed = (await app.json('/api/v1/screen-groups?q=video', { headers: owner.headers })).body.data.items;
  t.equal(listed.length, 1);
  t.equal((await app.json(`/api/v1/screen-groups/${id}/screens/${a.screenId}`, { method: 'DELETE', headers: owner.headers })).status, 204);
  t.equal((await app.json(`/api/v1/screen-groups/${id}/screens/${a.screenId}`, { method: 'DELETE', headers: owner.headers })).status, 404);
  t.equal((await app.json(`/api/v1/screen-groups/${id}`, { method: 'DELETE', headers: owner.headers })).status, 204);
  t.equal((await app.json(`/api/v1/screen-groups/${id}`, { headers: owner.headers })).status, 404);
  t.same((await app.json(`/api/v1/screens/${b.screenId}`, { headers: owner.headers })).body.data.groupIds, [], 'screens stay, membership goes');
});

t.test('span: grid, bezel compensation, each panel’s slice for the player', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const screens = [];
  for (const n of ['TL', 'TR', 'BL', 'BR']) screens.push(await pairScreen(app, owner, { name: n }));
  const outsider = await pairScreen(app, owner, { name: 'Out' });
  const g = (
    await app.json('/api/v1/screen-groups', { method: 'POST', headers: owner.headers, json: { name: 'Wall', screenIds: screens.map((s) => s.screenId) } })
  ).body.data;
  t.same((await app.json(`/api/v1/screen-groups/${g.id}/span`, { headers: owner.headers })).body.data, null);
  const cells = screens.map((s, i) => ({ screenId: s.screenId, row: Math.floor(i / 2), column: i % 2 }));
  const body = { rows: 2, columns: 2, panel: { widthPx: 1920, heightPx: 1080 }, bezel: { horizontalPx: 40, verticalPx: 30 }, cells };
  const put = await app.json(`/api/v1/screen-groups/${g.id}/span`, { method: 'PUT', headers: owner.headers, json: body });
  t.equal(put.status, 200);
  t.same(put.body.data.canvas, { widthPx: 1920 * 2 + 40, heightPx: 1080 * 2 + 30 });
  t.same(put.body.data.cells[3].viewport, { xPx: 1960, yPx: 1110, widthPx: 1920, heightPx: 1080 });
  t.same((await app.json(`/api/v1/screen-groups/${g.id}/span`, { headers: owner.headers })).body.data, put.body.data);

  const bad = async (json: unknown, label: string) =>
    t.equal((await app.json(`/api/v1/screen-groups/${g.id}/span`, { method: 'PUT', headers: owner.headers, json })).status, 400, label);
  await bad({ ...body, cells: [{ ...cells[0], row: 2 }] }, 'outside the grid');
  await bad({ ...body, cells: [cells[0], { ...cells[1], row: 0, column: 0 }] }, 'two screens in a cell');
  await bad({ ...body, cells: [cells[0], { ...cells[0], column: 1 }] }, 'a screen in two cells');
  await bad({ ...body, cells: [{ screenId: outsider.screenId, row: 0, column: 0 }] }, 'not a member');
  await bad({ ...body, rows: 0 }, 'rows');
  await bad({ ...body, bezel: { horizontalPx: -1, verticalPx: 0 } }, 'negative bezel');

  const panel = await app.json(`/api/v1/player/span-panels/${g.id}`, { headers: screens[1]!.headers });
  t.equal(panel.status, 200);
  t.same(panel.body.data.self, { screenId: screens[1]!.screenId, row: 0, column: 1, viewport: { xPx: 1960, yPx: 0, widthPx: 1920, heightPx: 1080 } });
  t.equal(panel.body.data.span.cells.length, 4);
  const head = await app.fetch(`/api/v1/player/span-panels/${g.id}`, { method: 'HEAD', headers: screens[1]!.headers });
  t.equal(head.status, 200);
  t.equal(await head.text(), '');
  t.equal((await app.json(`/api/v1/player/span-panels/${g.id}`, { headers: outsider.headers })).status, 404, 'no cell, no panel');
  t.equal((await app.json(`/api/v1/player/span-panels/${g.id}`, { headers: owner.headers })).status, 401, 'device route');

  // Removing a member removes its cell.
  await app.json(`/api/v1/screen-groups/${g.id}/screens/${screens[1]!.screenId}`, { method: 'DELETE', headers: owner.headers });
  t.equal((await app.json(`/api/v1/screen-groups/${g.id}/span`, { headers: owner.headers })).body.data.cells.length, 3);
  t.equal((await app.json(`/api/v1/player/span-panels/${g.id}`, { headers: screens[1]!.headers })).status, 404);
});

t.test('policies: group and screen, effective policy with sources, player config', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const gA = (await app.json('/api/v1/screen-groups', { method: 'POST', headers: owner.headers, json: { name: 'A first', screenIds: [s.screenId] } })).body
    .data;
  const gB = (await app.json('/api/v1/screen-groups', { method: 'POST', headers: owner.headers, json: { name: 'B second', screenIds: [s.screenId] } })).body
    .data;
  t.same((await app.json(`/api/v1/screen-groups/${gA.id}/policy`, { headers: owner.headers })).body.data, { policy: null });
  t.equal(
    (await app.json(`/api/v1/screen-groups/${gA.id}/policy`, { method: 'PUT', headers: owner.headers, json: { heartbeatIntervalSec: 5 } })).status,
    400,
    'bounds',
  );
  t.equal(
    (await app.json(`/api/v1/screen-groups/${gA.id}/policy`, { method: 'PUT', headers: owner.headers, json: { nonsense: true } })).status,
    400,
    'unknown keys',
  );
  await app.json(`/api/v1/screen-groups/${gA.id}/policy`, { method: 'PUT', headers: owner.headers, json: { volumePercent: 40, screenshotsEnabled: false } });
  await app.json(`/api/v1/screen-groups/${gB.id}/policy`, {
    method: 'PUT',
    headers: owner.headers,
    json: { volumePercent: 80, heartbeatIntervalSec: 60, logLevel: 'debug' },
  });
  const put = await app.json(`/api/v1/screens/${s.screenId}/policy`, { method: 'PUT', headers: owner.headers, json: { logLevel: 'warn' } });
  t.same(put.body.data, { policy: { logLevel: 'warn' } });

  const eff = (await app.json(`/api/v1/screens/${s.screenId}/effective-policy`, { headers: owner.headers })).body.data;
  t.equal(eff.values.volumePercent, 40, 'the group whose name sorts first wins');
  t.match(eff.sources.volumePercent, { type: 'group', id: gA.id, name: 'A first' });
  t.equal(eff.values.heartbeatIntervalSec, 60);
  t.match(eff.sources.heartbeatIntervalSec, { type: 'group', id: gB.id });
  t.equal(eff.values.logLevel, 'warn');
  t.match(eff.sources.logLevel, { type: 'screen', id: s.screenId });
  t.equal(eff.values.cacheLimitMb, 4096);
  t.match(eff.sources.cacheLimitMb, { type: 'default', id: null });
  t.equal(eff.layers.length, 3);

  const hb = await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json: {} });
  t.equal(hb.body.data.heartbeatIntervalSec, 60, 'the heartbeat answers the policy’s interval');
  const config = (await app.json('/api/v1/player/config', { headers: s.headers })).body.data;
  t.match(config, { screenId: s.screenId, heartbeatIntervalSec: 60, policy: { volumePercent: 40, logLevel: 'warn', screenshotsEnabled: false } });

  // Screenshots off by policy: the command is refused.
  const shot = await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type: 'screenshot' } });
  t.equal(shot.status, 409);

  t.equal((await app.json(`/api/v1/screens/${s.screenId}/policy`, { method: 'DELETE', headers: owner.headers })).status, 204);
  t.same((await app.json(`/api/v1/screens/${s.screenId}/policy`, { headers: owner.headers })).body.data, { policy: null });
  t.equal((await app.json(`/api/v1/screen-groups/${gA.id}/policy`, { method: 'DELETE', headers: owner.headers })).status, 204);
  const eff2 = (await app.json(`/api/v1/screens/${s.screenId}/effective-policy`, { headers: owner.headers })).body.data;
  t.equal(eff2.values.volumePercent, 80);
  t.equal(eff2.values.logLevel, 'debug');
});

t.test('display control: preview and apply queue display commands per member', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const on = await pairScreen(app, owner, { name: 'A online' });
  const off = await pairScreen(app, owner, { name: 'B never seen' });
  const dis = await pairScreen(app, owner, { name: 'C disabled' });
  const nopol = await pairScreen(app, owner, { name: 'D no control' });
  await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: on.headers, json: {} });
  await app.json(`/api/v1/screens/${dis.screenId}/disable`, { method: 'POST', headers: owner.headers });
  await app.json(`/api/v1/screens/${nopol.screenId}/policy`, { method: 'PUT', headers: owner.headers, json: { displayControlEnabled: false } });
  const g = (
    await app.json('/api/v1/screen-groups', {
      method: 'POST',
      headers: owner.headers,
      json: { name: 'G', screenIds: [on.screenId, off.screenId, dis.screenId, nopol.screenId] },
    })
  ).body.data;
  const preview = await app.json(`/api/v1/screen-groups/${g.id}/display-control/preview?action=display_off`, { headers: owner.headers });
  t.equal(preview.status, 200);
  t.same(
    preview.body.data.members.map((m: any) => [m.name, m.willQueue]),
    [
      ['A online', true],
      ['B never seen', true],
      ['C disabled', false],
      ['D no control', false],
    ],
  );
  t.match(preview.body.data.members[1].reason, /pending/);
  t.equal((await app.json(`/api/v1/screen-groups/${g.id}/display-control/preview`, { headers: owner.headers })).status, 400, 'action required');
  const before = await app.deps.db.selectFrom('screen_commands').selectAll().execute();
  t.equal(before.length, 0, 'preview queues nothing');
  const applied = await app.json(`/api/v1/screen-groups/${g.id}/display-control`, { method: 'POST', headers: owner.headers, json: { action: 'display_off' } });
  t.equal(applied.status, 200);
  t.equal(applied.body.data.queued.length, 2);
  t.equal(applied.body.data.skipped.length, 2);
  const polled = await app.json('/api/v1/player/commands', { headers: on.headers });
  t.same(
    polled.body.data.items.map((c: any) => c.type),
    ['display_off'],
  );
});
