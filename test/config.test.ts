import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { ConfigError, loadConfig } from '../server/src/config.js';
import { tempDataDir } from './helpers/harness.js';

t.test('embedded defaults', async (t) => {
  const c = loadConfig({});
  t.equal(c.port, 8080);
  t.equal(c.host, '0.0.0.0');
  t.equal(c.dataDir, path.resolve('./data'));
  t.equal(c.publicUrl, null);
  t.equal(c.logLevel, 'info');
  t.ok(Object.isFrozen(c));
});

t.test('PLACARD_* values are parsed', async (t) => {
  const c = loadConfig({
    PLACARD_PORT: '9000',
    PLACARD_PUBLIC_URL: 'https://signs.example.org/',
    PLACARD_TRUST_PROXY: 'true',
    PLACARD_LOG_LEVEL: 'debug',
    UNRELATED: 'x',
  });
  t.equal(c.port, 9000);
  t.equal(c.publicUrl, 'https://signs.example.org', 'trailing slash dropped');
  t.equal(c.trustProxy, true);
  t.equal(c.logLevel, 'debug');
});

t.test('release source and signing key', async (t) => {
  const key = Buffer.alloc(32, 7).toString('base64');
  const c = loadConfig({ PLACARD_RELEASE_SOURCE_URL: 'https://releases.example.org/', PLACARD_RELEASE_SIGNING_KEY: key });
  t.equal(c.releaseSourceUrl, 'https://releases.example.org', 'trailing slash dropped');
  t.equal(c.releaseSigningKey, key);
  const none = loadConfig({});
  t.equal(none.releaseSourceUrl, null);
  t.equal(none.releaseSigningKey, null);
});

t.test('bad values: one clear error naming the variable', async (t) => {
  for (const [key, value] of [
    ['PLACARD_PORT', 'eighty'],
    ['PLACARD_PORT', '70000'],
    ['PLACARD_PUBLIC_URL', 'ftp://x'],
    ['PLACARD_LOG_LEVEL', 'loud'],
    ['PLACARD_TRUST_PROXY', 'perhaps'],
    ['PLACARD_RELEASE_SOURCE_URL', 'file:///etc/releases'],
    ['PLACARD_RELEASE_SIGNING_KEY', 'not base64!'],
    ['PLACARD_RELEASE_SIGNING_KEY', Buffer.alloc(31, 1).toString('base64')],
  ] as const) {
    const err = (() => {
      try {
        loadConfig({ [key]: value });
      } catch (e) {
        return e;
      }
    })();
    t.type(err, ConfigError, `${key}=${value}`);
    t.match((err as Error).message, new RegExp(`^invalid configuration: ${key}=`), `${key}=${value}`);
    t.notMatch((err as Error).message, /\n/, 'one line');
  }
});

t.test('the server exits 1 with one line on a bad value', async (t) => {
  const dir = tempDataDir(t);
  const run = spawnSync(process.execPath, ['--import=tsx', 'server/src/main.ts'], {
    env: { ...process.env, PLACARD_PORT: 'eighty', PLACARD_DATA_DIR: dir },
    encoding: 'utf8',
    timeout: 30_000,
  });
  t.equal(run.status, 1);
  const lines = run.stderr.trim().split('\n');
  t.equal(lines.length, 1, run.stderr);
  t.match(lines[0], /^placard: invalid configuration: PLACARD_PORT="eighty"/);
});
