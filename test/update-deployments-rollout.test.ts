import { createHash } from 'node:crypto';
import path from 'node:path';
import t from 'tap';
import { buildApp } from '../server/src/app.js';
import { testConfig } from '../server/src/config.js';
import { newAppDeps } from '../server/src/platform/app-deps.js';
import { migrate, openDatabase } from '../server/src/platform/db/database.js';
import { createLogger } from '../server/src/platform/log.js';
import { listen } from '../server/src/server.js';
import { cookieHeader, signedInApp, signIn } from './helpers/auth.js';
import { jsonOver, tempDataDir, type TestApp } from './helpers/harness.js';
import { fleetScreen, heartbeat, makeRelease, until } from './helpers/update-deployments.js';

/** The rollout's rules one at a time (docs/update-deployments.md): timeouts, windows, cancel, families, restarts, bad input. */

const status = (app: TestApp, s: { headers: Record<string, string> }, id: string, json: unknown) =>
  app.json(`/api/v1/player/update-deployments/${id}/status`, { method: 'POST', headers: s.headers, json });

t.test('a screen that does not confirm within confirmTimeoutSec fails and pauses the deployment', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const s = await fleetScreen(app, owner, 'quiet', { family: 'desktop-linux', version: '1.0.0' });
  const release = await makeRelease(app, { family: 'desktop-linux', version: '1.1.0', artifacts: [{ architecture: 'x86_64', kind: 'deb' }] });
  const res = await call('POST', '/api/v1/update-deployments', { releaseId: release.id, targets: { screenIds: [s.screenId] }, confirmTimeoutSec: 1 });
  t.equal(res.status, 201);
  t.equal(res.body.data.screens[0].state, 'offered', 'a screen without an architecture takes the release’s only artifact');
  t.equal((await status(app, s, res.body.data.id, { state: 'downloaded' })).body.data.state, 'downloaded');
  const d = await until(app, owner, res.body.data.id, (x) => x.state === 'paused');
  t.match(d.screens[0], { state: 'failed', error: 'confirmation_timeout' });
  t.equal(d.pausedReason, 'failure_threshold');
  t.equal((await app.json('/api/v1/player/config', { headers: s.headers })).body.data.update, null);
  // A late confirmation still counts: the heartbeat with the version installs it, and the deployment completes.
  await heartbeat(app, s, { playerFamily: 'desktop-linux', playerVersion: '1.1.0' });
  const done = await until(app, owner, d.id, (x) => x.state === 'completed');
  t.match(done.screens[0], { state: 'installed', installedVersion: '1.1.0' });
  t.match(done.waves, [{ state: 'done' }, { state: 'done' }, { state: 'done' }]);
});

t.test('a maintenance window holds the offer outside the screens’ local time and offers inside it', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const loc = (await call('POST', '/api/v1/locations', { name: 'Tokyo shop', timeZone: 'Asia/Tokyo' })).body.data;
  const s = await fleetScreen(app, owner, 'tokyo', { family: 'edge', architecture: 'aarch64', version: '1.0.0', locationId: loc.id });
  const release = await makeRelease(app, { family: 'edge', version: '1.2.0', artifacts: [{ architecture: 'aarch64', kind: 'tarball' }] });
  const hour = Number(new Intl.DateTimeFormat('en-GB', { timeZone: 'Asia/Tokyo', hour: '2-digit', hourCycle: 'h23' }).format(new Date()));
  const hh = (h: number) => `${String((h + 24) % 24).padStart(2, '0')}:00`;
  const outside = await call('POST', '/api/v1/update-deployments', {
    releaseId: release.id,
    targets: { locationIds: [loc.id] },
    maintenanceWindow: { start: hh(hour + 2), end: hh(hour + 3) },
  });
  t.equal(outside.status, 201);
  await app.deps.periodic.runNow('update-deployments.tick');
  let d = (await call('GET', `/api/v1/update-deployments/${outside.body.data.id}`)).body.data;
  t.match(d, { state: 'running', maintenanceWindow: { start: hh(hour + 2) }, screens: [{ state: 'pending', offeredAt: null }] });
  t.equal((await app.json('/api/v1/player/config', { headers: s.headers })).body.data.update, null, 'outside the window: no offer');
  const before = await app.fetch('/api/v1/player/manifest', { headers: s.headers });
  const etag = before.headers.get('etag')!;
  t.equal(((await before.json()) as any).data.update, null);
  t.equal((await app.fetch('/api/v1/player/manifest', { headers: { ...s.headers, 'if-none-match': etag } })).status, 304);

  // A window around the screen's local time (wrapping midnight when it must): offered. It supersedes the first.
  const inside = await call('POST', '/api/v1/update-deployments', {
    releaseId: release.id,
    targets: { screenIds: [s.screenId] },
    maintenanceWindow: { start: hh(hour - 1), end: hh(hour + 1) },
  });
  t.equal(inside.body.data.screens[0].state, 'offered');
  d = (await call('GET', `/api/v1/update-deployments/${outside.body.data.id}`)).body.data;
  t.match(d.screens[0], { state: 'cancelled', error: 'superseded' });
  const after = await app.fetch('/api/v1/player/manifest', { headers: { ...s.headers, 'if-none-match': etag } });
  t.equal(after.status, 200, 'the offer bumped the manifest: the old ETag no longer matches');
  t.match(((await after.json()) as any).data.update, { deploymentId: inside.body.data.id, releaseId: release.id });
});

t.test('cancel stops further waves: installed screens stay, the rest is never offered', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const screens = [];
  for (let i = 0; i < 3; i++) screens.push(await fleetScreen(app, owner, `s${i}`, { family: 'edge', architecture: 'x86_64', version: '1.0.0' }));
  const release = await makeRelease(app, { family: 'edge', version: '1.5.0', artifacts: [{ architecture: 'any', kind: 'tarball' }] });
  const created = (
    await call('POST', '/api/v1/update-deployments', {
      releaseId: release.id,
      targets: { all: true },
      waves: [{ screens: 1 }, { percent: 100 }],
      waveWaitSec: 3600,
    })
  ).body.data;
  const canary = screens.find((s) => s.screenId === created.screens.find((x: any) => x.wave === 0).screenId)!;
  t.equal((await status(app, canary, created.id, { state: 'installed', version: '1.5.0' })).body.data.state, 'installed');
  let d = await until(app, owner, created.id, (x) => x.waves[0].state === 'done');
  t.match(d, { currentWave: 0, counts: { installed: 1, pending: 2 } }, 'the wave wait holds the next wave');
  d = (await call('POST', `/api/v1/update-deployments/${created.id}/cancel`)).body.data;
  t.match(d, { state: 'cancelled', counts: { installed: 1, cancelled: 2, pending: 0 } });
  await app.deps.periodic.runNow('update-deployments.tick');
  t.match((await call('GET', `/api/v1/update-deployments/${created.id}`)).body.data, { state: 'cancelled', counts: { installed: 1, offered: 0 } });
  // A report that does not match the release's version fails the install.
  const other = await makeRelease(app, { family: 'edge', version: '1.6.0', artifacts: [{ architecture: 'x86_64', kind: 'tarball' }] });
  const d2 = (await call('POST', '/api/v1/update-deployments', { releaseId: other.id, targets: { screenIds: [screens[1]!.screenId] }, failureThreshold: 5 }))
    .body.data;
  t.equal((await status(app, screens[1]!, d2.id, { state: 'installed', version: '1.5.9' })).body.data.state, 'failed');
  const after = (await call('GET', `/api/v1/update-deployments/${d2.id}`)).body.data;
  t.match(after, { state: 'completed', screens: [{ state: 'failed', error: /version_mismatch/ }] }, 'under the threshold: the rollout ends');
});

t.test('android: the APK with GET, HEAD and Range; web: the installed release in config', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const phone = await fleetScreen(app, owner, 'phone', { family: 'android', version: '3.0.0' });
  const apk = await makeRelease(app, { family: 'android', version: '3.1.0', artifacts: [{ architecture: 'any', kind: 'apk' }] });
  const d = (await call('POST', '/api/v1/update-deployments', { releaseId: apk.id, targets: { screenIds: [phone.screenId] } })).body.data;
  const meta = (await app.json(`/api/v1/player/updates/${apk.id}`, { headers: phone.headers })).body.data;
  t.match(meta, { family: 'android', artifact: { kind: 'apk', url: `/api/v1/player/updates/${apk.id}/apk` } });
  const head = await app.fetch(meta.artifact.url, { method: 'HEAD', headers: phone.headers });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-type'), 'application/vnd.android.package-archive');
  t.equal(head.headers.get('content-length'), String(apk.artifacts[0]!.bytes.length));
  const tail = await app.fetch(meta.artifact.url, { headers: { ...phone.headers, range: 'bytes=-100' } });
  t.equal(tail.status, 206);
  t.same(Buffer.from(await tail.arrayBuffer()), apk.artifacts[0]!.bytes.subarray(-100));
  const full = Buffer.from(await (await app.fetch(meta.artifact.url, { headers: phone.headers })).arrayBuffer());
  t.equal(createHash('sha256').update(full).digest('hex'), meta.artifact.sha256);
  t.equal((await status(app, phone, d.id, { state: 'installed', version: '3.1.0' })).body.data.state, 'installed');
  t.equal((await app.fetch(meta.artifact.url, { method: 'HEAD', headers: phone.headers })).status, 404, 'installed: no longer offered');

  const browser = await fleetScreen(app, owner, 'browser', { family: null, version: '1.0.0' });
  const web = await makeRelease(app, { family: 'web', version: '1.1.0', artifacts: [{ architecture: 'any', kind: 'web' }] });
  const wd = (await call('POST', '/api/v1/update-deployments', { releaseId: web.id, targets: { all: true } })).body.data;
  t.match(Object.fromEntries(wd.screens.map((s: any) => [s.name, s.skipReason])), { phone: 'family_mismatch', browser: null });
  let config = (await app.json('/api/v1/player/config', { headers: browser.headers })).body.data;
  t.match(config, { update: { releaseId: web.id, family: 'web', version: '1.1.0' }, webRelease: null });
  await status(app, browser, wd.id, { state: 'installed', version: '1.1.0' });
  config = (await app.json('/api/v1/player/config', { headers: browser.headers })).body.data;
  t.same(config.webRelease, { releaseId: web.id, version: '1.1.0', path: '/play/v/1.1.0/' });
  t.equal(config.update, null);
});

t.test('bad input and roles answer the error envelope', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const s = await fleetScreen(app, owner, 'one', { family: 'edge', architecture: 'x86_64', version: '1.0.0' });
  const release = await makeRelease(app, { family: 'edge', version: '2.0.0', artifacts: [{ architecture: 'x86_64', kind: 'tarball' }] });
  const NOPE = '0190f5a2-7b3c-7def-8abc-0123456789ab';
  const post = (body: unknown) => call('POST', '/api/v1/update-deployments', body);
  const refused = async (body: unknown, label: string) => t.match(await post(body), { status: 400, body: { error: { code: 'validation_failed' } } }, label);
  await refused({ releaseId: release.id, targets: {} }, 'no target');
  await refused({ releaseId: release.id, targets: { all: true }, waves: [] }, 'no wave');
  await refused({ releaseId: release.id, targets: { all: true }, waves: [{ percent: 120 }] }, 'a share over 100');
  await refused({ releaseId: release.id, targets: { all: true }, waves: [{ screens: 1, percent: 5 }] }, 'both in a wave');
  await refused({ releaseId: release.id, targets: { all: true }, confirmTimeoutSec: 0 }, 'a zero timeout');
  await refused({ releaseId: release.id, targets: { all: true }, maintenanceWindow: { start: '25:00', end: '02:00' } }, 'a bad time');
  await refused({ releaseId: release.id, targets: { all: true }, maintenanceWindow: { start: '02:00', end: '02:00' } }, 'an empty window');
  await refused({ releaseId: 'x', targets: { all: true } }, 'a release id that is no uuid');
  const unknown = await post({ releaseId: NOPE, targets: { screenIds: [NOPE] } });
  t.match(unknown, { status: 400, body: { error: { code: 'validation_failed' } } });
  t.same(
    unknown.body.error.details.issues.map((i: any) => i.path),
    [['releaseId'], ['targets', 'screenIds', 0]],
    'names each unknown id',
  );
  t.match(await call('GET', `/api/v1/update-deployments/${NOPE}`), { status: 404, body: { error: { code: 'not_found' } } });
  t.match(await call('POST', `/api/v1/update-deployments/${NOPE}/cancel`), { status: 404 });
  const d = (await post({ releaseId: release.id, targets: { all: true } })).body.data;
  t.match(await call('POST', `/api/v1/update-deployments/${d.id}/screens/${NOPE}/retry`), { status: 404 });
  t.match(await status(app, s, d.id, { state: 'exploded' }), { status: 400, body: { error: { code: 'validation_failed' } } });
  t.match(await status(app, s, d.id, { state: 'installed' }), { status: 400 }, 'installed needs the version');
  t.match(await status(app, s, d.id, { state: 'downloading', progress: 2 }), { status: 400 });
  t.match(await status(app, s, NOPE, { state: 'downloading' }), { status: 404 });
  t.match(await app.json(`/api/v1/player/updates/${NOPE}`, { headers: s.headers }), { status: 404 });
  t.equal((await app.json(`/api/v1/player/updates/${release.id}`)).status, 401, 'the device credential is needed');
  const editor = await signIn(app, { role: 'editor' });
  t.equal((await app.json('/api/v1/update-deployments', { headers: editor.headers })).status, 403, 'admins only, GET too');
  t.equal((await app.json(`/api/v1/player/updates/${release.id}`, { headers: owner.headers })).status, 401, 'a session is not a device');
});

/** The real app on a data directory that outlives it (a restart). */
async function appOn(dataDir: string): Promise<TestApp & { stop(): Promise<void> }> {
  const database = openDatabase(path.join(dataDir, 'placard.db'));
  await migrate(database.db);
  const deps = newAppDeps({ config: testConfig(dataDir), db: database.db, logger: createLogger(process.env.PLACARD_TEST_LOG ?? 'silent') });
  const server = await listen(buildApp(deps), '127.0.0.1', 0, 1_000);
  const doFetch = (p: string, init?: RequestInit) => fetch(server.url + p, init);
  return {
    url: server.url,
    dataDir,
    deps,
    database,
    server,
    httpsUrl: null,
    tls: null,
    fetch: doFetch,
    json: jsonOver(doFetch),
    async stop() {
      await server.close();
      await deps.periodic.stop();
      await database.close();
    },
  };
}

t.test('a restart on the same data directory continues the rollout', async (t) => {
  const dir = tempDataDir(t);
  const first = await appOn(dir);
  const owner = await signIn(first);
  const screens = [];
  for (let i = 0; i < 4; i++) screens.push(await fleetScreen(first, owner, `r${i}`, { family: 'edge', architecture: 'x86_64', version: '1.0.0' }));
  const release = await makeRelease(first, { family: 'edge', version: '1.1.0', artifacts: [{ architecture: 'x86_64', kind: 'tarball' }] });
  const created = (
    await first.json('/api/v1/update-deployments', {
      method: 'POST',
      headers: owner.headers,
      json: { releaseId: release.id, targets: { all: true }, waveWaitSec: 0 },
    })
  ).body.data;
  const canaryId = created.screens.find((s: any) => s.wave === 0).screenId;
  await first.stop();

  const second = await appOn(dir);
  t.teardown(() => second.stop());
  const login = await second.json('/api/v1/auth/login', { method: 'POST', json: { email: owner.user.email, password: owner.password } });
  const admin = { ...owner, headers: { cookie: cookieHeader(login), 'x-csrf-token': login.body.data.csrfToken } };
  const canary = screens.find((s) => s.screenId === canaryId)!;
  t.equal((await second.json('/api/v1/player/config', { headers: canary.headers })).body.data.update?.deploymentId, created.id, 'the offer survived');
  await heartbeat(second, canary, { playerFamily: 'edge', playerArchitecture: 'x86_64', playerVersion: '1.1.0' });
  const d = await until(second, admin, created.id, (x) => x.currentWave === 1);
  t.match(d, { state: 'running', counts: { installed: 1, offered: 1 } }, 'the next wave was offered by the new process');
});
