import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { releaseArtifact } from '../server/src/modules/player-releases/index.js';
import { type SignedIn, signedInApp } from './helpers/auth.js';
import { type FakeReleaseSource, startFakeReleaseSource } from './helpers/fake-release-source.js';
import type { TestApp } from './helpers/harness.js';
import { makeApk, makeTarGz, makeWebBuild, makeZip } from './helpers/release-artifacts.js';
import { pairScreen } from './helpers/screens.js';

// check and cache against the fake release source: what screens run decides what is asked
// and what is newer; downloads resume after a cut and are verified (sha256, Ed25519).

const digest = (b: Buffer) => createHash('sha256').update(b).digest();
const LOOPBACK = { fetchAllowLoopback: true };

type Call = (method: string, path: string, json?: unknown) => Promise<{ status: number; body: any }>;

/** Connects the app to the fake through the real device flow. */
async function connect(app: TestApp, call: Call, fake: FakeReleaseSource) {
  await call('POST', '/api/v1/player-releases/release-source/device', { url: fake.url });
  fake.approve();
  await app.deps.db
    .updateTable('release_source')
    .set({ next_poll_at: new Date(Date.now() - 1000).toISOString() })
    .execute();
  const polled = await call('POST', '/api/v1/player-releases/release-source/device/poll');
  if (polled.body.data.state !== 'connected') throw new Error(`not connected: ${JSON.stringify(polled.body)}`);
}

/** A screen that reported this family, architecture and version in a heartbeat. */
async function screen(
  app: TestApp,
  owner: SignedIn,
  name: string,
  status: { playerFamily: string | null; playerArchitecture?: string; playerVersion: string },
) {
  const s = await pairScreen(app, owner, { name });
  const res = await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json: status });
  if (res.status !== 200) throw new Error(`heartbeat ${res.status}`);
  return s;
}

/** The release once `done` says so (GET polled; the download runs in the background). */
async function settle(call: Call, id: string, done: (r: any) => boolean) {
  for (let i = 0; i < 400; i++) {
    const r = (await call('GET', '/api/v1/player-releases')).body.data.find((x: any) => x.id === id);
    if (r && done(r)) return r;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`release ${id} did not settle`);
}
const settled = (r: any) => r.architectures.every((a: any) => a.cacheState !== 'downloading');

t.test('check: asks for what the screens run, records new releases, answers what is newer', async (t) => {
  const fake = await startFakeReleaseSource(t);
  const { app, owner, call } = await signedInApp(t, { config: LOOPBACK });
  const apk = makeApk();
  const edgeArm = await makeTarGz([{ name: 'placard/bin/player', body: 'arm' }]);
  const web = await makeWebBuild('1.3.0');
  fake.addRelease({
    id: 'and-2',
    family: 'android',
    version: '2.0.0',
    channel: 'stable',
    notes: 'New',
    artifacts: [{ architecture: 'any', kind: 'apk', fileName: 'p.apk', bytes: apk }],
  });
  fake.addRelease({
    id: 'and-15',
    family: 'android',
    version: '1.5.0',
    channel: 'stable',
    artifacts: [{ architecture: 'any', kind: 'apk', fileName: 'p.apk', bytes: apk }],
  });
  fake.addRelease({
    id: 'and-3b',
    family: 'android',
    version: '3.0.0-beta.1',
    channel: 'beta',
    artifacts: [{ architecture: 'any', kind: 'apk', fileName: 'p.apk', bytes: apk }],
  });
  fake.addRelease({
    id: 'edge-11',
    family: 'edge',
    version: '1.1.0',
    channel: 'stable',
    artifacts: [{ architecture: 'aarch64', kind: 'tarball', fileName: 'e.tar.gz', bytes: edgeArm }],
  });
  fake.addRelease({
    id: 'edge-19',
    family: 'edge',
    version: '1.9.0',
    channel: 'stable',
    artifacts: [{ architecture: 'x86_64', kind: 'tarball', fileName: 'e.tar.gz', bytes: edgeArm }],
  });
  fake.addRelease({
    id: 'web-13',
    family: 'web',
    version: '1.3.0',
    channel: 'stable',
    artifacts: [{ architecture: 'any', kind: 'web', fileName: 'w.tar.gz', bytes: web }],
  });
  fake.addRelease({
    id: 'bad',
    family: 'android',
    version: 'not-semver',
    channel: 'stable',
    artifacts: [{ architecture: 'any', kind: 'apk', fileName: 'p.apk', bytes: apk }],
  });

  t.equal((await call('POST', '/api/v1/player-releases/check')).body.error.code, 'release_source_not_connected', 'not connected: 409');
  await connect(app, call, fake);

  await screen(app, owner, 'Old tablet', { playerFamily: 'android', playerVersion: '1.2.0' });
  await screen(app, owner, 'New tablet', { playerFamily: 'android', playerVersion: '1.5.0' });
  await screen(app, owner, 'Edge box', { playerFamily: 'edge', playerArchitecture: 'aarch64', playerVersion: '1.0.0' });
  await screen(app, owner, 'Browser', { playerFamily: null, playerVersion: '1.3.0' });
  await pairScreen(app, owner, { name: 'Never reported', playerFamily: 'desktop-linux' }).then((s) =>
    app.deps.db.updateTable('screens').set({ player_version: null }).where('id', '=', s.screenId).execute(),
  );

  const checked = await call('POST', '/api/v1/player-releases/check');
  t.equal(checked.status, 200, JSON.stringify(checked.body));
  const lists = fake.requests.filter((r) => r.path === '/v1/releases');
  t.same(
    lists.map((r) => r.query),
    [{ family: 'android' }, { family: 'edge', architecture: 'aarch64' }, { family: 'web' }],
    'asked once per family and architecture the screens run',
  );
  t.ok(
    lists.every((r) => r.authorization === `Bearer ${fake.accessToken}`),
    'with the token',
  );
  t.same(
    checked.body.data.newer,
    [
      { family: 'android', architecture: 'any', currentVersion: '1.2.0', latestVersion: '2.0.0' },
      { family: 'edge', architecture: 'aarch64', currentVersion: '1.0.0', latestVersion: '1.1.0' },
    ],
    'newer than the oldest version running (stable only; the web screens run the latest)',
  );
  t.same(
    checked.body.data.releases.map((r: any) => `${r.family} ${r.version} ${r.source} ${r.sourceReleaseId}`),
    [
      'android 3.0.0-beta.1 release-source and-3b',
      'android 2.0.0 release-source and-2',
      'android 1.5.0 release-source and-15',
      'edge 1.1.0 release-source edge-11',
      'web 1.3.0 release-source web-13',
    ],
    'the releases offered for what screens run (not the x86_64 edge one, not the bad version)',
  );
  const and2 = checked.body.data.releases.find((r: any) => r.version === '2.0.0');
  t.match(and2, {
    notes: 'New',
    cached: false,
    architectures: [{ architecture: 'any', kind: 'apk', cacheState: 'remote', cachedBytes: 0, sizeBytes: apk.length, signed: false }],
  });
  const stored = await app.deps.db.selectFrom('player_release_artifacts').select('remote_url').where('release_id', '=', and2.id).executeTakeFirstOrThrow();
  t.equal(stored.remote_url, `${fake.url}/artifacts/and-2/any/p.apk`, 'a relative artifact URL is resolved against the source');

  const second = await call('POST', '/api/v1/player-releases/check');
  t.equal(second.status, 200);
  t.equal((await call('GET', '/api/v1/player-releases')).body.data.length, 5, 'a second check records nothing twice');
  t.ok((await call('GET', '/api/v1/player-releases')).body.releaseSource.checkedAt, 'checkedAt recorded');

  // No key pinned: an unsigned artifact is cached (verified by its sha256 alone).
  const webRelease = checked.body.data.releases.find((r: any) => r.family === 'web');
  const started = await call('POST', `/api/v1/player-releases/${webRelease.id}/cache`);
  t.equal(started.status, 202);
  const cached = await settle(call, webRelease.id, settled);
  t.equal(cached.architectures[0].cacheState, 'cached', JSON.stringify(cached));
  t.same(readFileSync((await releaseArtifact(app.deps.db, webRelease.id, 'any'))!.absolutePath), web);

  fake.revokeToken();
  const refused = await call('POST', '/api/v1/player-releases/check');
  t.equal(refused.status, 409);
  t.equal(refused.body.error.code, 'release_source_not_connected');
  t.match((await call('GET', '/api/v1/player-releases')).body.releaseSource, { state: 'failed', error: /refused the token/ });
});

t.test('cache: resumed after cuts, verified by sha256 and the pinned Ed25519 key', async (t) => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const rawKey = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');
  const signed = (b: Buffer) => sign(null, digest(b), privateKey).toString('base64');
  const fake = await startFakeReleaseSource(t);
  const { app, owner, call } = await signedInApp(t, { config: { ...LOOPBACK, releaseSigningKey: rawKey } });

  const big = makeZip([
    { name: 'AndroidManifest.xml', body: 'manifest' },
    { name: 'lib/arm64-v8a/libplayer.so', body: randomBytes(300_000) },
  ]);
  const other = makeZip([
    { name: 'AndroidManifest.xml', body: 'manifest' },
    { name: 'classes.dex', body: randomBytes(5000) },
  ]);
  const corrupted = Buffer.from(other);
  corrupted.writeUInt8(corrupted.readUInt8(100) ^ 0xff, 100); // a byte of the dex, the size unchanged
  const edge = await makeTarGz([{ name: 'placard/bin/player', body: 'edge' }]);
  fake.addRelease({
    id: 'a2',
    family: 'android',
    version: '2.0.0',
    channel: 'stable',
    artifacts: [{ architecture: 'any', kind: 'apk', fileName: 'p.apk', bytes: big, signature: signed(big) }],
  });
  fake.addRelease({
    id: 'a19',
    family: 'android',
    version: '1.9.0',
    channel: 'stable',
    artifacts: [{ architecture: 'any', kind: 'apk', fileName: 'p.apk', bytes: other, servedBytes: corrupted, signature: signed(other) }],
  });
  fake.addRelease({
    id: 'a18',
    family: 'android',
    version: '1.8.0',
    channel: 'stable',
    artifacts: [{ architecture: 'any', kind: 'apk', fileName: 'p.apk', bytes: other }],
  });
  fake.addRelease({
    id: 'e2',
    family: 'edge',
    version: '2.0.0',
    channel: 'stable',
    artifacts: [{ architecture: 'aarch64', kind: 'tarball', fileName: 'e.tar.gz', bytes: edge, signature: signed(Buffer.from('something else')) }],
  });
  await connect(app, call, fake);
  await screen(app, owner, 'Tablet', { playerFamily: 'android', playerVersion: '1.0.0' });
  await screen(app, owner, 'Edge', { playerFamily: 'edge', playerArchitecture: 'aarch64', playerVersion: '1.0.0' });
  const releases = (await call('POST', '/api/v1/player-releases/check')).body.data.releases;
  const id = (family: string, version: string) => releases.find((r: any) => r.family === family && r.version === version).id;

  // Cut four times (every attempt of one run): the artifact fails with what arrived, kept.
  fake.cutDownloadsAfter(40_000, 4);
  const started = await call('POST', `/api/v1/player-releases/${id('android', '2.0.0')}/cache`);
  t.equal(started.status, 202);
  t.equal(started.body.data.architectures[0].cacheState, 'downloading');
  const cut = await settle(call, id('android', '2.0.0'), settled);
  t.match(cut.architectures[0], { cacheState: 'failed', cachedBytes: 160_000, error: /download failed/ }, 'progress kept: four cuts of 40 000 bytes');
  const downloads = () => fake.requests.filter((r) => r.path === '/artifacts/a2/any/p.apk');
  t.same(
    downloads().map((r) => r.range),
    [null, 'bytes=40000-', 'bytes=80000-', 'bytes=120000-'],
    'each attempt resumed where the last stopped',
  );
  t.ok(
    downloads().every((r) => r.authorization === `Bearer ${fake.accessToken}`),
    'the token goes to the source’s own origin',
  );
  // Cached again: resumed from the .part, cut once more, resumed, verified.
  fake.cutDownloadsAfter(50_000, 1);
  t.equal((await call('POST', `/api/v1/player-releases/${id('android', '2.0.0')}/cache`)).status, 202);
  const done = await settle(call, id('android', '2.0.0'), settled);
  t.match(done, { cached: true, architectures: [{ cacheState: 'cached', cachedBytes: big.length, error: null, signed: true }] });
  t.same(
    downloads()
      .slice(4)
      .map((r) => r.range),
    ['bytes=160000-', 'bytes=210000-'],
  );
  const found = await releaseArtifact(app.deps.db, id('android', '2.0.0'), 'aarch64');
  t.equal(found?.absolutePath, path.join(app.dataDir, 'releases', id('android', '2.0.0'), 'any', 'p.apk'));
  t.same(readFileSync(found!.absolutePath), big, 'the stored bytes are the release, whole');
  t.notOk(existsSync(`${found!.absolutePath}.part`), 'no .part left');
  const again = await call('POST', `/api/v1/player-releases/${id('android', '2.0.0')}/cache`);
  t.equal(again.status, 200, 'already cached: 200');

  const refusedCases: [string, string, RegExp][] = [
    ['android', '1.9.0', /sha256 mismatch/],
    ['android', '1.8.0', /unsigned/],
    ['edge', '2.0.0', /signature mismatch/],
  ];
  for (const [family, version, why] of refusedCases) {
    const releaseId = id(family, version);
    t.equal((await call('POST', `/api/v1/player-releases/${releaseId}/cache`)).status, 202);
    const r = await settle(call, releaseId, settled);
    t.match(r.architectures[0], { cacheState: 'failed', error: why }, `${family} ${version}`);
    t.equal(await releaseArtifact(app.deps.db, releaseId, r.architectures[0].architecture), null, 'not stored');
    const dir = path.join(app.dataDir, 'releases', releaseId, r.architectures[0].architecture);
    t.same(existsSync(dir) ? readdirSync(dir) : [], [], 'its bytes are deleted');
  }

  const unknown = await call('POST', '/api/v1/player-releases/0190d8a0-0000-7000-8000-000000000000/cache');
  t.equal(unknown.status, 404);
  t.equal((await call('POST', '/api/v1/player-releases/not-a-uuid/cache')).status, 404);
});

t.test('a download left running by a restart resumes from its .part', async (t) => {
  const fake = await startFakeReleaseSource(t);
  const { app, owner, call } = await signedInApp(t, { config: LOOPBACK });
  const apk = makeZip([
    { name: 'AndroidManifest.xml', body: 'manifest' },
    { name: 'classes.dex', body: randomBytes(100_000) },
  ]);
  fake.addRelease({
    id: 'a3',
    family: 'android',
    version: '3.0.0',
    channel: 'stable',
    artifacts: [{ architecture: 'any', kind: 'apk', fileName: 'p.apk', bytes: apk }],
  });
  await connect(app, call, fake);
  await screen(app, owner, 'Tablet', { playerFamily: 'android', playerVersion: '1.0.0' });
  const releaseId = (await call('POST', '/api/v1/player-releases/check')).body.data.releases[0].id;
  fake.cutDownloadsAfter(20_000, 4);
  await call('POST', `/api/v1/player-releases/${releaseId}/cache`);
  t.equal((await settle(call, releaseId, settled)).architectures[0].cachedBytes, 80_000);
  // What a process killed mid-download leaves: the row `downloading`, the .part on disk, nobody running it.
  await app.deps.db.updateTable('player_release_artifacts').set({ cache_state: 'downloading' }).where('release_id', '=', releaseId).execute();
  await app.deps.periodic.runNow('player-releases.resume');
  const done = await settle(call, releaseId, settled);
  t.equal(done.architectures[0].cacheState, 'cached', JSON.stringify(done));
  t.equal(fake.requests.filter((r) => r.path === '/artifacts/a3/any/p.apk').at(-1)!.range, 'bytes=80000-', 'resumed where it stopped');
  t.same(readFileSync((await releaseArtifact(app.deps.db, releaseId, 'any'))!.absolutePath), apk);
});
