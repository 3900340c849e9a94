import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { releaseArtifact, releaseView } from '../server/src/modules/player-releases/index.js';
import { signIn, signedInApp } from './helpers/auth.js';
import type { TestApp } from './helpers/harness.js';
import { makeApk, makeDeb, makeTarGz, makeWebBuild, makeZip } from './helpers/release-artifacts.js';

// Uploads (spec 4.12, docs/player-releases.md): real files of each kind, checked from their bytes.

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function upload(app: TestApp, headers: Record<string, string>, fields: Record<string, string>, file?: { bytes: Buffer; name: string }) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file) form.append('file', new Blob([file.bytes]), file.name);
  const res = await app.fetch('/api/v1/player-releases/upload', { method: 'POST', headers, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

t.test('uploads of each family, checked from their bytes', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const apk = makeApk();
  const got = await upload(app, owner.headers, { family: 'android', version: 'v2.1.0', notes: 'Faster start' }, { bytes: apk, name: 'player.apk' });
  t.equal(got.status, 201, JSON.stringify(got.body));
  const release = got.body.data;
  t.match(release, { family: 'android', version: '2.1.0', channel: 'stable', notes: 'Faster start', source: 'upload', sourceReleaseId: null, cached: true });
  t.same(release.architectures, [
    {
      architecture: 'any',
      kind: 'apk',
      fileName: 'placard-android-2.1.0-any.apk',
      sizeBytes: apk.length,
      sha256: sha(apk),
      signed: false,
      cacheState: 'cached',
      cachedBytes: apk.length,
      error: null,
    },
  ]);
  const stored = path.join(app.dataDir, 'releases', release.id, 'any', 'placard-android-2.1.0-any.apk');
  t.same(readFileSync(stored), apk, 'the bytes are stored under releases/<id>/<arch>/');
  const found = await releaseArtifact(app.deps.db, release.id, 'aarch64');
  t.equal(found?.absolutePath, stored, 'releaseArtifact: an `any` artifact fits every architecture');
  t.same(await releaseView(app.deps.db, release.id), release, 'releaseView answers the same shape');

  // A tarball and a .deb for two architectures of one desktop-linux release.
  const tgz = await makeTarGz([{ name: 'placard-player/bin/placard', body: '#!/bin/sh\n' }]);
  const linux = await upload(
    app,
    owner.headers,
    { family: 'desktop-linux', version: '3.0.0', architecture: 'x86_64', channel: 'beta' },
    { bytes: tgz, name: 'p.tar.gz' },
  );
  t.equal(linux.status, 201, JSON.stringify(linux.body));
  const deb = await makeDeb();
  const linuxArm = await upload(app, owner.headers, { family: 'desktop-linux', version: '3.0.0', architecture: 'aarch64' }, { bytes: deb, name: 'p.deb' });
  t.equal(linuxArm.status, 201, JSON.stringify(linuxArm.body));
  t.equal(linuxArm.body.data.id, linux.body.data.id, 'the same release gains an artifact');
  t.same(
    linuxArm.body.data.architectures.map((a: any) => [a.architecture, a.kind, a.sha256]),
    [
      ['aarch64', 'deb', sha(deb)],
      ['x86_64', 'tarball', sha(tgz)],
    ],
  );
  t.equal(linuxArm.body.data.channel, 'beta', 'the release keeps the channel it was made with');
  t.equal((await releaseArtifact(app.deps.db, linux.body.data.id, 'x86_64'))?.row.kind, 'tarball');
  t.equal(await releaseArtifact(app.deps.db, linux.body.data.id, 'riscv64'), null, 'no artifact fits an unknown architecture');

  const dup = await upload(app, owner.headers, { family: 'desktop-linux', version: '3.0.0', architecture: 'x86_64' }, { bytes: tgz, name: 'p.tar.gz' });
  t.equal(dup.status, 409);
  t.equal(dup.body.error.code, 'artifact_exists');

  const web = await upload(app, owner.headers, { family: 'web', version: '1.4.0' }, { bytes: await makeWebBuild('1.4.0'), name: 'console.tar.gz' });
  t.equal(web.status, 201, JSON.stringify(web.body));
  t.equal(web.body.data.architectures[0].kind, 'web');

  // Older versions sort after newer ones, by semver (1.10 > 1.9).
  for (const v of ['1.9.0', '1.10.0']) {
    t.equal((await upload(app, owner.headers, { family: 'android', version: v }, { bytes: apk, name: 'a.apk' })).status, 201);
  }
  const list = await call('GET', '/api/v1/player-releases');
  t.equal(list.status, 200);
  t.same(
    list.body.data.map((r: any) => `${r.family} ${r.version}`),
    ['android 2.1.0', 'android 1.10.0', 'android 1.9.0', 'desktop-linux 3.0.0', 'web 1.4.0'],
    'family ascending, then newest first (semver)',
  );
  t.equal(list.body.releaseSource, null, 'no release source yet');
  const beta = await call('GET', '/api/v1/player-releases?channel=beta');
  t.same(
    beta.body.data.map((r: any) => r.version),
    ['3.0.0'],
  );
  const androidOnly = await call('GET', '/api/v1/player-releases?family=android');
  t.equal(androidOnly.body.data.length, 3);
  t.equal((await call('GET', '/api/v1/player-releases?family=ios')).status, 400);
  t.same(readdirSync(path.join(app.dataDir, 'releases', '.incoming')), [], 'nothing left in the incoming directory');
});

t.test('refused uploads: nothing is kept', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const apk = makeApk();
  const cases: [string, Record<string, string>, { bytes: Buffer; name: string } | undefined, number, string][] = [
    [
      'a zip without AndroidManifest.xml named .apk',
      { family: 'android', version: '1.0.0' },
      { bytes: makeZip([{ name: 'classes.dex', body: 'x' }]), name: 'player.apk' },
      400,
      'invalid_artifact',
    ],
    [
      'a text file named .apk',
      { family: 'android', version: '1.0.0' },
      { bytes: Buffer.from('not a zip at all'), name: 'player.apk' },
      400,
      'invalid_artifact',
    ],
    [
      'an APK as a Linux release',
      { family: 'desktop-linux', version: '1.0.0', architecture: 'x86_64' },
      { bytes: apk, name: 'p.tar.gz' },
      400,
      'invalid_artifact',
    ],
    [
      'an ar archive that is not a Debian package',
      { family: 'edge', version: '1.0.0', architecture: 'aarch64' },
      { bytes: await makeDeb('something-else'), name: 'p.deb' },
      400,
      'invalid_artifact',
    ],
    [
      'gzip that is not a tarball',
      { family: 'desktop-linux', version: '1.0.0', architecture: 'x86_64' },
      { bytes: (await import('node:zlib')).gzipSync('hello, not a tar'), name: 'p.tar.gz' },
      400,
      'invalid_artifact',
    ],
    [
      'a web build without play.html',
      { family: 'web', version: '1.0.0' },
      {
        bytes: await makeTarGz([
          { name: 'index.html', body: 'x' },
          { name: 'version.json', body: '{"version":"1.0.0"}' },
        ]),
        name: 'w.tar.gz',
      },
      400,
      'invalid_artifact',
    ],
    ['a web build of another version', { family: 'web', version: '1.0.0' }, { bytes: await makeWebBuild('1.0.1'), name: 'w.tar.gz' }, 400, 'invalid_artifact'],
    ['a bad semver', { family: 'android', version: '1.0' }, { bytes: apk, name: 'a.apk' }, 400, 'validation_failed'],
    ['an unknown family', { family: 'ios', version: '1.0.0' }, { bytes: apk, name: 'a.apk' }, 400, 'validation_failed'],
    ['no family', { version: '1.0.0' }, { bytes: apk, name: 'a.apk' }, 400, 'validation_failed'],
    ['a Linux release without its architecture', { family: 'desktop-linux', version: '1.0.0' }, { bytes: apk, name: 'a' }, 400, 'validation_failed'],
    ['a web release for one architecture', { family: 'web', version: '1.0.0', architecture: 'x86_64' }, { bytes: apk, name: 'a' }, 400, 'validation_failed'],
    ['an unknown architecture', { family: 'edge', version: '1.0.0', architecture: 'mips' }, { bytes: apk, name: 'a' }, 400, 'validation_failed'],
    ['no file', { family: 'android', version: '1.0.0' }, undefined, 400, 'validation_failed'],
  ];
  for (const [name, fields, file, status, code] of cases) {
    const res = await upload(app, owner.headers, fields, file);
    t.equal(res.status, status, `${name}: ${JSON.stringify(res.body)}`);
    t.equal(res.body.error?.code, code, name);
  }
  const raw = await app.fetch('/api/v1/player-releases/upload', {
    method: 'POST',
    headers: { ...owner.headers, 'content-type': 'application/octet-stream' },
    body: apk,
  });
  t.equal(raw.status, 415, 'multipart only');
  t.same((await call('GET', '/api/v1/player-releases')).body.data, [], 'no release was made');
  const dir = path.join(app.dataDir, 'releases');
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(path.join(d, e.name)) : files.push(e.name);
  };
  if (existsSync(dir)) walk(dir);
  t.same(files, [], 'no file was kept');
});

t.test('admins only', async (t) => {
  const { app } = await signedInApp(t);
  const editor = await signIn(app, { role: 'editor' });
  t.equal((await app.json('/api/v1/player-releases', { headers: editor.headers })).status, 403);
  const res = await upload(app, editor.headers, { family: 'android', version: '1.0.0' }, { bytes: makeApk(), name: 'a.apk' });
  t.equal(res.status, 403);
  t.equal((await app.json('/api/v1/player-releases')).status, 401);
});

t.test('two architectures of a new release uploaded at once: one release, both artifacts', async (t) => {
  const { app, owner, call } = await signedInApp(t);
  const [x86, arm] = await Promise.all(
    ['x86_64', 'aarch64'].map(async (architecture) =>
      upload(
        app,
        owner.headers,
        { family: 'edge', version: '4.0.0', architecture },
        { bytes: await makeTarGz([{ name: architecture, body: architecture }]), name: 'e.tar.gz' },
      ),
    ),
  );
  t.equal(x86!.status, 201, JSON.stringify(x86!.body));
  t.equal(arm!.status, 201, JSON.stringify(arm!.body));
  const list = (await call('GET', '/api/v1/player-releases')).body.data;
  t.equal(list.length, 1);
  t.same(
    list[0].architectures.map((a: any) => a.architecture),
    ['aarch64', 'x86_64'],
  );
});
