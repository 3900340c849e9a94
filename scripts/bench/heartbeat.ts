/**
 * Heartbeat benchmark: heartbeats/s and p50/p99 latency for a body with 120 new noise
 * buckets and for a body without noise data, against bare Koa routes in the same run on
 * loopback: a GET with no body, and a POST that parses the same JSON body with koa-body
 * (as the router does) and answers a small JSON; then the ingest cost per bucket (HTTP
 * and in-process). Ratios are printed against the bare GET and against the bare POST of
 * the same body (what the heartbeat adds beyond HTTP + JSON parsing).
 *   npm run bench:heartbeat [-- --seconds 5 --connections 16]
 *     [--screens 1]  (the heartbeat cases' requests go to this many screens in turn: one screen's
 *                    heartbeats take turns on its row, many screens' run side by side on PostgreSQL)
 *     [--database-url postgres://placard@127.0.0.1:55432/postgres]  (issue 25: a database of the
 *     run's own, created there and dropped after)
 * Each 120-bucket request carries buckets never seen before (real inserts, not
 * idempotent no-ops). Every commit is synchronous=FULL. Compare ratios, not absolutes.
 */
import { newAppDeps } from '../../server/src/platform/app-deps.js';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { buildApp } from '../../server/src/app.js';
import { testConfig } from '../../server/src/config.js';
import { migrate, openDatabase } from '../../server/src/platform/db/database.js';
import { createLogger } from '../../server/src/platform/log.js';
import { listen } from '../../server/src/server.js';
import { issueDeviceCredential } from '../../server/src/modules/screens/device-auth.js';
import { groupCommitStats } from '../../server/src/modules/screens/group-commit.js';
import { type HeartbeatBody, ingestHeartbeat } from '../../server/src/modules/screens/heartbeat.js';
import { playerRoutes } from '../../server/src/modules/screens/player.routes.js';
import { safeParseBody } from '../../server/src/platform/http/router.js';
import { newId, newScreenRow, nowIso } from '../../server/src/modules/screens/screens.repo.js';
import type { Db } from '../../server/src/platform/db/database.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const seconds = arg('seconds', 5);
const connections = arg('connections', 16);
const screenCount = arg('screens', 1);
const databaseUrl = (() => {
  const i = process.argv.indexOf('--database-url');
  return i > 0 ? process.argv[i + 1] : undefined;
})();
/** `--only ingest`: the in-process figures alone (no HTTP cases). */
const ingestOnly = process.argv.includes('--only') && process.argv[process.argv.indexOf('--only') + 1] === 'ingest';

async function makeScreen(db: Db, name: string): Promise<string> {
  const now = nowIso();
  const id = newId();
  await db
    .insertInto('screens')
    .values(newScreenRow({ id, name, player_family: 'desktop-linux', player_version: '1.0.0' }, now))
    .execute();
  return id;
}

const BASE = Math.floor(Date.now() / 10_000) * 10_000 - 400 * 24 * 3600_000;
let batch = 0;
function bucketsBody(): string {
  const b = batch++;
  const buckets = [];
  for (let i = 0; i < 120; i++) {
    buckets.push(
      `{"startedAt":"${new Date(BASE + (b * 120 + i) * 10_000).toISOString()}","averageLevel":41.5,"peakLevel":73.2,"monitoredMs":10000,"warningMs":1200,"loudMs":300,"triggerCount":1}`,
    );
  }
  return `{"playerFamily":"desktop-linux","playerVersion":"1.0.0","currentPlaylistId":"0190f5a2-7b3c-7def-8abc-0123456789ab","noiseMeter":{"status":"normal","currentLevel":40,"pendingHistory":[${buckets.join(',')}]}}`;
}
const PLAIN = JSON.stringify({
  playerFamily: 'desktop-linux',
  playerVersion: '1.0.0',
  currentPlaylistId: '0190f5a2-7b3c-7def-8abc-0123456789ab',
  os: { name: 'Debian', version: '12' },
  resolution: { width: 1920, height: 1080 },
});

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-bench-'));
  const config = testConfig(dir, { validateResponses: false });
  // PostgreSQL: a database of the run's own, dropped at the end.
  const pgName = `placard_hb_${process.pid}`;
  const admin = async (statement: string) => {
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    try {
      await c.query(statement);
    } finally {
      await c.end();
    }
  };
  let target = path.join(dir, 'placard.db');
  if (databaseUrl) {
    await admin(`create database ${pgName}`);
    const u = new URL(databaseUrl);
    u.pathname = `/${pgName}`;
    target = u.toString();
  }
  const database = openDatabase(target);
  await migrate(database.db);
  const logger = createLogger('silent');
  const app = buildApp(
    newAppDeps({
      config,
      db: database.db,
      logger,
    }),
  );
  const placard = await listen(app, '127.0.0.1', 0);
  const screenA = await makeScreen(database.db, 'bench-buckets');
  const screenB = await makeScreen(database.db, 'bench-plain');
  const credsA = [await issueDeviceCredential(database.db, screenA)];
  const credsB = [await issueDeviceCredential(database.db, screenB)];
  for (let i = 1; i < screenCount; i++) {
    credsA.push(await issueDeviceCredential(database.db, await makeScreen(database.db, `bench-buckets-${i}`)));
    credsB.push(await issueDeviceCredential(database.db, await makeScreen(database.db, `bench-plain-${i}`)));
  }
  let turn = 0;
  /** Each request with the next screen's credential (and, with buckets, a body of new buckets). */
  const inTurn = (creds: string[], body: () => string) => [
    {
      setupRequest: (req: Record<string, unknown>) => ({
        ...req,
        body: body(),
        headers: { ...(req.headers as Record<string, string>), authorization: `Bearer ${creds[turn++ % creds.length]}` },
      }),
    },
  ];

  const bare = new Koa();
  // The same JSON parsing as the API router (platform/http/router.ts): strict, 1 MiB.
  const parse = koaBody({ json: true, jsonStrict: true, jsonLimit: config.jsonLimitBytes, multipart: false, urlencoded: false, text: false });
  bare.use(async (ctx, next) => {
    if (ctx.path === '/bare' && ctx.method === 'GET') {
      ctx.body = { data: { status: 'ok' } };
      return;
    }
    if (ctx.path === '/bare-post' && ctx.method === 'POST') {
      await parse(ctx, async () => {});
      const body = ctx.request.body as { noiseMeter?: { pendingHistory?: unknown[] } };
      ctx.body = { data: { ignoredFields: [], noiseHistory: { accepted: body.noiseMeter?.pendingHistory?.length ?? 0 } } };
      return;
    }
    await next();
  });
  const bareServer = await listen(bare, '127.0.0.1', 0);

  const url = `${placard.url}/api/v1/player/heartbeat`;
  const json = { 'content-type': 'application/json' };
  const withBuckets = [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, body: bucketsBody() }) }];
  const cases = [
    { name: 'bare Koa GET /bare', opts: { url: `${bareServer.url}/bare` } },
    { name: 'bare Koa POST, no noise', opts: { url: `${bareServer.url}/bare-post`, method: 'POST' as const, body: PLAIN, headers: json } },
    { name: 'bare Koa POST, 120 buckets', opts: { url: `${bareServer.url}/bare-post`, method: 'POST' as const, headers: json, requests: withBuckets } },
    {
      name: 'heartbeat, no noise',
      bareOf: 'bare Koa POST, no noise',
      opts: { url, method: 'POST' as const, headers: json, requests: inTurn(credsB, () => PLAIN) },
    },
    {
      name: 'heartbeat, 120 buckets',
      bareOf: 'bare Koa POST, 120 buckets',
      opts: { url, method: 'POST' as const, headers: json, requests: inTurn(credsA, bucketsBody) },
    },
  ];
  const results: { name: string; bareOf?: string; rps: number; p50: number; p99: number; errors: number; perCommit?: number; perFsync?: number }[] = [];
  for (const c of ingestOnly ? [] : cases) {
    await autocannon({ ...c.opts, connections, duration: 1 } as autocannon.Options);
    const gc0 = groupCommitStats(database.db);
    const fsyncs0 = database.walSync?.completed ?? 0;
    const r = await autocannon({ ...c.opts, connections, duration: seconds } as autocannon.Options);
    const gc = groupCommitStats(database.db);
    const fsyncs = (database.walSync?.completed ?? 0) - fsyncs0;
    const jobs = gc.jobs - gc0.jobs;
    results.push({
      name: c.name,
      bareOf: c.bareOf,
      rps: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      errors: r.errors + r.non2xx,
      ...(jobs ? { perCommit: jobs / (gc.commits - gc0.commits), ...(fsyncs ? { perFsync: jobs / fsyncs } : {}) } : {}),
    });
  }

  // In-process ingest cost (no HTTP): the same two bodies through ingestHeartbeat.
  const screenRow = await database.db.selectFrom('screens').selectAll().where('id', '=', screenA).executeTakeFirstOrThrow();
  // Bodies made and parsed beforehand; wall time and this process's CPU time per call, in
  // alternating rounds, the median round reported (CPU time moves less on a loaded machine).
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const timed = async (n: number, make: () => string, call: (body: HeartbeatBody) => Promise<unknown> | unknown) => {
    const bodies = Array.from({ length: n }, () => JSON.parse(make()) as HeartbeatBody);
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (const body of bodies) await call(body);
    const cpu = process.cpuUsage(c0);
    return { wallMs: Number(process.hrtime.bigint() - t0) / 1e6 / n, cpuMs: (cpu.user + cpu.system) / 1000 / n };
  };
  const ingest = (body: HeartbeatBody) => ingestHeartbeat({ db: database.db }, screenRow.id, body, '127.0.0.1');
  const heartbeatRoute = playerRoutes.find((r) => r.path === '/api/v1/player/heartbeat')!;
  const validate = (body: HeartbeatBody) => {
    // As the router validates it: the route's pre-check, then the schema (safeParseBody).
    if (!safeParseBody(heartbeatRoute, body).success) throw new Error('the bench body is invalid');
  };
  const rounds: { plain: Awaited<ReturnType<typeof timed>>; buckets: Awaited<ReturnType<typeof timed>>; vPlain: number; vBuckets: number }[] = [];
  for (let r = 0; r < 7; r++) {
    rounds.push({
      plain: await timed(100, () => PLAIN, ingest),
      buckets: await timed(100, bucketsBody, ingest),
      vPlain: (await timed(200, () => PLAIN, validate)).cpuMs,
      vBuckets: (await timed(200, bucketsBody, validate)).cpuMs,
    });
  }
  const msPlain = median(rounds.map((r) => r.plain.wallMs));
  const msBuckets = median(rounds.map((r) => r.buckets.wallMs));
  const cpuPlain = median(rounds.map((r) => r.plain.cpuMs));
  const cpuBuckets = median(rounds.map((r) => r.buckets.cpuMs));
  const cpuPerBucketUs = median(rounds.map((r) => ((r.buckets.cpuMs - r.plain.cpuMs) * 1000) / 120));
  const validatePerBucketUs = median(rounds.map((r) => ((r.vBuckets - r.vPlain) * 1000) / 120));
  const stored = await database.db
    .selectFrom('noise_buckets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();

  await placard.close();
  await bareServer.close();
  await database.close();
  if (databaseUrl) await admin(`drop database if exists ${pgName} with (force)`);
  rmSync(dir, { recursive: true, force: true });

  const byName = new Map(results.map((r) => [r.name, r]));
  console.log(
    `Heartbeat ingest on ${database.kind === 'postgres' ? 'PostgreSQL (synchronous_commit on)' : 'SQLite (synchronous=FULL)'}, ${screenCount} screen(s), ${connections} connections, ${seconds}s per case, node ${process.version}, ${os.cpus().length} cpus, load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  const base = results[0];
  if (base) {
    console.log(
      `${'case'.padEnd(28)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'errors'.padStart(7)} ${'vs bare GET'.padStart(12)} ${'vs bare POST'.padStart(13)} ${'per commit'.padStart(11)} ${'per fsync'.padStart(10)}`,
    );
    for (const r of results) {
      const post = r.bareOf ? byName.get(r.bareOf) : undefined;
      console.log(
        `${r.name.padEnd(28)} ${r.rps.toFixed(0).padStart(9)} ${r.p50.toFixed(1).padStart(7)} ${r.p99.toFixed(1).padStart(7)} ${String(r.errors).padStart(7)} ${(r.rps / base.rps).toFixed(3).padStart(12)} ${(post ? (r.rps / post.rps).toFixed(3) : '-').padStart(13)} ${(r.perCommit?.toFixed(1) ?? '-').padStart(11)} ${(r.perFsync?.toFixed(1) ?? '-').padStart(10)}`,
      );
    }
    const plain = byName.get('heartbeat, no noise')!;
    const full = byName.get('heartbeat, 120 buckets')!;
    console.log(`ingest cost per bucket over HTTP (server time, from throughput): ${(((1 / full.rps - 1 / plain.rps) * 1e6) / 120).toFixed(1)} µs`);
  }
  console.log(`buckets stored: ${stored.n}`);
  console.log(
    `in-process ingestHeartbeat (median of 7 rounds): ${msPlain.toFixed(3)} ms without noise, ${msBuckets.toFixed(3)} ms with 120 buckets -> ${(((msBuckets - msPlain) * 1000) / 120).toFixed(1)} µs per bucket`,
  );
  console.log(
    `  CPU time: ${cpuPlain.toFixed(3)} ms without noise, ${cpuBuckets.toFixed(3)} ms with 120 buckets -> ${cpuPerBucketUs.toFixed(1)} µs per bucket; validation (the route's pre-check, else HeartbeatBody) ${validatePerBucketUs.toFixed(1)} µs per bucket`,
  );
  if (results.some((r) => r.errors > 0)) process.exitCode = 1;
}

void main();
