import { createHash, randomBytes } from 'node:crypto';
import t from 'tap';
import { signedInApp } from './helpers/auth.js';
import { openSocket } from './helpers/screens.js';
import { fleetScreen, heartbeat, makeRelease, until } from './helpers/update-deployments.js';

/**
 * A staged update across 20 screens through the real routes (issue 23, docs/update-deployments.md):
 * skipping with reasons, a canary, 50 %, 100 %, players fetching with Range resume and
 * sha256, reports, a failure pausing, retry, cancel.
 */
t.test('a deployment across 20 screens: canary, 50 %, 100 %, failure pause, retry, cancel', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const screens: Awaited<ReturnType<typeof fleetScreen>>[] = [];
  const add = async (name: string, facts: Parameters<typeof fleetScreen>[3]) => {
    const s = await fleetScreen(app, owner, name, facts);
    screens.push(s);
    return s;
  };
  for (let i = 0; i < 11; i++) await add(`edge-x86-${String(i).padStart(2, '0')}`, { family: 'edge', architecture: 'x86_64', version: '1.4.0' });
  for (let i = 0; i < 3; i++) await add(`edge-arm-${i}`, { family: 'edge', architecture: 'aarch64', version: '1.4.0' });
  for (let i = 0; i < 2; i++) await add(`phone-${i}`, { family: 'android', version: '1.4.0' });
  for (let i = 0; i < 2; i++) await add(`desk-${i}`, { family: 'desktop-linux', version: '1.4.0' });
  await add('edge-current', { family: 'edge', architecture: 'x86_64', version: '2.0.0' });
  await add('silent', { family: null, version: null });
  t.equal(screens.length, 20);

  const bytes = randomBytes(3 * 1024 * 1024);
  const release = await makeRelease(app, { family: 'edge', version: '2.0.0', artifacts: [{ architecture: 'x86_64', kind: 'tarball', bytes }] });
  const sha = createHash('sha256').update(bytes).digest('hex');

  // Not cached yet: refused.
  const remote = await makeRelease(app, { family: 'edge', version: '2.1.0', artifacts: [{ architecture: 'x86_64', kind: 'tarball', stored: false }] });
  t.match(await call('POST', '/api/v1/update-deployments', { releaseId: remote.id, targets: { all: true } }), {
    status: 409,
    body: { error: { code: 'release_not_cached' } },
  });

  // The first eligible screen by name is the canary: its socket hears of the offer.
  const socket = await openSocket(t, app, screens[0]!.credential);
  const since = Date.now();
  const res = await call('POST', '/api/v1/update-deployments', { releaseId: release.id, targets: { all: true }, waveWaitSec: 0, failureThreshold: 1 });
  await socket.next((m) => m.type === 'manifest.changed', since, 10_000);
  t.equal(res.status, 201, JSON.stringify(res.body));
  let d = res.body.data;
  t.match(d, { state: 'running', release: { family: 'edge', version: '2.0.0' }, currentWave: 0, failureThreshold: 1, waveWaitSec: 0 });
  t.same(
    d.waves.map((w: any) => [w.size, w.state]),
    [
      [1, 'active'],
      [5, 'pending'],
      [5, 'pending'],
    ],
    'eleven eligible: a canary of 1, up to 50 % (6), then the rest',
  );
  const reasons = Object.fromEntries(d.screens.map((s: any) => [s.name, s.skipReason]));
  t.equal(reasons['edge-arm-0'], 'architecture_mismatch');
  t.equal(reasons['phone-1'], 'family_mismatch');
  t.equal(reasons['desk-0'], 'family_mismatch');
  t.equal(reasons['edge-current'], 'already_current');
  t.equal(reasons.silent, 'never_reported');
  t.match(d.counts, { total: 20, skipped: 9, pending: 10, offered: 1, installed: 0 });

  const byId = new Map(screens.map((s) => [s.screenId, s]));
  const inWave = (dep: any, w: number) => dep.screens.filter((s: any) => s.wave === w).map((s: any) => byId.get(s.screenId)!);
  const [canary] = inWave(d, 0);
  t.equal(canary!.screenId, screens[0]!.screenId);
  t.equal(d.screens.find((s: any) => s.screenId === canary!.screenId).state, 'offered');

  // The offer reaches the canary in its config and its manifest, and nobody else.
  const config = (await app.json('/api/v1/player/config', { headers: canary!.headers })).body.data;
  t.same(config.update, { deploymentId: d.id, releaseId: release.id, version: '2.0.0', family: 'edge' });
  t.equal(config.webRelease, null);
  const manifest = (await app.json('/api/v1/player/manifest', { headers: canary!.headers })).body.data;
  t.same(manifest.update, config.update);
  const later = inWave(d, 1)[0]!;
  t.equal((await app.json('/api/v1/player/config', { headers: later.headers })).body.data.update, null);
  t.equal((await app.json(`/api/v1/player/updates/${release.id}`, { headers: later.headers })).status, 404, 'not offered: no metadata');
  t.equal((await app.fetch(`/api/v1/player/updates/${release.id}/artifact`, { headers: later.headers })).status, 404, 'nor bytes');

  // The canary fetches the metadata and the bytes, resuming after the first MiB.
  const meta = (await app.json(`/api/v1/player/updates/${release.id}`, { headers: canary!.headers })).body.data;
  t.match(meta, {
    releaseId: release.id,
    deploymentId: d.id,
    version: '2.0.0',
    artifact: { architecture: 'x86_64', kind: 'tarball', sizeBytes: bytes.length, sha256: sha, url: `/api/v1/player/updates/${release.id}/artifact` },
  });
  const head = await app.fetch(meta.artifact.url, { method: 'HEAD', headers: canary!.headers });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-length'), String(bytes.length));
  t.equal(head.headers.get('etag'), `"${sha}"`);
  const first = await app.fetch(meta.artifact.url, { headers: { ...canary!.headers, range: 'bytes=0-1048575' } });
  t.equal(first.status, 206, first.status === 206 ? '' : await first.clone().text());
  const part1 = Buffer.from(await first.arrayBuffer());
  t.equal(part1.length, 1048576);
  t.match(
    await app.json(`/api/v1/player/update-deployments/${d.id}/status`, {
      method: 'POST',
      headers: canary!.headers,
      json: { state: 'downloading', progress: 1 / 3 },
    }),
    { status: 200, body: { data: { state: 'downloading' } } },
  );
  const rest = await app.fetch(meta.artifact.url, { headers: { ...canary!.headers, range: `bytes=${part1.length}-`, 'if-range': `"${sha}"` } });
  t.equal(rest.status, 206);
  t.equal(rest.headers.get('content-range'), `bytes 1048576-${bytes.length - 1}/${bytes.length}`);
  const whole = Buffer.concat([part1, Buffer.from(await rest.arrayBuffer())]);
  t.equal(createHash('sha256').update(whole).digest('hex'), meta.artifact.sha256, 'the resumed download matches its sha256');
  t.equal((await app.fetch(meta.artifact.url, { headers: { ...canary!.headers, range: `bytes=${bytes.length}-` } })).status, 416);
  t.equal((await app.fetch(`/api/v1/player/updates/${release.id}/apk`, { headers: canary!.headers })).status, 404, 'apk: android only');

  d = (await call('GET', `/api/v1/update-deployments/${d.id}`)).body.data;
  t.match(
    d.screens.find((s: any) => s.screenId === canary!.screenId),
    { state: 'downloading', progress: 1 / 3 },
  );
  for (const state of ['downloaded', 'installing'])
    t.equal(
      (await app.json(`/api/v1/player/update-deployments/${d.id}/status`, { method: 'POST', headers: canary!.headers, json: { state } })).body.data.state,
      state,
    );
  // The heartbeat with the new version confirms; the next wave is offered.
  await heartbeat(app, canary!, { playerFamily: 'edge', playerArchitecture: 'x86_64', playerVersion: '2.0.0' });
  d = await until(app, owner, d.id, (x) => x.currentWave === 1);
  t.match(
    d.screens.find((s: any) => s.screenId === canary!.screenId),
    { state: 'installed', installedVersion: '2.0.0', fromVersion: '1.4.0' },
  );
  t.equal(d.waves[0].state, 'done');
  t.equal((await app.json('/api/v1/player/config', { headers: canary!.headers })).body.data.update, null, 'installed: the offer is gone');
  const wave1 = inWave(d, 1);
  t.ok(
    d.screens.filter((s: any) => s.wave === 1).every((s: any) => s.state === 'offered'),
    'wave 1 offered',
  );

  // Four install by report; one fails: the deployment pauses at threshold 1.
  for (const s of wave1.slice(0, 4)) {
    const r = await app.json(`/api/v1/player/update-deployments/${d.id}/status`, {
      method: 'POST',
      headers: s.headers,
      json: { state: 'installed', version: '2.0.0' },
    });
    t.equal(r.body.data.state, 'installed');
  }
  const failing = wave1[4]!;
  t.equal(
    (
      await app.json(`/api/v1/player/update-deployments/${d.id}/status`, {
        method: 'POST',
        headers: failing.headers,
        json: { state: 'failed', error: 'disk full' },
      })
    ).body.data.state,
    'failed',
  );
  d = await until(app, owner, d.id, (x) => x.state === 'paused');
  t.match(d, { pausedReason: 'failure_threshold', currentWave: 1, counts: { installed: 5, failed: 1, pending: 5 } });
  t.match(
    d.screens.find((s: any) => s.screenId === failing.screenId),
    { state: 'failed', error: 'disk full' },
  );
  await app.deps.periodic.runNow('update-deployments.tick');
  t.equal((await call('GET', `/api/v1/update-deployments/${d.id}`)).body.data.counts.pending, 5, 'paused: no further wave');

  // Retry: offered again, the deployment runs, the screen installs, the rollout continues.
  t.match(await call('POST', `/api/v1/update-deployments/${d.id}/screens/${canary!.screenId}/retry`), { status: 409, body: { error: { code: 'not_failed' } } });
  const retried = await call('POST', `/api/v1/update-deployments/${d.id}/screens/${failing.screenId}/retry`);
  t.equal(retried.status, 200);
  t.match(retried.body.data, { state: 'running', pausedReason: null });
  t.match(
    retried.body.data.screens.find((s: any) => s.screenId === failing.screenId),
    { state: 'offered', error: null },
  );
  t.equal((await app.json('/api/v1/player/config', { headers: failing.headers })).body.data.update?.releaseId, release.id);
  await heartbeat(app, failing, { playerFamily: 'edge', playerArchitecture: 'x86_64', playerVersion: '2.0.0' });
  d = await until(app, owner, d.id, (x) => x.currentWave === 2);
  const wave2 = inWave(d, 2);
  t.equal(wave2.length, 5);
  for (const s of wave2.slice(0, 2))
    await app.json(`/api/v1/player/update-deployments/${d.id}/status`, { method: 'POST', headers: s.headers, json: { state: 'installed', version: '2.0.0' } });

  // Cancel: the rest is withdrawn, the installed stay installed.
  const cancelled = await call('POST', `/api/v1/update-deployments/${d.id}/cancel`);
  t.equal(cancelled.status, 200);
  t.match(cancelled.body.data, { state: 'cancelled', counts: { installed: 8, cancelled: 3, failed: 0 } });
  t.equal((await app.json('/api/v1/player/config', { headers: wave2[4]!.headers })).body.data.update, null, 'the offer is withdrawn');
  t.match(await app.json(`/api/v1/player/update-deployments/${d.id}/status`, { method: 'POST', headers: wave2[4]!.headers, json: { state: 'downloading' } }), {
    status: 409,
    body: { error: { code: 'deployment_finished' } },
  });
  t.match(await call('POST', `/api/v1/update-deployments/${d.id}/cancel`), { status: 409, body: { error: { code: 'deployment_finished' } } });
  t.match(await call('POST', `/api/v1/update-deployments/${d.id}/screens/${wave2[4]!.screenId}/retry`), {
    status: 409,
    body: { error: { code: 'deployment_finished' } },
  });

  const list = (await call('GET', '/api/v1/update-deployments')).body.data;
  t.equal(list.length, 1);
  t.match(list[0], { id: d.id, state: 'cancelled', counts: { total: 20, installed: 8 } });
  t.notOk('screens' in list[0], 'the list has no screens');
});
