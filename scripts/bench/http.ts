/**
 * HTTP overhead benchmark: requests/s and p50/p99 latency of /healthz and of a validated
 * JSON route (zod body + response check off, as in production) against a bare Koa route,
 * all in the same run on loopback, printed as a table and as ratios to the bare route.
 *   npm run bench [-- --seconds 5 --connections 32]
 * Figures depend on the machine and its load: compare the ratios, not the absolute numbers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import Koa from 'koa';
import { z } from 'zod';
import { buildApp } from '../../server/src/app.js';
import { testConfig } from '../../server/src/config.js';
import { migrate, openDatabase } from '../../server/src/platform/db/database.js';
import { defineRoute, ok } from '../../server/src/platform/http/route.js';
import { createLogger } from '../../server/src/platform/log.js';
import { MediaTools } from '../../server/src/platform/media/tools.js';
import { PeriodicTasks } from '../../server/src/platform/jobs/periodic.js';
import { listen } from '../../server/src/server.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const seconds = arg('seconds', 5);
const connections = arg('connections', 32);

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
  const app = buildApp({ config, db: database.db, logger, periodic: new PeriodicTasks(logger), tools: new MediaTools(config), state: { restoreInProgress: false }, extraRoutes: [echo] });
  const placard = await listen(app, '127.0.0.1', 0);

  const bare = new Koa();
  bare.use(async (ctx) => {
    if (ctx.path === '/bare') ctx.body = { data: { status: 'ok' } };
  });
  const bareServer = await listen(bare, '127.0.0.1', 0);

  const cases = [
    { name: 'bare Koa GET /bare', url: `${bareServer.url}/bare` },
    { name: 'GET /healthz', url: `${placard.url}/healthz` },
    { name: 'POST validated JSON', url: `${placard.url}/api/v1/bench/echo`, method: 'POST' as const, body: payload, headers: { 'content-type': 'application/json' } },
  ];
  const results: { name: string; rps: number; p50: number; p99: number; errors: number }[] = [];
  for (const c of cases) {
    // A short warm-up, then the measured run.
    await autocannon({ ...c, connections, duration: 1 });
    const r = await autocannon({ ...c, connections, duration: seconds });
    results.push({ name: c.name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx });
  }
  await placard.close();
  await bareServer.close();
  await database.close();
  rmSync(dir, { recursive: true, force: true });

  const base = results[0]!;
  console.log(`HTTP overhead, ${connections} connections, ${seconds}s per case, node ${process.version}, ${os.cpus().length} cpus`);
  console.log(`${'case'.padEnd(24)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'errors'.padStart(7)} ${'rps vs bare'.padStart(12)}`);
  for (const r of results) {
    console.log(`${r.name.padEnd(24)} ${r.rps.toFixed(0).padStart(9)} ${r.p50.toFixed(1).padStart(7)} ${r.p99.toFixed(1).padStart(7)} ${String(r.errors).padStart(7)} ${(r.rps / base.rps).toFixed(2).padStart(12)}`);
  }
  if (results.some((r) => r.errors > 0)) process.exitCode = 1;
}

void main();
