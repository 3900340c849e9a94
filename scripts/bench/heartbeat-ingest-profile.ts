/**
 * Profiles ingestHeartbeat alone (no HTTP, no validation) with 120 new buckets a call:
 * the inspector's profiler runs around the calls only. Writes DIR/ingest.cpuprofile.
 *   npx tsx scripts/bench/heartbeat-ingest-profile.ts [--calls 2000 --out /tmp]
 * Then: npx tsx scripts/bench/fleet/profile-top.ts DIR/ingest.cpuprofile --top 40
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { type HeartbeatBody, ingestHeartbeat } from '../../server/src/modules/screens/heartbeat.js';
import { newId, newScreenRow, nowIso } from '../../server/src/modules/screens/screens.repo.js';
import { migrate, openDatabase } from '../../server/src/platform/db/database.js';

const option = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const calls = Number(option('calls', '2000'));
const out = option('out', '/tmp');
const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-prof-'));
const database = openDatabase(path.join(dir, 'placard.db'));
await migrate(database.db);
const id = newId();
await database.db
  .insertInto('screens')
  .values(newScreenRow({ id, name: 'bench', player_family: 'desktop-linux', player_version: '1.0.0' }, nowIso()))
  .execute();
const screen = await database.db.selectFrom('screens').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const BASE = Math.floor(Date.now() / 10_000) * 10_000 - 400 * 24 * 3600_000;
const body = (b: number): HeartbeatBody =>
  ({
    playerFamily: 'desktop-linux',
    playerVersion: '1.0.0',
    noiseMeter: {
      status: 'normal',
      currentLevel: 40,
      pendingHistory: Array.from({ length: 120 }, (_, i) => ({
        startedAt: new Date(BASE + (b * 120 + i) * 10_000).toISOString(),
        averageLevel: 41.5,
        peakLevel: 73.2,
        monitoredMs: 10_000,
        warningMs: 1200,
        loudMs: 300,
        triggerCount: 1,
      })),
    },
  }) as HeartbeatBody;
const bodies = Array.from({ length: calls + 200 }, (_, b) => body(b));
for (let b = 0; b < 200; b++) await ingestHeartbeat({ db: database.db }, screen.id, bodies[b]!, '127.0.0.1'); // warm-up
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
await session.post('Profiler.start');
const c0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
// Eight at a time, as concurrent heartbeats share a group commit.
for (let b = 200; b < calls + 200; b += 8)
  await Promise.all(bodies.slice(b, b + 8).map((x) => ingestHeartbeat({ db: database.db }, screen.id, x, '127.0.0.1')));
const wall = Number(process.hrtime.bigint() - t0) / 1e6;
const cpu = process.cpuUsage(c0);
const { profile } = await session.post('Profiler.stop');
session.disconnect();
writeFileSync(path.join(out, 'ingest.cpuprofile'), JSON.stringify(profile));
console.log(
  `${calls} calls: ${(wall / calls).toFixed(3)} ms wall, ${((cpu.user + cpu.system) / 1000 / calls).toFixed(3)} ms CPU a call -> ${path.join(out, 'ingest.cpuprofile')}`,
);
await database.close();
rmSync(dir, { recursive: true, force: true });
