/**
 * HTTP overhead benchmark: requests/s and p50/p99 latency of /healthz and of a validated
 * JSON route (zod body + response check off, as in production) against bare Koa routes
 * (a GET, and a POST that parses the same JSON body with koa-body), all in the same run on
 * loopback, printed as a table with ratios to the matching bare route (GET for /healthz,
 * POST for the validated route). `cpu µs` is this process's CPU time per request (server and
 * load generator together, as req/s is); its ratio (bare's over the case's) approximates the
 * req/s ratio of an idle machine (the process is bound by its one thread), and moves far
 * less than req/s on a loaded one.
 *   npm run bench [-- --seconds 5 --connections 32 --cpu-prof-dir DIR]
 * --cpu-prof-dir writes one V8 CPU profile per case (the measured run only, through the
 * inspector; the load generator runs in this process too, so it is in the profile):
 * npx tsx scripts/bench/fleet/profile-top.ts DIR/<case>.cpuprofile sums one.
 * Figures depend on the machine and its load: compare the ratios, not the absolute numbers.
 */
import { newAppDeps } from '../../server/src/platform/app-deps.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { z } from 'zod';
import { buildApp } from '../../server/src/app.js';
import { testConfig } from '../../server/src/config.js';
import { migrate, openDatabase } from '../../server/src/platform/db/database.js';
import { defineRoute, ok } from '../../server/src/platform/http/route.js';
import { createLogger } from '../../server/src/platform/log.js';
import { listen } from '../../server/src/server.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const seconds = arg('seconds', 5);
const connections = arg('connections', 32);
const profIndex = process.argv.indexOf('--cpu-prof-dir');
const profDir = profIndex > 0 ? process.argv[profIndex + 1] : undefined;

const Echo = z.object({ name: z.string().min(1).max(100), tags: z.array(z.string().max(40)).max(20), count: z.number().int().min(0) });
const echo = defineRoute({
  method: 'POST',
  path: '/api/v1/bench/echo',
  auth: 'public',
  tags: ['Bench'],
  summary: 'validated JSON echo',
  body: Echo,
  responses: { 200: { description: 'echo', data: Echo } },
  handler: (_ctx, { body }) => ok(body),
});
const payload = JSON.stringify({ name: 'lobby screen', tags: ['a', 'b', 'c'], count: 3 });

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-bench-'));
  const config = testConfig(dir, { validateResponses: false });
  const database = openDatabase(path.join(dir, 'placard.db'));
  await migrate(database.db);
  const logger = createLogger('silent');
  const app = buildApp(
    newAppDeps({
      config,
      db: database.db,
      logger,
      extraRoutes: [echo],
    }),
  );
  const placard = await listen(app, '127.0.0.1', 0);

  const bare = new Koa();
  bare.use(koaBody({ jsonLimit: '1mb' }));
  bare.use(async (ctx) => {
    if (ctx.path === '/bare') ctx.body = { data: { status: 'ok' } };
    else if (ctx.path === '/bare-echo' && ctx.method === 'POST') ctx.body = { data: ctx.request.body };
  });
  const bareServer = await listen(bare, '127.0.0.1', 0);

  const json = { method: 'POST' as const, body: payload, headers: { 'content-type': 'application/json' } };
  const cases = [
    { name: 'bare Koa GET', url: `${bareServer.url}/bare`, baseline: 0 },
    { name: 'bare Koa POST JSON', url: `${bareServer.url}/bare-echo`, ...json, baseline: 1 },
    { name: 'GET /healthz', url: `${placard.url}/healthz`, baseline: 0 },
    { name: 'POST validated JSON', url: `${placard.url}/api/v1/bench/echo`, ...json, baseline: 1 },
  ];
  const results: { name: string; rps: number; p50: number; p99: number; errors: number; cpuUs: number }[] = [];
  for (const { baseline: _, ...c } of cases) {
    // A short warm-up, then the measured run.
    await autocannon({ ...c, connections, duration: 1 });
    const inspector = profDir ? new Session() : null;
    if (inspector) {
      inspector.connect();
      await inspector.post('Profiler.enable');
      await inspector.post('Profiler.start');
    }
    const cpu = process.cpuUsage();
    const r = await autocannon({ ...c, connections, duration: seconds });
    const used = process.cpuUsage(cpu);
    if (inspector && profDir) {
      const { profile } = await inspector.post('Profiler.stop');
      mkdirSync(profDir, { recursive: true });
      writeFileSync(path.join(profDir, `${c.name.replace(/[^A-Za-z0-9]+/g, '-')}.cpuprofile`), JSON.stringify(profile));
      inspector.disconnect();
    }
    // CPU time of this process (server and load generator, user and system) per request:
    // on a loaded machine it moves far less than req/s, which also counts time not scheduled.
    const cpuUs = (used.user + used.system) / Math.max(1, r.requests.total);
    results.push({ name: c.name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx, cpuUs });
  }
  await placard.close();
  await bareServer.close();
  await database.close();
  rmSync(dir, { recursive: true, force: true });

  console.log(
    `HTTP overhead, ${connections} connections, ${seconds}s per case, node ${process.version}, ${os.cpus().length} cpus, load ${os.loadavg()[0]!.toFixed(1)}`,
  );
  console.log(
    `${'case'.padEnd(22)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'errors'.padStart(6)} ${'cpu µs'.padStart(7)}   ${'vs bare:'.padEnd(9)} ${'req/s'.padStart(6)} ${'p50'.padStart(6)} ${'p99'.padStart(6)} ${'cpu'.padStart(6)}`,
  );
  results.forEach((r, i) => {
    const base = results[cases[i]!.baseline]!;
    const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : '-').padStart(6);
    const vs =
      i === cases[i]!.baseline
        ? ''.padEnd(9 + 4 * 7)
        : `${base.name.replace('bare Koa ', '').padEnd(9)} ${ratio(r.rps, base.rps)} ${ratio(r.p50, base.p50)} ${ratio(r.p99, base.p99)} ${ratio(base.cpuUs, r.cpuUs)}`;
    console.log(
      `${r.name.padEnd(22)} ${r.rps.toFixed(0).padStart(8)} ${r.p50.toFixed(1).padStart(7)} ${r.p99.toFixed(1).padStart(7)} ${String(r.errors).padStart(6)} ${r.cpuUs.toFixed(1).padStart(7)}   ${vs}`,
    );
  });
  if (results.some((r) => r.errors > 0)) process.exitCode = 1;
}

void main();
