/**
 * One simulated player: its own device credential, a socket (half of them with the
 * browser's subprotocol form, half with the Authorization header), heartbeats when the
 * fleet's scheduler says (with three new noise buckets each for the noisy share, queued
 * and dropped as the server acknowledges them, like the browser player), the manifest
 * with If-None-Match on `hello`, `manifest.changed` or a heartbeat naming another
 * revision, and the media of a new manifest downloaded and checked against its sha256
 * (cached by sha256).
 */
import { createHash } from 'node:crypto';
import { WebSocket } from 'ws';
import type { HttpClient } from './http.js';

export interface FleetStats {
  heartbeatLatenciesMs: number[];
  /** performance.now() when each heartbeat of heartbeatLatenciesMs was sent. */
  heartbeatSentAt: number[];
  heartbeatsSent: number;
  heartbeatsOk: number;
  /** A heartbeat came due while the player's previous one was still unanswered. */
  heartbeatsSkipped: number;
  errors: Map<string, number>;
  socketDrops: number;
  manifest200: number;
  manifest304: number;
  mediaDownloads: number;
  mediaBytes: number;
  /** Size of the last manifest body received (JSON, after gunzip) and of it on the wire. */
  manifestBytes: number;
  manifestWireBytes: number;
}

export function newStats(): FleetStats {
  return {
    heartbeatLatenciesMs: [],
    heartbeatSentAt: [],
    heartbeatsSent: 0,
    heartbeatsOk: 0,
    heartbeatsSkipped: 0,
    errors: new Map(),
    socketDrops: 0,
    manifest200: 0,
    manifest304: 0,
    mediaDownloads: 0,
    mediaBytes: 0,
    manifestBytes: 0,
    manifestWireBytes: 0,
  };
}

/** One server instance as the players see it: its socket URL and two keep-alive pools. */
export interface FleetEndpoint {
  wsUrl: string;
  heartbeats: HttpClient;
  fetches: HttpClient;
}

/** What the players share: the instances, the counters, and the change to look for. */
export interface FleetContext {
  /** Player i uses endpoints[i % length] for its socket, heartbeats and fetches (sticky, as `balance source` does). */
  endpoints: FleetEndpoint[];
  stats: FleetStats;
  stopping: boolean;
  /** The asset the mid-run change adds; a manifest with it is the changed one. */
  changeAssetId: string | null;
  /** performance.now() just before the change was sent. */
  changeAt: number | null;
  /** Ten-second grid start of every player's first bucket. */
  bucketBase: number;
}

interface ManifestMedia {
  assetId: string;
  url: string;
  sha256: string;
  sizeBytes: number;
}

const count = (stats: FleetStats, kind: string) => stats.errors.set(kind, (stats.errors.get(kind) ?? 0) + 1);

export class SimPlayer {
  revision = 0;
  etag: string | null = null;
  readonly cache = new Set<string>();
  ws: WebSocket | null = null;
  /** performance.now() of the first manifest with all its media cached. */
  readyAt: number | null = null;
  /** When the manifest with the change arrived (200, new ETag) and when its media was all cached. */
  gotChangeAt: number | null = null;
  changeMediaAt: number | null = null;
  /** When the first `manifest.changed` after the change arrived on the socket. */
  changePushAt: number | null = null;
  heartbeatsOk = 0;
  bucketsGenerated = 0;
  bucketsAcknowledged = 0;
  private readonly queue: string[] = [];
  private nextBucket = 0;
  private heartbeatInFlight: Promise<void> | null = null;
  private fetching: Promise<void> | null = null;
  private fetchAgain = false;
  private readonly auth: Record<string, string>;
  private readonly endpoint: FleetEndpoint;

  constructor(
    private readonly fleet: FleetContext,
    readonly index: number,
    readonly screenId: string,
    private readonly credential: string,
    readonly noisy: boolean,
  ) {
    this.auth = { authorization: `Bearer ${credential}` };
    this.endpoint = fleet.endpoints[index % fleet.endpoints.length]!;
  }

  /** Opens the socket; resolves on `hello` (or when the attempt fails, counted as an error). */
  connect(): Promise<void> {
    const browserForm = this.index % 2 === 0;
    const ws = new WebSocket(this.endpoint.wsUrl, browserForm ? ['placard.v1', `bearer.${this.credential}`] : ['placard.v1'], {
      perMessageDeflate: false,
      ...(browserForm ? {} : { headers: this.auth }),
    });
    this.ws = ws;
    let hello = false;
    return new Promise<void>((resolve) => {
      ws.on('message', (data) => {
        let msg: { type?: string; revision?: number; manifestRevision?: number };
        try {
          msg = JSON.parse(String(data)) as typeof msg;
        } catch {
          count(this.fleet.stats, 'socket: message not JSON');
          return;
        }
        if (msg.type === 'hello') {
          hello = true;
          resolve();
          if (msg.manifestRevision !== this.revision || !this.etag) this.fetchManifest();
        } else if (msg.type === 'manifest.changed') {
          if (this.fleet.changeAt !== null && this.changePushAt === null) this.changePushAt = performance.now();
          if (typeof msg.revision !== 'number' || msg.revision > this.revision) this.fetchManifest();
        } else if (msg.type === 'ping') {
          ws.send('{"type":"pong"}');
        }
      });
      ws.on('error', () => {
        /* the close that follows counts it */
      });
      ws.on('close', (code) => {
        resolve();
        if (this.fleet.stopping) return;
        if (hello) {
          this.fleet.stats.socketDrops++;
          count(this.fleet.stats, `socket dropped (${code})`);
        } else count(this.fleet.stats, `socket refused (${code})`);
        // Like the player: reconnect after a pause (1 s; it backs off further on repeats).
        setTimeout(() => {
          if (!this.fleet.stopping) void this.connect();
        }, 1000).unref();
      });
    });
  }

  close(): void {
    this.ws?.terminate();
  }

  /** Resolves when nothing of this player's is in flight. */
  async settled(): Promise<void> {
    while (this.heartbeatInFlight || this.fetching) await Promise.all([this.heartbeatInFlight, this.fetching]);
  }

  private bucket(): string {
    const startedAt = new Date(this.fleet.bucketBase + this.nextBucket++ * 10_000).toISOString();
    return `{"startedAt":"${startedAt}","averageLevel":41.5,"peakLevel":73.2,"monitoredMs":10000,"warningMs":1200,"loudMs":300,"triggerCount":1}`;
  }

  /** One heartbeat (skipped, and counted, while the previous one is unanswered). */
  heartbeat(): void {
    if (this.heartbeatInFlight) {
      this.fleet.stats.heartbeatsSkipped++;
      return;
    }
    this.heartbeatInFlight = this.sendHeartbeat().finally(() => {
      this.heartbeatInFlight = null;
    });
  }

  private async sendHeartbeat(): Promise<void> {
    const stats = this.fleet.stats;
    if (this.noisy) {
      for (let i = 0; i < 3; i++) this.queue.push(this.bucket());
      this.bucketsGenerated += 3;
    }
    const sending = this.queue.slice(0, 120);
    const noise = this.noisy ? `,"noiseMeter":{"status":"active","currentLevel":42,"pendingHistory":[${sending.join(',')}]}` : '';
    const body = `{"playerFamily":"desktop-linux","playerVersion":"1.0.0","display":{"width":1920,"height":1080},"manifestRevision":${this.revision},"socketConnected":${this.ws?.readyState === WebSocket.OPEN},"cache":{"items":${this.cache.size},"bytes":0,"missing":0,"failed":0}${noise}}`;
    stats.heartbeatsSent++;
    const t0 = performance.now();
    try {
      const res = await this.endpoint.heartbeats.request('POST', '/api/v1/player/heartbeat', this.auth, body);
      stats.heartbeatLatenciesMs.push(performance.now() - t0);
      stats.heartbeatSentAt.push(t0);
      if (res.status !== 200) {
        count(stats, `heartbeat ${res.status}`);
        return;
      }
      stats.heartbeatsOk++;
      this.heartbeatsOk++;
      const data = (JSON.parse(res.body.toString()) as { data: { manifestRevision: number; noiseHistory?: { accepted: number } } }).data;
      const accepted = data.noiseHistory?.accepted ?? 0;
      if (accepted !== sending.length) count(stats, 'heartbeat: accepted fewer buckets than sent');
      this.queue.splice(0, accepted);
      this.bucketsAcknowledged += accepted;
      if (data.manifestRevision !== this.revision) this.fetchManifest();
    } catch (err) {
      count(stats, `heartbeat: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }

  /** Fetches the manifest (once more after the current fetch if one is running). */
  fetchManifest(): void {
    if (this.fleet.stopping) return;
    if (this.fetching) {
      this.fetchAgain = true;
      return;
    }
    this.fetching = this.loadManifest().finally(() => {
      this.fetching = null;
      if (this.fetchAgain) {
        this.fetchAgain = false;
        this.fetchManifest();
      }
    });
  }

  private async loadManifest(): Promise<void> {
    const stats = this.fleet.stats;
    try {
      const res = await this.endpoint.fetches.request('GET', '/api/v1/player/manifest', {
        ...this.auth,
        'accept-encoding': 'gzip',
        ...(this.etag ? { 'if-none-match': this.etag } : {}),
      });
      if (res.status === 304) {
        stats.manifest304++;
        return;
      }
      if (res.status !== 200) {
        count(stats, `manifest ${res.status}`);
        return;
      }
      stats.manifest200++;
      stats.manifestBytes = res.body.length;
      stats.manifestWireBytes = res.wireBytes;
      const at = performance.now();
      const m = (JSON.parse(res.body.toString()) as { data: { revision: number; media: ManifestMedia[] } }).data;
      const newEtag = String(res.headers.etag ?? '');
      const changed = this.fleet.changeAt !== null && m.media.some((x) => x.assetId === this.fleet.changeAssetId);
      if (changed && this.gotChangeAt === null && newEtag !== this.etag) this.gotChangeAt = at;
      this.revision = Math.max(this.revision, m.revision);
      this.etag = newEtag;
      // Smallest first, like the player; each checked against its size and sha256.
      for (const media of [...m.media].sort((a, b) => a.sizeBytes - b.sizeBytes)) {
        if (this.cache.has(media.sha256)) continue;
        const dl = await this.endpoint.fetches.request('GET', media.url, this.auth);
        if (dl.status !== 200) {
          count(stats, `media ${dl.status}`);
          continue;
        }
        if (dl.body.length !== media.sizeBytes || createHash('sha256').update(dl.body).digest('hex') !== media.sha256) {
          count(stats, 'media: size or sha256 mismatch');
          continue;
        }
        this.cache.add(media.sha256);
        stats.mediaDownloads++;
        stats.mediaBytes += dl.body.length;
      }
      const complete = m.media.every((x) => this.cache.has(x.sha256));
      if (complete && this.readyAt === null) this.readyAt = performance.now();
      if (complete && changed && this.changeMediaAt === null) this.changeMediaAt = performance.now();
    } catch (err) {
      count(stats, `manifest: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
}
