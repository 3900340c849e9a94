/**
 * The playback engine: shows the manifest's timeline. A playlist fills the screen; a
 * layout is a canvas of zones scaled to the screen (letterboxed); each zone plays its
 * playlist. Images and websites stay for their duration, videos (muted, inline) until
 * `ended`. A new item fades in over the old one once it is ready to show (image decoded,
 * video playing, page loaded), so the screen is never blank between items. Only media
 * that is fully cached and verified plays.
 */
import { DataZone } from './data-zone.js';
import { fitCanvas, zoneRect } from './geometry.js';
import type { NowPlaying } from './identity.js';
import type { Content, Layout, PlayerManifest, Playlist, Segment } from './manifest.js';
import { nextBoundary, segmentKey, segmentToShow } from './schedule.js';
import { drawScreenshot } from './screenshot.js';
import { WidgetZone } from './widget-view.js';
import { type EngineContext, el, FADE_MS, ZonePlayer } from './zone-player.js';

function playlistSignature(p: Playlist | null): string {
  // A widget's bundle is not part of it: a new bundle replaces the frame, not the playlist.
  return p
    ? JSON.stringify(p.items.map((i) => [i.id, i.assetId, i.variantId, i.url, i.durationMs, i.validFrom, i.validUntil, i.dayParts, i.fit, i.widgetId]))
    : '';
}

function contentSignature(c: Content): string {
  if (c.type === 'playlist') return `p:${c.playlist.id}:${playlistSignature(c.playlist)}`;
  if (c.type === 'layout')
    return `l:${c.layout.id}:${c.layout.width}x${c.layout.height}:${JSON.stringify([c.layout.background, c.layout.backgroundAssetId, c.layout.backgroundVariantId])}:${JSON.stringify(c.layout.zones.map((z) => [z.id, z.x, z.y, z.width, z.height, z.zIndex, z.background, playlistSignature(z.playlist), z.data && [z.data.sourceId, z.data.viewKey], z.widget?.widgetId ?? null]))}`;
  if (c.type === 'message') return `m:${c.message.severity}:${c.message.text}`;
  return 'idle';
}

/** One segment's content on the stage: a full-screen playlist, a layout, or the idle slide. */
class ContentView {
  readonly root: HTMLDivElement;
  readonly zones: ZonePlayer[] = [];
  readonly dataZones: DataZone[] = [];
  readonly widgetZones: WidgetZone[] = [];
  private canvas: HTMLDivElement | null = null;
  private layout: Layout | null = null;

  constructor(
    readonly segment: Segment | null,
    readonly signature: string,
    manifest: PlayerManifest | null,
    ctx: EngineContext,
    private readonly idleText: () => string,
  ) {
    this.root = el('div', 'pl-content');
    const content = segment?.content ?? { type: 'idle' as const };
    if (content.type === 'playlist' && manifest) {
      const zone = new ZonePlayer(content.playlist, manifest, ctx, () => ({ width: innerWidth, height: innerHeight }));
      zone.root.classList.add('pl-full');
      this.zones.push(zone);
      this.root.append(zone.root);
    } else if (content.type === 'layout' && manifest) {
      this.layout = content.layout;
      const canvas = el('div', 'pl-canvas');
      canvas.style.width = `${content.layout.width}px`;
      canvas.style.height = `${content.layout.height}px`;
      if (content.layout.background) canvas.style.backgroundColor = content.layout.background;
      const bgEntry =
        manifest.media.find((m) => m.variantId === content.layout.backgroundVariantId) ??
        (content.layout.backgroundAssetId
          ? manifest.media.find((m) => m.assetId === content.layout.backgroundAssetId && m.contentType.startsWith('image/'))
          : undefined);
      if (bgEntry) {
        void ctx.cache.objectUrl(bgEntry).then((url) => {
          if (url) Object.assign(canvas.style, { backgroundImage: `url("${url}")`, backgroundSize: 'cover', backgroundPosition: 'center' });
        });
      }
      for (const z of [...content.layout.zones].sort((a, b) => a.zIndex - b.zIndex)) {
        const rect = zoneRect(z, content.layout);
        const zp = z.data
          ? new DataZone({ ...z, data: z.data }, manifest, ctx, rect)
          : z.widget
            ? new WidgetZone({ ...z, widget: z.widget }, manifest, ctx, rect)
            : new ZonePlayer(z.playlist ?? { id: `${z.id}-empty`, name: null, items: [] }, manifest, ctx, () => ({
                width: rect.width * this.scale(),
                height: rect.height * this.scale(),
              }));
        Object.assign(zp.root.style, {
          left: `${rect.x}px`,
          top: `${rect.y}px`,
          width: `${rect.width}px`,
          height: `${rect.height}px`,
          zIndex: String(z.zIndex),
        });
        if (z.background) zp.root.style.background = z.background;
        zp.root.dataset.zoneId = z.id;
        if (zp instanceof DataZone) this.dataZones.push(zp);
        else if (zp instanceof WidgetZone) this.widgetZones.push(zp);
        else this.zones.push(zp);
        canvas.append(zp.root);
      }
      this.canvas = canvas;
      this.root.append(canvas);
      this.resize();
    } else if (content.type === 'message') {
      // A takeover's or override's message: full screen, styled by severity (emergency: red, large).
      const box = el('div', `pl-message pl-message-${content.message.severity}`);
      box.setAttribute('role', content.message.severity === 'emergency' ? 'alert' : 'status');
      const text = el('div', 'pl-message-text');
      text.textContent = content.message.text;
      box.append(text);
      this.root.append(box);
    } else {
      const idle = el('div', 'pl-idle');
      idle.innerHTML = '<div class="pl-idle-mark">Placard</div><div class="pl-idle-clock"></div>';
      this.root.append(idle);
      this.tickIdle();
    }
  }

  private scale(): number {
    return this.layout ? fitCanvas(this.layout, { width: innerWidth, height: innerHeight }).scale : 1;
  }

  resize(): void {
    if (!this.canvas || !this.layout) return;
    const fit = fitCanvas(this.layout, { width: innerWidth, height: innerHeight });
    this.canvas.style.transform = `translate(${fit.offsetX}px, ${fit.offsetY}px) scale(${fit.scale})`;
  }

  private idleTimer: ReturnType<typeof setInterval> | null = null;

  private tickIdle(): void {
    const clock = this.root.querySelector('.pl-idle-clock');
    const update = () => {
      if (clock) clock.textContent = this.idleText();
    };
    update();
    this.idleTimer = setInterval(update, 10_000);
  }

  start(): void {
    for (const z of [...this.zones, ...this.dataZones, ...this.widgetZones]) z.start();
  }

  /** Content that stays on gets the new manifest: data zones move to new outputs, widgets to new bundles (each once cached). */
  update(manifest: PlayerManifest): void {
    for (const z of [...this.zones, ...this.dataZones, ...this.widgetZones]) z.update(manifest);
  }

  stop(): void {
    for (const z of [...this.zones, ...this.dataZones, ...this.widgetZones]) z.stop();
    if (this.idleTimer) clearInterval(this.idleTimer);
  }
}

export class PlaybackEngine {
  private manifest: PlayerManifest | null = null;
  private view: ContentView | null = null;
  private boundaryTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly stage: HTMLElement,
    private readonly ctx: EngineContext,
  ) {
    addEventListener('resize', () => this.view?.resize());
  }

  get revision(): string | null {
    return this.manifest?.revision ?? null;
  }

  get current(): PlayerManifest | null {
    return this.manifest;
  }

  /** Puts a (new) manifest on: the content changes only where the timeline's content did. */
  apply(manifest: PlayerManifest): void {
    this.manifest = manifest;
    this.refresh();
    // Content that stays on: its data zones move to the new outputs, its widgets to new bundles (each once cached).
    this.view?.update(manifest);
    this.ctx.onManifest?.(manifest);
  }

  /** Re-evaluates what should be on now (after a manifest change, a boundary, or new media). */
  refresh(): void {
    if (this.boundaryTimer) clearTimeout(this.boundaryTimer);
    const now = this.ctx.now();
    const segment = this.manifest ? segmentToShow(this.manifest.timeline, now) : null;
    const signature = `${segmentKey(segment)}#${segment ? contentSignature(segment.content) : 'idle'}`;
    if (!this.view || this.view.signature !== signature) this.swap(new ContentView(segment, signature, this.manifest, this.ctx, () => this.idleText()));
    const boundary = this.manifest ? nextBoundary(this.manifest.timeline, now) : null;
    // Timers are capped so a clock jump or a long sleep is caught within a minute.
    const wait = boundary === null ? 60_000 : Math.min(60_000, Math.max(50, boundary - now + 20));
    this.boundaryTimer = setTimeout(() => this.refresh(), wait);
  }

  private swap(next: ContentView): void {
    const old = this.view;
    this.view = next;
    this.stage.append(next.root);
    next.start();
    this.ctx.onContentChange?.();
    requestAnimationFrame(() => requestAnimationFrame(() => next.root.classList.add('pl-visible')));
    if (old) {
      setTimeout(() => {
        old.root.classList.remove('pl-visible');
        setTimeout(() => {
          old.stop();
          old.root.remove();
        }, FADE_MS);
      }, FADE_MS);
    }
  }

  private idleText(): string {
    const zone = this.manifest?.timeZone ?? 'UTC';
    try {
      return new Intl.DateTimeFormat(undefined, { timeZone: zone, hour: '2-digit', minute: '2-digit', weekday: 'long' }).format(new Date(this.ctx.now()));
    } catch {
      return '';
    }
  }

  /** What is on screen, for the heartbeat (the first zone's item stands for a layout). */
  nowPlaying(): NowPlaying {
    const seg = this.view?.segment ?? null;
    const zone = this.view?.zones.find((z) => z.nowPlaying.item) ?? this.view?.zones[0];
    const np = zone?.nowPlaying;
    const content = seg?.content;
    return {
      playlistId: content?.type === 'playlist' ? content.playlist.id : (np?.playlistId ?? null),
      layoutId: content?.type === 'layout' ? content.layout.id : null,
      itemId: np?.item?.id ?? null,
      // A widget item: its widget's id stands for the asset (the server names it; docs/content.md).
      assetId: np?.item?.assetId ?? np?.item?.widgetId ?? null,
      scheduleId: seg?.source.type === 'schedule' ? seg.source.id : null,
      campaignId: seg?.campaignId ?? null,
    };
  }

  stop(): void {
    if (this.boundaryTimer) clearTimeout(this.boundaryTimer);
    this.view?.stop();
    this.view?.root.remove();
    this.view = null;
    this.manifest = null;
  }

  /** Draws what is visible into a JPEG data URL (screenshot.ts). */
  screenshot(maxWidth = 1280): string | null {
    return drawScreenshot(this.stage, maxWidth);
  }
}
