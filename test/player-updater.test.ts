/**
 * The Linux player's updater (docs/player-updates.md), as the installer served at /install.sh
 * puts it on a box: the script, its systemd service and timer, its settings file; the
 * launcher passing the installed version to the page. Run for real in a scratch root with a
 * stubbed systemctl against the real server (test/player-updates-linux.test.ts runs it
 * through a deployment).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { startApp, tempDataDir } from './helpers/harness.js';

t.setTimeout(180_000);

const which = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

function sh(line: string, opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', line], { cwd: opts.cwd, env: { ...process.env, ...opts.env } });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('close', (status) => resolve({ status, out }));
  });
}

function scratch(t: Test): { dir: string; root: string } {
  const dir = tempDataDir(t);
  const root = path.join(dir, 'root');
  mkdirSync(path.join(root, 'etc'), { recursive: true });
  writeFileSync(path.join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
  writeFileSync(path.join(root, 'etc/group'), 'root:x:0:\n');
  return { dir, root };
}

t.test('the installer installs the updater, its service and timer, and keeps its settings; --uninstall removes them', async (t) => {
  if (!which('curl')) return t.comment('curl is not installed here');
  const app = await startApp(t);
  const { dir, root } = scratch(t);
  const script = path.join(dir, 'install.sh');
  writeFileSync(script, await (await app.fetch('/install.sh')).text());
  const run = (args = '') => sh(`sh '${script}' --root '${root}' ${args}`);
  const first = await run();
  t.equal(first.status, 0, first.out);

  const updater = path.join(root, 'usr/local/bin/placard-player-update');
  t.ok(statSync(updater).mode & 0o100, 'the updater is executable');
  t.equal(spawnSync('sh', ['-n', updater]).status, 0, 'sh -n clean');
  if (which('shellcheck')) {
    const sc = spawnSync('shellcheck', ['-s', 'sh', updater], { encoding: 'utf8' });
    t.equal(sc.status, 0, `shellcheck clean: ${sc.stdout}`);
  }
  const service = readFileSync(path.join(root, 'etc/systemd/system/placard-player-update.service'), 'utf8');
  t.match(service, /^ExecStart=\/usr\/local\/bin\/placard-player-update$/m);
  t.match(service, /^Type=oneshot$/m);
  const timer = readFileSync(path.join(root, 'etc/systemd/system/placard-player-update.timer'), 'utf8');
  t.match(timer, /^OnUnitActiveSec=5min$/m);
  t.equal(
    readlinkSync(path.join(root, 'etc/systemd/system/timers.target.wants/placard-player-update.timer')),
    '/etc/systemd/system/placard-player-update.timer',
    'the timer is enabled',
  );
  const settings = path.join(root, 'etc/placard-player/updater.env');
  t.match(readFileSync(settings, 'utf8'), /^PLACARD_DEVICE_CREDENTIAL=$/m);
  t.equal(statSync(settings).mode & 0o777, 0o600, 'root’s only: it may hold the credential');

  if (which('systemd-analyze')) {
    const copy = path.join(dir, 'units');
    mkdirSync(copy);
    writeFileSync(path.join(copy, 'placard-player-update.service'), service.replace('/usr/local/bin/placard-player-update', '/bin/true'));
    writeFileSync(path.join(copy, 'placard-player-update.timer'), timer);
    const verify = spawnSync('systemd-analyze', ['verify', path.join(copy, 'placard-player-update.timer'), path.join(copy, 'placard-player-update.service')], {
      encoding: 'utf8',
    });
    t.notMatch(`${verify.stdout}${verify.stderr}`, /Unknown key|Failed to parse|Invalid/, 'the units verify');
  } else t.comment('systemd-analyze is not installed here');

  // An admin's credential stays across runs.
  writeFileSync(settings, 'PLACARD_DEVICE_CREDENTIAL=svc_device_abcdefgh.abcdefghijklmnopqrstuvwxyz\n');
  const again = await run();
  t.equal(again.status, 0, again.out);
  t.match(readFileSync(settings, 'utf8'), /svc_device_abcdefgh/, 'kept');

  // No server answer: a clear error, nothing installed.
  writeFileSync(
    path.join(root, 'etc/placard-player/player.env'),
    readFileSync(path.join(root, 'etc/placard-player/player.env'), 'utf8').replace(app.url, 'http://127.0.0.1:9'),
  );
  const away = await sh(`'${updater}' --root '${root}' --no-restart`);
  t.equal(away.status, 1);
  t.match(away.out, /the server http:\/\/127\.0\.0\.1:9 did not answer/);
  const bad = await sh(`'${updater}' --bogus`);
  t.equal(bad.status, 1);
  t.match(bad.out, /unknown option --bogus/);

  mkdirSync(path.join(root, 'opt/placard-player/1.0.0'), { recursive: true });
  mkdirSync(path.join(root, 'var/lib/placard-player-update'), { recursive: true });
  const gone = await run('--uninstall');
  t.equal(gone.status, 0, gone.out);
  for (const p of [
    'usr/local/bin/placard-player-update',
    'etc/systemd/system/placard-player-update.service',
    'etc/systemd/system/placard-player-update.timer',
    'opt/placard-player',
    'var/lib/placard-player-update',
    'etc/placard-player',
  ])
    t.notOk(existsSync(path.join(root, p)), `${p} removed`);
  t.notOk(lstatSync(path.join(root, 'etc/systemd/system/timers.target.wants/placard-player-update.timer'), { throwIfNoEntry: false }), 'timer link removed');
});

t.test('the launcher passes the installed version to the page', async (t) => {
  if (!which('curl')) return t.comment('curl is not installed here');
  const app = await startApp(t);
  const { dir, root } = scratch(t);
  const script = path.join(dir, 'install.sh');
  writeFileSync(script, await (await app.fetch('/install.sh')).text());
  t.equal((await sh(`sh '${script}' --root '${root}'`)).status, 0);
  const launcher = path.join(root, 'usr/local/bin/placard-player');
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  const log = path.join(dir, 'log');
  const fake = (name: string, body: string) => {
    writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(path.join(bin, name), 0o755);
  };
  fake('chromium', `echo "chromium $*" >>'${log}'`);
  fake('cage', `if [ "$1" = -h ]; then exit 0; fi\nwhile [ "$1" != -- ]; do shift; done\nshift\nexec "$@"`);
  const env = {
    PATH: `${bin}:/usr/bin:/bin`,
    HOME: path.join(dir, 'home'),
    PLACARD_PLAYER_URL: `${app.url}/play?kiosk=1`,
    PLACARD_ORIGIN: app.url,
    PLACARD_SCREEN_BLANKING: 'on',
    PLACARD_VERSION_FILE: path.join(dir, 'version'),
  };
  writeFileSync(log, '');
  t.equal((await sh(`'${launcher}'`, { env })).status, 0);
  t.match(readFileSync(log, 'utf8'), new RegExp(` ${app.url.replace(/[.]/g, '\\.')}/play\\?kiosk=1$`, 'm'), 'no version installed: the URL as it was');

  writeFileSync(path.join(dir, 'version'), '1.4.2\n');
  writeFileSync(log, '');
  t.equal((await sh(`'${launcher}'`, { env })).status, 0);
  t.match(readFileSync(log, 'utf8'), `/play?kiosk=1&playerVersion=1.4.2`, 'the installed version in the kiosk URL');

  writeFileSync(path.join(dir, 'version'), '1.4.2; rm -rf /\n');
  writeFileSync(log, '');
  t.equal((await sh(`'${launcher}'`, { env })).status, 0);
  t.notMatch(readFileSync(log, 'utf8'), /playerVersion/, 'not a version: left out');
});
