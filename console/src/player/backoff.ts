/**
 * Reconnect and retry delays: exponential with full jitter, capped, reset on success.
 * `random` is injectable so tests are deterministic.
 */
export interface BackoffOptions {
  baseMs?: number;
  maxMs?: number;
  factor?: number;
  random?: () => number;
}

export class Backoff {
  private attempt = 0;
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly random: () => number;

  constructor(options: BackoffOptions = {}) {
    this.baseMs = options.baseMs ?? 1_000;
    this.maxMs = options.maxMs ?? 60_000;
    this.factor = options.factor ?? 2;
    this.random = options.random ?? Math.random;
  }

  /** The ceiling of the next delay (before jitter). */
  ceiling(): number {
    return Math.min(this.maxMs, this.baseMs * this.factor ** this.attempt);
  }

  /** The next delay: between half the ceiling and the ceiling, so retries spread out but never hammer. */
  next(): number {
    const ceiling = this.ceiling();
    this.attempt += 1;
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }

  /** How many failures in a row so far. */
  get failures(): number {
    return this.attempt;
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** A server-given delay (Retry-After) wins when it is longer than ours. */
export function retryDelayMs(backoff: Backoff, retryAfterSec: number | null): number {
  const ours = backoff.next();
  return retryAfterSec && retryAfterSec * 1000 > ours ? retryAfterSec * 1000 : ours;
}
