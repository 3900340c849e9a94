/**
 * The noise meter as the page runs it: on when the manifest carries a noise-meter overlay
 * (the plugin) or the URL has `noise=1`. Only derived numbers leave the page: a relative
 * 0-100 level every 250 ms, folded into ten-second buckets (noise.ts); no audio is kept or sent.
 */
import type { PlayerManifest } from './manifest.js';
import { levelFromRms, NoiseMeter, type NoiseBucket } from './noise.js';

export type NoiseStatus = 'inactive' | 'active' | 'unavailable';

export interface NoiseReport {
  body: { status: string; currentLevel?: number; pendingHistory?: NoiseBucket[] } | undefined;
  batch: NoiseBucket[];
}

export class NoiseControl {
  meter: NoiseMeter | null = null;
  status: NoiseStatus = 'inactive';
  private stopMeter: (() => void) | null = null;

  constructor(
    private readonly search: string,
    private readonly now: () => number,
    private readonly log: (message: string) => void,
  ) {}

  private wanted(manifest: PlayerManifest | null): boolean {
    if (new URLSearchParams(this.search).get('noise') === '1') return true;
    return (manifest?.overlays ?? []).some((o) => {
      const v = o as { type?: unknown; pluginId?: unknown; plugin?: unknown };
      return v && (v.type === 'noise-meter' || v.pluginId === 'noise-meter' || v.plugin === 'noise-meter');
    });
  }

  /** Starts or stops the meter for this manifest; true when its state changed (worth a heartbeat at once). */
  async update(manifest: PlayerManifest | null): Promise<boolean> {
    const want = this.wanted(manifest);
    if (!want && this.stopMeter) {
      this.stop();
      return false;
    }
    if (!want || this.stopMeter || this.status === 'unavailable') return false;
    try {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: false, noiseSuppression: false, autoGainControl: false } });
      const audio = new AudioContext();
      const analyser = audio.createAnalyser();
      analyser.fftSize = 2048;
      audio.createMediaStreamSource(stream).connect(analyser);
      const buf = new Float32Array(analyser.fftSize);
      const meter = (this.meter ??= new NoiseMeter());
      this.status = 'active';
      let last = Date.now();
      const timer = setInterval(() => {
        analyser.getFloatTimeDomainData(buf);
        let sum = 0;
        for (const v of buf) sum += v * v;
        const t = Date.now();
        meter.sample(levelFromRms(Math.sqrt(sum / buf.length)), this.now(), Math.min(1000, t - last));
        meter.tick(this.now());
        last = t;
      }, 250);
      this.stopMeter = () => {
        clearInterval(timer);
        for (const track of stream.getTracks()) track.stop();
        void audio.close();
      };
    } catch (err) {
      this.status = 'unavailable';
      this.log(`Noise meter: no microphone (${(err as Error).message})`);
    }
    return true;
  }

  stop(): void {
    this.stopMeter?.();
    this.stopMeter = null;
    this.status = 'inactive';
  }

  /** What the next heartbeat carries, and the batch to acknowledge or discard after it. */
  report(): NoiseReport {
    if (this.status === 'inactive' && !this.meter?.pending) return { body: undefined, batch: [] };
    const meter = this.meter;
    const batch = meter ? meter.batch() : [];
    const status = this.status === 'active' && meter ? meter.status() : this.status;
    return {
      body: { status, ...(meter && this.status === 'active' ? { currentLevel: meter.current } : {}), ...(batch.length ? { pendingHistory: batch } : {}) },
      batch,
    };
  }
}
