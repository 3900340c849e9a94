/**
 * Manifest benchmark: a screen with 50 schedules and 500 playlist items (50 playlists of
 * 10 ready image assets), served as
 *   - cached: the built manifest of this hour and revision (200 with the full body),
 *   - 304: If-None-Match with the current ETag,
 *   - uncached: the cache is emptied before every request (a full build: timeline,
 *     flattening, variants, dependency record), one connection,
 * against a bare Koa route in the same run. Prints req/s, latencies and ratios, and the
 * process CPU time (server and autocannon) per request with its ratio to the bare row.
 *   npm run bench:manifest [-- --seconds 5 --connections 16 --builds 100 --group 200 --cpu-prof-dir DIR --only TEXT]
 * `--only 304` runs just the HTTP cases whose name has that text, with the bare row each is compared with.
 * Before the HTTP cases it times `--builds` manifest builds in-process (currentManifest with
 * the cache emptied: no HTTP, no device authentication), then a change reaching `--group`
 * screens of one group the same 50 schedules also target (every screen asks for its manifest
 * once after the change: one build per shared context, docs/performance.md "Manifest per
 * shared context") and what gzipping one manifest costs (done per screen). With --cpu-prof-dir, each phase is
 * profiled on its own (node:inspector) into DIR/<phase>.cpuprofile (the HTTP cases include
 * autocannon, in node_modules/autocannon); sum one with
 *   npx tsx scripts/bench/fleet/profile-top.ts DIR/build.cpuprofile --top 40
 * Figures depend on the machine and its load: compare the ratios, not the absolute numbers.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import autocannon from 'autocannon';
import Koa from 'koa';
import { v7 as uuidv7 } from 'uuid';
import { buildApp } from '../../server/src/app.js';
import { type AppDeps, newAppDeps } from '../../server/src/platform/app-deps.js';
import { testConfig } from '../../server/src/config.js';
import { contentChanged } from '../../server/src/modules/content/changes.js';
import { currentManifest } from '../../server/src/modules/content/manifest.js';
import { manifestCache } from '../../server/src/modules/content/manifest.cache.js';
import { forgetAllParts } from '../../server/src/modules/content/playlist-parts.js';
import { screenContext } from '../../server/src/modules/content/screen-context.js';
import { newScreenRow } from '../../server/src/modules/screens/screens.repo.js';
import { migrate, openDatabase } from '../../server/src/platform/db/database.js';
import { createLogger } from '../../server/src/platform/log.js';
import { listen } from '../../server/src/server.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const seconds = arg('seconds', 5);
const connections = arg('connections', 16);
const builds = arg('builds', 100);
const groupSize = arg('group', 200);
const only = (() => {
  const i = process.argv.indexOf('--only');
  return i > 0 ? process.argv[i + 1]! : null;
})();
const profDir = (() => {
  const i = process.argv.indexOf('--cpu-prof-dir');
  return i > 0 ? process.argv[i + 1]! : null;
})();

/** Runs `fn` under the V8 profiler when --cpu-prof-dir is given, writing DIR/<name>.cpuprofile. */
async function profiled<T>(name: string, fn: () => Promise<T>): Promise<T> {
  if (!profDir) return fn();
  mkdirSync(profDir, { recursive: true });
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(path.join(profDir, `${name.replace(/[^a-z0-9]+/gi, '-').replace(/-$/, '')}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

async function json(base: string, p: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  const res = await fetch(base + p, {
    method: init.method ?? 'GET',
    headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${init.method ?? 'GET'} ${p}: ${res.status} ${text}`);
  return { res, body: text ? JSON.parse(text) : null };
}

async function seed(deps: AppDeps, base: string) {
  const setup = await json(base, '/api/v1/auth/setup', {
    method: 'POST',
    body: { email: 'bench@example.test', password: 'correct horse battery staple', displayName: 'Bench' },
  });
  const cookie = setup.res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const admin = { cookie, 'x-csrf-token': setup.body.data.csrfToken as string };

  // 500 ready image assets with one player variant each (rows only: the manifest reads no files).
  const now = new Date().toISOString();
  const assetIds: string[] = [];
  for (let i = 0; i < 500; i++) {
    const sha = createHash('sha256').update(randomBytes(16)).digest('hex');
    const vsha = createHash('sha256').update(randomBytes(16)).digest('hex');
    const id = uuidv7();
    assetIds.push(id);
    await deps.db
      .insertInto('media_files')
      .values([
        { sha256: sha, size_bytes: 200_000, content_type: 'image/png', created_at: now },
        { sha256: vsha, size_bytes: 150_000, content_type: 'image/webp', created_at: now },
      ])
      .execute();
    await deps.db
      .insertInto('assets')
      .values({
        id,
        kind: 'image',
        state: 'ready',
        state_before_archive: null,
        name: `image ${i}`,
        sha256: sha,
        size_bytes: 200_000,
        content_type: 'image/png',
        original_filename: `i${i}.png`,
        width: 1920,
        height: 1080,
        duration_ms: null,
        page_count: null,
        folder_id: null,
        failure_reason: null,
        progress: null,
        metadata: '{}',
        website: null,
        created_by: null,
        created_at: now,
        updated_at: now,
        archived_at: null,
      } as never)
      .execute();
    await deps.db
      .insertInto('asset_variants')
      .values({
        id: uuidv7(),
        asset_id: id,
        purpose: 'player',
        content_type: 'image/webp',
        width: 1920,
        height: 1080,
        page: null,
        size_bytes: 150_000,
        sha256: vsha,
        created_at: now,
      } as never)
      .execute();
  }

  // The screen, through the real pairing protocol.
  const session = await json(base, '/api/v1/player/pairing-sessions', { method: 'POST', body: { playerFamily: 'desktop-linux', deviceName: 'bench' } });
  const { id, code, pollSecret } = session.body.data;
  await json(base, '/api/v1/screens/pairing/resolve', { method: 'POST', headers: admin, body: { code } });
  await json(base, `/api/v1/screens/pairing/${id}/approve`, { method: 'POST', headers: admin, body: { name: 'Bench screen' } });
  const polled = await json(base, `/api/v1/player/pairing-sessions/${id}`, { headers: { 'x-pairing-secret': pollSecret } });
  const enrolled = await json(base, '/api/v1/player/enroll', { method: 'POST', body: { enrollmentToken: polled.body.data.enrollmentToken } });
  const { screenId, credential } = enrolled.body.data;
  // A heartbeat as the web player sends it, so the screen's row holds a status document like a
  // running player's (every device request authenticates against that row).
  await json(base, '/api/v1/player/heartbeat', {
    method: 'POST',
    headers: { authorization: `Bearer ${credential}` },
    body: {
      playerVersion: '1.4.2',
      playerFamily: 'desktop-linux',
      currentPlaylistId: uuidv7(),
      currentItemId: uuidv7(),
      currentAssetId: uuidv7(),
      currentScheduleId: uuidv7(),
      manifestRevision: 0,
      display: { width: 1920, height: 1080 },
      cache: { items: 500, bytes: 75_000_000, missing: 0, failed: 0 },
      storage: { freeBytes: 12_345_678_901, totalBytes: 64_000_000_000 },
      socketConnected: true,
      playerStartedAt: new Date().toISOString(),
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
    },
  });

  // 50 playlists of 10 items, 50 daily schedules: each starts 28.8 minutes after the one
  // before, runs 1-4 hours and outranks the earlier ones (priority p), so every schedule
  // wins a stretch of each day and all 500 items are in the manifest (checked below).
  // A third of the items are day-parted (08:00-20:00): in the manifest with their windows.
  const start = new Date();
  start.setUTCMinutes(0, 0, 0);
  const slot = 86_400_000 / 50;
  // `--group` screens in one group the same schedules target (rows only: they never connect).
  const groupId = uuidv7();
  const members: string[] = [];
  await deps.db
    .insertInto('screen_groups')
    .values({ id: groupId, name: 'Shared', description: null, policy: null, span: null, created_at: now, updated_at: now })
    .execute();
  for (let i = 0; i < groupSize; i++) {
    const id = uuidv7();
    members.push(id);
    await deps.db
      .insertInto('screens')
      .values(newScreenRow({ id, name: `Member ${i}` }, now))
      .execute();
    await deps.db.insertInto('screen_group_members').values({ group_id: groupId, screen_id: id, added_at: now }).execute();
  }
  for (let p = 0; p < 50; p++) {
    const items = assetIds.slice(p * 10, p * 10 + 10).map((assetId, k) => ({
      assetId,
      durationMs: 5000 + k * 100,
      ...(k % 3 === 0 ? { dayparts: [{ days: [1, 2, 3, 4, 5, 6, 7], from: '08:00', to: '20:00' }] } : {}),
    }));
    const playlist = await json(base, '/api/v1/playlists', { method: 'POST', headers: admin, body: { name: `Playlist ${p}`, items } });
    const s = new Date(start.getTime() + p * slot);
    await json(base, '/api/v1/schedules', {
      method: 'POST',
      headers: admin,
      body: {
        name: `Schedule ${p}`,
        content: { playlistId: playlist.body.data.id },
        targets: { screenIds: [screenId], groupIds: [groupId] },
        startsAt: s.toISOString(),
        endsAt: new Date(s.getTime() + (1 + (p % 4)) * 3600_000).toISOString(),
        rrule: 'FREQ=DAILY',
        priority: p,
        timeZone: 'Europe/London',
      },
    });
  }
  return { device: { authorization: `Bearer ${credential}` }, members };
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-bench-'));
  const config = testConfig(dir, { validateResponses: false });
  const database = openDatabase(path.join(dir, 'placard.db'));
  await migrate(database.db);
  const logger = createLogger('silent');
  const deps = newAppDeps({
    config,
    db: database.db,
    logger,
  });
  const placard = await listen(buildApp(deps), '127.0.0.1', 0);
  // The bare routes: a small JSON body, and the manifest's own bytes (set once it is built).
  let sameBytes = Buffer.alloc(0);
  const bare = new Koa();
  bare.use(async (ctx) => {
    if (ctx.path === '/bare') ctx.body = { data: { status: 'ok' } };
    else if (ctx.path === '/same-bytes') {
      ctx.type = 'application/json';
      ctx.body = sameBytes;
    }
  });
  const bareServer = await listen(bare, '127.0.0.1', 0);

  const { device, members } = await seed(deps, placard.url);
  const first = await fetch(`${placard.url}/api/v1/player/manifest`, { headers: device });
  const body = await first.text();
  const etag = first.headers.get('etag')!;
  const manifest = JSON.parse(body).data;
  sameBytes = Buffer.from(body);
  const items = manifest.timeline.reduce((n: number, s: { playlist?: { items: unknown[] } }) => n + (s.playlist?.items.length ?? 0), 0);
  const distinct = new Set(manifest.timeline.flatMap((s: { playlist?: { items: { id: string }[] } }) => (s.playlist?.items ?? []).map((i) => i.id)));
  const playlists = new Set(manifest.timeline.flatMap((s: { playlist?: { id: string } }) => (s.playlist ? [s.playlist.id] : [])));
  console.log(
    `manifest: ${manifest.timeline.length} segments, ${playlists.size} playlists, ${distinct.size} distinct items (${items} in segments), ${manifest.media.length} media, ${manifest.warnings.length} warnings, ${(body.length / 1024).toFixed(0)} KiB`,
  );
  if (distinct.size !== 500 || manifest.media.length !== 500) {
    console.error(`expected all 500 items and 500 media in the manifest; got ${distinct.size} items, ${manifest.media.length} media`);
    process.exit(1);
  }

  // In-process builds: what a request without a cached manifest costs past authentication.
  const screenId = manifest.screenId as string;
  // `cold`: the playlist parts kept between builds are dropped too (docs/performance.md
  // "Manifest parts kept between builds"); else a build re-uses them, as after a change they did not touch.
  const timeBuilds = async (cold = false) => {
    const times: number[] = [];
    for (let i = 0; i < builds; i++) {
      manifestCache(deps).clear();
      if (cold) forgetAllParts(deps.db);
      const t = performance.now();
      const screen = await screenContext(deps.db, screenId);
      await currentManifest(deps, screen!);
      times.push(performance.now() - t);
    }
    return times.sort((a, b) => a - b);
  };
  const summary = (times: number[]) => {
    const pct = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1);
    return `mean ${(times.reduce((a, b) => a + b, 0) / times.length).toFixed(1)} ms, p50 ${pct(0.5)} ms, p90 ${pct(0.9)} ms`;
  };
  await timeBuilds(true);
  const coldTimes = await profiled('cold-build', () => timeBuilds(true));
  await timeBuilds();
  const buildTimes = await profiled('build', () => timeBuilds());
  const buildLine = `in-process build (screenContext + currentManifest, cache emptied, parts kept), ${builds} builds: ${summary(buildTimes)}\nin-process cold build (the same, parts dropped too), ${builds} builds: ${summary(coldTimes)}`;
  console.log(buildLine);
  manifestCache(deps).clear();
  // In-process lookups: what a 304 (or a cached 200, or a media download's guard) costs past authentication.
  await currentManifest(deps, (await screenContext(deps.db, screenId))!);
  const timeLookups = async () => {
    const t = performance.now();
    for (let i = 0; i < 20 * builds; i++) await currentManifest(deps, (await screenContext(deps.db, screenId))!);
    return (performance.now() - t) / (20 * builds);
  };
  await timeLookups();
  const lookupMs = await profiled('lookup', timeLookups);
  const lookupLine = `in-process cached lookup (screenContext + currentManifest, cache hit), ${20 * builds} lookups: mean ${(lookupMs * 1000).toFixed(0)} µs`;
  console.log(lookupLine);

  // A change reaching every screen of the group: each asks for its manifest once (in turn).
  const timeGroup = async () => {
    await contentChanged(deps, []);
    manifestCache(deps).clear();
    const t = performance.now();
    for (const id of members) await currentManifest(deps, (await screenContext(deps.db, id))!);
    return performance.now() - t;
  };
  await timeGroup();
  const groupTimes: number[] = [];
  for (let i = 0; i < 3; i++) groupTimes.push(await profiled(`group-${i}`, timeGroup));
  const groupMs = Math.min(...groupTimes);
  const one = manifestCache(deps).get(members[0]!)!;
  const gz = performance.now();
  for (let i = 0; i < 20; i++) gzipSync(one.bytes);
  const gzipMs = (performance.now() - gz) / 20;
  const groupLine = `a change reaching ${members.length} screens of one group (each asks once, in turn): best of 3 ${groupMs.toFixed(0)} ms, ${((groupMs * 1000) / members.length).toFixed(0)} µs a screen (runs: ${groupTimes.map((x) => x.toFixed(0)).join(', ')} ms); gzip of one member's ${(one.bytes.length / 1024).toFixed(0)} KiB manifest: ${gzipMs.toFixed(1)} ms`;
  console.log(groupLine);

  const url = `${placard.url}/api/v1/player/manifest`;
  const allCases = [
    { name: 'bare Koa GET /bare', url: `${bareServer.url}/bare`, connections },
    { name: 'bare Koa, same bytes', url: `${bareServer.url}/same-bytes`, connections },
    { name: 'manifest cached (200)', url, headers: device, connections, base: 1 },
    { name: 'manifest cached, gzip', url, headers: { ...device, 'accept-encoding': 'gzip' }, connections },
    { name: 'manifest 304', url, headers: { ...device, 'if-none-match': etag }, connections },
    { name: 'bare Koa, 1 connection', url: `${bareServer.url}/bare`, connections: 1 },
    {
      name: 'manifest uncached, 1 conn',
      url,
      headers: device,
      connections: 1,
      setupClient: (client: autocannon.Client) => void client.on('response', () => manifestCache(deps).clear()),
    },
    {
      // What a player's first fetch after a change costs: the build and its gzip.
      name: 'uncached, gzip, 1 conn',
      url,
      headers: { ...device, 'accept-encoding': 'gzip' },
      connections: 1,
      setupClient: (client: autocannon.Client) => void client.on('response', () => manifestCache(deps).clear()),
    },
  ];
  // Each case is compared with the bare row named by its `base` (an index into allCases).
  const baseOf = (c: (typeof allCases)[number]) => allCases[(c as { base?: number }).base ?? (c.connections === 1 ? 5 : 0)]!;
  const cases = only ? allCases.filter((c) => allCases.some((x) => x.name.includes(only) && (x === c || baseOf(x) === c))) : allCases;
  const results: { name: string; rps: number; cpuUs: number; p50: number; p99: number; loopP99: number; loopMax: number; errors: number; base: string }[] = [];
  for (const c of cases) {
    const { setupClient, base: _base, ...opts } = c as typeof c & { setupClient?: (client: autocannon.Client) => void; base?: number };
    await autocannon({ ...opts, duration: 1, ...(setupClient ? { setupClient } : {}) });
    if (setupClient) manifestCache(deps).clear();
    // The event loop's delay (server and load generator share it): how long something held it.
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    // CPU time of the process (server and load generator) per request: less moved by other load on the box than req/s.
    const cpu = process.cpuUsage();
    const r = await profiled(c.name, () => autocannon({ ...opts, duration: seconds, ...(setupClient ? { setupClient } : {}) }));
    const used = process.cpuUsage(cpu);
    loop.disable();
    const expected304 = c.name.includes('304');
    const bad = expected304 ? r.non2xx - (r['3xx'] ?? 0) : r.non2xx;
    results.push({
      name: c.name,
      rps: r.requests.average,
      cpuUs: (used.user + used.system) / Math.max(1, r.requests.total),
      p50: r.latency.p50,
      p99: r.latency.p99,
      loopP99: loop.percentile(99) / 1e6,
      loopMax: loop.max / 1e6,
      errors: r.errors + Math.max(0, bad),
      base: baseOf(c).name,
    });
  }
  await placard.close();
  await bareServer.close();
  await deps.periodic.stop();
  await database.close();
  rmSync(dir, { recursive: true, force: true });

  console.log(
    `Manifest, 50 schedules / 500 items, ${seconds}s per case, node ${process.version}, ${os.cpus().length} cpus, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(buildLine);
  console.log(lookupLine);
  console.log(groupLine);
  console.log(
    `${'case'.padEnd(28)} ${'conns'.padStart(5)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'errors'.padStart(7)} ${'loop p99/max ms'.padStart(15)} ${'rps vs bare'.padStart(12)} ${'CPU µs/req'.padStart(10)} ${'bare CPU/CPU'.padStart(12)}  (bare: the row named in brackets)`,
  );
  for (const [i, r] of results.entries()) {
    const base = results.find((x) => x.name === r.base)!;
    console.log(
      `${r.name.padEnd(28)} ${String(cases[i]!.connections).padStart(5)} ${r.rps.toFixed(0).padStart(9)} ${r.p50.toFixed(1).padStart(7)} ${r.p99.toFixed(1).padStart(7)} ${String(r.errors).padStart(7)} ${`${r.loopP99.toFixed(1)}/${r.loopMax.toFixed(1)}`.padStart(15)} ${(r.rps / base.rps).toFixed(3).padStart(12)} ${r.cpuUs.toFixed(1).padStart(10)} ${(base.cpuUs / r.cpuUs).toFixed(3).padStart(12)}  (${base.name})`,
    );
  }
  if (results.some((r) => r.errors > 0)) process.exitCode = 1;
}

void main();
