/**
 * One fleet run: a fresh data directory seeded with N screens, the real server as a child
 * process, content through the admin API, N simulated players connected (the ramp), then
 * `seconds` of heartbeats spread evenly over the cadence with one content change at the
 * middle, then the server stopped and its SQLite file opened to count the noise buckets.
 * Answers the figures and the correctness facts (docs/performance.md, "Fleet simulator").
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { HttpClient } from './http.js';
import { type FleetContext, newStats, SimPlayer } from './player.js';
import { Admin, changeContent, createContent, seedFleet } from './seed.js';
import { describeMemory, ProcessSampler, readServerMemory, startServer } from './server.js';

export interface FleetOptions {
  players: number;
  /** Groups the screens are spread over (screen i in group i mod K, the playlist assigned to each): distinct manifest contexts. */
  contexts?: number;
  /** Seconds between a player's heartbeats. */
  cadenceSec: number;
  /** Length of the measured run (after the ramp); the change is sent at its middle. */
  seconds: number;
  /** Share of the players whose heartbeats carry noise buckets (3 new ones each). */
  noiseShare: number;
  /** Server entry point (default server/src/main.ts under tsx; dist/server/src/main.js after npm run build:server). */
  entry?: string;
  logLevel?: string;
  /** Keep-alive connections of the heartbeat pool, and of the manifest/media pool. */
  httpConnections?: number;
  /** Sockets being opened at once during the ramp. */
  rampConcurrency?: number;
  /** How long after the run to wait for the last player to get the change (default: 30 s, or N/100 s when more). */
  changeGraceSec?: number;
  keepDir?: boolean;
  /** Profile the server (node --cpu-prof) into this directory; the profile is written when it stops. */
  cpuProfDir?: string;
  log?: (line: string) => void;
}

export interface FleetReport {
  players: number;
  contexts: number;
  cadenceSec: number;
  seconds: number;
  noisyPlayers: number;
  seedMs: number;
  rampMs: number;
  heartbeats: {
    sent: number;
    ok: number;
    skipped: number;
    perSec: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    /** p99 of the heartbeats sent before the change, and of those sent from the change on (the burst of manifest fetches). */
    p99BeforeChangeMs: number | null;
    p99FromChangeMs: number | null;
  };
  /** Players with at least one answered (200) heartbeat. */
  playersHeartbeated: number;
  errors: { total: number; byKind: Record<string, number>; socketDrops: number };
  manifests: { ok200: number; notModified304: number; bytes: number; wireBytes: number };
  media: { downloads: number; bytes: number };
  server: {
    startRssMiB: number;
    idleRssMiB: number;
    idleCpuPct: number;
    rssWithSocketsMiB: number;
    rssPerSocketKiB: number;
    peakRssMiB: number;
    avgCpuPct: number;
    peakCpuPct: number;
    exit: { code: number | null; signal: string | null };
  };
  change: {
    /** The admin request's own time. */
    requestMs: number;
    playersGotIt: number;
    p50Ms: number | null;
    lastMs: number | null;
    /** Until the changed manifest's media was cached too. */
    mediaLastMs: number | null;
    /** `manifest.changed` on the socket: players that got it, and when the last one did. */
    pushedPlayers: number;
    pushLastMs: number | null;
  };
  buckets: { generated: number; acknowledged: number; counted: number };
  simulator: { cpuPct: number; loopDelayP99Ms: number; loopDelayMaxMs: number };
  loadAverage: number[];
}

const MiB = (kib: number) => Math.round((kib / 1024) * 10) / 10;
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Runs `tasks` with at most `limit` at once. */
async function pool<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > until) return false;
    await sleep(50);
  }
  return true;
}

/** The soft limit on open files of this process (from /proc/self/limits), or null. */
function openFileLimit(): number | null {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

export async function runFleet(options: FleetOptions): Promise<FleetReport> {
  const log = options.log ?? (() => {});
  const n = options.players;
  // Each player holds a socket here and in the server, plus the two keep-alive pools.
  const needed = n + 2 * (options.httpConnections ?? 256) + 200;
  const limit = openFileLimit();
  if (limit !== null && limit < needed) throw new Error(`${n} players need about ${needed} open files in this process and the server; ulimit -n is ${limit}`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-fleet-'));
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir);
  const dbFile = path.join(dataDir, 'placard.db');

  let t = performance.now();
  const seeded = await seedFleet(dbFile, n, options.contexts ?? 1);
  const seedMs = performance.now() - t;
  log(`seeded ${n} screens with credentials in ${Math.round(seedMs)} ms`);

  const memoryFile = path.join(path.dirname(dataDir), 'server-memory.json');
  const server = await startServer(dataDir, { entry: options.entry, logLevel: options.logLevel, cpuProfDir: options.cpuProfDir, memoryFile });
  const players: SimPlayer[] = [];
  const fleet: FleetContext = {
    wsUrl: `${server.url.replace(/^http/, 'ws')}/api/v1/player/socket`,
    heartbeats: new HttpClient(server.url, options.httpConnections ?? 256),
    fetches: new HttpClient(server.url, options.httpConnections ?? 256),
    stats: newStats(),
    stopping: false,
    changeAssetId: null,
    changeAt: null,
    bucketBase: Math.floor(Date.now() / 10_000) * 10_000 - 24 * 3600_000,
  };
  const sampler = new ProcessSampler(server.pid, 500);
  try {
    await sleep(1000);
    const startRss = sampler.take()!.rssKiB;
    log(`server pid ${server.pid} on ${server.url}, RSS ${MiB(startRss)} MiB after start`);

    const admin = await Admin.setUp(server.url);
    const content = await createContent(admin, seeded.groupIds);
    fleet.changeAssetId = content.changeAssetId;
    log(`content ready (two images, a playlist assigned to the fleet's ${seeded.groupIds.length} group(s))`);

    // Idle: settle, then 3 s with nothing connected.
    await sleep(2000);
    const idleFrom = performance.now();
    await sleep(3000);
    const idleCpu = sampler.averageCpu(idleFrom);
    const idleRss = sampler.take()!.rssKiB;
    log(`idle: CPU ${round(idleCpu)}%, RSS ${MiB(idleRss)} MiB`);
    const idleMemory = readServerMemory(memoryFile)?.now;
    if (idleMemory) log(`memory idle: ${describeMemory(idleMemory)}`);

    // Ramp: every player opens its socket, fetches the manifest on hello, caches the media.
    for (let i = 0; i < n; i++) {
      const s = seeded.screens[i]!;
      players.push(new SimPlayer(fleet, i, s.screenId, s.credential, i < Math.round(n * options.noiseShare)));
    }
    t = performance.now();
    await pool(players, options.rampConcurrency ?? 100, (p) => p.connect());
    const allReady = await waitUntil(() => players.every((p) => p.readyAt !== null), 120_000 + n * 20);
    const rampMs = performance.now() - t;
    log(
      `ramp: ${n} sockets and first manifests in ${Math.round(rampMs)} ms${allReady ? '' : ` (${players.filter((p) => p.readyAt === null).length} players never got ready)`}`,
    );
    await sleep(1000);
    const rssWithSockets = sampler.take()!.rssKiB;
    const socketsMemory = readServerMemory(memoryFile)?.now;
    if (socketsMemory) log(`memory with sockets: ${describeMemory(socketsMemory)}`);

    // The measured run: heartbeats spread evenly over the cadence (player i at i/N of it).
    const stats = fleet.stats;
    stats.heartbeatLatenciesMs.length = 0;
    stats.heartbeatSentAt.length = 0;
    const cadenceMs = options.cadenceSec * 1000;
    const total = Math.floor((options.seconds * 1000 * n) / cadenceMs);
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const cpu0 = process.cpuUsage();
    const runFrom = performance.now();
    let launched = 0;
    const changeDone = (async () => {
      await sleep((options.seconds * 1000) / 2);
      fleet.changeAt = performance.now();
      await changeContent(admin, content);
      return performance.now() - fleet.changeAt;
    })();
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const due = Math.min(total, Math.floor(((performance.now() - runFrom) / cadenceMs) * n));
        while (launched < due) players[launched++ % n]!.heartbeat();
        if (launched >= total) {
          clearInterval(timer);
          resolve();
        }
      }, 5);
    });
    const changeRequestMs = await changeDone;
    await Promise.all(players.map((p) => p.settled()));
    const heartbeatSpan = (performance.now() - runFrom) / 1000;
    await waitUntil(() => players.every((p) => p.changeMediaAt !== null), (options.changeGraceSec ?? Math.max(30, n / 100)) * 1000);
    await Promise.all(players.map((p) => p.settled()));
    const runTo = performance.now();
    const cpu = process.cpuUsage(cpu0);
    loop.disable();
    sampler.take();
    const peakMemory = readServerMemory(memoryFile)?.peak;
    if (peakMemory) log(`memory at the peak: ${describeMemory(peakMemory)}`);

    fleet.stopping = true;
    for (const p of players) p.close();
    fleet.heartbeats.close();
    fleet.fetches.close();
    const exit = await server.stop();
    sampler.stop();

    const counted = new Database(dbFile, { readonly: true });
    const buckets = (counted.prepare('select count(*) as n from noise_buckets').get() as { n: number }).n;
    counted.close();

    const lat = [...stats.heartbeatLatenciesMs].sort((a, b) => a - b);
    const changeAt = fleet.changeAt!;
    const split = (before: boolean) => stats.heartbeatLatenciesMs.filter((_, i) => stats.heartbeatSentAt[i]! < changeAt === before).sort((a, b) => a - b);
    const p99Of = (xs: number[]) => (xs.length ? round(percentile(xs, 99)!) : null);
    const got = players.filter((p) => p.gotChangeAt !== null).map((p) => p.gotChangeAt! - changeAt);
    got.sort((a, b) => a - b);
    const media = players.filter((p) => p.changeMediaAt !== null).map((p) => p.changeMediaAt! - changeAt);
    const pushed = players.filter((p) => p.changePushAt !== null).map((p) => p.changePushAt! - changeAt);
    const errorsByKind = Object.fromEntries(stats.errors);
    return {
      players: n,
      contexts: options.contexts ?? 1,
      cadenceSec: options.cadenceSec,
      seconds: options.seconds,
      noisyPlayers: players.filter((p) => p.noisy).length,
      seedMs: Math.round(seedMs),
      rampMs: Math.round(rampMs),
      heartbeats: {
        sent: stats.heartbeatsSent,
        ok: stats.heartbeatsOk,
        skipped: stats.heartbeatsSkipped,
        perSec: round(stats.heartbeatsOk / heartbeatSpan),
        p50Ms: round(percentile(lat, 50) ?? 0),
        p99Ms: round(percentile(lat, 99) ?? 0),
        maxMs: round(lat[lat.length - 1] ?? 0),
        p99BeforeChangeMs: p99Of(split(true)),
        p99FromChangeMs: p99Of(split(false)),
      },
      playersHeartbeated: players.filter((p) => p.heartbeatsOk > 0).length,
      errors: { total: [...stats.errors.values()].reduce((a, b) => a + b, 0), byKind: errorsByKind, socketDrops: stats.socketDrops },
      manifests: { ok200: stats.manifest200, notModified304: stats.manifest304, bytes: stats.manifestBytes, wireBytes: stats.manifestWireBytes },
      media: { downloads: stats.mediaDownloads, bytes: stats.mediaBytes },
      server: {
        startRssMiB: MiB(startRss),
        idleRssMiB: MiB(idleRss),
        idleCpuPct: round(idleCpu),
        rssWithSocketsMiB: MiB(rssWithSockets),
        rssPerSocketKiB: round((rssWithSockets - idleRss) / n),
        peakRssMiB: MiB(sampler.peakRssKiB(t, runTo)),
        avgCpuPct: round(sampler.averageCpu(runFrom, runTo)),
        peakCpuPct: round(sampler.peakCpu(runFrom, runTo)),
        exit: { code: exit.code, signal: exit.signal },
      },
      change: {
        requestMs: round(changeRequestMs),
        playersGotIt: got.length,
        p50Ms: got.length ? round(percentile(got, 50)!) : null,
        lastMs: got.length ? round(got[got.length - 1]!) : null,
        mediaLastMs: media.length === n ? round(Math.max(...media)) : null,
        pushedPlayers: pushed.length,
        pushLastMs: pushed.length ? round(Math.max(...pushed)) : null,
      },
      buckets: {
        generated: players.reduce((a, p) => a + p.bucketsGenerated, 0),
        acknowledged: players.reduce((a, p) => a + p.bucketsAcknowledged, 0),
        counted: buckets,
      },
      simulator: {
        cpuPct: round(((cpu.user + cpu.system) / 1000 / (runTo - runFrom)) * 100),
        loopDelayP99Ms: round(loop.percentile(99) / 1e6),
        loopDelayMaxMs: round(loop.max / 1e6),
      },
      loadAverage: os.loadavg().map((x) => round(x, 2)),
    };
  } finally {
    fleet.stopping = true;
    for (const p of players) p.close();
    fleet.heartbeats.close();
    fleet.fetches.close();
    sampler.stop();
    await server.stop(5_000);
    if (!options.keepDir) rmSync(dir, { recursive: true, force: true });
    else log(`kept ${dir}`);
  }
}
