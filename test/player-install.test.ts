import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { chromium } from 'playwright-core';
import { signIn } from './helpers/auth.js';
import { CHROMIUM, CHROMIUM_ARGS } from './helpers/browser.js';
import { startApp, tempDataDir, type TestApp } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';
import { WebSocket } from 'ws';

/**
 * The Linux player installer over HTTPS with the server's key pinned (docs/trust.md): the
 * console's command run for real against the HTTPS listener, into a scratch root.
 */

// Scripts, curl and a headless Chromium on a loaded machine.
t.setTimeout(300_000);

const which = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const WRONG_PIN = 'sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/** Runs a shell command line asynchronously (the script downloads from this very process). */
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

/** The console's command, run as an admin would, but `sudo sh` -> `sh` and into a scratch root. */
function asTest(command: string, root: string, extra = ''): string {
  if (!/ \| sudo sh -s -- --pin '[^']+'$/.test(command)) throw new Error(`not a pinned command: ${command}`);
  return `${command.replace(' | sudo sh -s -- ', ' | sh -s -- ')} --root '${root}' ${extra}`;
}

async function installInfo(app: TestApp) {
  const res = await app.json('/api/v1/install/linux');
  if (res.status !== 200) throw new Error(`GET /api/v1/install/linux: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

const PLANTED_UNIT = `[Unit]
Description=Placard player (Chromium kiosk)
[Service]
User=root
ExecStart=/usr/local/bin/placard-player
[Install]
WantedBy=graphical.target
`;

t.test(
  'with HTTPS the console’s command pins the server’s keys; run from a directory with a planted player.service, it installs the server’s unit',
  async (t) => {
    if (!which('curl')) return t.comment('curl is not installed here');
    const app = await startApp(t, { https: true });
    const tls = app.tls!;
    const info = await installInfo(app);
    const httpsUrl = app.httpsUrl!;
    t.equal(info.serverUrl, httpsUrl, 'asked over plain HTTP, it names the HTTPS listener');
    t.equal(info.pin, tls.pin);
    t.equal(info.installCommand, `curl -fsS --pinnedpubkey '${tls.pin}' -k ${httpsUrl}/install.sh | sudo sh -s -- --pin '${tls.pin}'`);
    t.match(info.tls, { source: 'generated', fingerprintSha256: tls.fingerprintSha256, spkiSha256: tls.spkiSha256 });
    const unit = await (await app.fetch('/install/player.service')).text();
    t.equal(info.serviceSha256, sha256(unit), 'the unit’s sha256 is announced');

    const { dir, root } = scratch(t);
    // The attack of issue 14: a unit in the current directory (User=root) was installed when piped.
    const cwd = path.join(dir, 'cwd');
    mkdirSync(cwd);
    writeFileSync(path.join(cwd, 'player.service'), PLANTED_UNIT);
    const run = await sh(asTest(info.installCommand, root), { cwd });
    t.equal(run.status, 0, run.out);
    const installed = readFileSync(path.join(root, 'etc/systemd/system/placard-player.service'), 'utf8');
    t.equal(installed, unit, 'the server’s unit, byte for byte');
    t.notMatch(installed, /User=root/, 'not the planted one');
    t.equal(lstatSync(path.join(root, 'etc/systemd/system/graphical.target.wants/placard-player.service')).isSymbolicLink(), true);
    const env = readFileSync(path.join(root, 'etc/placard-player/player.env'), 'utf8');
    t.match(env, `PLACARD_PLAYER_URL=${httpsUrl}/play?kiosk=1`);
    t.match(env, `PLACARD_PINS=${tls.spkiSha256.join(',')}`, 'Chromium gets both keys');
    t.match(env, /^PLACARD_ROTATE=0$/m);
    t.match(env, /^PLACARD_SCREEN_BLANKING=off$/m);
    t.notOk(existsSync(path.join(root, 'etc/systemd/system/placard-player.service.download')), 'no download left behind');

    // The status page shows the same key.
    const owner = await signIn(app);
    const status = await app.json('/api/v1/system/status', { headers: owner.headers });
    t.match(status.body.data.sections.tls, { ok: true, data: { enabled: true, fingerprintSha256: tls.fingerprintSha256, pin: tls.pin } });
  },
);

t.test('a wrong pin: curl refuses the server before a byte of the script is read; the script refuses it for the unit', async (t) => {
  if (!which('curl')) return t.comment('curl is not installed here');
  const app = await startApp(t, { https: true });
  const info = await installInfo(app);
  const { root } = scratch(t);
  const wrong = info.installCommand.replaceAll(info.pin, WRONG_PIN);
  const run = await sh(asTest(wrong, root));
  t.match(run.out, /public key does not match pinned public key/);
  t.notOk(existsSync(path.join(root, 'etc/placard-player')), 'nothing installed');

  // The script itself (fetched correctly) with a wrong --pin: the unit download is refused.
  const script = path.join(root, '..', 'install.sh');
  writeFileSync(script, await (await app.fetch('/install.sh')).text());
  const bad = await sh(`sh '${script}' --pin '${WRONG_PIN}' --root '${root}'`);
  t.equal(bad.status, 1, bad.out);
  t.match(bad.out, /could not download https:\/\/127\.0\.0\.1:\d+\/install\/player\.service \(with the key of the server pinned/);
  t.notOk(existsSync(path.join(root, 'etc/systemd/system/placard-player.service')), 'no unit');
  t.notMatch(readFileSync(path.join(root, 'etc/passwd'), 'utf8'), 'placard-player', 'no user');
  const notPin = await sh(`sh '${script}' --pin 'sha256//short' --root '${root}'`);
  t.equal(notPin.status, 1);
  t.match(notPin.out, /--pin must look like sha256\/\/BASE64/);
  const plain = await sh(`sh '${script}' --pin '${info.pin}' --server '${app.url}' --root '${root}'`);
  t.equal(plain.status, 1);
  t.match(plain.out, /a pinned key needs an https:\/\/ server URL/);
});

t.test('the whole unit is compared: one that differs from the installer’s by a line is refused', async (t) => {
  if (!which('curl')) return t.comment('curl is not installed here');
  const app = await startApp(t);
  const real = await (await app.fetch('/install/player.service')).text();
  // Another "server" serving the real unit with User=root: the marker line (ExecStart) is there.
  const evil = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(req.url === '/install/player.service' ? real.replace('User=placard-player', 'User=root') : '');
  });
  await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => evil.close(() => r())));
  const { dir, root } = scratch(t);
  const script = path.join(dir, 'install.sh');
  writeFileSync(script, await (await app.fetch('/install.sh')).text());
  const run = await sh(`sh '${script}' --server http://127.0.0.1:${(evil.address() as AddressInfo).port} --root '${root}'`);
  t.equal(run.status, 1, run.out);
  t.match(run.out, /is not the one this installer was made for \(sha256 [0-9a-f]{64}, expected [0-9a-f]{64}\); nothing was installed/);
  t.notOk(existsSync(path.join(root, 'etc/systemd/system/placard-player.service')));
  const ok = await sh(`sh '${script}' --root '${root}'`);
  t.equal(ok.status, 0, `the real server’s unit passes: ${ok.out}`);
});

t.test('settings, the desktop, Ubuntu’s snap and --uninstall, in a scratch root', async (t) => {
  if (!which('curl')) return t.comment('curl is not installed here');
  const app = await startApp(t);
  const { dir, root } = scratch(t);
  const script = path.join(dir, 'install.sh');
  writeFileSync(script, await (await app.fetch('/install.sh')).text());
  const run = (args: string) => sh(`sh '${script}' --root '${root}' ${args}`);
  const env = () => readFileSync(path.join(root, 'etc/placard-player/player.env'), 'utf8');

  // Raspberry Pi OS Desktop: lightdm is the display manager.
  mkdirSync(path.join(root, 'etc/systemd/system'), { recursive: true });
  const dmLink = path.join(root, 'etc/systemd/system/display-manager.service');
  symlinkSync('/lib/systemd/system/lightdm.service', dmLink);
  const refused = await run('');
  t.equal(refused.status, 1);
  t.match(refused.out, /this box starts a desktop \(lightdm\.service\), which keeps the screen.*--replace-desktop/);
  t.notOk(existsSync(path.join(root, 'etc/placard-player')), 'nothing installed');

  const replaced = await run('--replace-desktop --rotate 90 --screen-blanking on');
  t.equal(replaced.status, 0, replaced.out);
  t.notOk(existsSync(dmLink) || lstatSync(dmLink, { throwIfNoEntry: false }), 'the desktop is off');
  t.equal(readFileSync(path.join(root, 'etc/placard-player/replaced-desktop'), 'utf8'), '/lib/systemd/system/lightdm.service\n');
  t.match(env(), /^PLACARD_ROTATE=90$/m);
  t.match(env(), /^PLACARD_SCREEN_BLANKING=on$/m);
  t.match(env(), /^PLACARD_PINS=$/m, 'plain HTTP: no pins');

  const again = await run('');
  t.equal(again.status, 0, again.out);
  t.match(env(), /^PLACARD_ROTATE=90$/m, 'a re-run keeps the settings it is not given');
  t.match(env(), /^PLACARD_SCREEN_BLANKING=on$/m);
  const upright = await run('--rotate 0 --screen-blanking off');
  t.equal(upright.status, 0);
  t.match(env(), /^PLACARD_ROTATE=0$/m);
  for (const bad of ['--rotate 45', '--screen-blanking maybe', '--rotate']) {
    const r = await run(bad);
    t.equal(r.status, 1, `${bad} refused`);
  }

  // --uninstall: unit, launcher, settings, user and home go; the desktop comes back.
  mkdirSync(path.join(root, 'var/lib/placard-player/chromium'), { recursive: true });
  const gone = await run('--uninstall');
  t.equal(gone.status, 0, gone.out);
  for (const p of ['etc/systemd/system/placard-player.service', 'usr/local/bin/placard-player', 'etc/placard-player', 'var/lib/placard-player'])
    t.notOk(existsSync(path.join(root, p)), `${p} removed`);
  t.notOk(lstatSync(path.join(root, 'etc/systemd/system/graphical.target.wants/placard-player.service'), { throwIfNoEntry: false }));
  t.notMatch(readFileSync(path.join(root, 'etc/passwd'), 'utf8'), 'placard-player');
  t.notMatch(readFileSync(path.join(root, 'etc/group'), 'utf8'), 'placard-player');
  t.match(readFileSync(path.join(root, 'etc/passwd'), 'utf8'), /^root:/m, 'other users stay');
  t.equal(readlinkSync(dmLink), '/lib/systemd/system/lightdm.service', 'the desktop is back');
  t.match(gone.out, /turned the desktop \(lightdm\.service\) back on/);

  // Ubuntu: chromium-browser is a wrapper around the snap.
  rmSnap(root);
  mkdirSync(path.join(root, 'usr/bin'), { recursive: true });
  writeFileSync(path.join(root, 'usr/bin/chromium-browser'), '#!/bin/sh\nexec /snap/bin/chromium "$@"\n');
  unlinkDm(root);
  const snap = await run('');
  t.equal(snap.status, 1);
  t.match(snap.out, /this system's Chromium is Ubuntu's snap, which cannot run as the kiosk/);
  t.notOk(existsSync(path.join(root, 'etc/systemd/system/placard-player.service')));
  writeFileSync(path.join(root, 'usr/bin/google-chrome'), '#!/bin/sh\nexec /opt/google/chrome/chrome "$@"\n');
  const chrome = await run('');
  t.equal(chrome.status, 0, `a Chrome .deb beside the snap is used: ${chrome.out}`);
});

function rmSnap(root: string) {
  spawnSync('rm', ['-rf', path.join(root, 'snap')]);
}
function unlinkDm(root: string) {
  spawnSync('rm', ['-f', path.join(root, 'etc/systemd/system/display-manager.service')]);
}

t.test('the launcher: pins to Chromium, rotation by cage -r (0.1.4) or wlr-randr (newer), blanking off', async (t) => {
  const app = await startApp(t, { https: true });
  const { dir, root } = scratch(t);
  const script = path.join(dir, 'install.sh');
  writeFileSync(script, await (await app.fetch('/install.sh')).text());
  if (!which('curl')) return t.comment('curl is not installed here');
  const inst = await sh(`sh '${script}' --root '${root}'`);
  t.equal(inst.status, 0, inst.out);
  const launcher = path.join(root, 'usr/local/bin/placard-player');
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  const log = path.join(dir, 'log');
  const fake = (name: string, body: string) => {
    writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(path.join(bin, name), 0o755);
  };
  fake('chromium', `echo "chromium $*" >>'${log}'`);
  fake('setterm', `echo "setterm $*" >>'${log}'`);
  fake('wlr-randr', `if [ $# -eq 0 ]; then printf 'HDMI-A-1 "Monitor"\\n  Enabled: yes\\nDSI-1 "Panel"\\n'; else echo "wlr-randr $*" >>'${log}'; fi`);
  // cage: logs its options and runs the command after --.
  const cage = (help: string) =>
    fake(
      'cage',
      `if [ "$1" = -h ]; then printf '%s\\n' '${help}'; exit 0; fi\necho "cage $*" >>'${log}'\nwhile [ "$1" != -- ]; do shift; done\nshift\nexec "$@"`,
    );
  const launch = async (env: Record<string, string>) => {
    writeFileSync(log, '');
    const envFile = readFileSync(path.join(root, 'etc/placard-player/player.env'), 'utf8');
    const vars = Object.fromEntries(
      envFile.split('\n').flatMap((l) => (/^[A-Z_]+=/.test(l) ? [[l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]] : [])),
    );
    const r = await sh(`'${launcher}'`, { env: { PATH: `${bin}:/usr/bin:/bin`, HOME: path.join(dir, 'home'), ...vars, ...env } });
    t.equal(r.status, 0, r.out);
    return readFileSync(log, 'utf8');
  };
  cage(
    'Usage: cage [OPTIONS] [--] APPLICATION\n -h\t Display this help message\n -r\t Rotate the output 90 degrees clockwise, specify up to three times\n -s\t Allow VT switching',
  );
  const old = await launch({ PLACARD_ROTATE: '270' });
  t.match(old, /^cage -s -r -r -r -- .*placard-player --in-cage /m, 'cage 0.1.4: -r three times');
  t.notMatch(old, /wlr-randr/);
  const pins = app.tls!.spkiSha256.join(',');
  t.match(old, `--ignore-certificate-errors-spki-list=${pins}`, 'Chromium accepts the pinned keys only');
  t.match(old, `--user-data-dir=${path.join(dir, 'home')}/chromium`, '(the list needs --user-data-dir)');
  t.notMatch(old, /unsafely-treat-insecure-origin/, 'HTTPS needs no insecure-origin exception');
  t.match(old, /^setterm --term linux --blank 0 --powersave off --powerdown 0$/m, 'blanking off');

  cage('Usage: cage [OPTIONS] [--] APPLICATION\n -d\t Do not draw client side decorations\n -h\t Display this help message\n -s\t Allow VT switching');
  const newer = await launch({ PLACARD_ROTATE: '90', PLACARD_SCREEN_BLANKING: 'on' });
  t.match(newer, /^cage -s -- /m, 'newer cage: no -r');
  t.match(newer, /^wlr-randr --output HDMI-A-1 --transform 90$/m);
  t.match(newer, /^wlr-randr --output DSI-1 --transform 90$/m);
  t.ok(newer.indexOf('\nwlr-randr') < newer.search(/^chromium /m), 'turned before the browser starts');
  t.notMatch(newer, /setterm/, 'blanking left alone when on');

  const plain = await launch({ PLACARD_PINS: '', PLACARD_ORIGIN: 'http://signage.lan:8080', PLACARD_ROTATE: '0' });
  t.match(plain, '--unsafely-treat-insecure-origin-as-secure=http://signage.lan:8080');
  t.notMatch(plain, /ignore-certificate-errors/);
});

t.test('Chromium with the launcher’s flag: the pinned server is a secure origin; another key is refused', async (t) => {
  if (!existsSync(CHROMIUM)) return t.comment('no Chromium here');
  const app = await startApp(t, { https: true });
  const visit = async (list: string) => {
    const profile = tempDataDir(t);
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: [...CHROMIUM_ARGS, `--ignore-certificate-errors-spki-list=${list}`],
    });
    try {
      const page = await context.newPage();
      const res = await page.goto(`${app.httpsUrl}/healthz`).then(
        (r) => r,
        (err: Error) => err,
      );
      if (res instanceof Error) return { error: res.message };
      return { status: res?.status(), secure: await page.evaluate(() => (globalThis as unknown as { isSecureContext: boolean }).isSecureContext) };
    } finally {
      await context.close();
    }
  };
  const pinned = await visit(app.tls!.spkiSha256.join(','));
  t.same(pinned, { status: 200, secure: true }, 'loaded, and a secure context (service worker, Cache Storage)');
  const next = await visit(app.tls!.spkiSha256[1]!);
  t.match(next, { error: /ERR_CERT/ }, 'only the key in use counts: the next one alone does not let the current certificate in');
  const wrong = await visit(WRONG_PIN.replace('sha256//', ''));
  t.match(wrong, { error: /ERR_CERT_AUTHORITY_INVALID|ERR_CERT/ }, 'another key: refused');
});

t.test('the mirroring installer checks the CPU: an unsupported box and a receiver for another CPU are refused', async (t) => {
  const app = await startApp(t, { https: true });
  const owner = await signIn(app);
  const elf = (machine: number) => {
    const b = Buffer.alloc(4096);
    b.writeUInt32BE(0x7f454c46, 0);
    b[4] = 2;
    b[5] = 1;
    b.writeUInt16LE(machine, 18);
    return b;
  };
  const put = (body: Buffer) =>
    app.json('/api/v1/install/mirroring/receiver', { method: 'PUT', headers: { ...owner.headers, 'content-type': 'application/octet-stream' }, body });
  const up = await put(elf(0xb7));
  t.equal(up.status, 200);
  t.equal(up.body.data.architecture, 'aarch64', 'read from the ELF header');
  const script = await (await app.fetch('/install-mirroring.sh')).text();
  t.match(script, "RECEIVER_ARCH='aarch64'");
  t.match(script, `PIN='${app.tls!.pin}'`);
  t.match(script, `curl -fsS --pinnedpubkey '${app.tls!.pin}' -k ${app.httpsUrl}/install-mirroring.sh`);
  const dir = tempDataDir(t);
  writeFileSync(path.join(dir, 'm.sh'), script);
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  const runOn = async (machine: string) => {
    writeFileSync(path.join(bin, 'uname'), `#!/bin/sh\necho ${machine}\n`);
    chmodSync(path.join(bin, 'uname'), 0o755);
    return sh(`sh '${path.join(dir, 'm.sh')}'`, { env: { PATH: `${bin}:/usr/bin:/bin` } });
  };
  const armv7 = await runOn('armv7l');
  t.equal(armv7.status, 1);
  t.match(armv7.out, /this box's CPU \(armv7l\) is not supported: the mirroring receiver runs on x86_64 and aarch64/);
  const x86 = await runOn('x86_64');
  t.equal(x86.status, 1);
  t.match(x86.out, /the receiver this server has is built for aarch64; this box is x86_64/);
  const arm = await runOn('aarch64');
  t.notMatch(arm.out, /CPU|built for/, 'an aarch64 box passes the check (then needs root)');

  t.equal((await put(Buffer.from('#!/bin/sh\necho not a binary\n'))).body.data.architecture, null);
  writeFileSync(path.join(dir, 'm.sh'), await (await app.fetch('/install-mirroring.sh')).text());
  const noElf = await runOn('x86_64');
  t.match(noElf.out, /is not an x86_64 or aarch64 Linux program/);
});

t.test('systemd-analyze security: the player unit is hardened as far as a kiosk allows, the mirroring unit further', async (t) => {
  if (!which('systemd-analyze')) return t.comment('systemd-analyze is not installed here');
  const app = await startApp(t, { https: true });
  const owner = await signIn(app);
  const dir = tempDataDir(t);
  const score = (file: string) => {
    const res = spawnSync('systemd-analyze', ['security', '--offline=yes', file], { encoding: 'utf8' });
    const m = /Overall exposure level for \S+: (\d+\.\d)/.exec(res.stdout);
    return m ? Number(m[1]) : NaN;
  };
  const player = path.join(dir, 'placard-player.service');
  writeFileSync(player, await (await app.fetch('/install/player.service')).text());
  const playerScore = score(player);
  t.ok(playerScore <= 3.0, `player unit exposure ${playerScore} (was 8.7)`);
  const verify = spawnSync('systemd-analyze', ['verify', player], { encoding: 'utf8' });
  t.notMatch(`${verify.stdout}${verify.stderr}`, /Unknown key|Failed to parse|Invalid/, 'every setting is understood');

  t.equal(
    (
      await app.json('/api/v1/install/mirroring/receiver', {
        method: 'PUT',
        headers: { ...owner.headers, 'content-type': 'application/octet-stream' },
        body: Buffer.alloc(64, 1),
      })
    ).status,
    200,
  );
  const script = await (await app.fetch('/install-mirroring.sh')).text();
  const unit = /<<'EOF'\n([\s\S]*?)EOF\n/.exec(script)?.[1] ?? '';
  t.match(unit, /^ExecStart=\/usr\/local\/bin\/placard-mirroring-receiver$/m);
  t.match(unit, `Environment=PLACARD_SERVER_URL=${app.httpsUrl}`);
  const mirroring = path.join(dir, 'placard-mirroring.service');
  writeFileSync(mirroring, unit);
  const mirroringScore = score(mirroring);
  t.ok(mirroringScore <= 1.5, `mirroring unit exposure ${mirroringScore} (was 9.0)`);
});

t.test('a paired player’s socket upgrades on the HTTPS listener (wss), trusting only the server’s certificate; no credential: 401', async (t) => {
  const app = await startApp(t, { https: true });
  const owner = await signIn(app);
  const screen = await pairScreen(app, owner);
  const url = `${app.httpsUrl!.replace('https:', 'wss:')}/api/v1/player/socket`;
  const connect = (headers: Record<string, string>) =>
    new Promise<{ opened: boolean; status?: number }>((resolve, reject) => {
      const ws = new WebSocket(url, ['placard.v1'], { headers, ca: app.tls!.cert });
      ws.on('open', () => {
        ws.close();
        resolve({ opened: true });
      });
      ws.on('unexpected-response', (_req, res) => {
        res.resume();
        resolve({ opened: false, status: res.statusCode });
      });
      ws.on('error', reject);
    });
  t.same(await connect(screen.headers), { opened: true }, 'the device credential opens the socket over TLS');
  t.same(await connect({}), { opened: false, status: 401 });
});
