/**
 * The browser player's update logic, imported directly (console/src/player/version.ts and
 * web-update.ts): which version it is, what an offer and a web release look like, where a
 * starting page goes. The whole flow runs for real in test/play-web-update.test.ts.
 */
import t from 'tap';
import { PLAYER_VERSION } from '../console/src/player/protocol.js';
import { cleanVersion, kioskVersionFromSearch, loadPlayerVersion } from '../console/src/player/version.js';
import { bootTarget, readUpdateOffer, readWebRelease, releasePath, WebUpdater } from '../console/src/player/web-update.js';
import { buildHeartbeat } from '../console/src/player/identity.js';

t.test('versions: version.json, the kiosk URL, the compiled fallback', async (t) => {
  t.equal(cleanVersion('1.2.3'), '1.2.3');
  t.equal(cleanVersion('v2.0.0-beta.1+b7'), '2.0.0-beta.1+b7');
  for (const bad of ['', '1.2', 'latest', '1.2.3; rm -rf /', 12, null, `1.2.3-${'x'.repeat(80)}`]) t.equal(cleanVersion(bad), null, `${String(bad)} refused`);
  t.equal(kioskVersionFromSearch('?kiosk=1&playerVersion=3.4.5', true), '3.4.5');
  t.equal(kioskVersionFromSearch('?playerVersion=3.4.5', false), null, 'only the kiosk takes it from its URL');
  t.equal(kioskVersionFromSearch('?kiosk=1&playerVersion=nope', true), null);

  const served =
    (body: unknown, status = 200) =>
    async (url: string) => {
      t.equal(url, 'http://h/play/v/9.0.0/version.json', 'beside the build (../ of assets/)');
      return new Response(JSON.stringify(body), { status });
    };
  const scriptUrl = 'http://h/play/v/9.0.0/assets/play-abc.js';
  t.equal(await loadPlayerVersion({ scriptUrl, search: '', kiosk: false, fetchImpl: served({ version: '9.0.0' }) }), '9.0.0');
  t.equal(
    await loadPlayerVersion({ scriptUrl, search: '', kiosk: false, fetchImpl: served({ version: 'x' }) }),
    PLAYER_VERSION,
    'not a version: the compiled one',
  );
  t.equal(await loadPlayerVersion({ scriptUrl, search: '', kiosk: false, fetchImpl: served({}, 404) }), PLAYER_VERSION, 'missing: the compiled one');
  t.equal(
    await loadPlayerVersion({
      scriptUrl,
      search: '',
      kiosk: false,
      fetchImpl: async () => {
        throw new Error('offline');
      },
    }),
    PLAYER_VERSION,
    'offline: the compiled one',
  );
  t.equal(await loadPlayerVersion({ scriptUrl, search: '?kiosk=1&playerVersion=1.0.1', kiosk: true, fetchImpl: served({ version: '9.0.0' }) }), '1.0.1');
  t.equal(buildHeartbeat({ nowPlaying: {}, manifestRevision: null, playerVersion: '9.0.0' }).playerVersion, '9.0.0', 'the heartbeat reports it');
});

t.test('offers, web releases and where a starting page goes', async (t) => {
  const offer = { deploymentId: 'd1', releaseId: 'r1', version: '2.0.0', family: 'web' };
  t.same(readUpdateOffer({ ...offer, extra: 1 }), offer);
  t.equal(readUpdateOffer(null), null);
  t.equal(readUpdateOffer({ ...offer, releaseId: '' }), null);
  t.same(readWebRelease({ releaseId: 'r1', version: '2.0.0', path: '/play/v/2.0.0/' }), { releaseId: 'r1', version: '2.0.0', path: '/play/v/2.0.0/' });
  t.equal(
    readWebRelease({ releaseId: 'r1', version: '2.0.0', path: 'https://elsewhere.example/' })!.path,
    '/play/v/2.0.0/',
    'only a /play/v/ path of this server',
  );
  t.equal(releasePath('1.0.0+b/1'), '/play/v/1.0.0%2Bb%2F1/');

  const web = { releaseId: 'r1', version: '2.0.0', path: '/play/v/2.0.0/' };
  t.equal(bootTarget({ kiosk: false, ownVersion: '1.0.0', config: { webRelease: web } }), '/play/v/2.0.0/', 'another version: go there');
  t.equal(bootTarget({ kiosk: false, ownVersion: '2.0.0', config: { webRelease: web } }), null, 'there already');
  t.equal(bootTarget({ kiosk: false, ownVersion: '1.0.0', config: { webRelease: null } }), null, 'the bundled build: stay');
  t.equal(bootTarget({ kiosk: true, ownVersion: '1.0.0', config: { webRelease: web } }), null, 'the Linux kiosk ignores web releases');
  t.equal(
    bootTarget({ kiosk: false, ownVersion: '3.0.0', config: { webRelease: web, update: { ...offer, version: '3.0.0' } } }),
    null,
    'the build an offer just brought: stays to report installed',
  );
});

t.test('a release that does not start as its version cannot make the page loop', async (t) => {
  const moves: string[] = [];
  const logs: string[] = [];
  const store = new Map<string, string>();
  let now = Date.parse('2026-11-27T09:00:00Z');
  const updater = new WebUpdater({
    // Boot with a web release moves before any call to the server.
    api: {} as never,
    ownVersion: '1.0.0',
    kiosk: false,
    location: { search: '?room=a', pathname: '/play', replace: (url: string) => void moves.push(url) },
    memory: { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => void store.set(k, v) },
    log: (m) => void logs.push(m),
    now: () => now,
  });
  const config = { webRelease: { releaseId: 'r1', version: '2.0.0', path: '/play/v/2.0.0/' }, update: null };
  for (let i = 0; i < 4; i++) await updater.boot(config);
  t.same(moves, ['/play/v/2.0.0/?room=a', '/play/v/2.0.0/?room=a', '/play/v/2.0.0/?room=a'], 'three moves, keeping the query');
  t.match(logs.at(-1), /Not moving to \/play\/v\/2\.0\.0\/ again/, 'the fourth within minutes is refused');
  now += 6 * 60_000;
  await updater.boot(config);
  t.equal(moves.length, 4, 'later, it may move again');
});
