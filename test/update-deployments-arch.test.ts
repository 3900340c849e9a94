import { createHash, randomBytes } from 'node:crypto';
import t from 'tap';
import { signedInApp } from './helpers/auth.js';
import { fleetScreen, makeRelease } from './helpers/update-deployments.js';

/**
 * A venue with a Raspberry Pi and an x64 box (docs/update-deployments.md "Architectures"): a
 * desktop-linux screen records no architecture (spec 2.2 keeps it only for edge), so it is
 * eligible for a release with an artifact per architecture, and its player names the one it
 * needs with `?architecture=`.
 */

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

t.test('one desktop-linux release for x86_64 and aarch64: both screens offered, each fetches its own artifact', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  // The Pi says aarch64 in its heartbeat: kept only for edge, so it is recorded as absent.
  const pi = await fleetScreen(app, owner, 'pi', { family: 'desktop-linux', architecture: 'aarch64', version: '1.0.0' });
  const box = await fleetScreen(app, owner, 'box', { family: 'desktop-linux', version: '1.0.0' });
  t.equal((await call('GET', `/api/v1/screens/${pi.screenId}`)).body.data.playerArchitecture, null, 'no architecture recorded for desktop-linux');

  const x64 = randomBytes(200_000);
  const arm = randomBytes(150_000);
  const release = await makeRelease(app, {
    family: 'desktop-linux',
    version: '2.0.0',
    artifacts: [
      { architecture: 'x86_64', kind: 'tarball', bytes: x64 },
      { architecture: 'aarch64', kind: 'tarball', bytes: arm },
    ],
  });
  const res = await call('POST', '/api/v1/update-deployments', {
    releaseId: release.id,
    targets: { screenIds: [pi.screenId, box.screenId] },
    waves: [{ percent: 100 }],
  });
  t.equal(res.status, 201, JSON.stringify(res.body));
  const d = res.body.data;
  t.match(d.counts, { total: 2, skipped: 0, offered: 2 }, 'neither screen is skipped');
  t.same(
    d.screens.map((s: any) => [s.name, s.state, s.skipReason]),
    [
      ['box', 'offered', null],
      ['pi', 'offered', null],
    ],
  );

  for (const [screen, arch, bytes] of [
    [pi, 'aarch64', arm],
    [box, 'x86_64', x64],
  ] as const) {
    const meta = await app.json(`/api/v1/player/updates/${release.id}?architecture=${arch}`, { headers: screen.headers });
    t.equal(meta.status, 200, JSON.stringify(meta.body));
    t.match(meta.body.data, {
      deploymentId: d.id,
      family: 'desktop-linux',
      version: '2.0.0',
      artifact: { architecture: arch, kind: 'tarball', sizeBytes: bytes.length, sha256: sha256(bytes) },
    });
    const url = meta.body.data.artifact.url;
    t.equal(url, `/api/v1/player/updates/${release.id}/artifact?architecture=${arch}`, 'the URL names the same artifact');
    const got = await app.fetch(url, { headers: screen.headers });
    t.equal(got.status, 200);
    t.equal(got.headers.get('etag'), `"${sha256(bytes)}"`);
    const body = Buffer.from(await got.arrayBuffer());
    t.equal(sha256(body), meta.body.data.artifact.sha256, `${screen.name} gets the ${arch} bytes and they hash to the release's sha256`);
    // Range resume works per architecture too.
    const tail = await app.fetch(url, { headers: { ...screen.headers, range: 'bytes=1000-' } });
    t.equal(tail.status, 206);
    t.same(Buffer.concat([body.subarray(0, 1000), Buffer.from(await tail.arrayBuffer())]), bytes);
  }

  // Without the parameter the server cannot choose: 400 naming the choices, metadata and bytes alike.
  for (const p of [`/api/v1/player/updates/${release.id}`, `/api/v1/player/updates/${release.id}/artifact`]) {
    const r = await app.json(p, { headers: pi.headers });
    t.equal(r.status, 400, p);
    t.equal(r.body.error.code, 'validation_failed');
    t.same(r.body.error.details.architectures, ['aarch64', 'x86_64'], 'the choices are named');
    t.match(r.body.error.message, /aarch64, x86_64/);
    t.match(r.body.error.details.issues, [{ location: 'query', path: ['architecture'] }]);
  }
  // An architecture Placard does not know: 400 (also `any`, which is no machine's).
  for (const bad of ['armv7l', 'any', 'X86_64', ''])
    t.match(
      await app.json(`/api/v1/player/updates/${release.id}?architecture=${bad}`, { headers: pi.headers }),
      { status: 400, body: { error: { code: 'validation_failed' } } },
      `architecture=${bad}`,
    );
  t.equal(
    (await app.fetch(`/api/v1/player/updates/${release.id}/artifact?architecture=riscv64`, { headers: box.headers })).status,
    400,
    'the bytes route checks it too',
  );
  t.equal((await app.fetch(`/api/v1/player/updates/${release.id}/apk?architecture=x86_64`, { headers: box.headers })).status, 404, 'apk: android only');
  t.equal((await app.fetch(`/api/v1/player/updates/${release.id}/apk`, { headers: box.headers })).status, 404, 'apk without the parameter: still 404');

  // Each reports its install; the deployment completes.
  for (const s of [pi, box]) {
    const r = await app.json(`/api/v1/player/update-deployments/${d.id}/status`, {
      method: 'POST',
      headers: s.headers,
      json: { state: 'installed', version: '2.0.0' },
    });
    t.equal(r.body.data.state, 'installed');
  }
  t.match((await call('GET', `/api/v1/update-deployments/${d.id}`)).body.data, { state: 'completed', counts: { installed: 2 } });
});

t.test('which artifact: `any` and the only one without the parameter, 404 for an architecture the release lacks', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const s = await fleetScreen(app, owner, 'box', { family: 'desktop-linux', version: '1.0.0' });

  // Only an x86_64 artifact: offered (the player may be an x64 box); a Pi asking for aarch64 gets 404.
  const only = await makeRelease(app, { family: 'desktop-linux', version: '1.1.0', artifacts: [{ architecture: 'x86_64', kind: 'deb' }] });
  const d1 = (await call('POST', '/api/v1/update-deployments', { releaseId: only.id, targets: { screenIds: [s.screenId] } })).body.data;
  t.equal(d1.screens[0].state, 'offered');
  const plain = (await app.json(`/api/v1/player/updates/${only.id}`, { headers: s.headers })).body.data;
  t.match(plain.artifact, { architecture: 'x86_64', kind: 'deb', url: `/api/v1/player/updates/${only.id}/artifact?architecture=x86_64` }, 'the only one');
  const missing = await app.json(`/api/v1/player/updates/${only.id}?architecture=aarch64`, { headers: s.headers });
  t.match(missing, { status: 404, body: { error: { code: 'not_found', message: /no artifact for aarch64/ } } });
  t.equal((await app.fetch(`/api/v1/player/updates/${only.id}/artifact?architecture=aarch64`, { headers: s.headers })).status, 404);
  t.equal((await app.fetch(`/api/v1/player/updates/${only.id}/artifact?architecture=x86_64`, { headers: s.headers })).status, 200);

  // An `any` artifact besides an aarch64 one: aarch64 takes its own, x86_64 and no parameter take `any`.
  const mixed = await makeRelease(app, {
    family: 'desktop-linux',
    version: '1.2.0',
    artifacts: [
      { architecture: 'any', kind: 'tarball' },
      { architecture: 'aarch64', kind: 'tarball' },
    ],
  });
  const d2 = (await call('POST', '/api/v1/update-deployments', { releaseId: mixed.id, targets: { screenIds: [s.screenId] } })).body.data;
  t.equal(d2.screens[0].state, 'offered');
  const pick = async (q: string) => (await app.json(`/api/v1/player/updates/${mixed.id}${q}`, { headers: s.headers })).body.data.artifact;
  t.match(await pick('?architecture=aarch64'), { architecture: 'aarch64', url: `/api/v1/player/updates/${mixed.id}/artifact?architecture=aarch64` });
  t.match(await pick('?architecture=x86_64'), { architecture: 'any', url: `/api/v1/player/updates/${mixed.id}/artifact` });
  t.match(await pick(''), { architecture: 'any' });
  const anyBytes = Buffer.from(await (await app.fetch(`/api/v1/player/updates/${mixed.id}/artifact`, { headers: s.headers })).arrayBuffer());
  t.equal(sha256(anyBytes), mixed.artifacts.find((a) => a.architecture === 'any')!.sha256);
});

t.test('a screen without an architecture needs every artifact stored; an edge screen keeps its recorded one', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const desk = await fleetScreen(app, owner, 'desk', { family: 'desktop-linux', version: '1.0.0' });
  // One architecture cached, the other still remote: the screen may need either.
  const half = await makeRelease(app, {
    family: 'desktop-linux',
    version: '3.0.0',
    artifacts: [
      { architecture: 'x86_64', kind: 'tarball' },
      { architecture: 'aarch64', kind: 'tarball', stored: false },
    ],
  });
  t.match(await call('POST', '/api/v1/update-deployments', { releaseId: half.id, targets: { screenIds: [desk.screenId] } }), {
    status: 409,
    body: { error: { code: 'release_not_cached', details: { architectures: ['aarch64'] } } },
  });

  // Edge records its architecture: a release without it (nor `any`) skips the screen; with it, the
  // query must name that architecture or be left out.
  const edge = await fleetScreen(app, owner, 'edge', { family: 'edge', architecture: 'x86_64', version: '1.0.0' });
  const armOnly = await makeRelease(app, { family: 'edge', version: '2.0.0', artifacts: [{ architecture: 'aarch64', kind: 'tarball' }] });
  const skipped = (await call('POST', '/api/v1/update-deployments', { releaseId: armOnly.id, targets: { screenIds: [edge.screenId] } })).body.data;
  t.match(skipped.screens[0], { state: 'skipped', skipReason: 'architecture_mismatch' });

  const both = await makeRelease(app, {
    family: 'edge',
    version: '2.1.0',
    artifacts: [
      { architecture: 'x86_64', kind: 'tarball' },
      { architecture: 'aarch64', kind: 'tarball' },
    ],
  });
  const d = (await call('POST', '/api/v1/update-deployments', { releaseId: both.id, targets: { screenIds: [edge.screenId] } })).body.data;
  t.equal(d.screens[0].state, 'offered');
  const x64 = both.artifacts.find((a) => a.architecture === 'x86_64')!;
  const plain = (await app.json(`/api/v1/player/updates/${both.id}`, { headers: edge.headers })).body.data.artifact;
  t.match(
    plain,
    { architecture: 'x86_64', sha256: x64.sha256, url: `/api/v1/player/updates/${both.id}/artifact` },
    'the recorded architecture, no query needed',
  );
  t.match((await app.json(`/api/v1/player/updates/${both.id}?architecture=x86_64`, { headers: edge.headers })).body.data.artifact, {
    architecture: 'x86_64',
  });
  t.match(await app.json(`/api/v1/player/updates/${both.id}?architecture=aarch64`, { headers: edge.headers }), {
    status: 404,
    body: { error: { code: 'not_found', message: /reports architecture x86_64, not aarch64/ } },
  });
  t.equal((await app.fetch(`/api/v1/player/updates/${both.id}/artifact?architecture=aarch64`, { headers: edge.headers })).status, 404);
  const bytes = Buffer.from(await (await app.fetch(plain.url, { headers: edge.headers })).arrayBuffer());
  t.equal(sha256(bytes), x64.sha256);
});
