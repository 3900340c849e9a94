/**
 * Stored web releases at /play/v/<version>/ (docs/player-updates.md): extracted once into
 * the data directory, their own play.html, version.json and hashed files; unknown versions
 * and hostile archives are 404s that write nothing outside their place. The bundled build's
 * relative page URLs (vite.config.ts) still load at /play/.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t from 'tap';
import { CONSOLE_DIST, ensureConsoleBuilt } from './helpers/browser.js';
import { startApp, tempDataDir } from './helpers/harness.js';
import { storeWebRelease, tarGz, webReleaseTarball } from './helpers/web-release.js';
import { webReleaseEntryPath } from '../server/src/platform/http/web-release.js';

t.setTimeout(120_000);

/** GET without fetch's URL normalisation (the path goes out as written). */
function rawGet(url: string, pathname: string): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    http
      .get({ host: u.hostname, port: u.port, path: pathname }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

t.test('the bundled player page names its build files relatively and the build says its version', async (t) => {
  await ensureConsoleBuilt();
  const html = readFileSync(path.join(CONSOLE_DIST, 'play.html'), 'utf8');
  t.match(html, /src="\.\/assets\/play-[^"]+\.js"/, 'play.html: ./assets/...');
  t.notMatch(html, /(?:src|href)="\/assets\//, 'no absolute build URL in play.html');
  t.match(readFileSync(path.join(CONSOLE_DIST, 'index.html'), 'utf8'), /src="\/assets\/console-[^"]+\.js"/, 'the console keeps /assets/ (deep routes)');
  const pkg = JSON.parse(readFileSync(path.join(CONSOLE_DIST, '..', '..', 'package.json'), 'utf8'));
  t.same(JSON.parse(readFileSync(path.join(CONSOLE_DIST, 'version.json'), 'utf8')), { version: pkg.version });

  const app = await startApp(t);
  const asset = readdirSync(path.join(CONSOLE_DIST, 'assets')).find((f) => f.startsWith('play-') && f.endsWith('.js'))!;
  for (const p of [`/play/assets/${asset}`, `/play/anything/assets/${asset}`]) {
    const res = await app.fetch(p);
    t.equal(res.status, 200, `${p}: a page at /play/ or deeper still loads its build`);
    t.match(res.headers.get('content-type'), /javascript/);
    t.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  }
  t.equal((await app.fetch('/play/assets/nope-123.js')).status, 404, 'a missing one is a 404');
  const version = await app.fetch('/version.json');
  t.equal(version.status, 200);
  t.same(await version.json(), { version: pkg.version });
});

t.test('/play/v/<version>/ serves the stored web release, extracted once', async (t) => {
  await ensureConsoleBuilt();
  const app = await startApp(t);
  const work = tempDataDir(t);
  const id = await storeWebRelease(app.deps.db, app.dataDir, '0.2.0', webReleaseTarball(work, '0.2.0'));
  const webDir = path.join(app.dataDir, 'releases', id, 'web');
  t.notOk(existsSync(webDir), 'not extracted before it is asked for');

  // Several at once: one extraction, every answer the page.
  const pages = await Promise.all([1, 2, 3].map(() => app.fetch('/play/v/0.2.0/')));
  for (const res of pages) {
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /^text\/html/);
    t.equal(res.headers.get('cache-control'), 'no-cache');
    t.match(await res.text(), /<div id="player">/);
  }
  t.ok(existsSync(path.join(webDir, 'play.html')), 'extracted into releases/<id>/web/');
  t.same(readdirSync(path.join(app.dataDir, 'releases', id)).sort(), ['any', 'web'], 'no temporary directory left beside it');

  const v = await app.fetch('/play/v/0.2.0/version.json');
  t.equal(v.status, 200);
  t.same(await v.json(), { version: '0.2.0' }, "the release's own version.json");
  t.match(await (await app.fetch('/play/v/0.2.0/screens/anything')).text(), /<div id="player">/, 'any other path: its play.html');
  t.match(await (await app.fetch('/play/v/v0.2.0/')).text(), /<div id="player">/, 'a version as semver cleans it');

  const html = readFileSync(path.join(webDir, 'play.html'), 'utf8');
  const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)![1]!;
  const js = await app.fetch(`/play/v/0.2.0/${script}`);
  t.equal(js.status, 200, 'its hashed files');
  t.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.equal(await js.text(), readFileSync(path.join(webDir, script), 'utf8'));
  t.equal((await app.fetch('/play/v/0.2.0/assets/nope-1.js')).status, 404, 'a missing hashed file: 404, not the page');
  t.equal((await app.fetch('/play/v/0.2.0/assets/x.js.map')).status, 404, 'no source maps');

  const bare = await app.fetch('/play/v/0.2.0?kiosk=0&x=1', { redirect: 'manual' });
  t.equal(bare.status, 302, 'without the slash: redirected (relative URLs resolve inside the release)');
  t.equal(bare.headers.get('location'), '/play/v/0.2.0/?kiosk=0&x=1', 'keeping the query');

  for (const p of ['/play/v/9.9.9/', '/play/v/9.9.9', '/play/v/latest/', '/play/v/0.2/', '/play/v/%00/']) {
    const res = await app.json(p);
    t.equal(res.status, 404, `${p}: unknown version`);
  }
  // Out of the release directory: never the data directory's files.
  for (const p of ['/play/v/0.2.0/..%2f..%2f..%2fplacard.db', '/play/v/0.2.0/%2e%2e/%2e%2e/any/placard-web-0.2.0.tar.gz', '/play/v/0.2.0/../../placard.db']) {
    const res = await rawGet(app.url, p);
    t.notMatch(res.body, /SQLite format/, `${p}: not the database`);
    t.ok(res.status === 404 || /<div id="player">/.test(res.body), `${p}: a 404 or the page (${res.status})`);
  }

  // Asked again: served from the extracted directory.
  const again = await app.fetch('/play/v/0.2.0/');
  t.equal(again.status, 200);
  t.equal((await app.fetch('/play')).status, 200, '/play is still the bundled build');
  t.notMatch(await (await app.fetch('/version.json')).text(), /0\.2\.0/);
});

t.test('hostile archives: refused whole, nothing written outside, a 404', async (t) => {
  const app = await startApp(t);
  const cases: Array<[string, Parameters<typeof tarGz>[0]]> = [
    [
      'climbs out',
      [
        { name: 'play.html', body: '<div id="player">' },
        { name: '../../../evil.txt', body: 'x' },
      ],
    ],
    [
      'absolute name',
      [
        { name: 'play.html', body: '<div id="player">' },
        { name: '/tmp/placard-evil.txt', body: 'x' },
      ],
    ],
    [
      'a symlink',
      [
        { name: 'play.html', body: '<div id="player">' },
        { name: 'assets', type: 'symlink', linkname: '/etc' },
      ],
    ],
    ['no play.html', [{ name: 'index.html', body: 'console' }]],
    [
      'same file twice',
      [
        { name: 'play.html', body: '<div id="player">' },
        { name: './play.html', body: 'again' },
      ],
    ],
  ];
  let minor = 0;
  for (const [what, entries] of cases) {
    const version = `1.0.${minor++}`;
    const id = await storeWebRelease(app.deps.db, app.dataDir, version, await tarGz(entries));
    const res = await app.json(`/play/v/${version}/`);
    t.equal(res.status, 404, `${what}: 404`);
    t.same(readdirSync(path.join(app.dataDir, 'releases', id)), ['any'], `${what}: no web directory, no temporary one`);
  }
  t.notOk(existsSync(path.join(app.dataDir, '..', 'evil.txt')));
  t.notOk(existsSync('/tmp/placard-evil.txt'));
  // A stored archive whose bytes changed on disk since it was verified: not served.
  const work = tempDataDir(t);
  await ensureConsoleBuilt();
  const changed = await storeWebRelease(app.deps.db, app.dataDir, '1.2.0', webReleaseTarball(work, '1.2.0'));
  const stored = path.join(app.dataDir, 'releases', changed, 'any', 'placard-web-1.2.0.tar.gz');
  writeFileSync(stored, Buffer.concat([readFileSync(stored), Buffer.from('x')]));
  t.equal((await app.json('/play/v/1.2.0/')).status, 404, 'bytes that do not hash to the release: 404');
  t.same(readdirSync(path.join(app.dataDir, 'releases', changed)), ['any'], 'nothing extracted');
  const damaged = await storeWebRelease(app.deps.db, app.dataDir, '1.1.0', Buffer.from('not a gzip'));
  t.equal((await app.json('/play/v/1.1.0/')).status, 404, 'not a tarball: 404');
  t.same(readdirSync(path.join(app.dataDir, 'releases', damaged)), ['any']);

  t.equal(webReleaseEntryPath('./assets/a.js'), 'assets/a.js');
  t.equal(webReleaseEntryPath('./'), '');
  t.throws(() => webReleaseEntryPath('a/../../b'), /climbs out/);
  t.throws(() => webReleaseEntryPath('/abs'), /absolute/);
  t.throws(() => webReleaseEntryPath('a\\b'), /backslash/);
});
