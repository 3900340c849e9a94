/**
 * Several instances on one PostgreSQL database (issue 25, platform/cluster.ts): a player's
 * socket on one instance hears of an edit made through another; a scheduled publish and each
 * periodic tick run once between them; a job is taken by one instance, and a dead
 * instance's job runs again on another; killing an instance loses nothing it acknowledged.
 * Needs PLACARD_TEST_DATABASE_URL (npm run test:postgres); skipped without it.
 */
import t from 'tap';
import { mediaServiceOf } from '../server/src/modules/media/index.js';
import { signIn } from './helpers/auth.js';
import { startApp, tempDataDir } from './helpers/harness.js';
import { publishingWorld } from './helpers/publishing.js';
import { freshPostgresDatabase, TEST_DATABASE_URL } from './helpers/postgres.js';
import { openSocket, pairScreen } from './helpers/screens.js';
import { startServerProcess } from './helpers/server-process.js';

const skip = TEST_DATABASE_URL ? false : 'needs PostgreSQL: set PLACARD_TEST_DATABASE_URL (npm run test:postgres)';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a player connected to instance A hears within a second of edits made through instance B, and A serves them', { skip }, async (t) => {
  const a = await startApp(t);
  const b = await startApp(t, { instanceOf: a });
  const owner = await signIn(a);
  const viaB = (method: string, path: string, json?: unknown) => b.json(path, { method, headers: owner.headers, ...(json !== undefined ? { json } : {}) });
  const s = await pairScreen(a, owner);
  const sock = await openSocket(t, a, s.credential);
  await sock.next((m) => m.type === 'hello', Date.now(), 5_000);

  // A content change through B: a playlist scheduled on the screen.
  const site = (await viaB('POST', '/api/v1/assets/websites', { url: 'https://example.org/', name: 'Site' })).body.data.id;
  const playlist = (await viaB('POST', '/api/v1/playlists', { name: 'Menu', items: [{ assetId: site, durationMs: 3000 }] })).body.data;
  let since = Date.now();
  const scheduled = await viaB('POST', '/api/v1/schedules', {
    name: 'All day',
    content: { playlistId: playlist.id },
    targets: { screenIds: [s.screenId] },
    startsAt: new Date(Date.now() - 3_600_000).toISOString(),
    endsAt: new Date(Date.now() + 5 * 3_600_000).toISOString(),
    timeZone: 'UTC',
  });
  t.equal(scheduled.status, 201, JSON.stringify(scheduled.body));
  const first = await sock.next((m) => m.type === 'manifest.changed', since, 1_000);
  const durations = async () => {
    const m = await a.json('/api/v1/player/manifest', { headers: s.headers });
    t.equal(m.status, 200);
    return { revision: m.body.data.revision, items: m.body.data.timeline.flatMap((seg: any) => seg.playlist?.items.map((i: any) => i.durationMs) ?? []) };
  };
  const before = await durations();
  t.equal(before.revision, first.revision, 'the push carries the revision instance A serves');
  t.same([...new Set(before.items)], [3000]);

  // An edit of the playlist through B: A's kept playlist parts must not serve the old item.
  const item = (await viaB('GET', `/api/v1/playlists/${playlist.id}`)).body.data.items[0].id;
  since = Date.now();
  t.equal((await viaB('PATCH', `/api/v1/playlists/${playlist.id}/items/${item}`, { durationMs: 4500 })).status, 200);
  const second = await sock.next((m) => m.type === 'manifest.changed' && m.revision > first.revision, since, 1_000);
  const after = await durations();
  t.equal(after.revision, second.revision);
  t.same([...new Set(after.items)], [4500], 'instance A serves the edit made through B');

  // A command queued through B, a screen setting changed through B.
  since = Date.now();
  const cmd = (await viaB('POST', `/api/v1/screens/${s.screenId}/commands`, { type: 'reload' })).body.data;
  t.equal((await sock.next((m) => m.type === 'command.pending', since, 1_000)).commandId, cmd.id);
  since = Date.now();
  t.equal((await viaB('PATCH', `/api/v1/screens/${s.screenId}`, { orientation: 'portrait' })).status, 200);
  await sock.next((m) => m.type === 'manifest.changed' && m.revision > second.revision, since, 1_000);

  // Settings changed through B are read fresh by A (its cached copy dropped).
  t.equal((await viaB('PATCH', '/api/v1/settings', { serverName: 'Two instances' })).status, 200);
  await sleep(200);
  t.equal((await a.json('/api/v1/settings', { headers: owner.headers })).body.data.serverName, 'Two instances');
  t.ok(a.deps.cluster.received > 0, 'A received messages from B');

  // Revoking through B closes the socket held by A.
  since = Date.now();
  const closed = new Promise<number>((resolve) => sock.ws.once('close', (code) => resolve(code)));
  t.equal((await viaB('POST', `/api/v1/screens/${s.screenId}/revoke`)).status, 200);
  t.equal(await closed, 4001, 'closed as revoked');
  t.ok(Date.now() - since < 1_000, 'within a second');
});

t.test('sync: what another instance published before is handled here when it resolves', { skip }, async (t) => {
  const a = await startApp(t);
  const b = await startApp(t, { instanceOf: a });
  const heard: number[] = [];
  a.deps.cluster.on<number>('test.sync', (n) => heard.push(n));
  for (let i = 0; i < 25; i++) {
    await b.deps.cluster.publish('test.sync', i); // committed
    await a.deps.cluster.sync();
    t.equal(heard.at(-1), i, `message ${i} handled before sync resolved`);
  }
  // Callers at once share statements, and each still resolves after what was committed before it.
  await b.deps.cluster.publish('test.sync', 100);
  await Promise.all(Array.from({ length: 10 }, () => a.deps.cluster.sync()));
  t.equal(heard.at(-1), 100);
});

t.test('a scheduled publish runs exactly once, and each periodic tick on one instance', { skip }, async (t) => {
  const a = await startApp(t);
  const b = await startApp(t, { instanceOf: a });
  const w = await publishingWorld(a);
  const sub = '/api/v1/content-submissions';
  const s = (await w.as(w.editor)('POST', `${sub}/layout/${w.layout.id}`, {})).body.data;
  t.equal((await w.as(w.publisher)('POST', `${sub}/${s.id}/approve`, {})).status, 200);
  const at = Date.now() + 1_500;
  t.equal((await w.as(w.publisher)('POST', `${sub}/${s.id}/schedule`, { publishAt: new Date(at).toISOString() })).status, 200);
  const started = Date.now();
  a.deps.periodic.start();
  b.deps.periodic.start();
  await sleep(at - Date.now() + 3_500);
  await Promise.all([a.deps.periodic.stop(), b.deps.periodic.stop()]);
  const elapsed = Date.now() - started;
  const publications = (await w.as(w.editor)('GET', `/api/v1/content-history/layout/${w.layout.id}/publications`)).body.data.items;
  t.equal(publications.length, 1, 'one publication');
  t.match((await w.as(w.editor)('GET', `${sub}/${s.id}`)).body.data, { state: 'published' });
  // Every second, both instances' timers fire; a tick runs on one of them.
  const runs = a.deps.periodic.ticksRun('publishing.scheduled') + b.deps.periodic.ticksRun('publishing.scheduled');
  t.ok(runs >= 2, `the task ran (${runs} ticks)`);
  t.ok(runs <= Math.ceil(elapsed / 900) + 1, `${runs} ticks in ${elapsed} ms between two instances ticking every second: one instance a tick`);
});

t.test('each job is taken by one instance; a dead instance’s job runs again on the other', { skip }, async (t) => {
  const a = await startApp(t);
  const b = await startApp(t, { instanceOf: a });
  const ran: { id: number; on: string }[] = [];
  for (const [name, app] of [
    ['a', a],
    ['b', b],
  ] as const) {
    mediaServiceOf(app.deps)!.jobs.register('cluster-test', {
      run: async (payload: { id: number }) => {
        ran.push({ id: payload.id, on: name });
        await sleep(30);
      },
    });
  }
  const queueA = mediaServiceOf(a.deps)!.jobs;
  for (let i = 0; i < 24; i++) await queueA.enqueue('cluster-test', { id: i });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const done = await a.deps.db.selectFrom('jobs').select('id').where('kind', '=', 'cluster-test').where('state', '=', 'done').execute();
    if (done.length === 24) break;
    await sleep(50);
  }
  const ids = ran.map((r) => r.id).sort((x, y) => x - y);
  t.same(
    ids,
    Array.from({ length: 24 }, (_, i) => i),
    'every job ran exactly once',
  );
  t.ok(
    ran.some((r) => r.on === 'a'),
    'instance A took some',
  );
  t.ok(
    ran.some((r) => r.on === 'b'),
    'instance B took some (woken by A’s enqueue)',
  );

  // A job held by an instance that dies: its liveness lock goes with its connection.
  let release!: () => void;
  const hanging = new Promise<void>((r) => (release = r));
  mediaServiceOf(a.deps)!.jobs.register('cluster-hang', { run: () => hanging });
  // Only A takes it: B learns of the kind after A claimed it.
  const stuck = await queueA.enqueue('cluster-hang', {});
  const claimedBy = async () =>
    (await a.deps.db.selectFrom('jobs').select(['state', 'locked_by']).where('id', '=', stuck).executeTakeFirstOrThrow()) as {
      state: string;
      locked_by: string | null;
    };
  while ((await claimedBy()).state !== 'running') await sleep(20);
  t.equal((await claimedBy()).locked_by, String(a.deps.cluster.key), 'A holds it');
  let finishedOnB = false;
  mediaServiceOf(b.deps)!.jobs.register('cluster-hang', {
    run: async () => {
      finishedOnB = true;
    },
  });
  t.equal(await mediaServiceOf(b.deps)!.jobs.recoverInterrupted(), 0, 'A is alive: B leaves its job alone');
  await a.deps.cluster.stop(); // as if A's process died: its session, and lock, are gone
  t.equal(await b.deps.cluster.isAlive(a.deps.cluster.key), false, 'B sees A gone');
  t.equal(await mediaServiceOf(b.deps)!.jobs.recoverInterrupted(), 1, 'B queues A’s job again');
  while ((await claimedBy()).state !== 'done') await sleep(20);
  t.ok(finishedOnB, 'and runs it');
  release();
});

t.test('killing an instance loses nothing it acknowledged', { skip }, async (t) => {
  const { url, drop } = await freshPostgresDatabase();
  t.teardown(drop);
  const dataDir = tempDataDir(t);
  const env = { PLACARD_DATABASE_URL: url };
  const a = await startServerProcess(t, dataDir, env);
  const b = await startServerProcess(t, dataDir, env);
  // The first owner through A (a session both instances accept: sessions are rows), then
  // 30 playlists created through A at once: each 201 is an acknowledged commit.
  const setup = await fetch(`${a.url}/api/v1/auth/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'owner@example.test', password: 'correct horse battery staple', displayName: 'Owner' }),
  });
  t.ok(setup.status === 200 || setup.status === 201, `setup answered ${setup.status}`);
  const cookie = setup.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .filter((pair) => !pair.endsWith('='))
    .join('; ');
  const headers = { cookie, 'x-csrf-token': ((await setup.json()) as { data: { csrfToken: string } }).data.csrfToken, 'content-type': 'application/json' };
  const made: string[] = [];
  await Promise.all(
    Array.from({ length: 30 }, async (_, i) => {
      const res = await fetch(`${a.url}/api/v1/playlists`, { method: 'POST', headers, body: JSON.stringify({ name: `Kept ${i}` }) });
      if (res.status === 201) made.push(((await res.json()) as { data: { id: string } }).data.id);
    }),
  );
  a.child.kill('SIGKILL');
  t.match(await a.exited, { signal: 'SIGKILL' });
  t.equal(made.length, 30, 'A acknowledged 30 writes before it was killed');
  let found = 0;
  for (const id of made) if ((await fetch(`${b.url}/api/v1/playlists/${id}`, { headers })).status === 200) found++;
  t.equal(found, 30, 'instance B serves every one (with the session A made)');
  t.equal((await fetch(`${b.url}/readyz`)).status, 200, 'B is ready');
});
