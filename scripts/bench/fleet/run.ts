/**
 * One fleet run: a fresh data directory seeded with N screens, the real server as a child
 * process, content through the admin API, N simulated players connected (the ramp), then
 * `seconds` of heartbeats spread evenly over the cadence with one content change at the
 * middle, then the server stopped and its SQLite file opened to count the noise buckets.
 * Answers the figures and the correctness facts (docs/performance.md, "Fleet simulator").
 *
 * With `databaseUrl` (issue 25) the fleet lives in a PostgreSQL database of its own,
 * `placard_fleet_<pid>_<N>`, created through that URL (a role that may create databases)
 * and dropped at the end; with `instances` n, n server processes share it and one data
 * directory, the admin calls go through the first, player i talks to instance i mod n.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import pg from 'pg';
import { HttpClient } from './http.js';
import { type FleetContext, newStats, SimPlayer } from './player.js';
import { Admin, changeContent, createContent, seedFleet } from './seed.js';
import { describeMemory, FleetSampler, type FleetServer, readServerMemory, startServer } from './server.js';

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
  /**
   * PostgreSQL instead of SQLite: a URL of a server where the role may create databases
   * (its database part is only where to connect for `create database`). The run creates
   * `placard_fleet_<pid>_<N>`, seeds it, hands it to every instance and drops it at the end.
   */
  databaseUrl?: string;
  /** Server processes sharing the database and the data directory (default 1; more needs databaseUrl). */
  instances?: number;
  log?: (line: string) => void;
}

export interface InstanceFigures {
  pid: number;
  url: string;
  idleCpuPct: number;
  avgCpuPct: number;
  peakCpuPct: number;
  idleRssMiB: number;
  rssWithSocketsMiB: number;
  peakRssMiB: number;
  /** Players whose socket, heartbeats and fetches went to this instance. */
  players: number;
  /** Of those: how many got `manifest.changed` on their socket, and how many fetched the changed manifest (the last one, ms after the change). */
  pushedPlayers: number;
  gotChange: number;
  changeLastMs: number | null;
  exit: { code: number | null; signal: string | null };
}

export interface FleetReport {
  players: number;
  contexts: number;
  database: 'sqlite' | 'postgres';
  instances: number;
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
    /** The first instance's exit that was not a clean one (code 0), else code 0. */
    exit: { code: number | null; signal: string | null };
    /** Each instance's own figures (the ones above are their sums; peaks are the peak of the sum). */
    instances: InstanceFigures[];
    /** CPU of the fleet database's PostgreSQL backends over the run (% of one core); null on SQLite. */
    databaseCpuPct: number | null;
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

/** Checks the database and instance options before anything is made; the instance count. */
export function checkTopology(options: Pick<FleetOptions, 'databaseUrl' | 'instances'>): number {
  const instances = options.instances ?? 1;
  if (!Number.isInteger(instances) || instances < 1) throw new Error(`--instances wants a whole number of at least 1, not ${options.instances}`);
  if (instances > 1 && !options.databaseUrl)
    throw new Error(
      `--instances ${instances} needs --database-url postgres://...: on SQLite the server is one process (its database is a file only one process writes)`,
    );
  if (options.databaseUrl !== undefined) {
    let u: URL;
    try {
      u = new URL(options.databaseUrl);
    } catch {
      throw new Error(`--database-url wants a postgres:// URL, not ${options.databaseUrl}`);
    }
    if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') throw new Error(`--database-url wants a postgres:// URL, not ${u.protocol}//...`);
  }
  return instances;
}

async function withPg<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function runFleet(options: FleetOptions): Promise<FleetReport> {
  const log = options.log ?? (() => {});
  const n = options.players;
  const instances = checkTopology(options);
  // Each player holds a socket here and in its server, plus the two keep-alive pools per instance.
  const needed = n + 2 * instances * (options.httpConnections ?? 256) + 200;
  const limit = openFileLimit();
  if (limit !== null && limit < needed) throw new Error(`${n} players need about ${needed} open files in this process and the server; ulimit -n is ${limit}`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-fleet-'));
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir);
  const dbFile = path.join(dataDir, 'placard.db');

  // PostgreSQL: a database of the run's own, created empty (the server's migrations make the schema).
  let pgDatabase: { name: string; url: string } | null = null;
  if (options.databaseUrl) {
    const name = `placard_fleet_${process.pid}_${n}`;
    const u = new URL(options.databaseUrl);
    u.pathname = `/${name}`;
    await withPg(options.databaseUrl, async (c) => {
      await c.query(`drop database if exists ${name} with (force)`);
      await c.query(`create database ${name}`);
    });
    pgDatabase = { name, url: u.toString() };
    log(`created PostgreSQL database ${name}`);
  }
  const dropDatabase = async () => {
    if (!pgDatabase) return;
    if (options.keepDir) log(`kept PostgreSQL database ${pgDatabase.name}`);
    else await withPg(options.databaseUrl!, (c) => c.query(`drop database if exists ${pgDatabase!.name} with (force)`));
  };

  let t = performance.now();
  let seeded: Awaited<ReturnType<typeof seedFleet>>;
  try {
    seeded = await seedFleet(pgDatabase?.url ?? dbFile, n, options.contexts ?? 1);
  } catch (err) {
    await dropDatabase();
    throw err;
  }
  const seedMs = performance.now() - t;
  log(`seeded ${n} screens with credentials in ${Math.round(seedMs)} ms${pgDatabase ? ` (PostgreSQL ${pgDatabase.name})` : ''}`);

  const memoryFile = (i: number) => path.join(dir, instances === 1 ? 'server-memory.json' : `server-memory-${i}.json`);
  const servers: FleetServer[] = [];
  try {
    for (let i = 0; i < instances; i++) {
      servers.push(
        await startServer(dataDir, {
          entry: options.entry,
          logLevel: options.logLevel,
          cpuProfDir: options.cpuProfDir,
          memoryFile: memoryFile(i),
          logFile: path.join(dir, instances === 1 ? 'server.log' : `server-${i}.log`),
          env: pgDatabase ? { PLACARD_DATABASE_URL: pgDatabase.url } : {},
        }),
      );
    }
  } catch (err) {
    await Promise.all(servers.map((s) => s.stop(5_000)));
    if (!options.keepDir) rmSync(dir, { recursive: true, force: true });
    await dropDatabase();
    throw err;
  }
  const server = servers[0]!;
  const players: SimPlayer[] = [];
  const fleet: FleetContext = {
    endpoints: servers.map((s) => ({
      wsUrl: `${s.url.replace(/^http/, 'ws')}/api/v1/player/socket`,
      heartbeats: new HttpClient(s.url, options.httpConnections ?? 256),
      fetches: new HttpClient(s.url, options.httpConnections ?? 256),
    })),
    stats: newStats(),
    stopping: false,
    changeAssetId: null,
    changeAt: null,
    bucketBase: Math.floor(Date.now() / 10_000) * 10_000 - 24 * 3600_000,
  };
  const closeClients = () => {
    for (const e of fleet.endpoints) {
      e.heartbeats.close();
      e.fetches.close();
    }
  };
  const sampler = new FleetSampler(
    servers.map((s) => s.pid),
    pgDatabase?.name ?? null,
    500,
  );
  try {
    await sleep(1000);
    const startRss = sampler.take()!.rssKiB;
    for (const [i, s] of servers.entries()) log(`server ${i} pid ${s.pid} on ${s.url}, RSS ${MiB(sampler.last(i)?.rssKiB ?? 0)} MiB after start`);

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
    const idleRssOf = servers.map((_, i) => sampler.last(i)?.rssKiB ?? 0);
    log(`idle: CPU ${round(idleCpu)}%, RSS ${MiB(idleRss)} MiB`);
    for (let i = 0; i < instances; i++) {
      const idleMemory = readServerMemory(memoryFile(i))?.now;
      if (idleMemory) log(`memory idle${instances > 1 ? ` (server ${i})` : ''}: ${describeMemory(idleMemory)}`);
    }

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
    const rssWithSocketsOf = servers.map((_, i) => sampler.last(i)?.rssKiB ?? 0);
    for (let i = 0; i < instances; i++) {
      const socketsMemory = readServerMemory(memoryFile(i))?.now;
      if (socketsMemory) log(`memory with sockets${instances > 1 ? ` (server ${i})` : ''}: ${describeMemory(socketsMemory)}`);
    }

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
    for (let i = 0; i < instances; i++) {
      const peakMemory = readServerMemory(memoryFile(i))?.peak;
      if (peakMemory) log(`memory at the peak${instances > 1 ? ` (server ${i})` : ''}: ${describeMemory(peakMemory)}`);
    }

    fleet.stopping = true;
    for (const p of players) p.close();
    closeClients();
    const exits = await Promise.all(servers.map((s) => s.stop()));
    const exit = exits.find((e) => e.code !== 0) ?? exits[0]!;
    sampler.stop();

    let buckets: number;
    if (pgDatabase) {
      buckets = await withPg(pgDatabase.url, async (c) => Number((await c.query('select count(*) as n from noise_buckets')).rows[0].n));
    } else {
      const counted = new Database(dbFile, { readonly: true });
      buckets = (counted.prepare('select count(*) as n from noise_buckets').get() as { n: number }).n;
      counted.close();
    }

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
      database: pgDatabase ? 'postgres' : 'sqlite',
      instances,
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
        instances: servers.map((s, i) => ({
          pid: s.pid,
          url: s.url,
          idleCpuPct: round(sampler.averageCpu(idleFrom, idleFrom + 3000, i)),
          avgCpuPct: round(sampler.averageCpu(runFrom, runTo, i)),
          peakCpuPct: round(sampler.peakCpu(runFrom, runTo, i)),
          idleRssMiB: MiB(idleRssOf[i]!),
          rssWithSocketsMiB: MiB(rssWithSocketsOf[i]!),
          peakRssMiB: MiB(sampler.peakRssKiB(t, runTo, i)),
          players: players.filter((p) => p.index % instances === i).length,
          pushedPlayers: players.filter((p) => p.index % instances === i && p.changePushAt !== null).length,
          gotChange: players.filter((p) => p.index % instances === i && p.gotChangeAt !== null).length,
          changeLastMs: (() => {
            const mine = players.filter((p) => p.index % instances === i && p.gotChangeAt !== null).map((p) => p.gotChangeAt! - changeAt);
            return mine.length ? round(Math.max(...mine)) : null;
          })(),
          exit: { code: exits[i]!.code, signal: exits[i]!.signal },
        })),
        databaseCpuPct: pgDatabase ? round(sampler.databaseCpu(runFrom, runTo)) : null,
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
    closeClients();
    sampler.stop();
    await Promise.all(servers.map((s) => s.stop(5_000)));
    if (!options.keepDir) rmSync(dir, { recursive: true, force: true });
    else log(`kept ${dir}`);
    await dropDatabase();
  }
}
