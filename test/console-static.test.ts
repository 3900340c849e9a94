import t from 'tap';
import { startApp } from './helpers/harness.js';
import { RUNTIME_SHA256 } from '../server/src/modules/widgets/runtime.js';
import { CONSOLE_DIST, ensureConsoleBuilt } from './helpers/browser.js';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';

function rawStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject);
  });
}

t.test('the console and the player are served from the API port', async (t) => {
  await ensureConsoleBuilt();
  const app = await startApp(t);

  t.test('console routes answer index.html, revalidated, with a strict CSP', async (t) => {
    for (const p of ['/', '/users', '/account', '/screens/0190f5a2-7b3c-7def-8abc-0123456789ab', '/index.html']) {
      const res = await app.fetch(p);
      t.equal(res.status, 200, p);
      t.match(res.headers.get('content-type'), /^text\/html/, p);
      t.equal(res.headers.get('cache-control'), 'no-cache', p);
      // Scripts from this origin, plus only the widgets' runtime by its hash (the editor's preview frame).
      const scripts = /script-src ([^;]*)/.exec(res.headers.get('content-security-policy') ?? '')?.[1];
      t.equal(scripts, `'self' 'sha256-${RUNTIME_SHA256}'`, p);
      t.equal(res.headers.get('x-frame-options'), 'DENY');
      t.match(await res.text(), /<div id="app">/, p);
    }
  });

  t.test('/play answers play.html', async (t) => {
    for (const p of ['/play', '/play/', '/play/anything']) {
      const res = await app.fetch(p);
      t.equal(res.status, 200, p);
      const html = await res.text();
      t.match(html, /<title>[^<]*[Pp]layer/, p);
      t.notMatch(html, /<div id="app">/, p);
    }
  });

  t.test('hashed assets are cached for a year; missing ones are 404, not HTML', async (t) => {
    const asset = readdirSync(path.join(CONSOLE_DIST, 'assets')).find((f) => f.endsWith('.js'))!;
    const res = await app.fetch(`/assets/${asset}`);
    t.equal(res.status, 200);
    t.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    t.match(res.headers.get('content-type'), /^text\/javascript/);
    const etag = res.headers.get('etag')!;
    t.ok(etag);
    await res.arrayBuffer();
    // node:http, not fetch: fetch adds Cache-Control: no-cache to conditional requests.
    t.equal(await rawStatus(`${app.url}/assets/${asset}`, { 'if-none-match': etag }), 304);
    t.equal(await rawStatus(`${app.url}/assets/${asset}`, { 'if-none-match': '"other"' }), 200);
    const head = await app.fetch(`/assets/${asset}`, { method: 'HEAD' });
    t.equal(head.status, 200);
    t.ok(Number(head.headers.get('content-length')) > 0);
    const missing = await app.json('/assets/nope-123.js');
    t.equal(missing.status, 404);
    t.equal(missing.body.error.code, 'not_found');
    const missingFile = await app.json('/nope.png');
    t.equal(missingFile.status, 404);
  });

  t.test('never shadows the API, health and install routes', async (t) => {
    const api = await app.json('/api/v1/nope');
    t.equal(api.status, 404);
    t.equal(api.body.error.code, 'not_found');
    const bare = await app.json('/api');
    t.equal(bare.status, 404);
    t.equal(bare.body.error.code, 'not_found');
    const health = await app.json('/healthz');
    t.equal(health.status, 200);
    t.ok(health.body.data);
    const install = await app.fetch('/install.sh');
    t.notMatch(await install.text(), /<div id="app">/);
    const status = await app.json('/api/v1/auth/status');
    t.equal(status.status, 200);
    t.equal(status.body.data.setupRequired, true);
  });

  t.test('path tricks stay inside the build directory', async (t) => {
    for (const p of ['/..%2f..%2fpackage.json', '/%2e%2e/%2e%2e/package.json', '/assets/..%2f..%2f..%2fpackage.json', '/%E0%A4%A']) {
      const res = await app.fetch(p);
      t.ok(res.status < 500, `${p}: ${res.status}`);
      t.notMatch(await res.text(), /"name": "placard"/, p);
    }
  });

  t.test('unsafe methods on console paths get the API envelope, not the page', async (t) => {
    const res = await app.json('/users', { method: 'POST', json: {} });
    t.equal(res.status, 404);
    t.equal(res.body.error.code, 'not_found');
  });
});

t.test('source maps: the build makes none and the server serves none (issue 15: /play-sw.js.map was public)', async (t) => {
  await ensureConsoleBuilt();
  const files = readdirSync(CONSOLE_DIST, { recursive: true }).map(String);
  t.ok(files.includes('play-sw.js') && files.some((f) => f.endsWith('.js')), 'the build is there');
  t.same(
    files.filter((f) => f.endsWith('.map')),
    [],
    'no *.map in console/dist',
  );
  const mapped = files.filter((f) => f.endsWith('.js') && /sourceMappingURL/.test(readFileSync(path.join(CONSOLE_DIST, f), 'utf8')));
  t.same(mapped, [], 'no script points at a map');

  // A build directory that has maps anyway (an old or a debug build): still not served.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-console-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><div id="app"></div>');
  writeFileSync(path.join(dir, 'play-sw.js'), 'self.x = 1;\n//# sourceMappingURL=play-sw.js.map');
  writeFileSync(path.join(dir, 'play-sw.js.map'), '{"version":3,"sources":["src/player/sw.ts"]}');
  writeFileSync(path.join(dir, 'assets', 'console-abc.js.map'), '{"version":3}');
  const app = await startApp(t, { config: { consoleDir: dir } });
  t.equal((await app.fetch('/play-sw.js')).status, 200, 'the script itself is served');
  for (const p of ['/play-sw.js.map', '/assets/console-abc.js.map', '/PLAY-SW.JS.MAP', '/play/play-sw.js.map']) {
    const res = await app.json(p);
    t.equal(res.status, 404, `${p}: 404`);
    t.equal(res.body?.error?.code, 'not_found', `${p}: the envelope, not the map or a page`);
  }
});

t.test('a missing build answers a clear 503 page, the API still works', async (t) => {
  const app = await startApp(t, { config: { consoleDir: '/nonexistent/placard-console' } });
  const res = await app.fetch('/');
  t.equal(res.status, 503);
  t.match(await res.text(), /npm run build/);
  const status = await app.json('/api/v1/auth/status');
  t.equal(status.status, 200);
});
