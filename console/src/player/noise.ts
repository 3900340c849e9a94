/**
 * The noise meter's numbers (spec 2.2-2.4): microphone levels (a relative 0-100 scale,
 * never audio) folded into buckets on the fixed ten-second grid, queued until the server
 * says it has them. Pure: the page feeds levels and the clock.
 */

export const BUCKET_MS = 10_000;
export const MAX_BUCKETS_PER_HEARTBEAT = 120;
/** A day of buckets: older ones are dropped first when the server is gone for longer. */
export const MAX_QUEUED_BUCKETS = 8_640;

export interface NoiseBucket {
  startedAt: string;
  averageLevel: number;
  peakLevel: number;
  monitoredMs: number;
  warningMs: number;
  loudMs: number;
  triggerCount: number;
}

export type NoiseStatus = 'active' | 'normal' | 'loud' | 'unavailable' | 'inactive';

interface Open {
  start: number;
  weighted: number;
  peak: number;
  monitoredMs: number;
  warningMs: number;
  loudMs: number;
  triggers: number;
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
const round1 = (v: number) => Math.round(v * 10) / 10;

/** Relative level 0-100 from an RMS amplitude (0..1): -100 dBFS .. 0 dBFS mapped linearly. */
export function levelFromRms(rms: number): number {
  if (!(rms > 0)) return 0;
  return round1(clamp(100 + 20 * Math.log10(rms), 0, 100));
}

export class NoiseMeter {
  private open: Open | null = null;
  private loud = false;
  private readonly queue: NoiseBucket[] = [];
  current = 0;

  constructor(
    readonly warningLevel = 60,
    readonly loudLevel = 75,
  ) {}

  /** A level measured over the `durationMs` ending at `at` (ms since the epoch). */
  sample(level: number, at: number, durationMs: number): void {
    const lv = clamp(Number.isFinite(level) ? level : 0, 0, 100);
    this.current = round1(lv);
    let from = at - clamp(durationMs, 0, BUCKET_MS);
    // A sample that spans a grid line is split between the two buckets.
    while (from < at) {
      const start = Math.floor(from / BUCKET_MS) * BUCKET_MS;
      const to = Math.min(at, start + BUCKET_MS);
      this.add(start, lv, to - from);
      from = to;
    }
    const wasLoud = this.loud;
    // Hysteresis: loud from loudLevel, quiet again below the warning level.
    this.loud = lv >= this.loudLevel || (this.loud && lv >= this.warningLevel);
    if (this.loud && !wasLoud && this.open) this.open.triggers += 1;
  }

  private add(start: number, level: number, ms: number): void {
    if (this.open && this.open.start !== start) this.close();
    if (!this.open) this.open = { start, weighted: 0, peak: 0, monitoredMs: 0, warningMs: 0, loudMs: 0, triggers: 0 };
    const o = this.open;
    o.weighted += level * ms;
    o.peak = Math.max(o.peak, level);
    o.monitoredMs += ms;
    if (level >= this.loudLevel) o.loudMs += ms;
    else if (level >= this.warningLevel) o.warningMs += ms;
  }

  private close(): void {
    const o = this.open;
    this.open = null;
    if (!o || o.monitoredMs <= 0) return;
    const ms = (v: number) => clamp(Math.round(v), 0, BUCKET_MS);
    this.queue.push({
      startedAt: new Date(o.start).toISOString(),
      averageLevel: round1(clamp(o.weighted / o.monitoredMs, 0, 100)),
      peakLevel: round1(clamp(o.peak, 0, 100)),
      monitoredMs: ms(o.monitoredMs),
      warningMs: ms(o.warningMs),
      loudMs: ms(o.loudMs),
      triggerCount: clamp(o.triggers, 0, 1000),
    });
    if (this.queue.length > MAX_QUEUED_BUCKETS) this.queue.splice(0, this.queue.length - MAX_QUEUED_BUCKETS);
  }

  /** Closes the open bucket once its ten seconds are over. */
  tick(now: number): void {
    if (this.open && now >= this.open.start + BUCKET_MS) this.close();
  }

  status(): NoiseStatus {
    return this.loud ? 'loud' : 'normal';
  }

  /** The oldest unacknowledged buckets, at most 120 (the rest wait for later heartbeats). */
  batch(): NoiseBucket[] {
    return this.queue.slice(0, MAX_BUCKETS_PER_HEARTBEAT);
  }

  /**
   * The server answered `noiseHistory.accepted` for a batch: when it took all of them, they
   * leave the queue; otherwise the batch stays and goes again (storage is idempotent).
   */
  acknowledge(batch: readonly NoiseBucket[], accepted: number): void {
    if (accepted < batch.length) return;
    const sent = new Set(batch.map((b) => b.startedAt));
    for (let i = this.queue.length - 1; i >= 0; i--) if (sent.has(this.queue[i]!.startedAt)) this.queue.splice(i, 1);
  }

  /** The server refused the batch as invalid: it would be refused forever, so it is dropped. */
  discard(batch: readonly NoiseBucket[]): void {
    this.acknowledge(batch, batch.length);
  }

  /** Takes over another meter's queued buckets (the thresholds changed; the queue must not be lost). */
  adopt(other: NoiseMeter): void {
    other.tick(Number.POSITIVE_INFINITY);
    this.queue.push(...other.queue);
    this.current = other.current;
  }

  get pending(): number {
    return this.queue.length;
  }
}
