/**
 * The plugin overlays (docs/player-overlays.md): one layer above the content and below the
 * pairing, network-test and notice UI, drawn from the manifest's `overlays` (overlay-config.ts).
 * A new manifest keeps the DOM node of every unchanged instance; one 250 ms timer animates the
 * countdown, the noise meter and the brand bug's video check, and stops when nothing needs it.
 */
import type { MediaCache } from './media-cache.js';
import type { PlayerManifest } from './manifest.js';
import { type Corner, type CountdownConfig, countdownState, type NoiseMeterConfig, type Overlay } from './overlay-config.js';

export interface OverlayDeps {
  cache: MediaCache;
  /** The server-corrected clock (the engine's). */
  now(): number;
  /** The stage the content plays in (to see a full-screen video). */
  stage: HTMLElement;
  /** The live noise level (already calibrated) or null while the meter is off. */
  noise(): { level: number; status: 'normal' | 'warning' | 'loud' } | null;
}

interface Drawn {
  key: string;
  el: HTMLElement;
  /** Draws the current state; true while it needs the timer. */
  tick(): boolean;
}

const SVG = 'http://www.w3.org/2000/svg';
const TICK_MS = 250;

function div(className: string): HTMLDivElement {
  const e = document.createElement('div');
  e.className = className;
  return e;
}

function placeInCorner(e: HTMLElement, corner: Corner, marginPct: number): void {
  const [v, h] = corner.split('-') as ['top' | 'bottom', 'left' | 'right'];
  // Margins in % of the screen width (cqw: the layer is the size container), on both axes alike.
  e.style[v] = `${marginPct}cqw`;
  e.style[h] = `${marginPct}cqw`;
}

export class OverlayLayer {
  readonly el: HTMLDivElement;
  private drawn = new Map<string, Drawn>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private zone = 'UTC';

  constructor(
    parent: HTMLElement,
    before: Element | null,
    private readonly deps: OverlayDeps,
  ) {
    this.el = div('pl-overlays');
    this.el.dataset.testid = 'overlays';
    parent.insertBefore(this.el, before);
  }

  /** A new manifest: instances gone are removed, new or changed ones drawn, the rest left alone. */
  update(manifest: PlayerManifest | null): void {
    this.zone = manifest?.timeZone ?? 'UTC';
    const next = new Map<string, Drawn>();
    for (const o of manifest?.overlays ?? []) {
      const had = this.drawn.get(o.instanceId);
      if (had && had.key === o.key) {
        next.set(o.instanceId, had);
        this.drawn.delete(o.instanceId);
        continue;
      }
      const made = this.make(o);
      if (had) had.el.replaceWith(made.el);
      else this.el.append(made.el);
      this.drawn.delete(o.instanceId);
      next.set(o.instanceId, made);
    }
    for (const gone of this.drawn.values()) gone.el.remove();
    // Document order follows the manifest's order (later ones on top).
    for (const d of next.values()) this.el.append(d.el);
    this.drawn = next;
    this.run();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const d of this.drawn.values()) d.el.remove();
    this.drawn.clear();
  }

  /** Draws everything once and keeps the timer only while something animates. */
  private run(): void {
    let busy = false;
    for (const d of this.drawn.values()) busy = d.tick() || busy;
    if (busy && !this.timer) this.timer = setInterval(() => this.run(), TICK_MS);
    else if (!busy && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private make(o: Overlay): Drawn {
    const el = div(`pl-overlay pl-overlay-${o.pluginId}`);
    el.dataset.instanceId = o.instanceId;
    el.dataset.plugin = o.pluginId;
    const key = o.key;
    if (o.pluginId === 'countdown-bar') return { key, el, tick: this.countdown(el, o.config) };
    if (o.pluginId === 'noise-meter') return { key, el, tick: this.meter(el, o.config) };
    return { key, el, tick: this.brandBug(el, o) };
  }

  private countdown(el: HTMLElement, c: CountdownConfig): () => boolean {
    el.style[c.position] = '0';
    el.style.height = `${c.heightPct}%`;
    el.style.background = c.colors.background;
    const bar = el.appendChild(div('pl-countdown-fill'));
    bar.style.background = c.colors.bar;
    const label = el.appendChild(div('pl-countdown-text'));
    label.style.color = c.colors.text;
    label.style.fontSize = `${Math.max(1, c.heightPct * 0.55)}cqh`;
    let shown = '';
    return () => {
      const s = countdownState(c, this.deps.now(), this.zone);
      el.hidden = !s.visible;
      const width = `${(s.fraction * 100).toFixed(3)}%`;
      if (bar.style.width !== width) bar.style.width = width;
      if (shown !== s.text) label.textContent = shown = s.text;
      el.dataset.phase = s.phase;
      // Always ticking: the bar appears at its window's start (a daily target comes back every day).
      return true;
    };
  }

  private brandBug(el: HTMLElement, o: Extract<Overlay, { pluginId: 'brand-bug' }>): () => boolean {
    const c = o.config;
    placeInCorner(el, c.corner, c.marginPct);
    el.style.width = `${c.sizePct}cqw`;
    el.style.opacity = String(c.opacity);
    const img = el.appendChild(document.createElement('img'));
    img.alt = '';
    img.decoding = 'async';
    let loaded = false;
    let loading = false;
    let tries = 0;
    const load = () => {
      if (loaded || loading || tries > 120) return;
      loading = true;
      tries += 1;
      // The cached copy (offline too); the network address only while the cache does not have it yet.
      void this.deps.cache
        .objectUrl(o.logo)
        .catch(() => null)
        .then((url) => {
          loading = false;
          if (url) loaded = true;
          const src = url ?? (tries === 1 ? o.logo.url : null);
          if (src && img.src !== src) img.src = src;
        });
    };
    load();
    return () => {
      if (!loaded) load();
      if (c.hideDuringFullScreenVideo) el.hidden = this.fullScreenVideo();
      return (!loaded && tries <= 120) || c.hideDuringFullScreenVideo;
    };
  }

  /** A playing video covers (almost) the whole screen: a single-zone playlist or a full-screen layout zone. */
  private fullScreenVideo(): boolean {
    const screen = this.el.getBoundingClientRect();
    for (const v of this.deps.stage.querySelectorAll('video')) {
      if (v.paused || v.ended || !v.isConnected) continue;
      const r = v.getBoundingClientRect();
      if (r.width >= screen.width * 0.98 && r.height >= screen.height * 0.98 && getComputedStyle(v).visibility !== 'hidden') return true;
    }
    return false;
  }

  private meter(el: HTMLElement, c: NoiseMeterConfig): () => boolean {
    const banner = el.appendChild(div('pl-noise-banner'));
    banner.textContent = c.loudMessage;
    banner.hidden = true;
    if (c.display === 'hidden') {
      el.hidden = false;
      return () => {
        banner.hidden = true;
        return false;
      };
    }
    const box = el.appendChild(div(`pl-noise pl-noise-${c.display}`));
    placeInCorner(box, c.corner, 2);
    box.style.width = `${c.sizePct}cqw`;
    const colorOf = (status: string) => (status === 'loud' ? '#dc2626' : status === 'warning' ? '#f59e0b' : '#16a34a');
    let draw: (level: number, status: string) => void;
    if (c.display === 'bar') {
      // The fill is a share of its track, so the value beside it keeps its place at 100.
      const fill = box.appendChild(div('pl-noise-track')).appendChild(div('pl-noise-fill'));
      draw = (level, status) => {
        fill.style.width = `${level}%`;
        fill.style.background = colorOf(status);
      };
    } else if (c.display === 'dial') {
      const svg = document.createElementNS(SVG, 'svg');
      svg.setAttribute('viewBox', '0 0 100 60');
      const arc = (from: number, to: number, color: string) => {
        const p = (v: number) => {
          const a = Math.PI * (1 - v / 100);
          return `${(50 + 40 * Math.cos(a)).toFixed(2)} ${(52 - 40 * Math.sin(a)).toFixed(2)}`;
        };
        const path = document.createElementNS(SVG, 'path');
        path.setAttribute('d', `M ${p(from)} A 40 40 0 0 1 ${p(to)}`);
        path.setAttribute('stroke', color);
        path.setAttribute('stroke-width', '10');
        path.setAttribute('fill', 'none');
        svg.append(path);
      };
      arc(0, c.warningLevel, '#16a34a');
      arc(c.warningLevel, c.loudLevel, '#f59e0b');
      arc(c.loudLevel, 100, '#dc2626');
      const needle = document.createElementNS(SVG, 'line');
      needle.setAttribute('x1', '50');
      needle.setAttribute('y1', '52');
      needle.setAttribute('stroke', '#f4f4f5');
      needle.setAttribute('stroke-width', '3');
      svg.append(needle);
      box.append(svg);
      draw = (level) => {
        const a = Math.PI * (1 - level / 100);
        needle.setAttribute('x2', (50 + 36 * Math.cos(a)).toFixed(2));
        needle.setAttribute('y2', (52 - 36 * Math.sin(a)).toFixed(2));
      };
    } else {
      const lights = (['normal', 'warning', 'loud'] as const).map((s) => {
        const l = box.appendChild(div('pl-noise-light'));
        l.dataset.status = s;
        return l;
      });
      draw = (_level, status) => {
        for (const l of lights) l.style.background = l.dataset.status === status ? colorOf(status) : '#3f3f46';
      };
    }
    const value = box.appendChild(div('pl-noise-value'));
    return () => {
      const live = this.deps.noise();
      box.hidden = !live;
      banner.hidden = live?.status !== 'loud' || !c.loudMessage;
      if (live) {
        draw(live.level, live.status);
        value.textContent = String(Math.round(live.level));
        box.dataset.status = live.status;
        box.dataset.level = String(live.level);
      }
      return true;
    };
  }
}
