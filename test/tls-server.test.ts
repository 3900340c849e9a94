import { spawnSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import path from 'node:path';
import t from 'tap';
import { spkiSha256 } from '../server/src/platform/security/tls.js';
import { tempDataDir } from './helpers/harness.js';
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
