/**
 * Idle memory after start (issue 24): the built server as installed (`node
 * dist/server/src/main.js`) on a fresh data directory, waited for until /readyz answers 200,
 * then left idle; measured 5 s and 30 s after (--idle 5,30: V8's memory reducer shrinks an
 * idle heap some 10-20 s after the start-up's allocations stop); printed: VmRSS (anonymous / file-backed) from
 * /proc/<pid>/status, and V8's heap (used / total, new space) from a --import'ed reporter
 * (scripts/bench/idle-rss/report-memory.mjs, on SIGUSR2: nothing is added to the server).
 * The same for a bare Koa server (`node -e`) in the same run, for reference.
 *
 *   npm run build:server            # this bench builds nothing
 *   npm run bench:idle-rss [-- --runs 3 --idle 5,30 --https --node-arg --max-semi-space-size=4 --modules --entry FILE]
 *
 * --https      HTTPS on as by default (a free port; the certificate is made at first start)
 * --node-arg   a node flag for both processes (repeatable), e.g. to try V8 heap sizes
 * --entry      the server's entry point (default dist/server/src/main.js)
 * --modules    one more run with an inspector preload that lists the scripts loaded at
 *              start by package (source bytes); its memory is not the plain server's
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const REPORTER = path.join(ROOT, 'scripts/bench/idle-rss/report-memory.mjs');
const LISTER = path.join(ROOT, 'scripts/bench/idle-rss/list-scripts.mjs');

const argv = process.argv.slice(2);
const num = (name: string, fallback: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
};
const runs = num('runs', 3);
const idleIndex = argv.indexOf('--idle');
/** Seconds after readiness at which the processes are measured (V8's memory reducer shrinks an idle heap after ~10-20 s). */
const idlePoints = (idleIndex >= 0 ? argv[idleIndex + 1]! : '5,30')
  .split(',')
  .map(Number)
  .sort((a, b) => a - b);
const https = argv.includes('--https');
const listModules = argv.includes('--modules');
const nodeArgs = argv.flatMap((a, i) => (argv[i - 1] === '--node-arg' ? [a] : []));
const entryIndex = argv.indexOf('--entry');
/** The server's entry point (another build's, to compare two builds back to back). */
const ENTRY = path.resolve(ROOT, entryIndex >= 0 ? argv[entryIndex + 1]! : 'dist/server/src/main.js');

const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Figures {
  rss: number;
  anon: number;
  file: number;
  heapUsed: number;
  heapTotal: number;
  newSpace: number;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Waits until `url` answers 200 (the server's readiness, or the bare server's one route). */
async function waitFor(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited before ready:\n${log()}`);
    if (Date.now() > deadline) throw new Error(`not ready in time:\n${log()}`);
    const status = await fetch(url).then(
      async (r) => {
        await r.arrayBuffer();
        return r.status;
      },
      () => 0,
    );
    if (status === 200) return;
    await sleep(100);
  }
}

/** VmRSS and its parts from /proc, then V8's heap from the reporter (SIGUSR2 -> JSON file). */
async function measure(child: ChildProcess, reportFile: string): Promise<Figures> {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  child.kill('SIGUSR2');
  for (let i = 0; i < 50 && !existsSync(reportFile); i++) await sleep(50);
  const report = JSON.parse(readFileSync(reportFile, 'utf8')) as {
    memory: NodeJS.MemoryUsage;
    spaces: Record<string, { size: number; used: number }>;
  };
  return {
    rss: kib('VmRSS'),
    anon: kib('RssAnon'),
    file: kib('RssFile'),
    heapUsed: report.memory.heapUsed,
    heapTotal: report.memory.heapTotal,
    newSpace: report.spaces.new_space?.size ?? 0,
  };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

/** Measures at each of `idlePoints` (seconds after `readyAt`). */
async function measureIdle(child: ChildProcess, reportFile: string, readyAt: number): Promise<Figures[]> {
  const out: Figures[] = [];
  for (const s of idlePoints) {
    await sleep(Math.max(0, readyAt + s * 1000 - Date.now()));
    rmSync(reportFile, { force: true });
    out.push(await measure(child, reportFile));
  }
  return out;
}

async function runPlacard(extraPreload?: string): Promise<{ figures: Figures[]; scripts?: Record<string, { scripts: number; bytes: number }> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-idle-rss-'));
  const reportFile = path.join(dir, 'memory.json');
  const scriptsFile = path.join(dir, 'scripts.json');
  let out = '';
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, `--import=${REPORTER}`, ...(extraPreload ? [`--import=${extraPreload}`] : []), ENTRY], {
    cwd: ROOT,
    env: {
      ...process.env,
      PLACARD_DATA_DIR: path.join(dir, 'data'),
      PLACARD_HOST: '127.0.0.1',
      PLACARD_PORT: String(port),
      PLACARD_HTTPS_PORT: https ? String(await freePort()) : '0',
      PLACARD_LOG_LEVEL: 'warn',
      IDLE_RSS_REPORT: reportFile,
      IDLE_RSS_SCRIPTS: scriptsFile,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => (out += d));
  child.stderr?.on('data', (d: Buffer) => (out += d));
  try {
    await waitFor(`http://127.0.0.1:${port}/readyz`, child, () => out);
    const figures = extraPreload ? [] : await measureIdle(child, reportFile, Date.now());
    if (extraPreload) {
      await sleep(1000);
      child.kill('SIGUSR2');
    }
    let scripts: Record<string, { scripts: number; bytes: number }> | undefined;
    if (extraPreload) {
      for (let i = 0; i < 50 && !existsSync(scriptsFile); i++) await sleep(50);
      scripts = JSON.parse(readFileSync(scriptsFile, 'utf8'));
    }
    return { figures, scripts };
  } finally {
    await stop(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

const BARE = `const Koa = require('koa'); const app = new Koa(); app.use((ctx) => { ctx.body = 'ok'; });
const s = app.listen(0, '127.0.0.1', () => console.log('port ' + s.address().port));`;

async function runBare(): Promise<Figures[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'placard-idle-rss-'));
  const reportFile = path.join(dir, 'memory.json');
  let out = '';
  const child = spawn(process.execPath, [...nodeArgs, `--import=${REPORTER}`, '-e', BARE], {
    cwd: ROOT,
    env: { ...process.env, IDLE_RSS_REPORT: reportFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => (out += d));
  child.stderr?.on('data', (d: Buffer) => (out += d));
  try {
    const deadline = Date.now() + 30_000;
    let port: string | undefined;
    while (!(port = /port (\d+)/.exec(out)?.[1])) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`bare Koa did not start:\n${out}`);
      await sleep(50);
    }
    await waitFor(`http://127.0.0.1:${port}/`, child, () => out);
    return await measureIdle(child, reportFile, Date.now());
  } finally {
    await stop(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

const mib = (n: number) => (n / MiB).toFixed(1);
const range = (xs: number[]) => {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return lo === hi ? mib(lo) : `${mib(lo)}-${mib(hi)}`;
};

async function main(): Promise<void> {
  if (!existsSync(ENTRY)) {
    console.error(`${path.relative(ROOT, ENTRY)} is missing: run \`npm run build:server\` first (this bench builds nothing).`);
    process.exit(1);
  }
  console.log(
    `idle memory: ${runs} run(s), measured ${idlePoints.join(' and ')} s after /readyz, HTTPS ${https ? 'on' : 'off'}, node ${process.version}` +
      (nodeArgs.length ? `, node flags ${nodeArgs.join(' ')}` : ''),
  );
  const rows: { name: string; f: Figures[] }[] = [
    ...idlePoints.map((s) => ({ name: `placard (${path.relative(ROOT, ENTRY)}), ${s} s idle`, f: [] })),
    ...idlePoints.map((s) => ({ name: `bare Koa (node -e), ${s} s idle`, f: [] })),
  ];
  // Alternated, so a change in the machine's load touches both alike.
  for (let i = 0; i < runs; i++) {
    for (const [j, f] of (await runPlacard()).figures.entries()) rows[j]!.f.push(f);
    for (const [j, f] of (await runBare()).entries()) rows[idlePoints.length + j]!.f.push(f);
  }
  const table = rows.map(({ name, f }) => ({
    process: name,
    'VmRSS MiB': range(f.map((x) => x.rss)),
    'anon MiB': range(f.map((x) => x.anon)),
    'file MiB': range(f.map((x) => x.file)),
    'heap used MiB': range(f.map((x) => x.heapUsed)),
    'heap total MiB': range(f.map((x) => x.heapTotal)),
    'new space MiB': range(f.map((x) => x.newSpace)),
  }));
  console.table(table);
  if (listModules) {
    const { scripts } = await runPlacard(LISTER);
    const groups = Object.entries(scripts ?? {}).sort((a, b) => b[1].bytes - a[1].bytes);
    const total = groups.reduce((s, [, g]) => s + g.bytes, 0);
    const count = groups.reduce((s, [, g]) => s + g.scripts, 0);
    console.log(`\nscripts loaded at start: ${count}, ${mib(total)} MiB of source; the largest packages:`);
    console.table(groups.slice(0, 30).map(([pkg, g]) => ({ package: pkg, scripts: g.scripts, 'source KiB': Math.round(g.bytes / 1024) })));
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
