import { spawnSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import path from 'node:path';
import t from 'tap';
import { defaultNames, generatedIdentity, providedIdentity, rotateGeneratedKey, spkiSha256 } from '../server/src/platform/security/tls.js';
import { startApp, tempDataDir } from './helpers/harness.js';
import { startServerProcess } from './helpers/server-process.js';

/** The HTTPS identity of the server: made once, kept, re-issued with the same key, or the admin's own (docs/trust.md). */

const which = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

const spkiOf = (cert: PeerCertificate) =>
  createHash('sha256')
    .update(new X509Certificate(cert.raw).publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64');

/**
 * GET over HTTPS trusting only `ca` (the server's own certificate) and checking the host name
 * against it; `pins` (base64 SPKI SHA-256) must hold the key the server presents.
 */
function pinnedGet(url: string, opts: { ca?: string; pins?: string[]; servername?: string }): Promise<{ status: number; body: string; cert: PeerCertificate }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca: opts.ca, rejectUnauthorized: opts.ca !== undefined, servername: opts.servername }, (res) => {
      const cert = (res.socket as TLSSocket).getPeerCertificate();
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, cert }));
    });
    // The pin is checked once the handshake is done, whether or not a CA was given (curl's --pinnedpubkey with -k).
    req.on('socket', (socket) =>
      socket.once('secureConnect', () => {
        const cert = (socket as TLSSocket).getPeerCertificate();
        if (opts.pins && !opts.pins.includes(spkiOf(cert))) req.destroy(new Error(`key ${spkiOf(cert)} is not pinned`));
      }),
    );
    req.on('error', reject);
  });
}

t.test('generated: keys made once (0600) and kept; the certificate names this machine; re-issued with the same key when a name is new', async (t) => {
  const dir = tempDataDir(t);
  const first = await generatedIdentity(dir, defaultNames(['signage.lan']));
  t.ok(first.issued);
  t.equal(first.source, 'generated');
  for (const f of ['server.key', 'next.key']) t.equal(statSync(path.join(dir, 'tls', f)).mode & 0o777, 0o600, `${f} is 0600`);
  t.equal(statSync(path.join(dir, 'tls')).mode & 0o777, 0o700, 'tls/ is 0700');
  t.equal(first.spkiSha256.length, 2, 'the current and the next key are pinned');
  t.not(first.spkiSha256[0], first.spkiSha256[1]);
  t.equal(first.pin, `sha256//${first.spkiSha256[0]};sha256//${first.spkiSha256[1]}`);
  t.match(first.fingerprintSha256, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  for (const n of ['localhost', '127.0.0.1', '::1', 'signage.lan']) t.ok(first.subjectAltNames.includes(n), `SAN ${n}`);
  const cert = new X509Certificate(first.cert);
  t.match(cert.subjectAltName, /DNS:signage\.lan/);
  t.equal(cert.checkHost('signage.lan'), 'signage.lan');
  t.ok(cert.checkIP('127.0.0.1'));
  t.ok(cert.verify(cert.publicKey), 'self-signed');

  const again = await generatedIdentity(dir, defaultNames(['signage.lan']));
  t.notOk(again.issued, 'nothing new: the stored certificate is used');
  t.equal(again.fingerprintSha256, first.fingerprintSha256);
  t.equal(again.pin, first.pin);

  const renamed = await generatedIdentity(dir, defaultNames(['screens.example.org']));
  t.ok(renamed.issued, 'a new public host: a new certificate');
  t.not(renamed.fingerprintSha256, first.fingerprintSha256);
  t.equal(renamed.pin, first.pin, '...with the same keys, so pinned screens go on');
  t.ok(renamed.subjectAltNames.includes('screens.example.org'));

  // A certificate of another key (a hand-copied file) is replaced, not served.
  const other = tempDataDir(t);
  await generatedIdentity(other, ['localhost']);
  renameSync(path.join(other, 'tls/server.crt'), path.join(dir, 'tls/server.crt'));
  const fixed = await generatedIdentity(dir, ['localhost']);
  t.ok(fixed.issued);
  t.equal(fixed.pin, first.pin);
});

t.test('rotation: the next key becomes the key; screens pinned to both keep working', async (t) => {
  const dir = tempDataDir(t);
  const before = await generatedIdentity(dir, ['localhost']);
  const rotated = await rotateGeneratedKey(dir);
  t.equal(rotated.previous, before.spkiSha256[0]);
  t.equal(rotated.current, before.spkiSha256[1], 'the pinned next key is now in use');
  const after = await generatedIdentity(dir, ['localhost']);
  t.ok(after.issued, 'a certificate for the new key');
  t.equal(after.spkiSha256[0], before.spkiSha256[1]);
  t.not(after.spkiSha256[1], before.spkiSha256[0], 'a fresh next key');
  t.ok(existsSync(path.join(dir, 'tls/previous.key')), 'the old key is kept aside');
  await t.rejects(rotateGeneratedKey(tempDataDir(t)), { name: 'TlsError', message: /start the server once/ }, 'nothing to rotate before the first start');
});

t.test(
  'provided: the admin’s certificate and key are used as they are; a wrong pair is refused clearly',
  { skip: !which('openssl') && 'openssl is not installed' },
  async (t) => {
    const dir = tempDataDir(t);
    const mk = (name: string) => {
      const res = spawnSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-keyout',
          path.join(dir, `${name}.key`),
          '-out',
          path.join(dir, `${name}.crt`),
          '-days',
          '30',
          '-subj',
          `/CN=${name}`,
          '-addext',
          `subjectAltName=DNS:${name}`,
        ],
        { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] },
      );
      t.equal(res.status, 0, 'openssl made a certificate');
    };
    mk('screens.example.org');
    mk('other.example.org');
    const id = providedIdentity(path.join(dir, 'screens.example.org.crt'), path.join(dir, 'screens.example.org.key'));
    t.equal(id.source, 'provided');
    t.equal(id.spkiSha256.length, 1, 'only the leaf key is pinned');
    t.equal(id.fingerprintSha256, new X509Certificate(readFileSync(path.join(dir, 'screens.example.org.crt'))).fingerprint256);
    t.same(id.subjectAltNames, ['screens.example.org']);
    t.throws(() => providedIdentity(path.join(dir, 'screens.example.org.crt'), path.join(dir, 'other.example.org.key')), {
      name: 'TlsError',
      message: /do not belong together/,
    });
    t.throws(() => providedIdentity(path.join(dir, 'missing.crt'), path.join(dir, 'other.example.org.key')), { message: /cannot read .*missing\.crt: ENOENT/ });
    t.throws(() => providedIdentity(path.join(dir, 'screens.example.org.key'), path.join(dir, 'screens.example.org.key')), {
      message: /is not a PEM certificate/,
    });
  },
);

t.test('the real server: HTTPS with the generated certificate, the same one after a restart, curl pins it', async (t) => {
  const dir = tempDataDir(t);
  const port = await freePort();
  const first = await startServerProcess(t, dir, { PLACARD_HTTPS_PORT: String(port), PLACARD_PUBLIC_URL: 'http://signage.lan:8080' });
  t.equal(first.httpsUrl, `https://127.0.0.1:${port}`);
  const certPem = readFileSync(path.join(dir, 'tls/server.crt'), 'utf8');
  const pins = [spkiSha256(readFileSync(path.join(dir, 'tls/server.key'), 'utf8'))];
  // Trusting the certificate itself as the only CA, with host name checking: it names 127.0.0.1 and the public host.
  const ok = await pinnedGet(`${first.httpsUrl}/healthz`, { ca: certPem, pins });
  t.equal(ok.status, 200);
  t.match(JSON.parse(ok.body), { data: { status: 'ok' } });
  const byName = await pinnedGet(`${first.httpsUrl}/healthz`, { ca: certPem, servername: 'signage.lan' });
  t.equal(byName.status, 200, 'the public host is in the certificate');
  await t.rejects(pinnedGet(`${first.httpsUrl}/healthz`, { ca: certPem, servername: 'elsewhere.lan' }), /altnames|Hostname/, 'another name is refused');
  await t.rejects(pinnedGet(`${first.httpsUrl}/healthz`, { pins: ['AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='] }), /not pinned/, 'a wrong pin is refused');
  t.match(first.output(), new RegExp(`"tlsPin":"sha256//${pins[0]!.replace(/[+/]/g, '\\$&')};sha256//`), 'the pin is logged at start');

  if (which('curl')) {
    const pin = `sha256//${pins[0]}`;
    const good = spawnSync('curl', ['-ksS', '--pinnedpubkey', pin, `${first.httpsUrl}/healthz`], { encoding: 'utf8' });
    t.equal(good.status, 0, `curl with the right pin: ${good.stderr}`);
    const bad = spawnSync('curl', ['-ksS', '--pinnedpubkey', 'sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', `${first.httpsUrl}/healthz`], {
      encoding: 'utf8',
    });
    t.equal(bad.status, 90, 'curl with a wrong pin: exit 90 (public key does not match)');
    t.equal(bad.stdout, '', 'nothing read');
  }

  first.child.kill('SIGTERM');
  t.equal((await first.exited).code, 0);
  const second = await startServerProcess(t, dir, { PLACARD_HTTPS_PORT: String(port), PLACARD_PUBLIC_URL: 'http://signage.lan:8080' });
  t.notMatch(second.output(), 'TLS certificate issued', 'not issued again');
  const again = await pinnedGet(`${second.httpsUrl}/healthz`, { ca: certPem, pins });
  t.equal(again.status, 200, 'the certificate of the first start is served after the restart');
  t.equal(again.cert.fingerprint256, ok.cert.fingerprint256);
  second.child.kill('SIGTERM');
  await second.exited;
});

t.test(
  'the real server with the admin’s certificate; a bad pair or half a pair stops it with one line',
  { skip: !which('openssl') && 'openssl is not installed' },
  async (t) => {
    const dir = tempDataDir(t);
    const tlsDir = path.join(dir, 'own');
    mkdirSync(tlsDir);
    const res = spawnSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        path.join(tlsDir, 'key.pem'),
        '-out',
        path.join(tlsDir, 'cert.pem'),
        '-days',
        '30',
        '-subj',
        '/CN=screens.example.org',
        '-addext',
        'subjectAltName=DNS:screens.example.org,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    t.equal(res.status, 0);
    const port = await freePort();
    const data = path.join(dir, 'data');
    const env = { PLACARD_HTTPS_PORT: String(port), PLACARD_TLS_CERT: path.join(tlsDir, 'cert.pem'), PLACARD_TLS_KEY: path.join(tlsDir, 'key.pem') };
    const srv = await startServerProcess(t, data, env);
    const own = readFileSync(path.join(tlsDir, 'cert.pem'), 'utf8');
    const got = await pinnedGet(`${srv.httpsUrl}/healthz`, { ca: own, servername: 'screens.example.org' });
    t.equal(got.status, 200);
    t.equal(got.cert.fingerprint256, new X509Certificate(own).fingerprint256, 'the admin’s certificate is served');
    t.notOk(existsSync(path.join(data, 'tls')), 'no certificate generated');
    srv.child.kill('SIGTERM');
    await srv.exited;

    const run = (extra: Record<string, string>) =>
      spawnSync(process.execPath, ['--import=tsx', 'server/src/main.ts'], {
        env: { ...process.env, PLACARD_DATA_DIR: data, PLACARD_PORT: '0', PLACARD_HOST: '127.0.0.1', ...extra },
        encoding: 'utf8',
        timeout: 60_000,
      });
    const half = run({ PLACARD_HTTPS_PORT: String(port), PLACARD_TLS_CERT: path.join(tlsDir, 'cert.pem') });
    t.equal(half.status, 1);
    t.match(half.stderr, /^placard: invalid configuration: PLACARD_TLS_CERT and PLACARD_TLS_KEY go together/);
    const swapped = run({ ...env, PLACARD_TLS_CERT: path.join(tlsDir, 'key.pem') });
    t.equal(swapped.status, 1);
    t.match(swapped.stderr, /^placard: HTTPS: .*key\.pem is not a PEM certificate.*PLACARD_HTTPS_PORT=0 turns HTTPS off\)\n$/);
    t.notMatch(swapped.stderr, /\n\s+at /, 'no stack trace');
  },
);

t.test('PLACARD_HTTPS_REDIRECT: console pages go to HTTPS; the player page, assets, installers and the API stay on HTTP', async (t) => {
  const app = await startApp(t, { https: true, config: { httpsRedirect: true } });
  const port = new URL(app.httpsUrl!).port;
  const page = await app.fetch('/screens?x=1', { redirect: 'manual' });
  t.equal(page.status, 308);
  t.equal(page.headers.get('location'), `https://127.0.0.1:${port}/screens?x=1`);
  for (const p of ['/play', '/api/v1/auth/status', '/install.sh', '/healthz']) {
    const res = await app.fetch(p, { redirect: 'manual' });
    t.not(res.status, 308, `${p} is not redirected`);
  }
  const plain = await startApp(t, { https: true });
  t.not((await plain.fetch('/screens', { redirect: 'manual' })).status, 308, 'off by default');
});
