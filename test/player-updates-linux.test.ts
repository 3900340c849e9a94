/**
 * The Linux player's updater end to end (docs/player-updates.md): the script the real
 * server's /install.sh installs, run in a scratch root with a stubbed systemctl (and dpkg),
 * against that server with an update deployment offering a desktop-linux release. It resumes
 * an interrupted download, refuses bytes that do not hash to the release's sha256 (reported
 * failed; retry offers it again), installs a tarball (versioned directory, `current` link) or
 * a .deb, restarts the kiosk and reports installed; the deployment shows it. It asks for the
 * artifact of its machine's architecture (a stubbed `uname -m`): one release serves a Pi and
 * an x64 box. The screen's
 * credential is also found where the kiosk's page keeps it (a real Chromium profile).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { signIn, type SignedIn } from './helpers/auth.js';
import { CHROMIUM, CHROMIUM_ARGS } from './helpers/browser.js';
import { startApp, tempDataDir, type TestApp } from './helpers/harness.js';
import { pairScreen, type PairedScreen } from './helpers/screens.js';
import { heartbeat, makeRelease, until } from './helpers/update-deployments.js';

t.setTimeout(300_000);

const which = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

function sh(line: string, env: Record<string, string> = {}): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', line], { env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('close', (status) => resolve({ status, out }));
  });
}

/** A desktop-linux release as a tarball: a launcher of its own and its version (and architecture, when named). */
function linuxTarball(dir: string, version: string, arch?: string): Buffer {
  const name = arch ? `player-${version}-${arch}` : `player-${version}`;
  const src = path.join(dir, name);
  mkdirSync(path.join(src, 'bin'), { recursive: true });
  writeFileSync(path.join(src, 'bin/placard-player'), `#!/bin/sh\n# Placard player ${version}\nexec /usr/local/bin/placard-player "$@"\n`);
  chmodSync(path.join(src, 'bin/placard-player'), 0o755);
  writeFileSync(path.join(src, 'VERSION'), `${version}\n`);
  if (arch) writeFileSync(path.join(src, 'ARCH'), `${arch}\n`);
  const file = path.join(dir, `${name}.tar.gz`);
  execFileSync('tar', ['-czf', file, '-C', src, '.']);
  return readFileSync(file);
}

interface Box {
  dir: string;
  root: string;
  bin: string;
  updater: string;
  systemctlLog: string;
  run(): Promise<{ status: number | null; out: string }>;
}

/**
 * A scratch root with the server's installer run in it, and stubs for systemctl, dpkg and
 * uname (`uname -m` answers `machine`, so the test does not depend on the host's).
 */
async function box(t: Test, app: TestApp, machine = 'x86_64'): Promise<Box> {
  const dir = tempDataDir(t);
  const root = path.join(dir, 'root');
  mkdirSync(path.join(root, 'etc'), { recursive: true });
  writeFileSync(path.join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
  writeFileSync(path.join(root, 'etc/group'), 'root:x:0:\n');
  const script = path.join(dir, 'install.sh');
  writeFileSync(script, await (await app.fetch('/install.sh')).text());
  const inst = await sh(`sh '${script}' --root '${root}'`);
  if (inst.status !== 0) throw new Error(inst.out);
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  const systemctlLog = path.join(dir, 'systemctl.log');
  writeFileSync(systemctlLog, '');
  writeFileSync(path.join(bin, 'systemctl'), `#!/bin/sh\necho "$*" >>'${systemctlLog}'\n`);
  writeFileSync(
    path.join(bin, 'dpkg'),
    `#!/bin/sh\necho "dpkg $*" >>'${path.join(dir, 'dpkg.log')}'\n[ "$1" = -i ] && [ -f "$2" ] && cp "$2" '${path.join(dir, 'installed.deb')}'\n`,
  );
  writeFileSync(path.join(bin, 'uname'), `#!/bin/sh\nif [ "$*" = -m ]; then echo '${machine}'; else exec /bin/uname "$@"; fi\n`);
  chmodSync(path.join(bin, 'systemctl'), 0o755);
  chmodSync(path.join(bin, 'dpkg'), 0o755);
  chmodSync(path.join(bin, 'uname'), 0o755);
  const updater = path.join(root, 'usr/local/bin/placard-player-update');
  return { dir, root, bin, updater, systemctlLog, run: () => sh(`'${updater}' --root '${root}'`, { PATH: `${bin}:/usr/bin:/bin` }) };
}

function setCredential(b: Box, credential: string): void {
  writeFileSync(path.join(b.root, 'etc/placard-player/updater.env'), `PLACARD_DEVICE_CREDENTIAL=${credential}\n`);
}

async function deploy(app: TestApp, admin: SignedIn, releaseId: string, screen: PairedScreen) {
  const res = await app.json('/api/v1/update-deployments', {
    method: 'POST',
    headers: admin.headers,
    json: { releaseId, targets: { screenIds: [screen.screenId] }, waves: [{ screens: 1 }], waveWaitSec: 0 },
  });
  if (res.status !== 201) throw new Error(`deployment: ${res.status} ${JSON.stringify(res.body)}`);
  return until(app, admin, res.body.data.id, (d) => d.screens[0]?.state === 'offered');
}

const screenOf = (d: any) => d.screens[0];
const screenCredentialPrefix = 'svc_device_';

t.test('a desktop-linux tarball: resumed download, sha256 checked, installed, kiosk restarted, reported', async (t) => {
  if (!which('curl')) return t.comment('curl is not installed here');
  const app = await startApp(t);
  const admin = await signIn(app, { role: 'owner' });
  const screen = await pairScreen(app, admin, { name: 'Kiosk', playerFamily: 'desktop-linux', playerVersion: '1.0.0' });
  await heartbeat(app, screen, { playerFamily: 'desktop-linux', playerVersion: '1.0.0' });
  const b = await box(t, app);

  // Nothing offered yet: nothing done.
  setCredential(b, screen.credential);
  const idle = await b.run();
  t.equal(idle.status, 0, idle.out);
  t.match(idle.out, /no update offered/);

  const bytes = linuxTarball(b.dir, '2.0.0');
  const release = await makeRelease(app, { family: 'desktop-linux', version: '2.0.0', artifacts: [{ architecture: 'x86_64', kind: 'tarball', bytes }] });
  const offered = await deploy(app, admin, release.id, screen);
  t.equal(screenOf(offered).state, 'offered');

  // A download cut short by an earlier run: the first part is there.
  const state = path.join(b.root, 'var/lib/placard-player-update');
  mkdirSync(state, { recursive: true });
  const half = Math.floor(bytes.length / 2);
  writeFileSync(path.join(state, `${release.id}.part`), bytes.subarray(0, half));
  const run = await b.run();
  t.equal(run.status, 0, run.out);
  t.match(run.out, new RegExp(`resuming the download at ${half} of ${bytes.length} bytes`));
  t.match(run.out, /installed version 2\.0\.0/);

  const opt = path.join(b.root, 'opt/placard-player');
  t.equal(readlinkSync(path.join(opt, 'current')), '2.0.0', 'current points at the new version');
  t.equal(readFileSync(path.join(opt, '2.0.0/VERSION'), 'utf8'), '2.0.0\n', 'extracted into its own directory');
  t.ok(existsSync(path.join(opt, '2.0.0/bin/placard-player')), 'with its launcher');
  t.equal(readFileSync(path.join(b.root, 'etc/placard-player/version'), 'utf8'), '2.0.0\n', 'the version the launcher passes to the page');
  t.notOk(existsSync(path.join(state, `${release.id}.part`)), 'the download is gone');
  t.match(readFileSync(b.systemctlLog, 'utf8'), /^restart placard-player\.service$/m, 'the kiosk restarted');

  const done = await until(app, admin, offered.id, (d) => screenOf(d).state === 'installed');
  t.equal(screenOf(done).installedVersion, '2.0.0', 'the deployment shows the new version installed');
  t.equal(screenOf(done).fromVersion, '1.0.0');

  // A tarball with a link in it is refused before anything is extracted, and reported.
  const { tarGz } = await import('./helpers/web-release.js');
  const evil = await tarGz([
    { name: 'VERSION', body: '2.0.1\n' },
    { name: 'bin', type: 'symlink', linkname: '/usr/bin' },
  ]);
  const evilRelease = await makeRelease(app, {
    family: 'desktop-linux',
    version: '2.0.1',
    artifacts: [{ architecture: 'x86_64', kind: 'tarball', bytes: evil }],
  });
  const evilDeployment = await deploy(app, admin, evilRelease.id, screen);
  const refused = await b.run();
  t.equal(refused.status, 1, refused.out);
  t.match(refused.out, /the tarball holds links or devices/);
  t.notOk(existsSync(path.join(opt, '2.0.1')), 'nothing extracted');
  t.equal(readlinkSync(path.join(opt, 'current')), '2.0.0', 'current unchanged');
  const evilFailed = await until(app, admin, evilDeployment.id, (d) => screenOf(d).state === 'failed');
  t.match(screenOf(evilFailed).error, /links or devices/);

  // Run again (the timer): nothing more to do.
  const again = await b.run();
  t.equal(again.status, 0, again.out);
  t.notMatch(again.out, /installed version/);
});

t.test('bytes that do not hash to the release are refused and reported; retry installs a .deb with dpkg', async (t) => {
  if (!which('curl')) return t.comment('curl is not installed here');
  const app = await startApp(t);
  const admin = await signIn(app, { role: 'owner' });
  const screen = await pairScreen(app, admin, { name: 'Kiosk', playerFamily: 'desktop-linux', playerVersion: '1.0.0' });
  await heartbeat(app, screen, { playerFamily: 'desktop-linux', playerVersion: '1.0.0' });
  const b = await box(t, app);
  setCredential(b, screen.credential);

  // An ar archive whose first member is debian-binary: a .deb as far as this test needs.
  const deb = Buffer.concat([Buffer.from('!<arch>\ndebian-binary   0           0     0     100644  4         `\n2.0\n'), Buffer.alloc(40_000, 7)]);
  const release = await makeRelease(app, { family: 'desktop-linux', version: '2.1.0', artifacts: [{ architecture: 'x86_64', kind: 'deb', bytes: deb }] });
  const offered = await deploy(app, admin, release.id, screen);

  // A damaged partial download (other bytes than the release's): finished, hashed, refused.
  const state = path.join(b.root, 'var/lib/placard-player-update');
  mkdirSync(state, { recursive: true });
  writeFileSync(path.join(state, `${release.id}.part`), Buffer.alloc(1000, 1));
  const bad = await b.run();
  t.equal(bad.status, 1, bad.out);
  t.match(bad.out, /the download's sha256 is [0-9a-f]{64}, not the release's/);
  t.notOk(existsSync(path.join(state, `${release.id}.part`)), 'the bad download is deleted');
  t.notOk(existsSync(path.join(b.dir, 'dpkg.log')), 'nothing installed');
  const failed = await until(app, admin, offered.id, (d) => screenOf(d).state === 'failed');
  t.match(screenOf(failed).error, /sha256/, 'the deployment shows why');

  // The admin retries: offered again, downloaded whole, installed with dpkg.
  const retry = await app.json(`/api/v1/update-deployments/${offered.id}/screens/${screen.screenId}/retry`, {
    method: 'POST',
    headers: admin.headers,
    json: {},
  });
  t.equal(retry.status, 200, JSON.stringify(retry.body));
  await until(app, admin, offered.id, (d) => screenOf(d).state === 'offered');
  const run = await b.run();
  t.equal(run.status, 0, run.out);
  t.match(readFileSync(path.join(b.dir, 'dpkg.log'), 'utf8'), /^dpkg -i .*\.deb$/m, 'dpkg -i the package');
  t.same(readFileSync(path.join(b.dir, 'installed.deb')), deb, 'the very bytes of the release');
  t.equal(readFileSync(path.join(b.root, 'etc/placard-player/version'), 'utf8'), '2.1.0\n');
  const done = await until(app, admin, offered.id, (d) => screenOf(d).state === 'installed');
  t.equal(screenOf(done).installedVersion, '2.1.0');

  // A cancelled deployment: the updater stops at once.
  const other = await makeRelease(app, { family: 'desktop-linux', version: '2.2.0', artifacts: [{ architecture: 'x86_64', kind: 'deb', bytes: deb }] });
  const next = await deploy(app, admin, other.id, screen);
  t.equal((await app.json(`/api/v1/update-deployments/${next.id}/cancel`, { method: 'POST', headers: admin.headers, json: {} })).status, 200);
  const cancelled = await b.run();
  t.equal(cancelled.status, 0, cancelled.out);
  t.match(cancelled.out, /no update offered/, 'the offer is withdrawn');
  t.equal(readFileSync(path.join(b.root, 'etc/placard-player/version'), 'utf8'), '2.1.0\n', 'nothing changed');
});

t.test('one release for a Pi and an x64 box: each updater asks for its architecture (uname -m) and installs its own tarball', async (t) => {
  if (!which('curl')) return t.comment('curl is not installed here');
  const app = await startApp(t);
  const admin = await signIn(app, { role: 'owner' });
  const machines = [
    { name: 'pi', machine: 'arm64', arch: 'aarch64' },
    { name: 'box', machine: 'x86_64', arch: 'x86_64' },
    { name: 'old', machine: 'armv7l', arch: null },
  ] as const;
  const players = [];
  for (const m of machines) {
    const screen = await pairScreen(app, admin, { name: m.name, playerFamily: 'desktop-linux', playerVersion: '1.0.0' });
    await heartbeat(app, screen, { playerFamily: 'desktop-linux', playerVersion: '1.0.0' });
    const b = await box(t, app, m.machine);
    setCredential(b, screen.credential);
    players.push({ ...m, screen, b });
  }
  const dir = players[0]!.b.dir;
  const tarballs = { x86_64: linuxTarball(dir, '4.0.0', 'x86_64'), aarch64: linuxTarball(dir, '4.0.0', 'aarch64') };
  const release = await makeRelease(app, {
    family: 'desktop-linux',
    version: '4.0.0',
    artifacts: [
      { architecture: 'x86_64', kind: 'tarball', bytes: tarballs.x86_64 },
      { architecture: 'aarch64', kind: 'tarball', bytes: tarballs.aarch64 },
    ],
  });
  const res = await app.json('/api/v1/update-deployments', {
    method: 'POST',
    headers: admin.headers,
    json: { releaseId: release.id, targets: { screenIds: players.map((p) => p.screen.screenId) }, waves: [{ percent: 100 }], failureThreshold: 5 },
  });
  t.equal(res.status, 201, JSON.stringify(res.body));
  t.match(res.body.data.counts, { total: 3, skipped: 0, offered: 3 }, 'no screen skipped for its architecture');

  for (const p of players) {
    const run = await p.b.run();
    const opt = path.join(p.b.root, 'opt/placard-player');
    if (p.arch) {
      t.equal(run.status, 0, run.out);
      t.match(run.out, /installed version 4\.0\.0/);
      t.equal(readFileSync(path.join(opt, '4.0.0/ARCH'), 'utf8'), `${p.arch}\n`, `the ${p.name} (uname -m ${p.machine}) installed the ${p.arch} tarball`);
      t.equal(readlinkSync(path.join(opt, 'current')), '4.0.0');
    } else {
      // A machine no release is built for asks without the parameter: two artifacts, the server cannot choose.
      t.equal(run.status, 1, run.out);
      t.match(run.out, /no artifact of this release for this armv7l machine \(HTTP 400: .*aarch64, x86_64/);
      t.notOk(existsSync(path.join(opt, '4.0.0')), 'nothing installed');
    }
  }
  const done = await until(app, admin, res.body.data.id, (d) => d.screens.every((s: any) => s.state === 'installed' || s.state === 'failed'));
  t.same(
    done.screens.map((s: any) => [s.name, s.state, s.installedVersion]),
    [
      ['box', 'installed', '4.0.0'],
      ['old', 'failed', null],
      ['pi', 'installed', '4.0.0'],
    ],
  );
  t.match(done.screens.find((s: any) => s.name === 'old').error, /armv7l/, 'the deployment shows why');
});

t.test('without a configured credential, the updater uses the one the kiosk page keeps in its Chromium profile', async (t) => {
  if (!which('curl')) return t.comment('curl is not installed here');
  if (!existsSync(CHROMIUM)) return t.comment('no Chromium here');
  const app = await startApp(t);
  const admin = await signIn(app, { role: 'owner' });
  const b = await box(t, app);
  const bytes = linuxTarball(b.dir, '3.0.0');
  const release = await makeRelease(app, { family: 'desktop-linux', version: '3.0.0', artifacts: [{ architecture: 'x86_64', kind: 'tarball', bytes }] });

  // The kiosk: Chromium with the launcher's profile directory, paired through its page.
  const { ensureConsoleBuilt } = await import('./helpers/browser.js');
  await ensureConsoleBuilt();
  const { chromium } = await import('playwright-core');
  const profile = path.join(b.root, 'var/lib/placard-player/chromium');
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  let screenId = '';
  try {
    const page = await context.newPage();
    await page.goto(`${app.url}/play?kiosk=1&playerVersion=2.5.0`);
    let code = '';
    for (let i = 0; i < 120 && !/^[A-Z0-9]{3}-[A-Z0-9]{3}$/.test(code); i++) {
      code = ((await page.getByTestId('pairing-code').textContent()) ?? '').trim();
      if (!/^[A-Z0-9]{3}-[A-Z0-9]{3}$/.test(code)) await new Promise((r) => setTimeout(r, 250));
    }
    const resolved = await app.json('/api/v1/screens/pairing/resolve', { method: 'POST', headers: admin.headers, json: { code } });
    const approved = await app.json(`/api/v1/screens/pairing/${resolved.body.data.id}/approve`, {
      method: 'POST',
      headers: admin.headers,
      json: { name: 'Kiosk' },
    });
    screenId = approved.body.data.screen.id;
    for (let i = 0; i < 120; i++) {
      const s = await app.json(`/api/v1/screens/${screenId}`, { headers: admin.headers });
      if (s.body.data?.playerVersion === '2.5.0') break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const s = await app.json(`/api/v1/screens/${screenId}`, { headers: admin.headers });
    t.equal(s.body.data.playerFamily, 'desktop-linux');
    t.equal(s.body.data.playerVersion, '2.5.0', 'the kiosk page reports the version its URL names');
    // Chromium writes localStorage to its LevelDB files a few seconds after a change (as a
    // running kiosk does long before its first update): wait until the credential is on disk.
    const storage = path.join(profile, 'Default/Local Storage/leveldb');
    const onDisk = () =>
      existsSync(storage) &&
      readdirSync(storage).some((f) => readFileSync(path.join(storage, f)).toString('latin1').replace(/\0/g, '').includes(screenCredentialPrefix));
    for (let i = 0; i < 120 && !onDisk(); i++) await new Promise((r) => setTimeout(r, 250));
    t.ok(onDisk(), 'the page’s credential is in the profile on disk');
  } finally {
    await context.close();
  }

  const res = await app.json('/api/v1/update-deployments', {
    method: 'POST',
    headers: admin.headers,
    json: { releaseId: release.id, targets: { screenIds: [screenId] }, waves: [{ screens: 1 }], waveWaitSec: 0 },
  });
  t.equal(res.status, 201, JSON.stringify(res.body));
  await until(app, admin, res.body.data.id, (d) => d.screens[0]?.state === 'offered');
  const run = await b.run();
  t.equal(run.status, 0, run.out);
  t.match(run.out, /installed version 3\.0\.0/);
  const done = await until(app, admin, res.body.data.id, (d) => d.screens[0]?.state === 'installed');
  t.equal(done.screens[0].installedVersion, '3.0.0');
});
