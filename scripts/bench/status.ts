/**
 * Status sections and retention on a big database: fills a fresh database with
 *   --assets (100 000) assets with 3 variants each, --jobs (300 000) jobs, --screens (2 000)
 *   screens, --buckets (2 000 000) noise buckets, --history (1 000 000) history rows,
 * then times each status contributor (media, jobs, fleet: the target is well under the 3 s
 * limit of GET /system/status) and each retention step (about a tenth to a half of the rows
 * are past retention), with the longest event-loop block of each (deletes run in batches).
 *   npm run bench:status [-- --assets 100000 --buckets 2000000]
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { v7 as uuidv7 } from 'uuid';
import { mediaStatus } from '../../server/src/modules/media/system.hooks.js';
import { fleetStatus, pruneHistory, pruneNoise, pruneScreenshots } from '../../server/src/modules/screens/screens.module.js';
import { migrate, openDatabase } from '../../server/src/platform/db/database.js';
import { JobQueue, queueStatus } from '../../server/src/platform/jobs/queue.js';
import { createLogger } from '../../server/src/platform/log.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const N = {
  assets: arg('assets', 100_000),
  jobs: arg('jobs', 300_000),
  screens: arg('screens', 2_000),
  buckets: arg('buckets', 2_000_000),
  history: arg('history', 1_000_000),
};
const DAY = 24 * 3600_000;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-bench-status-'));
const database = openDatabase(path.join(dir, 'placard.db'));
try {
  await migrate(database.db);
  const raw = database.sqlite;
  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  const fillStarted = Date.now();
  raw.transaction(() => {
    const kinds = ['image', 'video', 'audio', 'pdf'];
    const states = ['ready', 'ready', 'ready', 'failed', 'archived'];
    const file = raw.prepare('insert into media_files (sha256, size_bytes, content_type, created_at) values (?, ?, ?, ?)');
    const asset = raw.prepare(
      `insert into assets (id, kind, state, state_before_archive, name, sha256, size_bytes, content_type, original_filename, width, height, duration_ms, page_count,
        folder_id, failure_reason, progress, metadata, website, created_by, created_at, updated_at, archived_at)
       values (?, ?, ?, ?, ?, ?, ?, 'image/png', null, 100, 100, null, null, null, null, null, '{}', null, null, ?, ?, null)`,
    );
    const variant = raw.prepare(
      "insert into asset_variants (id, asset_id, purpose, content_type, width, height, page, size_bytes, sha256, created_at) values (?, ?, ?, 'image/webp', 400, 300, null, ?, ?, ?)",
    );
    for (let i = 0; i < N.assets; i++) {
      const id = uuidv7();
      const original = sha(`o${i}`);
      const state = states[i % states.length]!;
      file.run(original, 1_000_000 + i, 'image/png', iso(now));
      asset.run(id, kinds[i % kinds.length], state, state === 'archived' ? 'ready' : null, `asset ${i}`, original, 1_000_000 + i, iso(now), iso(now));
      for (const purpose of ['thumbnail', 'poster', 'player']) {
        const s = sha(`${purpose}${i}`);
        file.run(s, 20_000, 'image/webp', iso(now));
        variant.run(uuidv7(), id, purpose, 20_000, s, iso(now));
      }
    }
    const job = raw.prepare(
      'insert into jobs (id, kind, payload, state, attempts, max_attempts, run_after, progress, last_error, locked_at, created_at, updated_at) values (?, ?, ?, ?, ?, 3, ?, null, ?, null, ?, ?)',
    );
    for (let i = 0; i < N.jobs; i++) {
      const r = JobQueue.row('media.process', { assetId: uuidv7() });
      const state = i % 100 === 0 ? 'queued' : i % 37 === 0 ? 'failed' : 'done';
      const at = iso(now - (i % 60) * DAY);
      job.run(r.id, r.kind, r.payload, state, state === 'queued' ? 0 : 1, at, state === 'failed' ? 'boom' : null, at, at);
    }
    const screen = raw.prepare(
      `insert into screens (id, name, location_id, notes, orientation, tags, disabled_at, revoked_at, player_family, player_architecture, player_version, last_heartbeat_at,
        last_liveness_at, last_seen_at, last_seen_ms, last_status, last_address, known_status, expected_interval_sec, manifest_revision, policy, power_assist,
        power_assist_state, created_at, updated_at)
       values (?, ?, null, null, 'landscape', '[]', ?, null, 'desktop-linux', null, '1.0.0', null, null, null, ?, null, null, 'online', 30, 1, null, null, null, ?, ?)`,
    );
    const screenIds: string[] = [];
    for (let i = 0; i < N.screens; i++) {
      const id = uuidv7();
      screenIds.push(id);
      screen.run(id, `screen ${i}`, i % 50 === 0 ? iso(now) : null, i % 10 === 0 ? null : now - (i % 3) * 3600_000, iso(now), iso(now));
    }
    const bucket = raw.prepare(
      'insert into noise_buckets (screen_num, started_ms, average_level, peak_level, monitored_ms, warning_ms, loud_ms, trigger_count, received_ms) values (?, ?, 40, 60, 10000, 0, 0, 0, ?)',
    );
    const numOf = raw.prepare('select num from screens where id = ?').pluck();
    const nums = screenIds.map((id) => numOf.get(id) as number);
    for (let i = 0; i < N.buckets; i++) {
      const ms = now - Math.floor((i / N.buckets) * 100 * DAY);
      bucket.run(nums[i % nums.length], ms - (i % 1000), ms);
    }
    const hist = raw.prepare("insert into screen_history (id, screen_id, at, at_ms, kind, detail) values (?, ?, ?, ?, ?, '{}')");
    for (let i = 0; i < N.history; i++) {
      const ms = now - Math.floor((i / N.history) * 33 * DAY);
      hist.run(uuidv7(), screenIds[i % screenIds.length], iso(ms), ms, i % 20 === 0 ? 'status' : 'heartbeat');
    }
  })();
  raw.pragma('optimize');
  console.log(`filled in ${((Date.now() - fillStarted) / 1000).toFixed(1)} s:`, N);

  // The longest the event loop was blocked during each step (requests wait that long).
  const time = async (label: string, fn: () => Promise<unknown>) => {
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    const started = process.hrtime.bigint();
    const out = await fn();
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    loop.disable();
    const blocked = loop.max / 1e6;
    console.log(
      `${label.padEnd(28)} ${ms.toFixed(1).padStart(8)} ms  (event loop blocked at most ${blocked.toFixed(0)} ms)  ${JSON.stringify(out).slice(0, 120)}`,
    );
  };
  const db = database.db;
  await time('status media', () => mediaStatus(db));
  await time('status jobs', () => queueStatus(db));
  await time('status fleet', () => fleetStatus(db));
  await time('prune history (30 d)', () => pruneHistory(db, now, { heartbeatDays: 30 }));
  await time('prune noise (90 d)', () => pruneNoise(db, now, 90));
  await time('prune screenshots (14 d)', () => pruneScreenshots(db, dir, now, 14));
  const queue = new JobQueue(db, createLogger('silent'), { concurrency: 1 });
  await time('prune jobs (30 d)', () => queue.prune(30 * DAY));
} finally {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
}
