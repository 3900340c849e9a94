import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

export interface StorageCheck {
  ok: boolean;
  detail: string;
}

export interface StorageChecks {
  /** `media/`: files can be created, made durable and removed there. */
  mediaStore: StorageCheck;
  /** `uploads/` (partial tus uploads): the same. */
  uploads: StorageCheck;
  /** Free space on the data directory's file system, against the floor (PLACARD_MIN_FREE_BYTES). */
  diskSpace: StorageCheck;
}

/** How long one probe may take before it counts as failed (a hung network file system). */
export const PROBE_TIMEOUT_MS = 2_000;

/** Resolves with `work`, or rejects once `ms` have passed. */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

const describe = (err: unknown) => {
  const e = err as NodeJS.ErrnoException;
  return e.code ? `${e.code} (${e.syscall ?? 'fs'})` : (e.message ?? String(err));
};

/**
 * Proves `dir` usable the way the server uses it: made when missing, a new file written,
 * fsynced, closed and removed. Answers null, or what failed (the error code, never the
 * absolute path: /readyz is public). The probe is a dot-file, which the backups and the
 * store's sweeps skip, should a crash leave one behind.
 */
export async function probeWritable(dir: string): Promise<string | null> {
  const file = path.join(dir, `.readiness-probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await fs.mkdir(dir, { recursive: true });
    const handle = await fs.open(file, 'wx', 0o600);
    try {
      await handle.write('probe');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.unlink(file);
    return null;
  } catch (err) {
    await fs.rm(file, { force: true }).catch(() => {});
    return describe(err);
  }
}

const mib = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MiB`;

/**
 * The storage part of readiness for one data directory, cached for `ttlMs` (a write, an
 * fsync and a statfs per /readyz poll would be cheap, but /readyz is public and must stay
 * so under a flood of polls); concurrent calls share one probe.
 */
export class StorageHealth {
  private cached: { at: number; result: Promise<StorageChecks> } | null = null;

  constructor(
    private readonly dataDir: string,
    private readonly minFreeBytes: number,
    private readonly ttlMs = 5_000,
  ) {}

  check(): Promise<StorageChecks> {
    const now = Date.now();
    if (!this.cached || now - this.cached.at > this.ttlMs) this.cached = { at: now, result: this.probe() };
    return this.cached.result;
  }

  private async probe(): Promise<StorageChecks> {
    const writable = async (name: string): Promise<StorageCheck> => {
      const failed = await withDeadline(probeWritable(path.join(this.dataDir, name)), PROBE_TIMEOUT_MS, `${name}/`).catch((err: Error) => err.message);
      return failed ? { ok: false, detail: `${name}/ is not writable: ${failed}` } : { ok: true, detail: `${name}/ is writable` };
    };
    const space = async (): Promise<StorageCheck> => {
      try {
        const s = await withDeadline(fs.statfs(this.dataDir), PROBE_TIMEOUT_MS, 'statfs');
        const free = s.bavail * s.bsize;
        const floor = mib(this.minFreeBytes);
        if (free >= this.minFreeBytes) return { ok: true, detail: `${mib(free)} free (floor ${floor})` };
        return { ok: false, detail: `${mib(free)} free, below the floor of ${floor} (PLACARD_MIN_FREE_BYTES)` };
      } catch (err) {
        return { ok: false, detail: `free space unknown: ${describe(err)}` };
      }
    };
    const [mediaStore, uploads, diskSpace] = await Promise.all([writable('media'), writable('uploads'), space()]);
    return { mediaStore, uploads, diskSpace };
  }
}
