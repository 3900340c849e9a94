/**
 * The browser player (`/play`), started by main.ts (the Vite entry): pairs, enrols, heartbeats, follows the socket (polling
 * while it is down), keeps the manifest's media cached and plays it, and carries on from
 * its cache when the server is gone. DESIGN.md sections 6 and 8; docs/player.md.
 */
import './player.css';
import { Backoff, retryDelayMs } from './backoff.js';
import { commandAction, commandExpired, failed, SeenCommands, succeeded } from './commands.js';
import { PlaybackEngine } from './engine.js';
import { buildHeartbeat, heartbeatIntervalMs, playerFamilyFromSearch } from './identity.js';
import { readManifest, type PlayerManifest } from './manifest.js';
import { MediaCache } from './media-cache.js';
import { levelFromRms, NoiseMeter, type NoiseBucket } from './noise.js';
import { formatPairingCode, INITIAL_PAIRING, pairingStep, secondsLeft, type PairingEvent, type PairingState } from './pairing.js';
import { PLAYER_VERSION, PlayerApi, PlayerApiError, type PlayerCommand } from './protocol.js';
import { closeAction, parseSocketMessage, POLL_WHILE_CONNECTED_MS, POLL_WHILE_DISCONNECTED_MS, socketProtocols, socketUrl } from './socket-messages.js';
import { PlayerStorage } from './storage.js';

const family = playerFamilyFromSearch(location.search);
const api = new PlayerApi(location.origin);
const storage = new PlayerStorage(localStorage);
const startedAt = new Date().toISOString();

const app = document.getElementById('player') ?? document.body.appendChild(Object.assign(document.createElement('div'), { id: 'player' }));
app.classList.add('pl-root');
app.innerHTML = `
  <div class="pl-stage" data-testid="stage"></div>
  <section class="pl-pairing" hidden data-testid="pairing">
    <p class="pl-pairing-lead">Add this screen in Placard with the code</p>
    <p class="pl-pairing-code" data-testid="pairing-code" aria-live="polite"></p>
    <p class="pl-pairing-help">Console &rarr; Screens &rarr; Add screen &middot; <span class="pl-pairing-host"></span></p>
    <p class="pl-pairing-status" data-testid="pairing-status"></p>
    <p class="pl-pairing-reason" data-testid="pairing-reason" hidden></p>
  </section>
  <div class="pl-notice" hidden data-testid="notice"></div>
  <div class="pl-identify" hidden data-testid="identify"></div>`;
const stage = app.querySelector<HTMLElement>('.pl-stage')!;
const pairingEl = app.querySelector<HTMLElement>('.pl-pairing')!;
const codeEl = app.querySelector<HTMLElement>('.pl-pairing-code')!;
const pairingStatusEl = app.querySelector<HTMLElement>('.pl-pairing-status')!;
const pairingReasonEl = app.querySelector<HTMLElement>('.pl-pairing-reason')!;
const noticeEl = app.querySelector<HTMLElement>('.pl-notice')!;
const identifyEl = app.querySelector<HTMLElement>('.pl-identify')!;
app.querySelector<HTMLElement>('.pl-pairing-host')!.textContent = location.host;

/** Server time minus local time, from the heartbeat (a screen with a wrong clock still switches on time). */
let clockOffsetMs = 0;
const now = () => Date.now() + clockOffsetMs;
let lastError: string | null = null;
const log = (message: string) => {
  lastError = message;
  console.warn(`[placard] ${message}`);
};

const cache = new MediaCache(api, location.href);
const engine = new PlaybackEngine(stage, { cache, now, log, onContentChange: () => reportSoon() });

/** What plays changed: heartbeat a few seconds later (once the first item is up) so the console's "Showing" follows. */
let reportTimer: ReturnType<typeof setTimeout> | null = null;
function reportSoon(): void {
  if (reportTimer) return;
  reportTimer = setTimeout(() => {
    reportTimer = null;
    if (running) void heartbeat();
  }, 3_000);
}

/** Exposed for diagnostics and the end-to-end tests: read-only facts about the player. */
const debug = {
  state: 'starting' as string,
  screenId: null as string | null,
  socketConnected: false,
  heartbeats: 0,
  manifestRevision: null as string | null,
  cache: () => cache.status(),
  nowPlaying: () => engine.nowPlaying(),
  lastError: () => lastError,
  noise: () => ({ status: noise.status, pending: noise.meter?.pending ?? 0 }),
  /** The last 20 new manifests: their revision and what asked for them. */
  manifestFetches: () => manifestFetches.map((f) => ({ ...f, reasons: [...f.reasons] })),
};
(window as unknown as { placardPlayer: typeof debug }).placardPlayer = debug;

function setState(state: string): void {
  debug.state = state;
  app.dataset.state = state;
}

function notice(text: string | null): void {
  noticeEl.hidden = !text;
  noticeEl.textContent = text ?? '';
}

// --- Service worker -------------------------------------------------------------------

async function registerServiceWorker(): Promise<void> {
  if (!('serviceWorker' in navigator) || !isSecureContext) return;
  try {
    // Built as one stable file at the root so its scope can be `/play` (the page's own URL).
    await navigator.serviceWorker.register('/play-sw.js', { scope: '/play' });
  } catch (err) {
    log(`Service worker not registered: ${(err as Error).message}`);
  }
}

// --- Pairing ---------------------------------------------------------------------------

let pairing: PairingState = INITIAL_PAIRING;
let pairingTimer: ReturnType<typeof setTimeout> | null = null;
let countdownTimer: ReturnType<typeof setInterval> | null = null;
const pairingBackoff = new Backoff({ baseMs: 2_000, maxMs: 30_000 });

/** Why the player is pairing again (revoked, code expired...): stays under the new code. */
let pairingReason: string | null = null;

function renderPairing(): void {
  pairingEl.hidden = false;
  if (pairing.kind === 'starting' && pairing.message && !pairing.message.startsWith('Waiting')) pairingReason = pairing.message;
  pairingReasonEl.hidden = !pairingReason;
  pairingReasonEl.textContent = pairingReason ?? '';
  if (pairing.kind === 'showing-code') {
    codeEl.textContent = formatPairingCode(pairing.session.code);
    const left = secondsLeft(pairing.session, now());
    pairingStatusEl.textContent = `Code valid for ${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}`;
  } else if (pairing.kind === 'enrolling') {
    pairingStatusEl.textContent = 'Approved. Connecting…';
  } else if (pairing.kind === 'starting') {
    if (!codeEl.textContent) codeEl.textContent = '···-···';
    pairingStatusEl.textContent = pairing.message ?? 'Getting a pairing code…';
  }
}

function dispatchPairing(event: PairingEvent): void {
  const { state, effect } = pairingStep(pairing, event);
  pairing = state;
  renderPairing();
  // A tick without consequence must not cancel the scheduled poll.
  if (effect.type !== 'none' && pairingTimer) clearTimeout(pairingTimer);
  switch (effect.type) {
    case 'create-session':
      pairingTimer = setTimeout(createPairingSession, pairingBackoff.failures ? pairingBackoff.next() : 0);
      break;
    case 'poll':
      pairingTimer = setTimeout(pollPairing, effect.afterMs);
      break;
    case 'enroll':
      void enroll(effect.enrollmentToken);
      break;
    case 'store-credential':
      storage.saveIdentity({ screenId: effect.screenId, credential: effect.credential, enrolledAt: new Date().toISOString() });
      stopPairing();
      startRunning();
      break;
    case 'none':
      break;
  }
}

async function createPairingSession(): Promise<void> {
  try {
    const session = await api.createPairingSession({
      ...(family ? { playerFamily: family } : {}),
      playerVersion: PLAYER_VERSION,
      deviceName: deviceName(),
    });
    pairingBackoff.reset();
    dispatchPairing({ type: 'session-created', session });
  } catch (err) {
    const e = err as PlayerApiError;
    pairingTimer = setTimeout(createPairingSession, retryDelayMs(pairingBackoff, e.retryAfterSec ?? null));
    pairing = { kind: 'starting', message: e.network ? 'Waiting for the Placard server…' : `The server refused a pairing code: ${e.message}` };
    renderPairing();
  }
}

async function pollPairing(): Promise<void> {
  if (pairing.kind !== 'showing-code') return;
  const { id, pollSecret } = pairing.session;
  try {
    const poll = await api.pollPairingSession(id, pollSecret);
    dispatchPairing({ type: 'polled', poll, now: now() });
  } catch (err) {
    const e = err as PlayerApiError;
    dispatchPairing({
      type: 'failed',
      message: e.network ? 'Waiting for the Placard server…' : e.message,
      restart: !e.network && (e.status === 404 || e.status === 401 || e.status === 403),
    });
  }
}

async function enroll(enrollmentToken: string): Promise<void> {
  try {
    const result = await api.enroll({ enrollmentToken, ...(family ? { playerFamily: family } : {}), playerVersion: PLAYER_VERSION });
    dispatchPairing({ type: 'enrolled', screenId: result.screenId, credential: result.credential });
  } catch (err) {
    const e = err as PlayerApiError;
    if (e.network && pairing.kind === 'enrolling') {
      // Same token again shortly: it has not been used if the request never arrived.
      setTimeout(() => void enroll(enrollmentToken), pairingBackoff.next());
      return;
    }
    dispatchPairing({ type: 'failed', message: `Enrolment failed: ${e.message}`, restart: true });
  }
}

function deviceName(): string {
  const ua = navigator.userAgent;
  const os = /Linux/.test(ua) ? 'Linux' : /Windows/.test(ua) ? 'Windows' : /Mac OS/.test(ua) ? 'macOS' : /Android/.test(ua) ? 'Android' : 'Browser';
  return `${family === 'desktop-linux' ? 'Kiosk' : 'Browser'} player (${os}, ${screen.width}×${screen.height})`;
}

function startPairing(message: string | null = null): void {
  setState('pairing');
  engine.stop();
  pairing = { kind: 'starting', message };
  codeEl.textContent = '';
  renderPairing();
  void createPairingSession();
  countdownTimer = setInterval(() => {
    dispatchPairing({ type: 'tick', now: now() });
  }, 1000);
}

function stopPairing(): void {
  pairingReason = null;
  if (pairingTimer) clearTimeout(pairingTimer);
  if (countdownTimer) clearInterval(countdownTimer);
  pairingEl.hidden = true;
}

// --- Running ----------------------------------------------------------------------------

let running = false;
let heartbeatTimer: ReturnType<typeof setTimeout> | null = null;
let pollTimer: ReturnType<typeof setTimeout> | null = null;
let socket: WebSocket | null = null;
let socketTimer: ReturnType<typeof setTimeout> | null = null;
const socketBackoff = new Backoff({ baseMs: 1_000, maxMs: 60_000 });
const heartbeatBackoff = new Backoff({ baseMs: 5_000, maxMs: 120_000 });
let heartbeatEveryMs = 30_000;
let manifestEtag: string | null = null;
let manifestSync: Promise<void> | null = null;
let manifestAgain = false;
const seen = new SeenCommands();

function startRunning(): void {
  const identity = storage.identity();
  if (!identity) {
    startPairing();
    return;
  }
  running = true;
  api.credential = identity.credential;
  debug.screenId = identity.screenId;
  setState('running');
  // Play what we had before, at once: the server may be unreachable.
  const last = storage.lastManifest();
  if (last?.manifest) {
    try {
      engine.apply(readManifest(last.manifest));
      manifestEtag = last.etag;
      debug.manifestRevision = engine.revision;
    } catch {
      manifestEtag = null;
    }
  } else {
    engine.refresh();
  }
  void cache.load().then(() => engine.refresh());
  void updateNoiseMeter(engine.current);
  void heartbeat();
  connectSocket();
  schedulePoll(0);
}

function stopRunning(): void {
  running = false;
  noise.stop?.();
  noise.stop = null;
  noise.status = 'inactive';
  if (heartbeatTimer) clearTimeout(heartbeatTimer);
  if (pollTimer) clearTimeout(pollTimer);
  if (refreshTimer) clearTimeout(refreshTimer);
  if (socketTimer) clearTimeout(socketTimer);
  if (socket) {
    socket.onclose = null;
    socket.close();
    socket = null;
  }
  debug.socketConnected = false;
}

/** The server no longer knows this credential: forget it and everything it downloaded, then pair again. */
async function credentialLost(reason: string): Promise<void> {
  if (!running) return;
  stopRunning();
  storage.forgetIdentity();
  api.credential = null;
  manifestEtag = null;
  await cache.clear().catch(() => undefined);
  notice(null);
  identifyEl.hidden = true;
  startPairing(reason);
}

function handleRunError(err: unknown, what: string): void {
  const e = err as PlayerApiError;
  if (e instanceof PlayerApiError && e.credentialLost) {
    void credentialLost(
      e.code === 'credential_revoked'
        ? 'This screen was removed from Placard. Pair it again with this code.'
        : 'This screen is not known to the server. Pair it again with this code.',
    );
    return;
  }
  if (e instanceof PlayerApiError && e.code === 'screen_disabled') {
    notice('This screen is disabled in Placard.');
    return;
  }
  log(`${what}: ${e?.message ?? e}`);
}

// --- Noise meter ------------------------------------------------------------------------

/**
 * On when the manifest carries a noise-meter overlay (the plugin) or the URL has
 * `noise=1`. Only derived numbers leave the page: a relative 0-100 level every 250 ms,
 * folded into ten-second buckets; no audio is kept or sent.
 */
const noise = { meter: null as NoiseMeter | null, status: 'inactive' as 'inactive' | 'active' | 'unavailable', stop: null as (() => void) | null };

function noiseWanted(manifest: PlayerManifest | null): boolean {
  if (new URLSearchParams(location.search).get('noise') === '1') return true;
  return (manifest?.overlays ?? []).some((o) => {
    const v = o as { type?: unknown; pluginId?: unknown; plugin?: unknown };
    return v && (v.type === 'noise-meter' || v.pluginId === 'noise-meter' || v.plugin === 'noise-meter');
  });
}

async function updateNoiseMeter(manifest: PlayerManifest | null): Promise<void> {
  const want = noiseWanted(manifest);
  if (!want && noise.stop) {
    noise.stop();
    noise.stop = null;
    noise.status = 'inactive';
    return;
  }
  if (!want || noise.stop || noise.status === 'unavailable') return;
  try {
    const stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: false, noiseSuppression: false, autoGainControl: false } });
    const audio = new AudioContext();
    const analyser = audio.createAnalyser();
    analyser.fftSize = 2048;
    audio.createMediaStreamSource(stream).connect(analyser);
    const buf = new Float32Array(analyser.fftSize);
    noise.meter ??= new NoiseMeter();
    noise.status = 'active';
    let last = Date.now();
    const timer = setInterval(() => {
      analyser.getFloatTimeDomainData(buf);
      let sum = 0;
      for (const v of buf) sum += v * v;
      const t = Date.now();
      noise.meter!.sample(levelFromRms(Math.sqrt(sum / buf.length)), now(), Math.min(1000, t - last));
      noise.meter!.tick(now());
      last = t;
    }, 250);
    noise.stop = () => {
      clearInterval(timer);
      for (const track of stream.getTracks()) track.stop();
      void audio.close();
    };
  } catch (err) {
    noise.status = 'unavailable';
    log(`Noise meter: no microphone (${(err as Error).message})`);
  }
  // A change of the meter's state is reported at once (buckets keep the normal cadence).
  if (running) void heartbeat();
}

function noiseReport(): { body: { status: string; currentLevel?: number; pendingHistory?: NoiseBucket[] } | undefined; batch: NoiseBucket[] } {
  if (noise.status === 'inactive' && !noise.meter?.pending) return { body: undefined, batch: [] };
  const meter = noise.meter;
  const batch = meter ? meter.batch() : [];
  const status = noise.status === 'active' && meter ? meter.status() : noise.status;
  return {
    body: { status, ...(meter && noise.status === 'active' ? { currentLevel: meter.current } : {}), ...(batch.length ? { pendingHistory: batch } : {}) },
    batch,
  };
}

async function heartbeat(): Promise<void> {
  if (!running) return;
  let wait = heartbeatEveryMs;
  const noiseNow = noiseReport();
  try {
    const sentAt = Date.now();
    const reply = await api.heartbeat(
      buildHeartbeat({
        playerFamily: family,
        nowPlaying: engine.nowPlaying(),
        manifestRevision: engine.revision,
        display: { width: innerWidth * devicePixelRatio, height: innerHeight * devicePixelRatio },
        cache: cache.status(),
        socketConnected: debug.socketConnected,
        startedAt,
        userAgent: navigator.userAgent,
        lastError,
        noiseMeter: noiseNow.body,
      }),
    );
    debug.heartbeats += 1;
    // The batch leaves the queue only once the server says it has all of it.
    if (noiseNow.batch.length && noise.meter) noise.meter.acknowledge(noiseNow.batch, reply.noiseHistory?.accepted ?? 0);
    heartbeatBackoff.reset();
    if (noticeEl.textContent === 'This screen is disabled in Placard.') notice(null);
    if (reply.serverTime) {
      const server = Date.parse(reply.serverTime);
      if (Number.isFinite(server)) clockOffsetMs = server + (Date.now() - sentAt) / 2 - Date.now();
    }
    heartbeatEveryMs = heartbeatIntervalMs(reply.heartbeatIntervalSec);
    wait = heartbeatEveryMs;
    if (reply.manifestRevision !== undefined && reply.manifestRevision !== null && String(reply.manifestRevision) !== engine.revision)
      void syncManifest('heartbeat');
    if (typeof reply.pendingCommands === 'number' && reply.pendingCommands > 0) void pollCommands();
  } catch (err) {
    if (err instanceof PlayerApiError && err.code === 'validation_failed' && noiseNow.batch.length && noise.meter) {
      // A batch the server refuses would be refused forever: drop it, keep heartbeating.
      noise.meter.discard(noiseNow.batch);
      log(`Heartbeat refused the noise history (${err.message}); ${noiseNow.batch.length} buckets dropped`);
      wait = 1_000;
    } else {
      handleRunError(err, 'Heartbeat failed');
      wait = Math.min(heartbeatEveryMs, heartbeatBackoff.next());
    }
  }
  if (running) {
    if (heartbeatTimer) clearTimeout(heartbeatTimer);
    heartbeatTimer = setTimeout(() => void heartbeat(), wait);
  }
}

/** Why manifest downloads were asked for since the last one (diagnostics: `manifestFetches`). */
let syncReasons: string[] = [];
const manifestFetches: { reasons: string[]; revision: string; at: string }[] = [];

/**
 * Fetches the manifest (If-None-Match), caches its media, then puts it on screen; one at a
 * time. `reason` (poll, heartbeat, socket:<message>, refresh, command, visible, start) is
 * kept with each new manifest for diagnostics.
 */
function syncManifest(reason: string): Promise<void> {
  syncReasons.push(reason);
  if (manifestSync) {
    manifestAgain = true;
    return manifestSync;
  }
  manifestSync = (async () => {
    do {
      manifestAgain = false;
      await syncOnce();
    } while (manifestAgain && running);
  })().finally(() => {
    manifestSync = null;
  });
  return manifestSync;
}

async function syncOnce(): Promise<void> {
  if (!running) return;
  let manifest: PlayerManifest | null = null;
  const reasons = syncReasons;
  syncReasons = [];
  try {
    const got = await api.manifest(manifestEtag);
    if (!got.notModified) {
      manifest = readManifest(got.manifest);
      manifestFetches.push({ reasons: [...new Set(reasons)], revision: manifest.revision, at: new Date().toISOString() });
      if (manifestFetches.length > 20) manifestFetches.shift();
      for (const p of manifest.problems) log(`Manifest: ${p}`);
      storage.saveManifest(got.etag, got.manifest);
      manifestEtag = got.etag;
    }
  } catch (err) {
    handleRunError(err, 'Manifest download failed');
    return;
  }
  const target = manifest ?? engine.current;
  if (!target) return;
  // Media first, then the switch: the new content plays from complete, verified files.
  await cache.sync(target.media).catch((err) => log(`Media cache: ${(err as Error).message}`));
  if (!running) return;
  // The server answered: an earlier failure is no longer news for the heartbeat.
  if (lastError?.startsWith('Manifest download failed')) lastError = null;
  if (manifest) {
    engine.apply(manifest);
    debug.manifestRevision = manifest.revision;
    scheduleRefresh(manifest.refreshAfter);
    void updateNoiseMeter(manifest);
  } else {
    engine.refresh();
  }
  await cache.evictExcept(target.media).catch(() => undefined);
}

let refreshTimer: ReturnType<typeof setTimeout> | null = null;

/** The server's window moves: fetch again by `refreshAfter` (spread by up to a minute). */
function scheduleRefresh(at: number | null): void {
  if (refreshTimer) clearTimeout(refreshTimer);
  if (at === null) return;
  const wait = Math.min(6 * 3_600_000, Math.max(5_000, at - now() + Math.random() * 60_000));
  refreshTimer = setTimeout(() => {
    manifestEtag = null;
    void syncManifest('refresh');
  }, wait);
}

function schedulePoll(ms: number): void {
  if (pollTimer) clearTimeout(pollTimer);
  pollTimer = setTimeout(async () => {
    if (!running) return;
    await Promise.allSettled([syncManifest('poll'), pollCommands()]);
    if (running) schedulePoll(debug.socketConnected ? POLL_WHILE_CONNECTED_MS : POLL_WHILE_DISCONNECTED_MS);
  }, ms);
}

function connectSocket(): void {
  if (!running || !api.credential || typeof WebSocket === 'undefined') return;
  let ws: WebSocket;
  try {
    ws = new WebSocket(socketUrl(location.href), socketProtocols(api.credential));
  } catch (err) {
    log(`Socket: ${(err as Error).message}`);
    socketTimer = setTimeout(connectSocket, socketBackoff.next());
    return;
  }
  socket = ws;
  ws.onopen = () => {
    socketBackoff.reset();
    debug.socketConnected = true;
    void checkForNewRelease();
    // Anything missed while disconnected.
    schedulePoll(0);
  };
  ws.onmessage = (ev) => {
    const msg = parseSocketMessage(ev.data);
    if (!msg) return;
    if (msg.type === 'manifest.changed' || msg.type === 'takeover.started' || msg.type === 'takeover.ended') {
      if (msg.type !== 'manifest.changed' || msg.revision === null || msg.revision !== engine.revision) void syncManifest(`socket:${msg.type}`);
    } else if (msg.type === 'hello') {
      if (msg.manifestRevision !== engine.revision) void syncManifest('socket:hello');
    } else if (msg.type === 'command.pending') {
      void pollCommands();
    } else if (msg.type === 'ping') {
      try {
        ws.send(JSON.stringify({ type: 'pong' }));
      } catch {
        // closing
      }
    }
  };
  ws.onclose = (ev) => {
    if (socket === ws) socket = null;
    const wasConnected = debug.socketConnected;
    debug.socketConnected = false;
    if (!running) return;
    if (wasConnected) schedulePoll(POLL_WHILE_DISCONNECTED_MS);
    const action = closeAction(ev.code);
    if (action === 'credential-lost' || action === 'disabled') {
      // The heartbeat gets the server's own words for it (and forgets a revoked credential).
      void heartbeat();
    } else if (socketBackoff.failures === 2) {
      // A refused upgrade may mean a revoked credential: the next heartbeat tells.
      void heartbeat();
    }
    // Replaced by another socket of this screen (a second tab): back off for long.
    const wait = action === 'replaced' ? 5 * 60_000 : socketBackoff.next();
    socketTimer = setTimeout(connectSocket, wait);
  };
}

// --- Commands ---------------------------------------------------------------------------

let commandsBusy = false;

async function pollCommands(): Promise<void> {
  if (!running || commandsBusy) return;
  commandsBusy = true;
  try {
    const list = await api.pendingCommands();
    for (const command of list) if (seen.first(command.id)) await runCommand(command);
  } catch (err) {
    if (!(err instanceof PlayerApiError && err.status === 404)) handleRunError(err, 'Commands');
  } finally {
    commandsBusy = false;
  }
}

async function runCommand(command: PlayerCommand): Promise<void> {
  if (commandExpired(command, now())) {
    await api.commandResult(command.id, failed('The command expired before the player received it.')).catch(() => undefined);
    return;
  }
  await api.acknowledgeCommand(command.id).catch((err) => log(`Acknowledge ${command.id}: ${(err as Error).message}`));
  const action = commandAction(command);
  try {
    switch (action.kind) {
      case 'reload':
        await api.commandResult(command.id, succeeded('Reloading the player.'));
        setTimeout(() => location.reload(), 300);
        return;
      case 'clear-cache': {
        await cache.clear();
        manifestEtag = null;
        await api.commandResult(command.id, succeeded('Media cache cleared; downloading again.'));
        void syncManifest('command');
        return;
      }
      case 'sync':
        manifestEtag = null;
        await heartbeat();
        await syncManifest('command');
        await api.commandResult(command.id, succeeded(`Manifest ${engine.revision ?? 'none'} on screen.`));
        return;
      case 'identify':
        await identify(action.seconds);
        await api.commandResult(command.id, succeeded(`Shown for ${action.seconds} s.`));
        return;
      case 'screenshot': {
        const dataUrl = engine.screenshot();
        if (!dataUrl) {
          await api.commandResult(command.id, failed('This browser could not draw a screenshot.'));
          return;
        }
        await api.commandResult(command.id, {
          ...succeeded('Screenshot taken (websites in frames are drawn black).', { width: innerWidth, height: innerHeight }),
          screenshot: { contentType: 'image/jpeg', dataBase64: dataUrl.slice(dataUrl.indexOf(',') + 1) },
        });
        return;
      }
      case 'unsupported':
        await api.commandResult(command.id, failed(action.reason));
        return;
    }
  } catch (err) {
    log(`Command ${command.type}: ${(err as Error).message}`);
    await api.commandResult(command.id, failed((err as Error).message)).catch(() => undefined);
  }
}

let identifyTimer: ReturnType<typeof setTimeout> | null = null;

async function identify(seconds: number): Promise<void> {
  const name = await api.config().then(
    (c) => c.name,
    () => null,
  );
  identifyEl.hidden = false;
  identifyEl.textContent = `${name ?? `Screen ${debug.screenId?.slice(-6) ?? ''}`} · ${location.host}`;
  if (identifyTimer) clearTimeout(identifyTimer);
  identifyTimer = setTimeout(() => {
    identifyEl.hidden = true;
  }, seconds * 1000);
}

// --- New releases -----------------------------------------------------------------------

/**
 * The page's own version is its HTML's ETag: when the server is upgraded the built page
 * changes, and a player that never restarts would otherwise run the old code forever.
 * Checked every 30 minutes and after the socket comes back; a change reloads the page
 * (playback resumes at once from the stored manifest and the cache).
 */
let pageTag: string | null = null;

async function currentPageTag(): Promise<string | null> {
  try {
    const res = await fetch(location.pathname, { method: 'HEAD', cache: 'no-store' });
    return res.ok ? (res.headers.get('etag') ?? res.headers.get('last-modified')) : null;
  } catch {
    return null;
  }
}

async function checkForNewRelease(): Promise<void> {
  const tag = await currentPageTag();
  if (!tag) return;
  if (pageTag === null) pageTag = tag;
  else if (tag !== pageTag && running) {
    log('A new player version is on the server: reloading.');
    location.reload();
  }
}

setInterval(() => void checkForNewRelease(), 30 * 60_000);

// --- Start ------------------------------------------------------------------------------

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && running) void syncManifest('visible');
});
addEventListener('online', () => {
  if (running) {
    void heartbeat();
    if (!socket) connectSocket();
  }
});

void registerServiceWorker();
if (storage.identity()) startRunning();
else startPairing();
