import { createHash } from 'node:crypto';
import sharp from 'sharp';
import t from 'tap';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';
import { WebSocket } from 'ws';
import { expireCommands } from '../server/src/modules/screens/commands.repo.js';
import { reportResult } from '../server/src/modules/screens/commands.service.js';

t.test('command lifecycle: queued, delivered, acknowledged, succeeded; listed for the console', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const other = await pairScreen(app, owner, { name: 'Other' });
  const made = await app.json(`/api/v1/screens/${s.screenId}/commands`, {
    method: 'POST',
    headers: owner.headers,
    json: { type: 'reload', params: { hard: true }, expiresInSec: 600 },
  });
  t.equal(made.status, 201);
  t.match(made.body.data, { type: 'reload', state: 'queued', params: { hard: true }, screenId: s.screenId, createdBy: owner.user.id });
  const id = made.body.data.id;
  t.ok(Math.abs(Date.parse(made.body.data.expiresAt) - Date.now() - 600_000) < 5000);

  const hb = await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json: {} });
  t.equal(hb.body.data.pendingCommands, 1, 'the heartbeat tells a polling player there is work');
  const polled = await app.json('/api/v1/player/commands', { headers: s.headers });
  t.same(
    polled.body.data.items.map((c: any) => [c.id, c.state]),
    [[id, 'delivered']],
  );
  t.same((await app.json('/api/v1/player/commands', { headers: other.headers })).body.data.items, [], 'only its own commands');
  t.equal(
    (await app.json(`/api/v1/player/commands/${id}/acknowledge`, { method: 'POST', headers: other.headers })).status,
    404,
    'another screen’s command is 404',
  );

  const ack = await app.json(`/api/v1/player/commands/${id}/acknowledge`, { method: 'POST', headers: s.headers });
  t.equal(ack.body.data.state, 'acknowledged');
  t.equal((await app.json(`/api/v1/player/commands/${id}/acknowledge`, { method: 'POST', headers: s.headers })).status, 200, 'acknowledge is idempotent');
  t.same((await app.json('/api/v1/player/commands', { headers: s.headers })).body.data.items, [], 'acknowledged commands are not delivered again');
  const done = await app.json(`/api/v1/player/commands/${id}/result`, {
    method: 'POST',
    headers: s.headers,
    json: { status: 'succeeded', message: 'reloaded', output: { tookMs: 120 } },
  });
  t.equal(done.status, 200);
  t.match(done.body.data, { state: 'succeeded', result: { status: 'succeeded', message: 'reloaded', output: { tookMs: 120 } } });
  t.ok(done.body.data.completedAt);
  const retry = await app.json(`/api/v1/player/commands/${id}/result`, {
    method: 'POST',
    headers: s.headers,
    json: { status: 'succeeded', message: 'reloaded', output: { tookMs: 120 } },
  });
  t.equal(retry.status, 200, 'the identical result again is fine (a retry)');
  t.equal(retry.body.data.completedAt, done.body.data.completedAt, 'a retry changes nothing');
  t.equal(
    (await app.json(`/api/v1/player/commands/${id}/result`, { method: 'POST', headers: s.headers, json: { status: 'succeeded' } })).status,
    409,
    'the same status with another message is not a retry',
  );
  t.equal(
    (
      await app.json(`/api/v1/player/commands/${id}/result`, {
        method: 'POST',
        headers: s.headers,
        json: { status: 'succeeded', message: 'reloaded', output: { tookMs: 121 } },
      })
    ).status,
    409,
    'nor with another output',
  );
  t.equal((await app.json(`/api/v1/player/commands/${id}/result`, { method: 'POST', headers: s.headers, json: { status: 'failed' } })).status, 409);
  t.equal((await app.json(`/api/v1/player/commands/${id}/acknowledge`, { method: 'POST', headers: s.headers })).status, 409);

  const failed = (await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type: 'clear_cache' } })).body
    .data;
  const res = await app.json(`/api/v1/player/commands/${failed.id}/result`, {
    method: 'POST',
    headers: s.headers,
    json: { status: 'failed', message: 'disk busy' },
  });
  t.equal(res.body.data.state, 'failed');

  const list = (await app.json(`/api/v1/screens/${s.screenId}/commands`, { headers: owner.headers })).body.data.items;
  t.same(
    list.map((c: any) => c.state),
    ['failed', 'succeeded'],
    'newest first',
  );
  t.same((await app.json(`/api/v1/screens/${s.screenId}/commands?state=succeeded`, { headers: owner.headers })).body.data.items.length, 1);
  t.equal((await app.json(`/api/v1/screens/${s.screenId}/commands/${id}`, { headers: owner.headers })).body.data.id, id);

  // Bad input.
  t.equal((await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type: 'self_destruct' } })).status, 400);
  t.equal(
    (await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type: 'reload', expiresInSec: 1 } })).status,
    400,
  );
  t.equal((await app.json(`/api/v1/player/commands/${id}/result`, { method: 'POST', headers: s.headers, json: { status: 'maybe' } })).status, 400);
  const editor = await signIn(app, { role: 'editor' });
  t.equal((await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: editor.headers, json: { type: 'reboot' } })).status, 403);
  await app.json(`/api/v1/screens/${s.screenId}/disable`, { method: 'POST', headers: owner.headers });
  t.equal(
    (await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type: 'reboot' } })).status,
    409,
    'a disabled screen takes no commands',
  );
});

t.test('expiry: an unacknowledged command expires and is no longer delivered', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const c = (await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type: 'reboot', expiresInSec: 10 } }))
    .body.data;
  await app.deps.db
    .updateTable('screen_commands')
    .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
    .where('id', '=', c.id)
    .execute();
  t.same((await app.json('/api/v1/player/commands', { headers: s.headers })).body.data.items, []);
  t.equal((await app.json(`/api/v1/screens/${s.screenId}/commands/${c.id}`, { headers: owner.headers })).body.data.state, 'expired');
  t.equal((await app.json(`/api/v1/player/commands/${c.id}/acknowledge`, { method: 'POST', headers: s.headers })).status, 409);
  t.equal(
    (await app.json(`/api/v1/player/commands/${c.id}/result`, { method: 'POST', headers: s.headers, json: { status: 'succeeded' } })).status,
    409,
    'too late to succeed',
  );
  const late = await app.json(`/api/v1/player/commands/${c.id}/result`, { method: 'POST', headers: s.headers, json: { status: 'failed', message: 'expired' } });
  t.equal(late.status, 200, 'reporting an expired command as failed is fine');
  t.equal(late.body.data.state, 'expired');
  t.equal(await expireCommands(app.deps.db), 1);
  const row = await app.deps.db.selectFrom('screen_commands').select('state').where('id', '=', c.id).executeTakeFirstOrThrow();
  t.equal(row.state, 'expired');
  t.equal((await app.json(`/api/v1/screens/${s.screenId}/commands?state=expired`, { headers: owner.headers })).body.data.items.length, 1);
});

t.test('screenshot results carry an image stored as media', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const c = (await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type: 'screenshot' } })).body.data;
  const png = await sharp({ create: { width: 64, height: 36, channels: 3, background: { r: 200, g: 30, b: 30 } } })
    .png()
    .toBuffer();
  const sha = createHash('sha256').update(png).digest('hex');

  const notImage = await app.json(`/api/v1/player/commands/${c.id}/result`, {
    method: 'POST',
    headers: s.headers,
    json: { status: 'succeeded', screenshot: { contentType: 'image/png', dataBase64: Buffer.from('<svg/>').toString('base64') } },
  });
  t.equal(notImage.status, 400, 'bytes that are not an image are refused');
  const wrongType = await app.json(`/api/v1/player/commands/${c.id}/result`, {
    method: 'POST',
    headers: s.headers,
    json: { status: 'succeeded', screenshot: { contentType: 'image/jpeg', dataBase64: png.toString('base64') } },
  });
  t.equal(wrongType.status, 400, 'the declared type must match the bytes');

  const ok = await app.json(`/api/v1/player/commands/${c.id}/result`, {
    method: 'POST',
    headers: s.headers,
    json: { status: 'succeeded', screenshot: { contentType: 'image/png', dataBase64: png.toString('base64') } },
  });
  t.equal(ok.status, 200);
  t.match(ok.body.data.screenshot, { contentType: 'image/png', sha256: sha });
  const img = await app.fetch(ok.body.data.screenshot.url, { headers: owner.headers });
  t.equal(img.status, 200);
  t.equal(img.headers.get('content-type'), 'image/png');
  t.equal(img.headers.get('etag'), `"${sha}"`);
  const bytes = Buffer.from(await img.arrayBuffer());
  t.ok(bytes.equals(png), 'the stored image is the one sent');
  t.equal((await app.fetch(ok.body.data.screenshot.url, { headers: { ...owner.headers, 'if-none-match': `"${sha}"` } })).status, 304);
  t.equal((await app.fetch(ok.body.data.screenshot.url)).status, 401, 'people only');

  const reload = (await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type: 'reload' } })).body.data;
  const stray = await app.json(`/api/v1/player/commands/${reload.id}/result`, {
    method: 'POST',
    headers: s.headers,
    json: { status: 'succeeded', screenshot: { contentType: 'image/png', dataBase64: png.toString('base64') } },
  });
  t.equal(stray.status, 400, 'only a screenshot command carries an image');
  t.equal((await app.fetch(`/api/v1/screens/${s.screenId}/commands/${reload.id}/screenshot`, { headers: owner.headers })).status, 404);
});

t.test('results race: the write is conditional on the state, so the second different outcome is 409', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const c = (await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type: 'reboot' } })).body.data;
  await app.json(`/api/v1/player/commands/${c.id}/acknowledge`, { method: 'POST', headers: s.headers });
  const read = () => app.deps.db.selectFrom('screen_commands').selectAll().where('id', '=', c.id).executeTakeFirstOrThrow();
  // Two requests that both read the command while it was acknowledged.
  const stale = await read();
  const first = await reportResult(app.deps, stale, { status: 'succeeded', message: 'rebooted' });
  t.equal(first.state, 'succeeded');
  await t.rejects(reportResult(app.deps, stale, { status: 'failed', message: 'no power' }), { code: 'conflict' }, 'the loser of the race is refused');
  await t.rejects(
    reportResult(app.deps, stale, { status: 'succeeded', message: 'rebooted twice' }),
    { code: 'conflict' },
    'the same status with another message too',
  );
  const row = await read();
  t.equal(row.state, 'succeeded', 'the winner’s outcome stands');
  t.same(JSON.parse(row.result!), { status: 'succeeded', message: 'rebooted', output: null });
  t.equal(
    (await reportResult(app.deps, stale, { status: 'succeeded', message: 'rebooted' })).state,
    'succeeded',
    'an identical result from the stale read is a retry: answered, not refused',
  );
  t.equal((await read()).completed_at, row.completed_at);

  // The expiry sweep getting there first counts too.
  const d = (await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type: 'reload' } })).body.data;
  const before = await app.deps.db.selectFrom('screen_commands').selectAll().where('id', '=', d.id).executeTakeFirstOrThrow();
  await app.deps.db.updateTable('screen_commands').set({ state: 'expired' }).where('id', '=', d.id).execute();
  await t.rejects(reportResult(app.deps, before, { status: 'succeeded' }), { code: 'conflict' });

  // Over HTTP: concurrent different outcomes, exactly one wins each time.
  for (let i = 0; i < 5; i++) {
    const e = (await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type: 'reload' } })).body.data;
    const [a, b] = await Promise.all(
      (['succeeded', 'failed'] as const).map((status) =>
        app.json(`/api/v1/player/commands/${e.id}/result`, { method: 'POST', headers: s.headers, json: { status } }),
      ),
    );
    t.same([a!.status, b!.status].sort(), [200, 409], `race ${i}: one 200, one 409`);
    const winner = a!.status === 200 ? 'succeeded' : 'failed';
    t.equal((await app.json(`/api/v1/screens/${s.screenId}/commands/${e.id}`, { headers: owner.headers })).body.data.state, winner);
  }
});

t.test('socket delivery: command.pending is pushed at once; delivered only once the player fetches it', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const ws = new WebSocket(`${app.url.replace(/^http/, 'ws')}/api/v1/player/socket`, { headers: s.headers });
  t.teardown(() => ws.terminate());
  const messages: any[] = [];
  const waiting = new Map<string, (m: any) => void>();
  ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    messages.push(m);
    waiting.get(m.type)?.(m);
  });
  const next = (type: string, ms: number) =>
    new Promise<any>((resolve, reject) => {
      const seen = messages.find((m) => m.type === type);
      if (seen) return resolve(seen);
      const timer = setTimeout(() => reject(new Error(`no ${type} within ${ms} ms`)), ms);
      waiting.set(type, (m) => (clearTimeout(timer), resolve(m)));
    });
  await next('hello', 5000);

  const made = await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type: 'screenshot' } });
  t.equal(made.status, 201);
  const pushed = await next('command.pending', 1000);
  t.same(pushed, { type: 'command.pending', commandId: made.body.data.id, commandType: 'screenshot' });
  const console1 = await app.json(`/api/v1/screens/${s.screenId}/commands/${made.body.data.id}`, { headers: owner.headers });
  t.equal(console1.body.data.state, 'queued', 'a push is not a delivery');
  t.equal(console1.body.data.deliveredAt, null);
  t.equal((await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json: {} })).body.data.pendingCommands, 1);

  const fetched = await app.json('/api/v1/player/commands', { headers: s.headers });
  t.same(
    fetched.body.data.items.map((c: any) => [c.id, c.type, c.state]),
    [[made.body.data.id, 'screenshot', 'delivered']],
  );
  const console2 = await app.json(`/api/v1/screens/${s.screenId}/commands/${made.body.data.id}`, { headers: owner.headers });
  t.equal(console2.body.data.state, 'delivered', 'fetching GET player/commands marks it delivered');
  t.ok(console2.body.data.deliveredAt);
  const again = await app.json('/api/v1/player/commands', { headers: s.headers });
  t.equal(again.body.data.items[0].deliveredAt, console2.body.data.deliveredAt, 'fetched again until acknowledged; deliveredAt stays the first');
});

t.test('GET /player/commands pages with the list envelope: limit, nextCursor, only the page is delivered', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const ids: string[] = [];
  for (const type of ['reload', 'clear_cache', 'reload']) {
    const made = await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type } });
    ids.push(made.body.data.id);
  }
  const all = await app.json('/api/v1/player/commands', { headers: s.headers });
  t.equal(all.status, 200);
  t.same(all.body.data.nextCursor, null, 'everything fits the default page: nextCursor is null');
  t.equal(all.body.data.items.length, 3);

  const more = await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type: 'reload' } });
  ids.push(more.body.data.id);
  const first = await app.json('/api/v1/player/commands?limit=2', { headers: s.headers });
  t.same(
    first.body.data.items.map((c: any) => c.id),
    ids.slice(0, 2),
    'oldest first',
  );
  t.type(first.body.data.nextCursor, 'string');
  const states = async () => (await app.deps.db.selectFrom('screen_commands').select(['id', 'state']).orderBy('id').execute()).map((r) => r.state);
  t.same(await states(), ['delivered', 'delivered', 'delivered', 'queued'], 'the one not yet fetched is still queued');
  const second = await app.json(`/api/v1/player/commands?limit=2&cursor=${first.body.data.nextCursor}`, { headers: s.headers });
  t.same(
    second.body.data.items.map((c: any) => c.id),
    ids.slice(2),
  );
  t.equal(second.body.data.nextCursor, null);
  t.same(await states(), ['delivered', 'delivered', 'delivered', 'delivered']);
  for (const q of ['?limit=0', '?limit=501', '?cursor=nope']) {
    const bad = await app.json(`/api/v1/player/commands${q}`, { headers: s.headers });
    t.equal(bad.status, 400, `${q}: 400`);
    t.equal(bad.body.error.code, 'validation_failed');
  }
});
