import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { tempDataDir } from './helpers/harness.js';
import { fakePackage, fakeSystemctl, install, installAsync, readyServer, ROOT, scratchRoot, which, writeSums } from './helpers/install.js';

const passwdEntries = (root: string) =>
  readFileSync(path.join(root, 'etc/passwd'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('placard:'));

t.test('install.sh is sh -n and shellcheck clean', async (t) => {
  for (const file of ['install.sh', 'packaging/package.sh', 'packaging/smoke.sh', 'packaging/runtime.sh', 'packaging/with-runtime.sh']) {
    const shell = file === 'install.sh' ? 'sh' : 'bash';
    const syntax = spawnSync(shell, ['-n', path.join(ROOT, file)], { encoding: 'utf8' });
    t.equal(syntax.status, 0, `${shell} -n ${file}: ${syntax.stderr}`);
  }
  if (!which('shellcheck')) {
    t.comment('shellcheck is not installed here (CI installs it)');
    return;
  }
  const res = spawnSync('shellcheck', ['install.sh', 'packaging/package.sh', 'packaging/smoke.sh', 'packaging/runtime.sh', 'packaging/with-runtime.sh'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  t.equal(res.status, 0, res.stdout);
});

t.test('install into a scratch root: user, directories, env file, unit, CLI; idempotent', async (t) => {
  const dir = tempDataDir(t);
  const root = path.join(dir, 'root');
  mkdirSync(path.join(root, 'etc'), { recursive: true });
  writeFileSync(path.join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\nsystemd-network:x:999:999::/:/usr/sbin/nologin\n');
  writeFileSync(path.join(root, 'etc/group'), 'root:x:0:\nsystemd-network:x:999:\n');
  const pkg = fakePackage(dir, '1.0.0');

  const first = install(pkg, ['--root', root, '--port', '8123', '--public-url', 'http://signage.lan:8123']);
  t.equal(first.status, 0, first.out);
  t.match(first.out, /Open the console: http:\/\/signage\.lan:8123/);

  const entries = passwdEntries(root);
  t.equal(entries.length, 1, 'one placard user');
  const [, , uid, gid, , home, shell] = entries[0]!.split(':');
  t.equal(uid, '998', 'a free system uid (999 is taken)');
  t.equal(home, '/var/lib/placard');
  t.equal(shell, '/usr/sbin/nologin');
  t.match(readFileSync(path.join(root, 'etc/group'), 'utf8'), new RegExp(`^placard:x:${gid}:$`, 'm'));

  t.equal(readlinkSync(path.join(root, 'opt/placard/current')), '1.0.0', 'current points at the version');
  t.ok(existsSync(path.join(root, 'opt/placard/1.0.0/dist/server/src/main.js')));
  for (const d of ['', 'media', 'uploads', 'backups', 'releases']) {
    const s = statSync(path.join(root, 'var/lib/placard', d));
    t.ok(s.isDirectory(), `data dir ${d || '.'}`);
    t.equal(String(s.uid), uid, `data dir ${d || '.'} owned by placard`);
  }
  t.equal(statSync(path.join(root, 'var/lib/placard')).mode & 0o777, 0o750);

  const env = readFileSync(path.join(root, 'etc/placard/placard.env'), 'utf8');
  t.match(env, /^PLACARD_PORT=8123$/m);
  t.match(env, /^PLACARD_PUBLIC_URL=http:\/\/signage\.lan:8123$/m);
  t.match(env, /^PLACARD_DATA_DIR=\/var\/lib\/placard$/m);
  t.equal(statSync(path.join(root, 'etc/placard/placard.env')).mode & 0o777, 0o640, 'env file not world-readable');

  const unit = path.join(root, 'etc/systemd/system/placard.service');
  t.equal(readFileSync(unit, 'utf8'), readFileSync(path.join(ROOT, 'systemd/placard.service'), 'utf8'), 'the unit installed as shipped');
  t.equal(readlinkSync(path.join(root, 'etc/systemd/system/multi-user.target.wants/placard.service')), '/etc/systemd/system/placard.service', 'enabled');
  const cli = path.join(root, 'usr/local/bin/placard');
  t.ok(statSync(cli).mode & 0o100, 'the placard command is executable');
  t.equal(spawnSync('sh', ['-n', cli]).status, 0, 'and sh -n clean');

  // The admin edits the env file; a second run keeps it and adds nothing.
  writeFileSync(path.join(root, 'etc/placard/placard.env'), `${env}PLACARD_LOG_LEVEL=debug\n`);
  const again = install(pkg, ['--root', root]);
  t.equal(again.status, 0, again.out);
  t.equal(passwdEntries(root).length, 1, 'still one user');
  t.match(readFileSync(path.join(root, 'etc/placard/placard.env'), 'utf8'), /PLACARD_LOG_LEVEL=debug/, 'the admin’s edit is kept');
  t.match(again.out, /already in/);

  // Upgrade to 1.1.0, roll back, upgrade again.
  const pkg2 = fakePackage(path.join(dir, 'v2'), '1.1.0');
  const upgrade = install(pkg2, ['--root', root, '--upgrade', '--port', '9000']);
  t.equal(upgrade.status, 0, upgrade.out);
  t.equal(readlinkSync(path.join(root, 'opt/placard/current')), '1.1.0');
  t.equal(readlinkSync(path.join(root, 'opt/placard/previous')), '1.0.0');
  t.match(readFileSync(path.join(root, 'etc/placard/placard.env'), 'utf8'), /^PLACARD_PORT=9000$/m, '--port updates the kept env file');
  const rollback = install(pkg2, ['--root', root, '--rollback']);
  t.equal(rollback.status, 0, rollback.out);
  t.equal(readlinkSync(path.join(root, 'opt/placard/current')), '1.0.0');

  // Uninstall keeps data and config; --purge removes them and the user.
  writeFileSync(path.join(root, 'var/lib/placard/placard.db'), 'precious');
  const uninstall = install(pkg2, ['--root', root, '--uninstall']);
  t.equal(uninstall.status, 0, uninstall.out);
  t.notOk(existsSync(path.join(root, 'opt/placard')));
  t.notOk(existsSync(unit));
  t.equal(readFileSync(path.join(root, 'var/lib/placard/placard.db'), 'utf8'), 'precious', 'data kept');
  t.ok(existsSync(path.join(root, 'etc/placard/placard.env')), 'config kept');
  const purge = install(pkg2, ['--root', root, '--uninstall', '--purge']);
  t.equal(purge.status, 0, purge.out);
  t.notOk(existsSync(path.join(root, 'var/lib/placard')));
  t.notOk(existsSync(path.join(root, 'etc/placard')));
  t.same(passwdEntries(root), [], 'user removed');
  t.match(readFileSync(path.join(root, 'etc/passwd'), 'utf8'), /^root:/m, 'other users untouched');
  t.notOk(lstatSync(root).isSymbolicLink());
});

t.test('install.sh refuses bad options and a directory that is not a package', async (t) => {
  const dir = tempDataDir(t);
  const pkg = fakePackage(dir, '1.0.0');
  for (const args of [['--port', 'abc'], ['--port', '70000'], ['--public-url', 'ftp://x'], ['--purge'], ['--bogus']]) {
    const res = install(pkg, ['--root', path.join(dir, 'r'), ...args]);
    t.not(res.status, 0, `${args.join(' ')} refused`);
  }
  const notPkg = path.join(dir, 'checkout');
  mkdirSync(notPkg);
  cpSync(path.join(ROOT, 'install.sh'), path.join(notPkg, 'install.sh'));
  const res = install(notPkg, ['--root', path.join(dir, 'r2')]);
  t.not(res.status, 0);
  t.match(res.out, /not an unpacked release package/);
});

t.test('the systemd unit passes systemd-analyze verify and carries the hardening', async (t) => {
  const unit = readFileSync(path.join(ROOT, 'systemd/placard.service'), 'utf8');
  for (const line of [
    'NoNewPrivileges=yes',
    'ProtectSystem=strict',
    'ProtectHome=yes',
    'PrivateTmp=yes',
    'ReadWritePaths=/var/lib/placard',
    'CapabilityBoundingSet=',
    'EnvironmentFile=-/etc/placard/placard.env',
    'Restart=on-failure',
    'User=placard',
  ]) {
    t.match(unit, new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`, 'm'), line);
  }
  if (!which('systemd-analyze')) {
    t.comment('systemd-analyze is not installed here (CI installs systemd)');
    return;
  }
  const dir = tempDataDir(t);
  // The unit names the installed node; verify a copy pointing at this machine's node.
  writeFileSync(path.join(dir, 'placard.service'), unit.replaceAll('/opt/placard/current/node/bin/node', process.execPath));
  const res = spawnSync('systemd-analyze', ['verify', path.join(dir, 'placard.service')], { encoding: 'utf8' });
  t.equal(res.status, 0, res.stderr);
  t.equal(`${res.stdout}${res.stderr}`.trim(), '', 'no warnings (unknown keys and bad values only warn)');
  // The check is real: a bad key makes output.
  writeFileSync(
    path.join(dir, 'bad.service'),
    unit.replaceAll('/opt/placard/current/node/bin/node', process.execPath).replace('ProtectSystem=strict', 'ProtectSystem=sideways'),
  );
  const bad = spawnSync('systemd-analyze', ['verify', path.join(dir, 'bad.service')], { encoding: 'utf8' });
  t.not(`${bad.stdout}${bad.stderr}`.trim(), '');
});

t.test('a second run that changes nothing does not restart the service', async (t) => {
  const dir = tempDataDir(t);
  const root = scratchRoot(dir);
  const port = await readyServer(t);
  const pkg = fakePackage(dir, '1.0.0');
  const systemctl = fakeSystemctl(dir);
  const env = { PLACARD_INSTALL_SYSTEMCTL: systemctl.bin };
  const first = await installAsync(pkg, ['--root', root, '--port', String(port)], env);
  t.equal(first.status, 0, first.out);
  t.same(systemctl.calls(), ['daemon-reload', 'enable placard.service', 'restart placard.service']);

  writeFileSync(systemctl.log, '');
  const again = await installAsync(pkg, ['--root', root, '--port', String(port)], { ...env, PLACARD_FAKE_ACTIVE: '1' });
  t.equal(again.status, 0, again.out);
  t.match(again.out, /nothing changed; placard.service keeps running/);
  t.same(systemctl.calls(), ['enable placard.service', 'is-active --quiet placard.service'], 'no restart, no daemon-reload');

  writeFileSync(systemctl.log, '');
  const stopped = await installAsync(pkg, ['--root', root], env);
  t.equal(stopped.status, 0, stopped.out);
  t.ok(systemctl.calls().includes('restart placard.service'), 'a stopped service is started');

  writeFileSync(systemctl.log, '');
  const changed = await installAsync(pkg, ['--root', root, '--public-url', 'http://signage.lan:8080'], { ...env, PLACARD_FAKE_ACTIVE: '1' });
  t.equal(changed.status, 0, changed.out);
  t.ok(systemctl.calls().includes('restart placard.service'), 'a changed env file restarts it');
});

t.test('--root works for an unprivileged user (no chown to the service user)', async (t) => {
  const dir = tempDataDir(t);
  chmodSync(dir, 0o755);
  const pkg = fakePackage(dir, '1.0.0');
  const root = scratchRoot(dir);
  let runAs: string[] = [];
  if (process.getuid?.() === 0) {
    // Root here (CI too): run it as nobody, in a root nobody owns.
    const nobody = spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' });
    const uid = Number(nobody.stdout.trim());
    for (const p of [root, path.join(root, 'etc'), path.join(root, 'etc/passwd'), path.join(root, 'etc/group')]) chownSync(p, uid, uid);
    runAs = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups'];
  }
  const argv = [...runAs, 'sh', path.join(pkg, 'install.sh'), '--root', root, '--port', '8124'];
  const res = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', cwd: dir });
  const out = `${res.stdout}${res.stderr}`;
  t.equal(res.status, 0, out);
  t.match(out, /not root: the files are owned by/);
  t.equal(readlinkSync(path.join(root, 'opt/placard/current')), '1.0.0');
  t.match(readFileSync(path.join(root, 'etc/placard/placard.env'), 'utf8'), /^PLACARD_PORT=8124$/m);
  t.ok(statSync(path.join(root, 'var/lib/placard/backups')).isDirectory());
  t.equal(passwdEntries(root).length, 1, 'the user entry is written into the scratch root');
  if (runAs.length) t.not(statSync(path.join(root, 'var/lib/placard')).uid, 0, 'owned by the user who ran it');
});

t.test('the readiness timeouts agree: unit start limit > its wait-ready, install.sh waits as long', async (t) => {
  const unit = readFileSync(path.join(ROOT, 'systemd/placard.service'), 'utf8');
  const script = readFileSync(path.join(ROOT, 'install.sh'), 'utf8');
  const startLimit = Number(/^TimeoutStartSec=(\d+)$/m.exec(unit)?.[1]);
  const unitWait = Number(/^ExecStartPost=.* wait-ready --timeout (\d+)$/m.exec(unit)?.[1]);
  const installWait = Number(/^READY_TIMEOUT=(\d+)$/m.exec(script)?.[1]);
  t.ok(startLimit > 0, `TimeoutStartSec is set (${startLimit})`);
  t.ok(unitWait > 0, `ExecStartPost waits (${unitWait} s)`);
  t.ok(startLimit >= unitWait + 20, 'systemd gives the start (process start + wait-ready) more time than wait-ready takes');
  t.ok(installWait >= unitWait, `install.sh waits at least as long (${installWait} s)`);
  t.match(script, /wait-ready --timeout "\$READY_TIMEOUT"/, 'install.sh waits with the same check');
});

t.test('install.sh checks the package against its SHA256SUMS: a changed, added or unlisted file is refused', async (t) => {
  const dir = tempDataDir(t);
  const pkg = fakePackage(dir, '1.0.0');
  const root = scratchRoot(dir);

  writeFileSync(path.join(pkg, 'dist/server/src/main.js'), '// tampered\n');
  const changed = install(pkg, ['--root', root]);
  t.not(changed.status, 0);
  t.match(changed.out, /do not match its SHA256SUMS \(damaged or tampered; nothing was installed\)/);
  t.match(changed.out, /main\.js/);
  t.notOk(existsSync(path.join(root, 'opt/placard')), 'nothing installed');

  writeSums(pkg);
  writeFileSync(path.join(pkg, 'dist/server/src/extra.js'), '// planted\n');
  const added = install(pkg, ['--root', root]);
  t.not(added.status, 0);
  t.match(added.out, /holds files its SHA256SUMS does not list .*extra\.js/);
  t.notOk(existsSync(path.join(root, 'opt/placard')), 'nothing installed');

  writeSums(pkg);
  const sums = path.join(pkg, 'SHA256SUMS');
  const text = readFileSync(sums, 'utf8');
  rmSync(sums);
  const missing = install(pkg, ['--root', root]);
  t.not(missing.status, 0);
  t.match(missing.out, /no SHA256SUMS/);
  writeFileSync(sums, text);
  const good = install(pkg, ['--root', root]);
  t.equal(good.status, 0, good.out);
  t.match(good.out, /verified the package's \d+ files against its SHA256SUMS/);
});

t.test('a rebuilt package of the same version replaces the installed one (checksums, not the version string)', async (t) => {
  const dir = tempDataDir(t);
  const root = scratchRoot(dir);
  const pkg = fakePackage(path.join(dir, 'a'), '1.0.0');
  t.equal(install(pkg, ['--root', root]).status, 0);
  const same = install(pkg, ['--root', root]);
  t.match(same.out, /version 1\.0\.0 already in .* \(same files\)/);

  const rebuilt = fakePackage(path.join(dir, 'b'), '1.0.0');
  writeFileSync(path.join(rebuilt, 'dist/server/src/main.js'), '// server, rebuilt with a fix\n');
  writeSums(rebuilt);
  const res = install(rebuilt, ['--root', root]);
  t.equal(res.status, 0, res.out);
  t.match(res.out, /version 1\.0\.0 in .* differs from this package \(a rebuild\): replacing it/);
  t.equal(
    readFileSync(path.join(root, 'opt/placard/1.0.0/dist/server/src/main.js'), 'utf8'),
    '// server, rebuilt with a fix\n',
    'the rebuilt files are installed',
  );
  t.equal(readFileSync(path.join(root, 'opt/placard/1.0.0/SHA256SUMS'), 'utf8'), readFileSync(path.join(rebuilt, 'SHA256SUMS'), 'utf8'));
  t.equal(readlinkSync(path.join(root, 'opt/placard/current')), '1.0.0');
});

t.test('the distribution ffmpeg is what the service uses; an admin’s own choice is kept', async (t) => {
  const dir = tempDataDir(t);
  const root = scratchRoot(dir);
  const pkg = fakePackage(dir, '1.0.0');
  const env = () => readFileSync(path.join(root, 'etc/placard/placard.env'), 'utf8');
  t.equal(install(pkg, ['--root', root]).status, 0);
  t.notMatch(env(), /^PLACARD_FFMPEG=/m, 'no distribution ffmpeg: the packaged one is used');

  mkdirSync(path.join(root, 'usr/bin'), { recursive: true });
  for (const tool of ['ffmpeg', 'ffprobe']) {
    writeFileSync(path.join(root, 'usr/bin', tool), '#!/bin/sh\n');
    chmodSync(path.join(root, 'usr/bin', tool), 0o755);
  }
  const res = install(pkg, ['--root', root]);
  t.equal(res.status, 0, res.out);
  t.match(env(), /^PLACARD_FFMPEG=\/usr\/bin\/ffmpeg$/m);
  t.match(env(), /^PLACARD_FFPROBE=\/usr\/bin\/ffprobe$/m);

  writeFileSync(path.join(root, 'etc/placard/placard.env'), env().replace('PLACARD_FFMPEG=/usr/bin/ffmpeg', 'PLACARD_FFMPEG=/opt/ffmpeg-7/ffmpeg'));
  t.equal(install(pkg, ['--root', root]).status, 0);
  t.match(env(), /^PLACARD_FFMPEG=\/opt\/ffmpeg-7\/ffmpeg$/m, 'the admin’s ffmpeg is kept');
  t.equal(env().match(/^PLACARD_FFMPEG=/gm)?.length, 1);
  t.match(
    readFileSync(path.join(ROOT, 'install.sh'), 'utf8'),
    /apt-get install -y -q --no-install-recommends poppler-utils/,
    'poppler-utils is installed with apt (PDF assets)',
  );
});

t.test('--port 80: the unit gets CAP_NET_BIND_SERVICE by a drop-in (and only then), verified and still hardened', async (t) => {
  const dir = tempDataDir(t);
  const root = scratchRoot(dir);
  const pkg = fakePackage(dir, '1.0.0');
  const dropin = path.join(root, 'etc/systemd/system/placard.service.d/install.conf');
  const res = install(pkg, ['--root', root, '--port', '80']);
  t.equal(res.status, 0, res.out);
  const conf = readFileSync(dropin, 'utf8');
  t.match(conf, /^\[Service\]$/m);
  t.match(conf, /^CapabilityBoundingSet=CAP_NET_BIND_SERVICE$/m);
  t.match(conf, /^AmbientCapabilities=CAP_NET_BIND_SERVICE$/m);
  t.notMatch(conf, /CAP_SYS|CAP_NET_ADMIN|CAP_NET_RAW/, 'that capability only');

  if (which('systemd-analyze')) {
    // The unit with its drop-in, as systemd reads them together.
    const unit = readFileSync(path.join(ROOT, 'systemd/placard.service'), 'utf8').replaceAll('/opt/placard/current/node/bin/node', process.execPath);
    const merged = unit.replace('[Install]', `${conf.replace(/^\[Service\]$/m, '').replace(/^#.*$/gm, '')}\n[Install]`);
    writeFileSync(path.join(dir, 'placard.service'), merged);
    const verify = spawnSync('systemd-analyze', ['verify', path.join(dir, 'placard.service')], { encoding: 'utf8' });
    t.equal(`${verify.stdout}${verify.stderr}`.trim(), '', 'the unit with the drop-in verifies clean');
    const security = spawnSync('systemd-analyze', ['security', '--offline=yes', path.join(dir, 'placard.service')], { encoding: 'utf8' });
    const score = Number(/Overall exposure level for placard\.service: ([\d.]+)/.exec(security.stdout)?.[1]);
    t.ok(score > 0 && score <= 2.0, `systemd-analyze security still rates it OK with the capability: ${score}`);
  } else t.comment('systemd-analyze is not installed here (CI installs systemd)');

  // Back to a high port: the drop-in goes.
  const back = install(pkg, ['--root', root, '--port', '8080']);
  t.equal(back.status, 0, back.out);
  t.notOk(existsSync(dropin), 'no capability for port 8080');
  t.match(back.out, /removed .*install\.conf/);
});

t.test('--backup-copy-dir: a directory on another disk, marked; the same disk is refused', async (t) => {
  const dir = tempDataDir(t);
  const root = scratchRoot(dir);
  const pkg = fakePackage(dir, '1.0.0');
  t.equal(install(pkg, ['--root', root]).status, 0);
  for (const bad of ['relative/dir', '/mnt/with space']) t.not(install(pkg, ['--root', root, '--backup-copy-dir', bad]).status, 0, `${bad} refused`);
  t.match(install(pkg, ['--root', root, '--backup-copy-dir', '/mnt/nas']).out, /does not exist: mount the NAS or USB drive there first/);
  mkdirSync(path.join(root, 'mnt/nas'), { recursive: true });
  const same = install(pkg, ['--root', root, '--backup-copy-dir', '/mnt/nas']);
  t.not(same.status, 0);
  t.match(same.out, /on the same disk as .*: mount the NAS or USB drive there first/);
  t.notOk(existsSync(path.join(root, 'mnt/nas/.placard-backup-target')), 'an unmounted directory is not marked');

  // Another filesystem (tmpfs), as a mounted drive is.
  if (!existsSync('/dev/shm') || statSync('/dev/shm').dev === statSync(dir).dev) {
    t.comment('no second filesystem here to stand in for a mounted drive');
    return;
  }
  const shm = mkdtempSync('/dev/shm/placard-copy-');
  t.teardown(() => rmSync(shm, { recursive: true, force: true }));
  // The scratch root sees it at /mnt/usb.
  symlinkSync(shm, path.join(root, 'mnt/usb'));
  const res = install(pkg, ['--root', root, '--backup-copy-dir', '/mnt/usb']);
  t.equal(res.status, 0, res.out);
  t.ok(existsSync(path.join(shm, '.placard-backup-target')), 'the mounted drive is marked');
  t.match(readFileSync(path.join(root, 'etc/placard/placard.env'), 'utf8'), /^PLACARD_BACKUP_COPY_DIR=\/mnt\/usb$/m);
  t.match(
    readFileSync(path.join(root, 'etc/systemd/system/placard.service.d/install.conf'), 'utf8'),
    /^ReadWritePaths=-\/mnt\/usb$/m,
    'the service may write there (ProtectSystem=strict)',
  );
});
