/**
 * The browser player (`/play`), started by main.ts (the Vite entry): puts the parts together.
 * PairingFlow pairs and enrols (pairing-flow.ts); PlayerRuntime heartbeats, follows the socket,
 * keeps the manifest's media cached and plays it, and carries on from its cache when the
 * server is gone (runtime.ts). DESIGN.md sections 6 and 8; docs/player.md.
 */
import './player.css';
import { PlaybackEngine } from './engine.js';
import { playerFamilyFromSearch } from './identity.js';
import { MediaCache } from './media-cache.js';
import { NoiseControl } from './noise-control.js';
import { OverlayLayer } from './overlays.js';
import { PairingFlow } from './pairing-flow.js';
import { PlayerApi } from './protocol.js';
import { PlayerRuntime } from './runtime.js';
import { PlayerStorage } from './storage.js';
import { PlayerView } from './view.js';
import { loadPlayerVersion } from './version.js';
import { WebUpdater } from './web-update.js';

const family = playerFamilyFromSearch(location.search);
// Which build this is: version.json beside it (a web release under /play/v/<version>/ has its
// own), or the Linux kiosk's URL (docs/player-updates.md). Read before anything reports it.
const version = await loadPlayerVersion({ scriptUrl: import.meta.url, search: location.search, kiosk: family === 'desktop-linux' });
const api = new PlayerApi(location.origin);
const storage = new PlayerStorage(localStorage);
const view = new PlayerView(document, location.host);
const cache = new MediaCache(api, location.href);

const log = (message: string) => {
  runtime.lastError = message;
  console.warn(`[placard] ${message}`);
};
const now = (): number => runtime.now();
const noise = new NoiseControl(location.search, now, log);
const overlays = new OverlayLayer(view.root, view.pairing, { cache, now, stage: view.stage, noise: () => noise.level });
const engine: PlaybackEngine = new PlaybackEngine(view.stage, {
  cache,
  now,
  log,
  onContentChange: () => runtime.reportSoon(),
  onManifest: (manifest) => overlays.update(manifest),
});

function startPairing(reason: string | null = null): void {
  view.setState('pairing');
  engine.stop();
  overlays.stop();
  pairing.start(reason);
}

const sessionMemory = (() => {
  try {
    return sessionStorage;
  } catch {
    return null;
  }
})();
const updates = new WebUpdater({ api, ownVersion: version, kiosk: family === 'desktop-linux', location, memory: sessionMemory, log });
const pairing = new PairingFlow({ api, storage, view, family, version, now, onPaired: () => runtime.start() || startPairing() });
const runtime: PlayerRuntime = new PlayerRuntime({
  api,
  storage,
  view,
  engine,
  cache,
  noise,
  family,
  version,
  updates,
  location,
  log,
  onCredentialLost: startPairing,
});

/** Exposed for diagnostics and the end-to-end tests: read-only facts about the player. */
const debug = {
  get state() {
    return view.root.dataset.state ?? 'starting';
  },
  get screenId() {
    return runtime.screenId;
  },
  get socketConnected() {
    return runtime.socketConnected;
  },
  get heartbeats() {
    return runtime.heartbeats;
  },
  /** This build's version (version.json, or the kiosk's URL). */
  version,
  /** The server clock estimate (sync.ts). */
  clock: () => ({ offsetMs: runtime.clock.offsetMs, roundTripMs: runtime.clock.roundTripMs }),
  get manifestRevision() {
    return runtime.manifestRevision;
  },
  cache: () => cache.status(),
  nowPlaying: () => engine.nowPlaying(),
  lastError: () => runtime.lastError,
  noise: () => ({ status: noise.status, pending: noise.meter?.pending ?? 0, level: noise.level, config: noise.config }),
  /** The last 20 new manifests: their revision and what asked for them. */
  manifestFetches: () => runtime.manifestFetches.map((f) => ({ ...f, reasons: [...f.reasons] })),
};
(window as unknown as { placardPlayer: typeof debug }).placardPlayer = debug;

async function registerServiceWorker(): Promise<void> {
  if (!('serviceWorker' in navigator) || !isSecureContext) return;
  try {
    // Built as one stable file at the root so its scope can be `/play` (the page's own URL).
    await navigator.serviceWorker.register('/play-sw.js', { scope: '/play' });
  } catch (err) {
    log(`Service worker not registered: ${(err as Error).message}`);
  }
}

setInterval(() => void runtime.checkForNewRelease(), 30 * 60_000);
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') runtime.wake('visible');
});
addEventListener('online', () => runtime.wake('online'));

void registerServiceWorker();
if (!runtime.start()) startPairing();
