/**
 * Profiles the server's side of the heartbeat only: the server runs on this thread under the
 * inspector's profiler, the load (autocannon) runs in a worker thread, so the profile holds
 * no load generator. Writes one .cpuprofile per case to --out (/tmp).
 *   npx tsx scripts/bench/heartbeat-profile.ts [--seconds 5 --connections 16 --out DIR --case plain|buckets|both]
 * Then: npx tsx scripts/bench/fleet/profile-top.ts DIR/heartbeat-buckets.cpuprofile --top 40
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { buildApp } from '../../server/src/app.js';
import { testConfig } from '../../server/src/config.js';
import { newAppDeps } from '../../server/src/platform/app-deps.js';
import { migrate, openDatabase } from '../../server/src/platform/db/database.js';
import { createLogger } from '../../server/src/platform/log.js';
import { listen } from '../../server/src/server.js';
import { issueDeviceCredential } from '../../server/src/modules/screens/device-auth.js';
import { newId, newScreenRow, nowIso } from '../../server/src/modules/screens/screens.repo.js';

const option = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const seconds = Number(option('seconds', '5'));
const connections = Number(option('connections', '16'));
const out = option('out', '/tmp');
const which = option('case', 'both');

// The load generator, in a worker: 120 buckets never seen before per request, or the plain body.
const LOAD = `
const { workerData, parentPort } = require('node:worker_threads');
const autocannon = require('autocannon');
const { url, cred, buckets, seconds, connections } = workerData;
const BASE = Math.floor(Date.now() / 10000) * 10000 - 400 * 24 * 3600000;
let batch = 0;
function body() {
  if (!buckets) return JSON.stringify({ playerFamily: 'desktop-linux', playerVersion: '1.0.0', currentPlaylistId: '0190f5a2-7b3c-7def-8abc-0123456789ab', os: { name: 'Debian', version: '12' }, resolution: { width: 1920, height: 1080 } });
  const b = batch++;
  const xs = [];
  for (let i = 0; i < 120; i++) xs.push('{"startedAt":"' + new Date(BASE + (b * 120 + i) * 10000).toISOString() + '","averageLevel":41.5,"peakLevel":73.2,"monitoredMs":10000,"warningMs":1200,"loudMs":300,"triggerCount":1}');
  return '{"playerFamily":"desktop-linux","playerVersion":"1.0.0","currentPlaylistId":"0190f5a2-7b3c-7def-8abc-0123456789ab","noiseMeter":{"status":"normal","currentLevel":40,"pendingHistory":[' + xs.join(',') + ']}}';
}
// In a worker thread autocannon answers raw counters (no percentiles): throughput is 2xx / seconds.
autocannon({ url, method: 'POST', connections, duration: seconds, headers: { 'content-type': 'application/json', authorization: 'Bearer ' + cred }, requests: [{ setupRequest: (r) => ({ ...r, body: body() }) }] }, (err, r) => {
  parentPort.postMessage(err ? { error: String(err) } : { rps: r['2xx'] / seconds, errors: r.errors + r.non2xx });
});
`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-prof-'));
const database = openDatabase(path.join(dir, 'placard.db'));
await migrate(database.db);
const app = buildApp(newAppDeps({ config: testConfig(dir, { validateResponses: false }), db: database.db, logger: createLogger('silent') }));
const server = await listen(app, '127.0.0.1', 0);
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 200 });
for (const name of which === 'both' ? ['plain', 'buckets'] : [which]) {
  const id = newId();
  await database.db
    .insertInto('screens')
    .values(newScreenRow({ id, name, player_family: 'desktop-linux', player_version: '1.0.0' }, nowIso()))
    .execute();
  const cred = await issueDeviceCredential(database.db, id);
  const run = (secs: number) =>
    new Promise<{ rps: number; errors: number }>((resolve, reject) => {
      const w = new Worker(LOAD, {
        eval: true,
        workerData: { url: `${server.url}/api/v1/player/heartbeat`, cred, buckets: name === 'buckets', seconds: secs, connections },
      });
      w.once('message', (m) => (m.error ? reject(new Error(m.error)) : resolve(m)));
      w.once('error', reject);
    });
  await run(1); // warm-up
  await session.post('Profiler.start');
  const r = await run(seconds);
  const { profile } = await session.post('Profiler.stop');
  const file = path.join(out, `heartbeat-${name}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
  console.log(`${name}: ${r.rps.toFixed(0)} req/s, errors ${r.errors} -> ${file}`);
}
session.disconnect();
await server.close();
await database.close();
rmSync(dir, { recursive: true, force: true });
