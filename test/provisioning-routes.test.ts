import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t, { type Test } from 'tap';
import { signIn } from './helpers/auth.js';
import { contended, startApp, tempDataDir } from './helpers/harness.js';

const which = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

function lint(t: Test, label: string, script: string) {
  const dir = tempDataDir(t);
  const file = path.join(dir, 'script.sh');
  writeFileSync(file, script);
  const syntax = spawnSync('sh', ['-n', file], { encoding: 'utf8' });
  t.equal(syntax.status, 0, `${label}: sh -n ${syntax.stderr}`);
  if (which('shellcheck')) {
    const res = spawnSync('shellcheck', ['-s', 'sh', file], { encoding: 'utf8' });
    t.equal(res.status, 0, `${label}: shellcheck ${res.stdout}`);
  } else t.comment('shellcheck is not installed here (CI installs it)');
}

/** A raw request with a Host header fetch() would not let us send. */
function rawGet(url: string, pathName: string, host: string): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname: u.hostname, port: u.port, path: pathName, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('GET /install.sh: the player installer for this server, lint-clean, installs into a scratch root', async (t) => {
  const app = await startApp(t);
  const res = await app.fetch('/install.sh');
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /text\/x-shellscript/);
  const script = await res.text();
  t.match(script, `SERVER_URL='${app.url}'`, 'rendered with the URL the request came to');
  t.match(script, '/play?kiosk=1', 'Chromium opens the player in kiosk mode');
  t.match(script, '--unsafely-treat-insecure-origin-as-secure="$PLACARD_ORIGIN"', 'the LAN origin counts as secure (service worker)');
  t.match(script, '--kiosk');
  lint(t, 'install.sh', script);
  const head = await app.fetch('/install.sh', { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(await head.text(), '');

  // Run it the way an admin would, into a scratch root (it downloads the unit from us).
  if (!which('curl')) return t.comment('curl is not installed here');
  const dir = tempDataDir(t);
  const root = path.join(dir, 'root');
  mkdirSync(path.join(root, 'etc'), { recursive: true });
  writeFileSync(path.join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
  writeFileSync(path.join(root, 'etc/group'), 'root:x:0:\n');
  const scriptFile = path.join(dir, 'install.sh');
  writeFileSync(scriptFile, script);
  // Asynchronously: the script downloads the unit from this very process.
  const run = (args: string[]) =>
    new Promise<{ status: number | null; out: string }>((resolve) => {
      const child = spawn('sh', [scriptFile, ...args]);
      let out = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (out += c));
      child.on('close', (status) => resolve({ status, out }));
    });
  for (let i = 1; i <= 2; i++) {
    const r = await run(['--root', root]);
    t.equal(r.status, 0, `run ${i}: ${r.out}`);
  }
  const users = readFileSync(path.join(root, 'etc/passwd'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('placard-player:'));
  t.equal(users.length, 1, 'one kiosk user after two runs');
  t.match(users[0], /:\/usr\/sbin\/nologin$/);
  const env = readFileSync(path.join(root, 'etc/placard-player/player.env'), 'utf8');
  t.match(env, `PLACARD_PLAYER_URL=${app.url}/play?kiosk=1`);
  t.match(env, `PLACARD_ORIGIN=${new URL(app.url).origin}`);
  const launcher = path.join(root, 'usr/local/bin/placard-player');
  t.ok(statSync(launcher).mode & 0o111, 'launcher is executable');
  lint(t, 'placard-player launcher', readFileSync(launcher, 'utf8'));
  const unit = readFileSync(path.join(root, 'etc/systemd/system/placard-player.service'), 'utf8');
  t.equal(unit, await (await app.fetch('/install/player.service')).text(), 'the unit is the one /install/player.service serves');

  const bad = spawnSync('sh', [scriptFile, '--root', root, '--server', "http://x'y"], { encoding: 'utf8' });
  t.not(bad.status, 0, 'a server URL with a quote is refused');
});

t.test('the public URL setting (or PLACARD_PUBLIC_URL) is what the scripts name; a hostile Host is refused', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const hostile = await rawGet(app.url, '/install.sh', "evil'$(reboot)");
  t.equal(hostile.status, 400, hostile.body);
  t.match(JSON.parse(hostile.body).error.code, 'validation_failed');
  await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { publicUrl: 'http://signage.lan:8080' } });
  const script = await (await app.fetch('/install.sh')).text();
  t.match(script, "SERVER_URL='http://signage.lan:8080'");
  const fixed = await rawGet(app.url, '/install.sh', "evil'$(reboot)");
  t.equal(fixed.status, 200, 'with a public URL set the Host header does not matter');
  t.notMatch(fixed.body, 'evil');

  const env = await startApp(t, { config: { publicUrl: 'https://screens.example.org' } });
  t.match(await (await env.fetch('/install.sh')).text(), "SERVER_URL='https://screens.example.org'");
});

t.test('GET /install/player.service passes systemd-analyze verify', async (t) => {
  const app = await startApp(t);
  const res = await app.fetch('/install/player.service');
  t.equal(res.status, 200);
  const unit = await res.text();
  t.match(unit, /^ExecStart=\/usr\/local\/bin\/placard-player$/m);
  t.match(unit, /^Restart=always$/m);
  t.match(unit, /^User=placard-player$/m);
  if (!which('systemd-analyze')) return t.comment('systemd-analyze is not installed here (CI installs systemd)');
  const dir = tempDataDir(t);
  writeFileSync(path.join(dir, 'placard-player.service'), unit.replace('/usr/local/bin/placard-player', '/bin/true'));
  const v = spawnSync('systemd-analyze', ['verify', path.join(dir, 'placard-player.service')], { encoding: 'utf8' });
  t.equal(v.status, 0);
  t.equal(`${v.stdout}${v.stderr}`.trim(), '', 'no warnings');
});

t.test('GET /api/v1/install/linux and the artifact with Range, HEAD, ETag', async (t) => {
  const app = await startApp(t);
  const meta = await app.json('/api/v1/install/linux');
  t.equal(meta.status, 200);
  const m = meta.body.data;
  t.equal(m.playerFamily, 'desktop-linux');
  t.same(m.architectures, ['x86_64', 'aarch64']);
  t.equal(m.installCommand, `curl -fsSL ${app.url}/install.sh | sudo sh`);
  t.equal(m.artifact.url, `${app.url}/api/v1/install/linux/artifact`);

  const full = await app.fetch('/api/v1/install/linux/artifact');
  t.equal(full.status, 200);
  const bytes = Buffer.from(await full.arrayBuffer());
  t.equal(bytes.length, m.artifact.sizeBytes, 'size as announced');
  t.equal(sha256(bytes), m.artifact.sha256, 'sha256 as announced');
  t.equal(full.headers.get('etag'), `"${m.artifact.sha256}"`);
  t.equal(full.headers.get('accept-ranges'), 'bytes');
  const again = await app.json('/api/v1/install/linux');
  t.equal(again.body.data.artifact.sha256, m.artifact.sha256, 'the same bytes every time');

  const dir = tempDataDir(t);
  writeFileSync(path.join(dir, 'a.tar.gz'), bytes);
  const list = spawnSync('tar', ['tzf', path.join(dir, 'a.tar.gz')], { encoding: 'utf8' });
  t.same(list.stdout.trim().split('\n').sort(), ['placard-player/README', 'placard-player/install.sh', 'placard-player/player.service']);
  spawnSync('tar', ['xzf', path.join(dir, 'a.tar.gz'), '-C', dir]);
  lint(t, 'artifact install.sh', readFileSync(path.join(dir, 'placard-player/install.sh'), 'utf8'));

  const part = await app.fetch('/api/v1/install/linux/artifact', { headers: { range: 'bytes=0-9' } });
  t.equal(part.status, 206);
  t.equal(part.headers.get('content-range'), `bytes 0-9/${bytes.length}`);
  t.same(Buffer.from(await part.arrayBuffer()), bytes.subarray(0, 10));
  const suffix = await app.fetch('/api/v1/install/linux/artifact', { headers: { range: 'bytes=-5' } });
  t.equal(suffix.status, 206);
  t.same(Buffer.from(await suffix.arrayBuffer()), bytes.subarray(bytes.length - 5));
  const open = await app.fetch('/api/v1/install/linux/artifact', { headers: { range: `bytes=${bytes.length - 3}-` } });
  t.same(Buffer.from(await open.arrayBuffer()), bytes.subarray(bytes.length - 3));
  const beyond = await app.json('/api/v1/install/linux/artifact', { headers: { range: `bytes=${bytes.length + 10}-` } });
  t.equal(beyond.status, 416);
  t.equal(beyond.headers.get('content-range'), `bytes */${bytes.length}`);
  t.equal(beyond.body.error.code, 'range_not_satisfiable');
  const head = await app.fetch('/api/v1/install/linux/artifact', { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-length'), String(bytes.length));
  t.equal((await head.arrayBuffer()).byteLength, 0);
  const headRange = await app.fetch('/api/v1/install/linux/artifact', { method: 'HEAD', headers: { range: 'bytes=0-9' } });
  t.equal(headRange.status, 206);
  const cached = await app.fetch('/api/v1/install/linux/artifact', { headers: { 'if-none-match': `"${m.artifact.sha256}"` } });
  t.equal(cached.status, 304);
  const staleIfRange = await app.fetch('/api/v1/install/linux/artifact', { headers: { range: 'bytes=0-9', 'if-range': '"other"' } });
  t.equal(staleIfRange.status, 200, 'If-Range with another ETag gets the whole file');
});

t.test('mirroring receiver: 404 saying how to provide one, uploaded by an admin, served with its sha256, replaced, deleted', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  for (const p of ['/install-mirroring.sh', '/api/v1/install/mirroring/receiver', '/api/v1/install/mirroring/receiver.sha256']) {
    const res = await app.json(p);
    t.equal(res.status, 404, p);
    t.equal(res.body.error.code, 'not_found');
    t.match(res.body.error.message, 'PUT /api/v1/install/mirroring/receiver', `${p} says how to provide one`);
  }
  const head = await app.fetch('/api/v1/install/mirroring/receiver', { method: 'HEAD' });
  t.equal(head.status, 404);

  const put = (body: Buffer, headers: Record<string, string> = owner.headers, type = 'application/octet-stream') =>
    app.json('/api/v1/install/mirroring/receiver', { method: 'PUT', headers: { ...headers, 'content-type': type }, body });
  const binary = randomBytes(50_000);
  const editor = await signIn(app, { role: 'editor' });
  t.equal((await put(binary, editor.headers)).status, 403, 'admins only');
  t.equal(
    (await app.json('/api/v1/install/mirroring/receiver', { method: 'PUT', body: binary, headers: { 'content-type': 'application/octet-stream' } })).status,
    401,
  );
  t.equal((await put(binary, owner.headers, 'application/json')).status, 415, 'the body is the binary');
  const empty = await put(Buffer.alloc(0));
  t.equal(empty.status, 400);
  t.match(empty.body.error.message, /empty/);
  const tooBig = await new Promise<number>((resolve, reject) => {
    // Declares more than the limit: refused before a byte is stored.
    const u = new URL(app.url);
    const req = http.request(
      {
        hostname: u.hostname,
        port: u.port,
        path: '/api/v1/install/mirroring/receiver',
        method: 'PUT',
        headers: { ...owner.headers, 'content-type': 'application/octet-stream', 'content-length': String(300 * 1024 * 1024) },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.write(randomBytes(1024));
  });
  t.equal(tooBig, 413, 'over the size limit');

  const uploaded = await put(binary);
  t.equal(uploaded.status, 200, JSON.stringify(uploaded.body));
  t.match(uploaded.body.data, {
    sha256: sha256(binary),
    sizeBytes: binary.length,
    url: '/api/v1/install/mirroring/receiver',
    installScriptUrl: '/install-mirroring.sh',
  });
  const settings = await app.json('/api/v1/settings', { headers: owner.headers });
  t.match(
    settings.body.data.provisioning.mirroringReceiver,
    { fileName: `receiver-${sha256(binary)}`, sha256: sha256(binary), sizeBytes: binary.length },
    'recorded in the settings',
  );
  const patch = await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { provisioning: { mirroringReceiver: null } } });
  t.equal(patch.status, 400, 'the setting is not PATCHed: the upload route owns it');
  t.same(readdirSync(path.join(app.dataDir, 'releases/mirroring')), [`receiver-${sha256(binary)}`], 'one file, no partial left');

  const got = await app.fetch('/api/v1/install/mirroring/receiver');
  t.equal(got.status, 200);
  t.same(Buffer.from(await got.arrayBuffer()), binary);
  const sum = await (await app.fetch('/api/v1/install/mirroring/receiver.sha256')).text();
  t.equal(sum, `${sha256(binary)}  placard-mirroring-receiver\n`);
  const part = await app.fetch('/api/v1/install/mirroring/receiver', { headers: { range: 'bytes=100-199' } });
  t.equal(part.status, 206);
  t.same(Buffer.from(await part.arrayBuffer()), binary.subarray(100, 200));
  const h = await app.fetch('/api/v1/install/mirroring/receiver', { method: 'HEAD' });
  t.equal(h.headers.get('content-length'), String(binary.length));
  const script = await app.fetch('/install-mirroring.sh');
  t.equal(script.status, 200);
  const text = await script.text();
  t.match(text, `EXPECTED='${sha256(binary)}'`);
  lint(t, 'install-mirroring.sh', text);

  // A new upload replaces it (and its file); the export leaves this server's file out.
  const v2 = randomBytes(1000);
  t.equal((await put(v2)).status, 200);
  t.equal(await (await app.fetch('/api/v1/install/mirroring/receiver.sha256')).text(), `${sha256(v2)}  placard-mirroring-receiver\n`);
  t.same(Buffer.from(await (await app.fetch('/api/v1/install/mirroring/receiver')).arrayBuffer()), v2);
  t.same(readdirSync(path.join(app.dataDir, 'releases/mirroring')), [`receiver-${sha256(v2)}`], 'the old file is gone');
  // Two replacements at once (one of them the current bytes again): whichever is recorded
  // last, its file is there, and only it.
  const v3 = randomBytes(800);
  const racing = await contended(app, () => [put(v3), put(v2)]);
  t.same(
    racing.map((r) => r.status),
    [200, 200],
  );
  const served = Buffer.from(await (await app.fetch('/api/v1/install/mirroring/receiver')).arrayBuffer());
  t.ok([sha256(v2), sha256(v3)].includes(sha256(served)), 'the receiver is still served');
  t.same(readdirSync(path.join(app.dataDir, 'releases/mirroring')), [`receiver-${sha256(served)}`], 'with exactly its own file');
  t.equal((await put(v2)).status, 200);
  const exported = await app.json('/api/v1/system/settings/export', { headers: owner.headers });
  t.notOk('provisioning' in exported.body.data.sections.settings.data, 'not exported');

  // A file lost from the data directory: 404, not a 500.
  rmSync(path.join(app.dataDir, 'releases/mirroring', `receiver-${sha256(v2)}`));
  const lost = await app.json('/api/v1/install/mirroring/receiver.sha256');
  t.equal(lost.status, 404);
  t.match(lost.body.error.message, /missing or damaged/);

  t.equal((await app.fetch('/api/v1/install/mirroring/receiver', { method: 'DELETE', headers: editor.headers })).status, 403);
  t.equal((await app.fetch('/api/v1/install/mirroring/receiver', { method: 'DELETE', headers: owner.headers })).status, 204);
  t.equal((await app.json('/api/v1/install/mirroring/receiver')).status, 404, 'not served after DELETE');
  t.equal((await app.fetch('/api/v1/install/mirroring/receiver', { method: 'DELETE', headers: owner.headers })).status, 404);
});

t.test('the Linux player artifact cache keeps artifacts other requests use; only idle ones go', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const dir = path.join(app.dataDir, 'releases/linux-player');
  const buildFor = async (url: string) => {
    t.equal((await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { publicUrl: url } })).status, 200);
    const res = await app.json('/api/v1/install/linux');
    t.equal(res.status, 200);
    return `${res.body.data.artifact.sha256}.tar.gz`;
  };
  const a = await buildFor('http://a.lan:8080');
  const b = await buildFor('http://b.lan:8080');
  t.not(a, b);
  t.same(readdirSync(dir).sort(), [a, b].sort(), 'building B left A in place (a request for A may be streaming it)');
  // A idle for two hours: the next build sweeps it; B (used just now) stays.
  const old = new Date(Date.now() - 2 * 3_600_000);
  utimesSync(path.join(dir, a), old, old);
  const oldB = new Date(Date.now() - 2 * 3_600_000);
  utimesSync(path.join(dir, b), oldB, oldB);
  await buildFor('http://b.lan:8080'); // served again: B is in use now
  const c = await buildFor('http://c.lan:8080');
  t.same(readdirSync(dir).sort(), [b, c].sort(), 'the idle one went, the used ones stayed');
  const res = await app.fetch('/api/v1/install/linux/artifact');
  t.equal(res.status, 200, 'C is served');
});
