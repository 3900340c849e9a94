/**
 * The manifest's plugin overlays (docs/plugins.md, docs/player-overlays.md) read into typed
 * entries, and the countdown's timing. Pure: no DOM. An overlay the player does not know, or
 * whose config is bad, is skipped with a problem line; it never stops playback.
 */
import type { MediaEntry } from './manifest.js';

export type Corner = 'top-left' | 'top-right' | 'bottom-left' | 'bottom-right';

export interface CountdownConfig {
  target: { type: 'at'; at: number } | { type: 'daily'; time: string; weekdays: number[] | null };
  label: string;
  windowMin: number;
  position: 'top' | 'bottom';
  heightPct: number;
  colors: { bar: string; background: string; text: string };
  afterZero: { show: 'hide' | 'message' | 'count-up'; text: string; forMin: number };
}

export interface BrandBugConfig {
  assetId: string;
  corner: Corner;
  sizePct: number;
  marginPct: number;
  opacity: number;
  hideDuringFullScreenVideo: boolean;
}

export interface NoiseMeterConfig {
  warningLevel: number;
  loudLevel: number;
  display: 'bar' | 'dial' | 'traffic-light' | 'hidden';
  corner: Corner;
  sizePct: number;
  loudMessage: string;
  calibrationOffset: number;
  microphone: { deviceLabel: string; echoCancellation: boolean; noiseSuppression: boolean; autoGainControl: boolean };
}

interface Base {
  instanceId: string;
  name: string;
  revision: number;
  /** Stable for an unchanged instance: the layer keeps its DOM node while this is the same. */
  key: string;
}

export type Overlay =
  | (Base & { pluginId: 'countdown-bar'; config: CountdownConfig })
  | (Base & { pluginId: 'brand-bug'; config: BrandBugConfig; logo: MediaEntry })
  | (Base & { pluginId: 'noise-meter'; config: NoiseMeterConfig });

const CORNERS: readonly Corner[] = ['top-left', 'top-right', 'bottom-left', 'bottom-right'];
const COLOR = /^#(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;

class Bad extends Error {}

type Obj = Record<string, unknown>;
const obj = (v: unknown, what: string): Obj => {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Bad(`${what} is not an object`);
  return v as Obj;
};
function num(o: Obj, k: string, lo: number, hi: number, dflt: number): number {
  const v = o[k] ?? dflt;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < lo || v > hi) throw new Bad(`${k} is not a number in ${lo}..${hi}`);
  return v;
}
function text(o: Obj, k: string, max: number, dflt: string): string {
  const v = o[k] ?? dflt;
  if (typeof v !== 'string' || v.length > max) throw new Bad(`${k} is not a string`);
  return v;
}
function oneOf<T extends string>(o: Obj, k: string, values: readonly T[], dflt: T): T {
  const v = o[k] ?? dflt;
  if (!values.includes(v as T)) throw new Bad(`${k} is not one of ${values.join(', ')}`);
  return v as T;
}
function bool(o: Obj, k: string, dflt: boolean): boolean {
  const v = o[k] ?? dflt;
  if (typeof v !== 'boolean') throw new Bad(`${k} is not a boolean`);
  return v;
}
function color(o: Obj, k: string, dflt: string): string {
  const v = o[k] ?? dflt;
  if (typeof v !== 'string' || !COLOR.test(v)) throw new Bad(`${k} is not a colour`);
  return v;
}

function countdown(c: Obj): CountdownConfig {
  const t = obj(c.target, 'target');
  let target: CountdownConfig['target'];
  if (t.type === 'at') {
    const at = typeof t.at === 'string' ? Date.parse(t.at) : Number.NaN;
    if (!Number.isFinite(at)) throw new Bad('target.at is not a time');
    target = { type: 'at', at };
  } else if (t.type === 'daily') {
    const time = typeof t.time === 'string' ? t.time : '';
    const m = /^(\d{2}):(\d{2})$/.exec(time);
    if (!m || Number(m[1]) > 23 || Number(m[2]) > 59) throw new Bad('target.time is not HH:MM');
    let weekdays: number[] | null = null;
    if (t.weekdays !== undefined && t.weekdays !== null) {
      if (!Array.isArray(t.weekdays) || !t.weekdays.every((d) => Number.isInteger(d) && d >= 1 && d <= 7)) throw new Bad('target.weekdays are not 1..7');
      weekdays = t.weekdays as number[];
      if (!weekdays.length) throw new Bad('target.weekdays is empty');
    }
    target = { type: 'daily', time, weekdays };
  } else {
    throw new Bad('target.type is not at or daily');
  }
  const colors = obj(c.colors ?? {}, 'colors');
  const after = obj(c.afterZero ?? {}, 'afterZero');
  return {
    target,
    label: text(c, 'label', 120, ''),
    windowMin: num(c, 'windowMin', 1, 1440, 60),
    position: oneOf(c, 'position', ['top', 'bottom'] as const, 'bottom'),
    heightPct: num(c, 'heightPct', 2, 20, 6),
    colors: { bar: color(colors, 'bar', '#e4572e'), background: color(colors, 'background', '#00000099'), text: color(colors, 'text', '#ffffff') },
    afterZero: {
      show: oneOf(after, 'show', ['hide', 'message', 'count-up'] as const, 'hide'),
      text: text(after, 'text', 120, 'Time!'),
      forMin: num(after, 'forMin', 0, 1440, 5),
    },
  };
}

function brandBug(c: Obj): BrandBugConfig {
  if (typeof c.assetId !== 'string' || !c.assetId) throw new Bad('assetId is missing');
  return {
    assetId: c.assetId,
    corner: oneOf(c, 'corner', CORNERS, 'top-right'),
    sizePct: num(c, 'sizePct', 2, 50, 12),
    marginPct: num(c, 'marginPct', 0, 20, 2),
    opacity: num(c, 'opacity', 0, 1, 0.85),
    hideDuringFullScreenVideo: bool(c, 'hideDuringFullScreenVideo', false),
  };
}

function noiseMeter(c: Obj): NoiseMeterConfig {
  const mic = obj(c.microphone ?? {}, 'microphone');
  const warningLevel = num(c, 'warningLevel', 0, 100, 60);
  const loudLevel = num(c, 'loudLevel', 0, 100, 75);
  if (loudLevel <= warningLevel) throw new Bad('loudLevel is not above warningLevel');
  return {
    warningLevel,
    loudLevel,
    display: oneOf(c, 'display', ['bar', 'dial', 'traffic-light', 'hidden'] as const, 'bar'),
    corner: oneOf(c, 'corner', CORNERS, 'bottom-right'),
    sizePct: num(c, 'sizePct', 5, 50, 18),
    loudMessage: text(c, 'loudMessage', 200, 'Too loud! Please lower your voices.'),
    calibrationOffset: num(c, 'calibrationOffset', -50, 50, 0),
    microphone: {
      deviceLabel: text(mic, 'deviceLabel', 200, ''),
      echoCancellation: bool(mic, 'echoCancellation', false),
      noiseSuppression: bool(mic, 'noiseSuppression', false),
      autoGainControl: bool(mic, 'autoGainControl', false),
    },
  };
}

function readLogo(raw: unknown, media: readonly MediaEntry[]): MediaEntry {
  const l = obj(raw, 'logo');
  if (typeof l.url !== 'string' || typeof l.assetId !== 'string') throw new Bad('logo has no url');
  const cached = media.find((m) => m.variantId === l.variantId && m.assetId === l.assetId);
  if (cached) return cached;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    assetId: l.assetId,
    variantId: typeof l.variantId === 'string' ? l.variantId : '',
    url: l.url,
    contentType: typeof l.contentType === 'string' ? l.contentType : '',
    sizeBytes: n(l.sizeBytes),
    sha256: typeof l.sha256 === 'string' ? l.sha256 : null,
    width: n(l.width),
    height: n(l.height),
  };
}

/** The overlays the player understands; the rest are named in `problems` and skipped. */
export function readOverlays(raw: unknown, media: readonly MediaEntry[], problems: string[]): Overlay[] {
  const out: Overlay[] = [];
  for (const [i, entry] of (Array.isArray(raw) ? raw : []).entries()) {
    try {
      const o = obj(entry, `overlay ${i}`);
      if (typeof o.instanceId !== 'string' || !o.instanceId) throw new Bad('no instanceId');
      const config = obj(o.config, 'config');
      const base: Base = {
        instanceId: o.instanceId,
        name: typeof o.name === 'string' ? o.name : '',
        revision: typeof o.revision === 'number' ? o.revision : 0,
        key: JSON.stringify([o.instanceId, o.revision, o.config, o.logo ?? null]),
      };
      if (o.pluginId === 'countdown-bar') out.push({ ...base, pluginId: 'countdown-bar', config: countdown(config) });
      else if (o.pluginId === 'brand-bug') out.push({ ...base, pluginId: 'brand-bug', config: brandBug(config), logo: readLogo(o.logo, media) });
      else if (o.pluginId === 'noise-meter') out.push({ ...base, pluginId: 'noise-meter', config: noiseMeter(config) });
      else throw new Bad(`plugin ${String(o.pluginId)} is not drawn by this player`);
    } catch (err) {
      if (!(err instanceof Bad)) throw err;
      problems.push(`overlay ${i} skipped: ${err.message}`);
    }
  }
  return out;
}

// ---- countdown timing ----

const formatters = new Map<string, Intl.DateTimeFormat>();
/** Wall-clock parts of `t` in `zone` (year, month, day, hour, minute, second, ISO weekday). */
export function wallClock(t: number, zone: string): { y: number; mo: number; d: number; h: number; mi: number; s: number; wd: number } {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
    });
    formatters.set(zone, f);
  }
  const p: Record<string, string> = {};
  for (const part of f.formatToParts(new Date(t))) p[part.type] = part.value;
  const wd = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(p.weekday ?? '') + 1;
  return { y: Number(p.year), mo: Number(p.month), d: Number(p.day), h: Number(p.hour) % 24, mi: Number(p.minute), s: Number(p.second), wd };
}

/**
 * The instant the wall-clock time y-mo-d h:mi has in `zone`. A time that does not exist (the
 * hour skipped by a spring-forward) is taken at the same offset as before the change, so it
 * lands just after the gap; an ambiguous one (autumn) is its first occurrence.
 */
export function zonedInstant(y: number, mo: number, d: number, h: number, mi: number, zone: string): number {
  const asUtc = Date.UTC(y, mo - 1, d, h, mi);
  const offsetAt = (t: number) => {
    const w = wallClock(t, zone);
    return Date.UTC(w.y, w.mo - 1, w.d, w.h, w.mi, w.s) - Math.floor(t / 1000) * 1000;
  };
  // Try the offsets in force a day either side: the earliest instant that shows the wanted wall clock.
  const candidates = [...new Set([offsetAt(asUtc - 86_400_000), offsetAt(asUtc), offsetAt(asUtc + 86_400_000)])]
    .map((off) => asUtc - off)
    .sort((a, b) => a - b);
  for (const t of candidates) {
    const w = wallClock(t, zone);
    if (w.y === y && w.mo === mo && w.d === d && w.h === h && w.mi === mi) return t;
  }
  return asUtc - offsetAt(asUtc - 86_400_000);
}

/**
 * The target the countdown counts to at `now`: the target still running (within afterZero.forMin
 * after it, so the after-zero display can show) or the next one.
 */
export function countdownTarget(c: CountdownConfig, now: number, zone: string): number | null {
  if (c.target.type === 'at') return c.target.at;
  const [hh, mm] = c.target.time.split(':').map(Number) as [number, number];
  const keepMs = c.afterZero.show === 'hide' ? 0 : c.afterZero.forMin * 60_000;
  const today = wallClock(now, zone);
  // From yesterday (a target still in its after-zero time) up to eight days ahead.
  for (let i = -1; i <= 8; i++) {
    const day = new Date(Date.UTC(today.y, today.mo - 1, today.d + i));
    const wd = ((day.getUTCDay() + 6) % 7) + 1;
    if (c.target.weekdays && !c.target.weekdays.includes(wd)) continue;
    const t = zonedInstant(day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate(), hh, mm, zone);
    if (t + keepMs > now) return t;
  }
  return null;
}

export interface CountdownState {
  visible: boolean;
  /** 0..1: remaining / window (0 after zero). */
  fraction: number;
  text: string;
  phase: 'before' | 'after' | 'hidden';
}

export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const two = (v: number) => String(v).padStart(2, '0');
  return h > 0 ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
}

/** What the bar shows at `now`. */
export function countdownState(c: CountdownConfig, now: number, zone: string): CountdownState {
  const hidden: CountdownState = { visible: false, fraction: 0, text: '', phase: 'hidden' };
  const target = countdownTarget(c, now, zone);
  if (target === null) return hidden;
  const windowMs = c.windowMin * 60_000;
  const remaining = target - now;
  const label = c.label ? `${c.label} ` : '';
  if (remaining > 0) {
    if (remaining > windowMs) return hidden;
    return { visible: true, fraction: Math.min(1, remaining / windowMs), text: `${label}${formatDuration(remaining)}`, phase: 'before' };
  }
  const since = -remaining;
  if (c.afterZero.show === 'hide' || since >= c.afterZero.forMin * 60_000) return hidden;
  if (c.afterZero.show === 'message') return { visible: true, fraction: 0, text: c.afterZero.text, phase: 'after' };
  return { visible: true, fraction: 0, text: `${label}+${formatDuration(since)}`, phase: 'after' };
}

/** The level a meter shows: the measured level plus the calibration offset, clamped to 0..100. */
export function calibrated(level: number, offset: number): number {
  return Math.round(Math.min(100, Math.max(0, level + offset)) * 10) / 10;
}
