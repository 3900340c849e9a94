/**
 * One playlist inside a box (the whole screen or a zone): items fade in over the old one
 * once ready (image decoded, video playing, page loaded, widget frame loaded), so the
 * screen is never blank between items. Split from engine.ts, which arranges the boxes.
 */
import type { MediaCache } from './media-cache.js';
import { mediaForItem, type MediaEntry, type PlayerManifest, type Playlist, type PlaylistItem } from './manifest.js';
import { itemDurationMs, PlaylistSequencer } from './schedule.js';
import { PREPARE_MS, RECHECK_MS, syncedItemAt } from './sync.js';
import { frameDecision, widgetOf } from './widget-frame.js';
import { frameLoaded, widgetFrame } from './widget-view.js';

export const FADE_MS = 700;
export const RETRY_MS = 2_000;

export interface EngineContext {
  cache: MediaCache;
  /** The server-corrected clock. */
  now(): number;
  log(message: string): void;
  /** Other content went on screen (a schedule boundary, a new manifest): the player reports it soon. */
  onContentChange?(): void;
  /** A manifest was put on (the overlay layer follows it). */
  onManifest?(manifest: PlayerManifest): void;
}

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  e.className = className;
  return e;
}

/** Plays one playlist inside a box (the whole screen or a zone). */
export class ZonePlayer {
  readonly root: HTMLDivElement;
  private readonly sequencer: PlaylistSequencer;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private current: { item: PlaylistItem; layer: HTMLElement } | null = null;
  private stopped = false;
  private generation = 0;

  constructor(
    private readonly playlist: Playlist,
    private manifest: PlayerManifest,
    private readonly ctx: EngineContext,
    private readonly box: () => { width: number; height: number },
  ) {
    this.root = el('div', 'pl-zone');
    this.sequencer = new PlaylistSequencer(playlist.items);
  }

  get nowPlaying(): { item: PlaylistItem | null; playlistId: string } {
    return { item: this.current?.item ?? null, playlistId: this.playlist.id };
  }

  start(): void {
    void this.advance();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const v of this.root.querySelectorAll('video')) v.pause();
  }

  private media(item: PlaylistItem): MediaEntry | null {
    return mediaForItem(this.manifest, item, this.box());
  }

  private pages(item: PlaylistItem): MediaEntry[] {
    return item.pageVariantIds.map((v) => this.manifest.media.find((m) => m.variantId === v)).filter((m): m is MediaEntry => m !== undefined);
  }

  private ready = (item: PlaylistItem): boolean => {
    if (item.kind === 'website') return item.url !== null;
    if (item.kind === 'widget') {
      const entry = widgetOf(this.manifest, item);
      return entry !== null && this.ctx.cache.isReady(entry);
    }
    if (item.kind === 'pdf') {
      const pages = this.pages(item);
      return pages.length > 0 && pages.length === item.pageVariantIds.length && pages.every((p) => this.ctx.cache.isReady(p));
    }
    if (item.kind !== 'image' && item.kind !== 'video') return false;
    const m = this.media(item);
    return m !== null && this.ctx.cache.isReady(m);
  };

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    const gen = this.generation;
    this.timer = setTimeout(() => {
      if (gen === this.generation) void this.advance();
    }, ms);
  }

  /** Shows the next playable item; when none is, keeps what is on and tries again shortly. */
  async advance(): Promise<void> {
    if (this.stopped) return;
    if (this.manifest.network) return this.advanceSynced(this.manifest.network.epoch);
    this.generation += 1;
    const gen = this.generation;
    const item = this.sequencer.next(this.ctx.now(), this.manifest.timeZone, this.ready);
    if (!item) {
      if (this.current && !this.ready(this.current.item)) this.clear();
      this.schedule(RETRY_MS);
      return;
    }
    // The same single item again: leave it on (no flicker), restart a video.
    if (this.current && this.current.item.id === item.id && this.playlist.items.length === 1 && item.kind !== 'video') {
      // A widget whose new bundle was not cached when the manifest came: its frame is replaced now.
      if (item.kind === 'widget' && frameDecision(this.current.layer.dataset.bundleId ?? null, widgetOf(this.manifest, item)) === 'swap')
        void this.swapWidget(this.current);
      this.schedule(itemDurationMs(item));
      return;
    }
    let layer: HTMLElement | null = null;
    try {
      layer = await this.build(item);
    } catch (err) {
      this.ctx.log(`Item ${item.id} could not be shown: ${(err as Error).message}`);
    }
    if (this.stopped || gen !== this.generation) {
      layer?.remove();
      return;
    }
    if (!layer) {
      this.schedule(RETRY_MS);
      return;
    }
    this.show(item, layer);
    if (item.kind === 'video') {
      const video = layer.querySelector('video');
      video?.addEventListener('ended', () => {
        if (gen === this.generation) void this.advance();
      });
    }
    this.schedule(itemDurationMs(item));
  }

  /**
   * A presentation network member (sync.ts): the item the shared epoch puts on now, or the
   * next one prepared ahead and shown at its boundary on the server clock.
   */
  private async advanceSynced(epoch: number): Promise<void> {
    const gen = ++this.generation;
    const zone = this.manifest.timeZone;
    const now = this.ctx.now();
    const slot = syncedItemAt(this.playlist.items, epoch, now, zone);
    if (!slot) {
      this.clear();
      return this.schedule(RETRY_MS);
    }
    const target = slot.endsAt - now <= PREPARE_MS ? (syncedItemAt(this.playlist.items, epoch, slot.endsAt, zone) ?? slot) : slot;
    const recheck = () => this.schedule(Math.max(20, Math.min(RECHECK_MS, target.endsAt - PREPARE_MS - this.ctx.now())));
    if (this.current?.item.id === target.item.id) return recheck();
    if (!this.ready(target.item)) return this.schedule(Math.min(RETRY_MS, Math.max(20, target.endsAt - PREPARE_MS - now)));
    let layer: HTMLElement | null = null;
    try {
      layer = await this.build(target.item);
    } catch (err) {
      this.ctx.log(`Item ${target.item.id} could not be shown: ${(err as Error).message}`);
    }
    const wait = target.startsAt - this.ctx.now();
    if (layer && wait > 0) await delay(wait);
    if (this.stopped || gen !== this.generation) {
      layer?.remove();
      return;
    }
    if (!layer) return this.schedule(RETRY_MS);
    this.show(target.item, layer);
    recheck();
  }

  /**
   * A new manifest with the same playlist (its signature did not change): later items use its
   * bundles; a widget on screen whose bundle changed is rebuilt hidden and cut in once loaded
   * (the same bundle keeps its frame: a ticker or clock runs on).
   */
  update(manifest: PlayerManifest): void {
    this.manifest = manifest;
    const cur = this.current;
    if (cur?.item.kind !== 'widget' || this.stopped) return;
    const entry = widgetOf(manifest, cur.item);
    if (frameDecision(cur.layer.dataset.bundleId ?? null, entry) !== 'swap' || !entry || !this.ctx.cache.isReady(entry)) return;
    void this.swapWidget(cur);
  }

  private async swapWidget(cur: { item: PlaylistItem; layer: HTMLElement }): Promise<void> {
    const gen = this.generation;
    let layer: HTMLElement | null = null;
    try {
      layer = await this.build(cur.item);
    } catch (err) {
      this.ctx.log(`Widget ${cur.item.widgetId} could not be shown: ${(err as Error).message}`);
    }
    if (!layer) return;
    if (this.stopped || gen !== this.generation || this.current !== cur) {
      layer.remove();
      return;
    }
    // A cut: the new frame on at once over the old, which leaves a frame later (never a blank moment).
    this.current = { item: cur.item, layer };
    Object.assign(layer.dataset, cur.layer.dataset, { bundleId: layer.dataset.bundleId });
    layer.style.transitionDuration = '0ms';
    layer.classList.add('pl-visible');
    requestAnimationFrame(() => requestAnimationFrame(() => cur.layer.remove()));
  }

  private clear(): void {
    const old = this.current?.layer;
    this.current = null;
    if (old) this.fadeOut(old);
  }

  private show(item: PlaylistItem, layer: HTMLElement): void {
    const old = this.current?.layer ?? null;
    this.current = { item, layer };
    layer.dataset.itemId = item.id;
    if (item.assetId) layer.dataset.assetId = item.assetId;
    layer.dataset.kind = item.kind;
    const ms = item.transition.type === 'none' ? 0 : item.transition.durationMs;
    layer.style.transitionDuration = `${ms}ms`;
    if (item.transition.type === 'slide') layer.classList.add('pl-slide');
    requestAnimationFrame(() => requestAnimationFrame(() => layer.classList.add('pl-visible')));
    // The old item leaves once the new one covers it.
    if (old) setTimeout(() => this.fadeOut(old, 0), ms);
  }

  private fadeOut(layer: HTMLElement, ms = FADE_MS): void {
    layer.style.transitionDuration = `${ms}ms`;
    layer.classList.remove('pl-visible');
    const video = layer.querySelector('video');
    setTimeout(() => {
      video?.pause();
      video?.removeAttribute('src');
      video?.load();
      layer.remove();
    }, ms);
  }

  /** A PDF: its page images in turn, sharing the item's duration (at least 3 s a page). */
  private async buildPages(item: PlaylistItem, layer: HTMLElement): Promise<HTMLElement | null> {
    const urls: string[] = [];
    for (const page of this.pages(item)) {
      const url = await this.ctx.cache.objectUrl(page);
      if (!url) return null;
      urls.push(url);
    }
    if (urls.length === 0) return null;
    const img = el('img', 'pl-media');
    img.alt = '';
    img.src = urls[0]!;
    layer.append(img);
    this.root.append(layer);
    await img.decode();
    const perPage = Math.max(3_000, itemDurationMs(item) / urls.length);
    let i = 0;
    const gen = this.generation;
    const turn = () => {
      if (this.stopped || gen !== this.generation || ++i >= urls.length) return;
      img.src = urls[i]!;
      setTimeout(turn, perPage);
    };
    setTimeout(turn, perPage);
    return layer;
  }

  /** A layer for the item, appended hidden and resolved once it can be shown. */
  private async build(item: PlaylistItem): Promise<HTMLElement | null> {
    const layer = el('div', `pl-layer pl-fit-${item.fit}`);
    if (item.kind === 'website') {
      const frame = el('iframe', 'pl-frame');
      frame.src = item.url ?? 'about:blank';
      frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
      frame.setAttribute('referrerpolicy', 'no-referrer');
      frame.setAttribute('allow', 'autoplay');
      frame.tabIndex = -1;
      layer.append(frame);
      this.root.append(layer);
      await Promise.race([new Promise((r) => frame.addEventListener('load', r, { once: true })), delay(4000)]);
      return layer;
    }
    if (item.kind === 'pdf') return this.buildPages(item, layer);
    if (item.kind === 'widget') {
      const entry = widgetOf(this.manifest, item);
      if (!entry) return null;
      this.root.append(layer);
      // The frame's viewport: the zone in CSS pixels (a layout's canvas is scaled as a whole).
      const size = this.root.clientWidth > 0 ? { width: this.root.clientWidth, height: this.root.clientHeight } : this.box();
      const frame = await widgetFrame(entry, this.manifest, this.ctx, size).catch((err) => {
        layer.remove();
        throw err;
      });
      if (!frame) {
        layer.remove();
        return null;
      }
      layer.dataset.bundleId = entry.bundleId;
      layer.dataset.widgetId = entry.widgetId;
      layer.append(frame);
      await frameLoaded(frame);
      return layer;
    }
    const entry = this.media(item);
    const src = entry ? await this.ctx.cache.objectUrl(entry) : null;
    if (!src) return null;
    if (item.kind === 'image') {
      const img = el('img', 'pl-media');
      img.alt = '';
      img.decoding = 'async';
      img.src = src;
      layer.append(img);
      this.root.append(layer);
      await img.decode();
      return layer;
    }
    const video = el('video', 'pl-media');
    video.muted = true;
    video.defaultMuted = true;
    video.playsInline = true;
    video.preload = 'auto';
    video.setAttribute('muted', '');
    video.setAttribute('playsinline', '');
    const poster = item.posterVariantId ? this.manifest.media.find((m) => m.variantId === item.posterVariantId) : undefined;
    if (poster && this.ctx.cache.isReady(poster)) {
      const posterUrl = await this.ctx.cache.objectUrl(poster);
      if (posterUrl) video.poster = posterUrl;
    }
    video.src = src;
    layer.append(video);
    this.root.append(layer);
    // Muted autoplay always works; sound only where the zone or item asks for it and the
    // browser allows it (the kiosk does), else muted.
    const start = async () => {
      if (!item.muted) {
        video.muted = false;
        try {
          await video.play();
          return;
        } catch {
          video.muted = true;
        }
      }
      await video.play();
    };
    await Promise.race([
      new Promise<void>((resolve, reject) => {
        video.addEventListener('playing', () => resolve(), { once: true });
        video.addEventListener('error', () => reject(new Error(`video error ${video.error?.code ?? ''}`)), { once: true });
      }),
      start(),
      delay(8000).then(() => {
        throw new Error('video did not start');
      }),
    ]).catch((err) => {
      layer.remove();
      throw err;
    });
    return layer;
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
