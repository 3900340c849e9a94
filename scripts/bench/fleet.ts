/**
 * Fleet simulator (issue 24): N simulated players against the real server running as a
 * child process, each with its own device credential, a socket, heartbeats spread evenly
 * over the cadence (a share with three new noise buckets each), the manifest with
 * If-None-Match on `manifest.changed`, media downloads on change; one content change in
 * the middle of the run. One table per N: heartbeat latency (client side), errors, the
 * server's CPU and RSS (read from /proc, apart from the simulator), RSS per socket, the
 * change's propagation to the last player, and buckets sent vs counted in the database.
 *   npm run bench:fleet -- --players 1000[,5000,10000] [--cadence 30] [--seconds 60 | --minutes 1]
 *     [--noise-share 0.2] [--entry dist/server/src/main.js] [--log-level info] [--json] [--keep]
 *     [--cpu-prof-dir DIR]   (the server's V8 CPU profile, written when it stops)
 *     [--connections 256]    (keep-alive connections of each of the two client pools)
 *     [--contexts 1]         (groups the screens are spread over: distinct manifest contexts)
 *     [--database-url postgres://placard@127.0.0.1:55432/postgres]  (issue 25: PostgreSQL; the run
 *                            creates its own database placard_fleet_<pid>_<N> there and drops it)
 *     [--instances 1]        (server processes sharing the database and data directory; more than
 *                            one needs --database-url; player i uses instance i mod n)
 * Each N gets a fresh server and data directory. Default run: 2 cadences (the change at
 * the middle) after the ramp. docs/performance.md ("Fleet simulator") has the figures.
 */
import os from 'node:os';
import { checkTopology, type FleetReport, runFleet } from './fleet/run.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const num = (name: string, fallback: number) => {
  const v = arg(name);
  if (v === undefined) return fallback;
  const x = Number(v);
  if (!Number.isFinite(x) || x <= 0) throw new Error(`--${name} wants a positive number, not ${v}`);
  return x;
};

const sizes = (arg('players') ?? '1000').split(',').map((s) => {
  const x = Number(s);
  if (!Number.isInteger(x) || x < 1) throw new Error(`--players wants whole numbers, not ${s}`);
  return x;
});
const cadenceSec = num('cadence', 30);
const seconds = arg('minutes') !== undefined ? num('minutes', 1) * 60 : num('seconds', 2 * cadenceSec);
const noiseShare = Number(arg('noise-share') ?? 0.2);
if (!(noiseShare >= 0 && noiseShare <= 1)) throw new Error('--noise-share is a share between 0 and 1');
const json = process.argv.includes('--json');
const databaseUrl = arg('database-url');
const instancesArg = arg('instances');
const instances = instancesArg === undefined ? 1 : Number(instancesArg);
try {
  checkTopology({ databaseUrl, instances });
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}

function table(r: FleetReport): string {
  const rows: [string, string][] = [
    ['players (noisy), contexts', `${r.players} (${r.noisyPlayers}), ${r.contexts}`],
    ['database, instances', `${r.database}, ${r.instances}`],
    ['cadence / run', `${r.cadenceSec} s / ${r.seconds} s after a ${(r.rampMs / 1000).toFixed(1)} s ramp`],
    ['heartbeats ok / sent (skipped)', `${r.heartbeats.ok} / ${r.heartbeats.sent} (${r.heartbeats.skipped})`],
    ['heartbeats/s', String(r.heartbeats.perSec)],
    ['heartbeat p50 / p99 / max', `${r.heartbeats.p50Ms} / ${r.heartbeats.p99Ms} / ${r.heartbeats.maxMs} ms`],
    ['heartbeat p99 before / from the change', `${r.heartbeats.p99BeforeChangeMs} / ${r.heartbeats.p99FromChangeMs} ms`],
    ['players that heartbeated', `${r.playersHeartbeated} of ${r.players}`],
    ['errors (socket drops)', `${r.errors.total} (${r.errors.socketDrops})${r.errors.total ? ` ${JSON.stringify(r.errors.byKind)}` : ''}`],
    ['manifests 200 / 304', `${r.manifests.ok200} / ${r.manifests.notModified304}`],
    ['manifest size (gzipped)', `${r.manifests.bytes} B (${r.manifests.wireBytes} B)`],
    ['media downloads', `${r.media.downloads} (${(r.media.bytes / 1024 / 1024).toFixed(1)} MiB)`],
    ['server CPU idle / avg / peak', `${r.server.idleCpuPct} / ${r.server.avgCpuPct} / ${r.server.peakCpuPct} % of one core`],
    ...(r.instances > 1
      ? r.server.instances.map((s, i): [string, string] => [
          `  instance ${i}: players, CPU avg / peak, RSS`,
          `${s.players}, ${s.avgCpuPct} / ${s.peakCpuPct} %, ${s.idleRssMiB} idle / ${s.rssWithSocketsMiB} sockets / ${s.peakRssMiB} peak MiB`,
        ])
      : []),
    ...(r.instances > 1
      ? r.server.instances.map((s, i): [string, string] => [
          `  instance ${i}: pushed, got the change (last)`,
          `${s.pushedPlayers}, ${s.gotChange} of ${s.players} (${s.changeLastMs === null ? 'never' : `${s.changeLastMs} ms`})`,
        ])
      : []),
    ...(r.server.databaseCpuPct !== null ? [['PostgreSQL backends CPU avg', `${r.server.databaseCpuPct} % of one core`] as [string, string]] : []),
    [
      'server RSS start / idle / sockets / peak',
      `${r.server.startRssMiB} / ${r.server.idleRssMiB} / ${r.server.rssWithSocketsMiB} / ${r.server.peakRssMiB} MiB`,
    ],
    ['RSS per socket', `${r.server.rssPerSocketKiB} KiB`],
    [
      'change to last player (p50)',
      r.change.lastMs === null ? 'never' : `${r.change.lastMs} ms (${r.change.p50Ms} ms), ${r.change.playersGotIt} of ${r.players} players`,
    ],
    [
      'change pushed (manifest.changed), last player',
      r.change.pushLastMs === null ? 'never' : `${r.change.pushLastMs} ms, ${r.change.pushedPlayers} of ${r.players} players`,
    ],
    ['change incl. media, last player', r.change.mediaLastMs === null ? 'not every player' : `${r.change.mediaLastMs} ms`],
    ['change request itself', `${r.change.requestMs} ms`],
    ['buckets generated / acked / counted', `${r.buckets.generated} / ${r.buckets.acknowledged} / ${r.buckets.counted}`],
    ['simulator CPU / loop delay p99 (max)', `${r.simulator.cpuPct} % / ${r.simulator.loopDelayP99Ms} (${r.simulator.loopDelayMaxMs}) ms`],
    ['server exit', r.server.instances.map((s) => s.exit.signal ?? `code ${s.exit.code}`).join(', ')],
    ['load average at the end', r.loadAverage.join(' ')],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `| ${k.padEnd(w)} | ${v} |`).join('\n');
}

async function main() {
  console.log(
    `Fleet simulator: node ${process.version}, ${os.cpus().length} cpus, load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}; cadence ${cadenceSec} s, run ${seconds} s, noise share ${noiseShare}; ${
      databaseUrl ? `PostgreSQL, ${instances} instance(s)` : 'SQLite, one instance'
    }`,
  );
  const reports: FleetReport[] = [];
  let failed = false;
  for (const players of sizes) {
    const report = await runFleet({
      players,
      cadenceSec,
      seconds,
      noiseShare,
      entry: arg('entry'),
      logLevel: arg('log-level'),
      keepDir: process.argv.includes('--keep'),
      cpuProfDir: arg('cpu-prof-dir'),
      httpConnections: arg('connections') !== undefined ? num('connections', 256) : undefined,
      contexts: arg('contexts') !== undefined ? num('contexts', 1) : undefined,
      databaseUrl,
      instances,
      log: (line) => console.error(`[${players}] ${line}`),
    });
    reports.push(report);
    console.log(`\n### ${players} players\n`);
    console.log(table(report));
    const lost = report.buckets.counted < report.buckets.acknowledged;
    if (report.errors.total > 0 || lost || report.change.playersGotIt < players) failed = true;
  }
  if (json) console.log(JSON.stringify(reports, null, 2));
  if (failed) process.exitCode = 1;
}

void main();
