/**
 * The real server as a child process for the fleet simulator, and what it costs: CPU from
 * /proc/<pid>/stat (utime + stime) and memory from /proc/<pid>/status (VmRSS, VmHWM), read
 * apart from the simulator's own process.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

let clockTicks: number | null = null;
/** Clock ticks per second of /proc/<pid>/stat (getconf CLK_TCK; 100 on Linux almost always). */
function ticksPerSecond(): number {
  if (clockTicks === null) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

export interface ProcSample {
  /** performance.now() when read. */
  at: number;
  /** utime + stime, seconds. */
  cpuSec: number;
  rssKiB: number;
  /** Peak RSS since the process started. */
  hwmKiB: number;
}

/** One reading of a process's CPU time and memory; null once it is gone. */
export function sampleProcess(pid: number): ProcSample | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3 (state).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // fields 14 (utime) and 15 (stime)
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { at: performance.now(), cpuSec: ticks / ticksPerSecond(), rssKiB: kib('VmRSS'), hwmKiB: kib('VmHWM') };
  } catch {
    return null;
  }
}

/** CPU use between two samples, in percent of one core. */
export const cpuPercent = (a: ProcSample, b: ProcSample) => ((b.cpuSec - a.cpuSec) / ((b.at - a.at) / 1000)) * 100;

/** The highest CPU % over any window of at least `windowMs` between samples (in time order). */
function peakCpuOf(s: readonly ProcSample[], windowMs: number): number {
  let peak = 0;
  let j = 0;
  for (let i = 0; i < s.length; i++) {
    while (j < s.length && s[j]!.at - s[i]!.at < windowMs) j++;
    if (j >= s.length) break;
    peak = Math.max(peak, cpuPercent(s[i]!, s[j]!));
  }
  return peak;
}

/**
 * Samples a process every `everyMs`; `peakCpu(since)` is the busiest one-second window
 * (two samples `windowMs` apart) after `since`.
 */
export class ProcessSampler {
  readonly samples: ProcSample[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    everyMs = 500,
  ) {
    this.take();
    this.timer = setInterval(() => this.take(), everyMs);
    this.timer.unref();
  }

  take(): ProcSample | null {
    const s = sampleProcess(this.pid);
    if (s) this.samples.push(s);
    return s;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Samples taken in [from, to] (performance.now() times). */
  between(from: number, to = Number.POSITIVE_INFINITY): ProcSample[] {
    return this.samples.filter((s) => s.at >= from && s.at <= to);
  }

  /** The highest CPU % over any window of at least `windowMs` within [from, to]. */
  peakCpu(from: number, to = Number.POSITIVE_INFINITY, windowMs = 1000): number {
    const s = this.between(from, to);
    return peakCpuOf(s, windowMs);
  }

  /** Average CPU % over [from, to] (first and last sample in the range). */
  averageCpu(from: number, to = Number.POSITIVE_INFINITY): number {
    const s = this.between(from, to);
    return s.length >= 2 ? cpuPercent(s[0]!, s[s.length - 1]!) : 0;
  }

  peakRssKiB(from: number, to = Number.POSITIVE_INFINITY): number {
    return Math.max(0, ...this.between(from, to).map((s) => s.rssKiB));
  }
}

/**
 * Several server processes sampled together (issue 25: `--instances n`), one reading of
 * each per tick, and optionally the PostgreSQL backends serving one database (found by
 * their process title, `postgres: <role> <database> ...`, read from /proc each tick; their
 * CPU only, as their RSS is mostly the cluster's shared memory). `index` picks one process;
 * without it, the figures are the sum over the processes.
 */
export class FleetSampler {
  private readonly ticks: { at: number; per: (ProcSample | null)[]; dbCpuSec: number }[] = [];
  private readonly timer: NodeJS.Timeout;
  /** Highest CPU seconds seen per backend pid (a counter that only grows: backends come and go). */
  private readonly backends = new Map<number, number>();

  constructor(
    private readonly pids: readonly number[],
    private readonly databaseName: string | null = null,
    everyMs = 500,
  ) {
    this.take();
    this.timer = setInterval(() => this.take(), everyMs);
    this.timer.unref();
  }

  private backendCpuSec(): number {
    if (!this.databaseName) return 0;
    const title = `postgres: `;
    let names: string[] = [];
    try {
      names = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
    } catch {
      return 0;
    }
    for (const n of names) {
      try {
        const cmd = readFileSync(`/proc/${n}/cmdline`, 'utf8');
        if (!cmd.startsWith(title) || cmd.split(' ')[2] !== this.databaseName) continue;
        const s = sampleProcess(Number(n));
        if (s) this.backends.set(Number(n), Math.max(this.backends.get(Number(n)) ?? 0, s.cpuSec));
      } catch {
        /* gone meanwhile */
      }
    }
    let sum = 0;
    for (const v of this.backends.values()) sum += v;
    return sum;
  }

  /** Reads every process now; the total (null when all are gone). */
  take(): ProcSample | null {
    const per = this.pids.map((pid) => sampleProcess(pid));
    this.ticks.push({ at: performance.now(), per, dbCpuSec: this.backendCpuSec() });
    return this.at(this.ticks.length - 1);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Tick i as one sample: process `index`, or the sum of all (null if any is missing). */
  private at(i: number, index?: number): ProcSample | null {
    const tick = this.ticks[i]!;
    if (index !== undefined) return tick.per[index] ? { ...tick.per[index]!, at: tick.at } : null;
    if (tick.per.some((s) => s === null)) return null;
    const per = tick.per as ProcSample[];
    return {
      at: tick.at,
      cpuSec: per.reduce((a, s) => a + s.cpuSec, 0),
      rssKiB: per.reduce((a, s) => a + s.rssKiB, 0),
      hwmKiB: per.reduce((a, s) => a + s.hwmKiB, 0),
    };
  }

  /** The last reading of process `index` (or the sum). */
  last(index?: number): ProcSample | null {
    for (let i = this.ticks.length - 1; i >= 0; i--) {
      const s = this.at(i, index);
      if (s) return s;
    }
    return null;
  }

  private between(from: number, to: number, index?: number): ProcSample[] {
    const out: ProcSample[] = [];
    for (let i = 0; i < this.ticks.length; i++) {
      const t = this.ticks[i]!;
      if (t.at < from || t.at > to) continue;
      const s = this.at(i, index);
      if (s) out.push(s);
    }
    return out;
  }

  /** The highest CPU % (of one core) over any window of at least `windowMs` within [from, to]. */
  peakCpu(from: number, to = Number.POSITIVE_INFINITY, index?: number, windowMs = 1000): number {
    const s = this.between(from, to, index);
    return peakCpuOf(s, windowMs);
  }

  averageCpu(from: number, to = Number.POSITIVE_INFINITY, index?: number): number {
    const s = this.between(from, to, index);
    return s.length >= 2 ? cpuPercent(s[0]!, s[s.length - 1]!) : 0;
  }

  peakRssKiB(from: number, to = Number.POSITIVE_INFINITY, index?: number): number {
    return Math.max(0, ...this.between(from, to, index).map((s) => s.rssKiB));
  }

  /** Average CPU % of the database's PostgreSQL backends over [from, to] (0 without a database). */
  databaseCpu(from: number, to = Number.POSITIVE_INFINITY): number {
    const t = this.ticks.filter((x) => x.at >= from && x.at <= to);
    if (t.length < 2) return 0;
    const a = t[0]!;
    const b = t[t.length - 1]!;
    return ((b.dbCpuSec - a.dbCpuSec) / ((b.at - a.at) / 1000)) * 100;
  }
}

/** One reading of memory-probe.cjs, in bytes. */
export interface ServerMemory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

/** The server's last memory reading and the one with the highest RSS so far; null before the first. */
export function readServerMemory(file: string): { now: ServerMemory; peak: ServerMemory } | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { now: ServerMemory; peak: ServerMemory };
  } catch {
    return null;
  }
}

/** "rss R = V8 heap U used of T, outside the heap E (Buffers B), native and code N" in MiB. */
export function describeMemory(m: ServerMemory): string {
  const mib = (b: number) => (b / 1048576).toFixed(1);
  return `rss ${mib(m.rss)} = V8 heap ${mib(m.heapTotal)} (${mib(m.heapUsed)} used) + outside the heap ${mib(m.external)} (Buffers ${mib(m.arrayBuffers)}) + native, code and the rest ${mib(m.rss - m.heapTotal - m.external)} MiB`;
}

export interface FleetServer {
  child: ChildProcess;
  pid: number;
  url: string;
  logFile: string;
  /** SIGTERM, then waits for the exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `entry` (default: server/src/main.ts under tsx; a built dist/server/src/main.js
 * runs under plain node) over `dataDir` on a free loopback port, its log written to
 * `<dataDir>/../server.log` (a file, so the simulator spends nothing reading it).
 * Resolves once the server logs its URL.
 */
export async function startServer(
  dataDir: string,
  options: {
    entry?: string;
    logLevel?: string;
    env?: Record<string, string>;
    timeoutMs?: number;
    /** Write a V8 CPU profile of the server (node --cpu-prof) into this directory when it stops. */
    cpuProfDir?: string;
    /** Have the server write its own memory readings here (memory-probe.cjs; read with readServerMemory). */
    memoryFile?: string;
    /** The server's log (default `<dataDir>/../server.log`). */
    logFile?: string;
  } = {},
): Promise<FleetServer> {
  const entry = path.resolve(ROOT, options.entry ?? 'server/src/main.ts');
  const logFile = options.logFile ?? path.join(path.dirname(dataDir), 'server.log');
  const fd = openSync(logFile, 'a');
  const args = [
    ...(options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : []),
    ...(options.memoryFile ? ['--require', path.join(ROOT, 'scripts/bench/fleet/memory-probe.cjs')] : []),
    ...(entry.endsWith('.ts') ? ['--import=tsx'] : []),
    entry,
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      PLACARD_DATA_DIR: dataDir,
      PLACARD_PORT: '0',
      PLACARD_HTTPS_PORT: '0',
      PLACARD_HOST: '127.0.0.1',
      PLACARD_LOG_LEVEL: options.logLevel ?? 'info',
      ...(options.memoryFile ? { PLACARD_BENCH_MEMORY_FILE: options.memoryFile } : {}),
      ...options.env,
    },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  let url: string | null = null;
  while (!url) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server exited before listening:\n${readFileSync(logFile, 'utf8')}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the server did not start in time:\n${readFileSync(logFile, 'utf8')}`);
    }
    url = /"url":"(http:\/\/[^"]+)"/.exec(readFileSync(logFile, 'utf8'))?.[1] ?? null;
    if (!url) await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    pid: child.pid!,
    url,
    logFile,
    async stop(graceMs = 30_000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        const result = await exited;
        clearTimeout(timer);
        return result;
      }
      return exited;
    },
  };
}
