import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { defaultNames, generatedIdentity, providedIdentity, rotateGeneratedKey } from '../server/src/platform/security/tls.js';
import { startApp, tempDataDir } from './helpers/harness.js';

/** The HTTPS identity of the server: made once, kept, re-issued with the same key, or the admin's own (docs/trust.md). */

const which = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

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

t.test('placard tls shows the fingerprint and pin; placard tls-rotate moves to the next key', async (t) => {
  const dir = tempDataDir(t);
  const cli = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, ['--import=tsx', 'server/src/cli.ts', ...args], {
      env: { ...process.env, PLACARD_DATA_DIR: dir, PLACARD_PORT: '1', ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
  const before = cli(['tls']);
  t.equal(before.status, 1);
  t.match(before.stderr, /no certificate in .*tls yet: the server makes it at its first start/);
  const id = await generatedIdentity(dir, ['localhost']);
  const shown = cli(['tls']);
  t.equal(shown.status, 0, shown.stderr);
  t.match(shown.stdout, `fingerprint:  SHA256 ${id.fingerprintSha256}`);
  t.match(shown.stdout, `pin:          ${id.pin}`);
  const rotated = cli(['tls-rotate']);
  t.equal(rotated.status, 0, rotated.stderr);
  t.match(rotated.stdout, id.spkiSha256[1]!);
  const after = await generatedIdentity(dir, ['localhost']);
  t.equal(after.spkiSha256[0], id.spkiSha256[1], 'the next key is in use after the restart');
  const own = cli(['tls-rotate'], { PLACARD_TLS_CERT: '/nonexistent.crt', PLACARD_TLS_KEY: '/nonexistent.key' });
  t.equal(own.status, 1);
  t.match(own.stderr, /uses your certificate/);
});
