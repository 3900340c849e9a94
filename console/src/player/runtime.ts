/**
 * The player once it holds a credential: heartbeats, follows the socket (polling while it is
 * down), keeps the manifest's media cached and hands it to the engine, runs commands, and
 * notices a new player release. DESIGN.md sections 6 and 8; docs/player.md.
 */
import { Backoff } from './backoff.js';
import { commandAction, commandExpired, failed, SeenCommands, succeeded } from './commands.js';
import type { PlaybackEngine } from './engine.js';
import { buildHeartbeat, heartbeatIntervalMs, type playerFamilyFromSearch } from './identity.js';
import { cacheEntries, readManifest, type PlayerManifest } from './manifest.js';
import type { MediaCache } from './media-cache.js';
import type { NoiseControl } from './noise-control.js';
import { type PlayerApi, PlayerApiError, type PlayerCommand, type PlayerConfig } from './protocol.js';
import { showNetworkTest } from './network-test.js';
import { ClockSync, readNetworkTest, socketClock } from './sync.js';
import { closeAction, parseSocketMessage, POLL_WHILE_CONNECTED_MS, POLL_WHILE_DISCONNECTED_MS, socketProtocols, socketUrl } from './socket-messages.js';
import type { PlayerStorage } from './storage.js';
import type { PlayerView } from './view.js';

export interface RuntimeDeps {
  api: PlayerApi;
  storage: PlayerStorage;
  view: PlayerView;
  engine: PlaybackEngine;
  cache: MediaCache;
  noise: NoiseControl;
  family: ReturnType<typeof playerFamilyFromSearch>;
  /** This player's version (version.ts): the heartbeat's playerVersion. */
  version: string;
  /** Update offers (web-update.ts): the config at start, each new manifest's `update`. */
  updates?: { boot(config: PlayerConfig): Promise<void>; offer(update: unknown): Promise<void> };
  /** The page's address (socket URL, identify banner, release check). */
  location: Location;
  log: (message: string) => void;
  /** The server no longer knows the credential: pair again, saying why. */
  onCredentialLost: (reason: string) => void;
}

const DISABLED_NOTICE = 'This screen is disabled in Placard.';

export class PlayerRuntime {
  running = false;
  screenId: string | null = null;
  socketConnected = false;
  heartbeats = 0;
  manifestRevision: string | null = null;
  /** The last error worth reporting in the heartbeat. */
  lastError: string | null = null;
  /** The last 20 new manifests: their revision and what asked for them (diagnostics). */
  readonly manifestFetches: { reasons: string[]; revision: string; at: string }[] = [];
  /** The server clock estimate (sync.ts), from heartbeat replies and socket ping/pong: a screen with a wrong clock still switches on time. */
  readonly clock = new ClockSync();
  private socketClock: ReturnType<typeof socketClock> | null = null;
  private readonly startedAt = new Date().toISOString();
  private heartbeatTimer: ReturnType<typeof setTimeout> | null = null;
  private pollTimer: ReturnType<typeof setTimeout> | null = null;
  private refreshTimer: ReturnType<typeof setTimeout> | null = null;
  private reportTimer: ReturnType<typeof setTimeout> | null = null;
  private socket: WebSocket | null = null;
  private socketTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly socketBackoff = new Backoff({ baseMs: 1_000, maxMs: 60_000 });
  private readonly heartbeatBackoff = new Backoff({ baseMs: 5_000, maxMs: 120_000 });
  private heartbeatEveryMs = 30_000;
  private manifestEtag: string | null = null;
  private manifestSync: Promise<void> | null = null;
  private manifestAgain = false;
  /** Why manifest downloads were asked for since the last one. */
  private syncReasons: string[] = [];
  private readonly seen = new SeenCommands();
  private commandsBusy = false;
  private pageTag: string | null = null;

  constructor(private readonly deps: RuntimeDeps) {}

  readonly now = (): number => Date.now() + this.clock.offsetMs;

  /** Runs with the stored credential; false when there is none (the caller pairs). */
  start(): boolean {
    const { api, storage, view, engine, cache } = this.deps;
    const identity = storage.identity();
    if (!identity) return false;
    this.running = true;
    api.credential = identity.credential;
    this.screenId = identity.screenId;
    view.setState('running');
    // Play what we had before, at once: the server may be unreachable.
    const last = storage.lastManifest();
    if (last?.manifest) {
      try {
        engine.apply(readManifest(last.manifest));
        this.manifestEtag = last.etag;
        this.manifestRevision = engine.revision;
      } catch {
        this.manifestEtag = null;
      }
    } else {
      engine.refresh();
    }
    void cache.load().then(() => engine.refresh());
    void this.updateNoise(engine.current);
    void this.heartbeat();
    this.connectSocket();
    this.schedulePoll(0);
    void this.checkUpdates();
    return true;
  }

  /** At start: the config says whether this screen runs (or is offered) another release. */
  private async checkUpdates(): Promise<void> {
    const updates = this.deps.updates;
    if (!updates) return;
    try {
      const config = await this.deps.api.config();
      if (this.running) await updates.boot(config);
    } catch (err) {
      this.handleError(err, 'Player config');
    }
  }

  private stop(): void {
    this.running = false;
    this.socketClock?.stop();
    this.deps.noise.stop();
    for (const timer of [this.heartbeatTimer, this.pollTimer, this.refreshTimer, this.socketTimer]) if (timer) clearTimeout(timer);
    if (this.socket) {
      this.socket.onclose = null;
      this.socket.close();
      this.socket = null;
    }
    this.socketConnected = false;
  }

  /** What plays changed: heartbeat a few seconds later (once the first item is up) so the console's "Showing" follows. */
  reportSoon(): void {
    if (this.reportTimer) return;
    this.reportTimer = setTimeout(() => {
      this.reportTimer = null;
      if (this.running) void this.heartbeat();
    }, 3_000);
  }

  /** The tab became visible again or the network came back. */
  wake(reason: 'visible' | 'online'): void {
    if (!this.running) return;
    if (reason === 'visible') {
      void this.syncManifest('visible');
      return;
    }
    void this.heartbeat();
    if (!this.socket) this.connectSocket();
  }

  /** The server no longer knows this credential: forget it and everything it downloaded, then pair again. */
  private async credentialLost(reason: string): Promise<void> {
    if (!this.running) return;
    const { storage, api, cache, view } = this.deps;
    this.stop();
    storage.forgetIdentity();
    api.credential = null;
    this.manifestEtag = null;
    await cache.clear().catch(() => undefined);
    view.notice(null);
    view.hideIdentify();
    this.deps.onCredentialLost(reason);
  }

  private handleError(err: unknown, what: string): void {
    const e = err as PlayerApiError;
    if (e instanceof PlayerApiError && e.credentialLost) {
      void this.credentialLost(
        e.code === 'credential_revoked'
          ? 'This screen was removed from Placard. Pair it again with this code.'
          : 'This screen is not known to the server. Pair it again with this code.',
      );
      return;
    }
    if (e instanceof PlayerApiError && e.code === 'screen_disabled') {
      this.deps.view.notice(DISABLED_NOTICE);
      return;
    }
    this.deps.log(`${what}: ${e?.message ?? e}`);
  }

  private async updateNoise(manifest: PlayerManifest | null): Promise<void> {
    // A change of the meter's state is reported at once (buckets keep the normal cadence).
    if ((await this.deps.noise.update(manifest)) && this.running) void this.heartbeat();
  }

  private async heartbeat(): Promise<void> {
    if (!this.running) return;
    const { api, engine, cache, noise, view } = this.deps;
    let wait = this.heartbeatEveryMs;
    const noiseNow = noise.report();
    try {
      const storage = navigator.storage?.estimate ? await navigator.storage.estimate().catch(() => undefined) : undefined;
      const sentAt = Date.now();
      const reply = await api.heartbeat(
        buildHeartbeat({
          playerFamily: this.deps.family,
          playerVersion: this.deps.version,
          nowPlaying: engine.nowPlaying(),
          manifestRevision: engine.revision,
          display: { width: innerWidth * devicePixelRatio, height: innerHeight * devicePixelRatio },
          cache: cache.status(),
          storage,
          socketConnected: this.socketConnected,
          startedAt: this.startedAt,
          userAgent: navigator.userAgent,
          lastError: this.lastError,
          noiseMeter: noiseNow.body,
        }),
      );
      this.heartbeats += 1;
      // The batch leaves the queue only once the server says it has all of it.
      if (noiseNow.batch.length && noise.meter) noise.meter.acknowledge(noiseNow.batch, reply.noiseHistory?.accepted ?? 0);
      this.heartbeatBackoff.reset();
      if (view.noticeText === DISABLED_NOTICE) view.notice(null);
      if (reply.serverTime) {
        const server = Date.parse(reply.serverTime);
        this.clock.add(sentAt, server, Date.now());
      }
      this.heartbeatEveryMs = heartbeatIntervalMs(reply.heartbeatIntervalSec);
      wait = this.heartbeatEveryMs;
      if (reply.manifestRevision !== undefined && reply.manifestRevision !== null && String(reply.manifestRevision) !== engine.revision)
        void this.syncManifest('heartbeat');
      if (typeof reply.pendingCommands === 'number' && reply.pendingCommands > 0) void this.pollCommands();
    } catch (err) {
      if (err instanceof PlayerApiError && err.code === 'validation_failed' && noiseNow.batch.length && noise.meter) {
        // A batch the server refuses would be refused forever: drop it, keep heartbeating.
        noise.meter.discard(noiseNow.batch);
        this.deps.log(`Heartbeat refused the noise history (${err.message}); ${noiseNow.batch.length} buckets dropped`);
        wait = 1_000;
      } else {
        this.handleError(err, 'Heartbeat failed');
        wait = Math.min(this.heartbeatEveryMs, this.heartbeatBackoff.next());
      }
    }
    if (this.running) {
      if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
      this.heartbeatTimer = setTimeout(() => void this.heartbeat(), wait);
    }
  }

  /**
   * Fetches the manifest (If-None-Match), caches its media, then puts it on screen; one at a
   * time. `reason` (poll, heartbeat, socket:<message>, refresh, command, visible, start) is
   * kept with each new manifest for diagnostics.
   */
  private syncManifest(reason: string): Promise<void> {
    this.syncReasons.push(reason);
    if (this.manifestSync) {
      this.manifestAgain = true;
      return this.manifestSync;
    }
    this.manifestSync = (async () => {
      do {
        this.manifestAgain = false;
        await this.syncOnce();
      } while (this.manifestAgain && this.running);
    })().finally(() => {
      this.manifestSync = null;
    });
    return this.manifestSync;
  }

  private async syncOnce(): Promise<void> {
    if (!this.running) return;
    const { api, storage, engine, cache, log } = this.deps;
    let manifest: PlayerManifest | null = null;
    const reasons = this.syncReasons;
    this.syncReasons = [];
    try {
      const got = await api.manifest(this.manifestEtag);
      if (!got.notModified) {
        manifest = readManifest(got.manifest);
        this.manifestFetches.push({ reasons: [...new Set(reasons)], revision: manifest.revision, at: new Date().toISOString() });
        if (this.manifestFetches.length > 20) this.manifestFetches.shift();
        for (const p of manifest.problems) log(`Manifest: ${p}`);
        storage.saveManifest(got.etag, got.manifest);
        this.manifestEtag = got.etag;
        // A release offered to this screen rides on the manifest (docs/player-updates.md).
        void this.deps.updates?.offer((got.manifest as { update?: unknown } | null)?.update ?? null);
      }
    } catch (err) {
      this.handleError(err, 'Manifest download failed');
      return;
    }
    const target = manifest ?? engine.current;
    if (!target) return;
    // Media and data first, then the switch: the new content plays from complete, verified
    // files, and a data zone keeps its table until the new document is cached.
    await cache.sync(cacheEntries(target)).catch((err) => log(`Media cache: ${(err as Error).message}`));
    if (!this.running) return;
    // The server answered: an earlier failure is no longer news for the heartbeat.
    if (this.lastError?.startsWith('Manifest download failed')) this.lastError = null;
    if (manifest) {
      engine.apply(manifest);
      this.manifestRevision = manifest.revision;
      this.scheduleRefresh(manifest.refreshAfter);
      void this.updateNoise(manifest);
    } else {
      engine.refresh();
    }
    await cache.evictExcept(cacheEntries(target)).catch(() => undefined);
  }

  /** The server's window moves: fetch again by `refreshAfter` (spread by up to a minute). */
  private scheduleRefresh(at: number | null): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    if (at === null) return;
    const wait = Math.min(6 * 3_600_000, Math.max(5_000, at - this.now() + Math.random() * 60_000));
    this.refreshTimer = setTimeout(() => {
      this.manifestEtag = null;
      void this.syncManifest('refresh');
    }, wait);
  }

  private schedulePoll(ms: number): void {
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = setTimeout(async () => {
      if (!this.running) return;
      await Promise.allSettled([this.syncManifest('poll'), this.pollCommands()]);
      if (this.running) this.schedulePoll(this.socketConnected ? POLL_WHILE_CONNECTED_MS : POLL_WHILE_DISCONNECTED_MS);
    }, ms);
  }

  private connectSocket(): void {
    const { api, engine, log } = this.deps;
    if (!this.running || !api.credential || typeof WebSocket === 'undefined') return;
    let ws: WebSocket;
    try {
      ws = new WebSocket(socketUrl(this.deps.location.href), socketProtocols(api.credential));
    } catch (err) {
      log(`Socket: ${(err as Error).message}`);
      this.socketTimer = setTimeout(() => this.connectSocket(), this.socketBackoff.next());
      return;
    }
    this.socket = ws;
    ws.onopen = () => {
      this.socketBackoff.reset();
      this.socketConnected = true;
      this.socketClock?.stop();
      this.socketClock = socketClock(ws, this.clock);
      void this.checkForNewRelease();
      // Anything missed while disconnected.
      this.schedulePoll(0);
    };
    ws.onmessage = (ev) => {
      if (this.socketClock?.onMessage(ev.data)) return;
      const test = readNetworkTest(ev.data);
      if (test) return showNetworkTest(test, this.now);
      const msg = parseSocketMessage(ev.data);
      if (!msg) return;
      if (msg.type === 'manifest.changed' || msg.type === 'takeover.started' || msg.type === 'takeover.ended') {
        if (msg.type !== 'manifest.changed' || msg.revision === null || msg.revision !== engine.revision) void this.syncManifest(`socket:${msg.type}`);
      } else if (msg.type === 'hello') {
        if (msg.manifestRevision !== engine.revision) void this.syncManifest('socket:hello');
      } else if (msg.type === 'command.pending') {
        void this.pollCommands();
      } else if (msg.type === 'ping') {
        try {
          ws.send(JSON.stringify({ type: 'pong' }));
        } catch {
          // closing
        }
      }
    };
    ws.onclose = (ev) => {
      if (this.socket === ws) this.socket = null;
      this.socketClock?.stop();
      const wasConnected = this.socketConnected;
      this.socketConnected = false;
      if (!this.running) return;
      if (wasConnected) this.schedulePoll(POLL_WHILE_DISCONNECTED_MS);
      const action = closeAction(ev.code);
      if (action === 'credential-lost' || action === 'disabled') {
        // The heartbeat gets the server's own words for it (and forgets a revoked credential).
        void this.heartbeat();
      } else if (this.socketBackoff.failures === 2) {
        // A refused upgrade may mean a revoked credential: the next heartbeat tells.
        void this.heartbeat();
      }
      // Replaced by another socket of this screen (a second tab): back off for long.
      const wait = action === 'replaced' ? 5 * 60_000 : this.socketBackoff.next();
      this.socketTimer = setTimeout(() => this.connectSocket(), wait);
    };
  }

  private async pollCommands(): Promise<void> {
    if (!this.running || this.commandsBusy) return;
    this.commandsBusy = true;
    try {
      const list = await this.deps.api.pendingCommands();
      for (const command of list) if (this.seen.first(command.id)) await this.runCommand(command);
    } catch (err) {
      if (!(err instanceof PlayerApiError && err.status === 404)) this.handleError(err, 'Commands');
    } finally {
      this.commandsBusy = false;
    }
  }

  private async runCommand(command: PlayerCommand): Promise<void> {
    const { api, cache, engine, log } = this.deps;
    if (commandExpired(command, this.now())) {
      await api.commandResult(command.id, failed('The command expired before the player received it.')).catch(() => undefined);
      return;
    }
    await api.acknowledgeCommand(command.id).catch((err) => log(`Acknowledge ${command.id}: ${(err as Error).message}`));
    const action = commandAction(command);
    try {
      switch (action.kind) {
        case 'reload':
          await api.commandResult(command.id, succeeded('Reloading the player.'));
          setTimeout(() => this.deps.location.reload(), 300);
          return;
        case 'clear-cache': {
          await cache.clear();
          this.manifestEtag = null;
          await api.commandResult(command.id, succeeded('Media cache cleared; downloading again.'));
          void this.syncManifest('command');
          return;
        }
        case 'sync':
          this.manifestEtag = null;
          await this.heartbeat();
          await this.syncManifest('command');
          await api.commandResult(command.id, succeeded(`Manifest ${engine.revision ?? 'none'} on screen.`));
          return;
        case 'identify':
          await this.identify(action.seconds);
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

  private async identify(seconds: number): Promise<void> {
    const name = await this.deps.api.config().then(
      (c) => c.name,
      () => null,
    );
    this.deps.view.identify(`${name ?? `Screen ${this.screenId?.slice(-6) ?? ''}`} · ${this.deps.location.host}`, seconds);
  }

  /**
   * The page's own version is its HTML's ETag: when the server is upgraded the built page
   * changes, and a player that never restarts would otherwise run the old code forever.
   * Checked every 30 minutes (app.ts) and after the socket comes back; a change reloads the
   * page (playback resumes at once from the stored manifest and the cache).
   */
  async checkForNewRelease(): Promise<void> {
    const tag = await this.currentPageTag();
    if (!tag) return;
    if (this.pageTag === null) this.pageTag = tag;
    else if (tag !== this.pageTag && this.running) {
      this.deps.log('A new player version is on the server: reloading.');
      this.deps.location.reload();
    }
  }

  private async currentPageTag(): Promise<string | null> {
    try {
      const res = await fetch(this.deps.location.pathname, { method: 'HEAD', cache: 'no-store' });
      return res.ok ? (res.headers.get('etag') ?? res.headers.get('last-modified')) : null;
    } catch {
      return null;
    }
  }
}
