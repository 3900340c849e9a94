/**
 * The noise meter as the page runs it: on when the manifest carries a noise-meter overlay
 * (the plugin; its thresholds, calibration and microphone settings) or the URL has `noise=1`. Only derived numbers leave the page: a relative
 * 0-100 level every 250 ms, folded into ten-second buckets (noise.ts); no audio is kept or sent.
 */
import type { PlayerManifest } from './manifest.js';
import { levelFromRms, NoiseMeter, type NoiseBucket } from './noise.js';
import { calibrated, type NoiseMeterConfig } from './overlay-config.js';

export type NoiseStatus = 'inactive' | 'active' | 'unavailable';

export interface NoiseReport {
  body: { status: string; currentLevel?: number; pendingHistory?: NoiseBucket[] } | undefined;
  batch: NoiseBucket[];
}

/** The first noise-meter overlay's config: thresholds, calibration and microphone (defaults when only `noise=1`). */
export function meterConfig(manifest: PlayerManifest | null): NoiseMeterConfig | null {
  for (const o of manifest?.overlays ?? []) if (o.pluginId === 'noise-meter') return o.config;
  return null;
}

const DEFAULTS: NoiseMeterConfig = {
  warningLevel: 60,
  loudLevel: 75,
  display: 'hidden',
  corner: 'bottom-right',
  sizePct: 18,
  loudMessage: '',
  calibrationOffset: 0,
  microphone: { deviceLabel: '', echoCancellation: false, noiseSuppression: false, autoGainControl: false },
};

export class NoiseControl {
  meter: NoiseMeter | null = null;
  status: NoiseStatus = 'inactive';
  /** The config the meter runs with (null while off). */
  config: NoiseMeterConfig | null = null;
  private stopMeter: (() => void) | null = null;
  private micKey = '';

  constructor(
    private readonly search: string,
    private readonly now: () => number,
    private readonly log: (message: string) => void,
  ) {}

  private wanted(manifest: PlayerManifest | null): NoiseMeterConfig | null {
    return meterConfig(manifest) ?? (new URLSearchParams(this.search).get('noise') === '1' ? DEFAULTS : null);
  }

  /** The level shown (calibrated) and the state for the overlay: null while the meter is off. */
  get level(): { level: number; status: 'normal' | 'loud' | 'warning' } | null {
    const meter = this.meter;
    if (this.status !== 'active' || !meter) return null;
    const level = meter.current;
    const status = meter.status() === 'loud' ? 'loud' : level >= meter.warningLevel ? 'warning' : 'normal';
    return { level, status };
  }

  private queue: Promise<unknown> = Promise.resolve();

  /** Starts, restarts (new microphone settings) or stops the meter for this manifest; true when its state changed. */
  update(manifest: PlayerManifest | null): Promise<boolean> {
    // One at a time: two manifests in quick succession must not open two captures.
    const next = this.queue.then(() => this.apply(manifest));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async apply(manifest: PlayerManifest | null): Promise<boolean> {
    const want = this.wanted(manifest);
    if (!want) {
      if (this.stopMeter || this.status !== 'inactive') {
        this.stop();
        return true;
      }
      return false;
    }
    const micKey = JSON.stringify(want.microphone);
    const prev = this.config;
    this.config = want;
    // New thresholds: a new meter (its queued buckets carry over).
    if (!this.meter || this.meter.warningLevel !== want.warningLevel || this.meter.loudLevel !== want.loudLevel) {
      const next = new NoiseMeter(want.warningLevel, want.loudLevel);
      if (this.meter) next.adopt(this.meter);
      this.meter = next;
    }
    if (this.stopMeter && micKey === this.micKey) return false;
    if (this.status === 'unavailable' && micKey === this.micKey && prev) return false;
    if (this.stopMeter) this.stopMic();
    this.micKey = micKey;
    try {
      const audio0 = {
        echoCancellation: want.microphone.echoCancellation,
        noiseSuppression: want.microphone.noiseSuppression,
        autoGainControl: want.microphone.autoGainControl,
      };
      const deviceId = await this.deviceFor(want.microphone.deviceLabel);
      const stream = await navigator.mediaDevices.getUserMedia({ audio: deviceId ? { ...audio0, deviceId: { exact: deviceId } } : audio0 });
      const audio = new AudioContext();
      const analyser = audio.createAnalyser();
      analyser.fftSize = 2048;
      audio.createMediaStreamSource(stream).connect(analyser);
      const buf = new Float32Array(analyser.fftSize);
      this.status = 'active';
      let last = Date.now();
      const timer = setInterval(() => {
        const meter = this.meter;
        const offset = this.config?.calibrationOffset ?? 0;
        if (!meter) return;
        analyser.getFloatTimeDomainData(buf);
        let sum = 0;
        for (const v of buf) sum += v * v;
        const t = Date.now();
        meter.sample(calibrated(levelFromRms(Math.sqrt(sum / buf.length)), offset), this.now(), Math.min(1000, t - last));
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

  /** The input whose label contains `label` (case-insensitive); undefined = the default microphone. */
  private async deviceFor(label: string): Promise<string | undefined> {
    if (!label || !navigator.mediaDevices.enumerateDevices) return undefined;
    const find = async () =>
      (await navigator.mediaDevices.enumerateDevices()).find((d) => d.kind === 'audioinput' && d.label.toLowerCase().includes(label.toLowerCase()));
    let found = await find();
    if (!found) {
      // Labels are empty until the page has been allowed a microphone once: ask, then look again.
      const probe = await navigator.mediaDevices.getUserMedia({ audio: true }).catch(() => null);
      for (const track of probe?.getTracks() ?? []) track.stop();
      found = await find();
    }
    if (!found) this.log(`Noise meter: no microphone named like "${label}"; using the default one`);
    return found?.deviceId || undefined;
  }

  private stopMic(): void {
    this.stopMeter?.();
    this.stopMeter = null;
  }

  stop(): void {
    this.stopMic();
    this.status = 'inactive';
    this.config = null;
    this.micKey = '';
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
