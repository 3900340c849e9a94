/**
 * Widgets on screen (docs/player.md "Widgets"): a widget's bundle, read from the media
 * cache, shown in an iframe sandboxed with scripts only (never allow-same-origin: an opaque
 * origin), its `srcdoc` the bundle with the context written in and its images as data: URLs,
 * held to a no-network policy by the `csp` attribute too. A layout zone showing a widget is
 * a WidgetZone: the same bundle in a new manifest keeps its frame (a ticker or a clock runs
 * on, no flash); a new bundle is built hidden beside the old frame and swapped in once loaded.
 * The logic is in widget-frame.ts.
 */
import type { PlayerManifest, WidgetEntry, Zone } from './manifest.js';
import type { MediaCache } from './media-cache.js';
import { FRAME_SANDBOX, framePolicy, frameDecision, widgetDocument, widgetImages, widgetOf } from './widget-frame.js';

const RETRY_MS = 2_000;
/** A frame that never says it loaded comes on after this anyway. */
const LOAD_TIMEOUT_MS = 4_000;

export interface WidgetViewContext {
  cache: Pick<MediaCache, 'blob' | 'isReady'>;
  log(message: string): void;
}

function readAsDataUrl(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error('unreadable'));
    reader.readAsDataURL(blob);
  });
}

/**
 * The frame for a bundle, not yet attached (null when the bundle is not cached). Its images
 * are the cached variants the manifest names, as data: URLs; one not cached is left empty.
 */
export async function widgetFrame(
  entry: WidgetEntry,
  manifest: PlayerManifest,
  ctx: WidgetViewContext,
  size: { width: number; height: number },
): Promise<HTMLIFrameElement | null> {
  const blob = await ctx.cache.blob(entry);
  if (!blob) return null;
  const html = await blob.text();
  const dataUrls = new Map<string, string>();
  for (const [assetId, media] of widgetImages(manifest, entry)) {
    const body = await ctx.cache.blob(media).catch(() => null);
    if (!body) {
      ctx.log(`Widget ${entry.widgetId}: image ${assetId} is not cached`);
      continue;
    }
    dataUrls.set(assetId, await readAsDataUrl(body.type ? body : new Blob([body], { type: media.contentType })));
  }
  const frame = document.createElement('iframe');
  frame.className = 'pl-widget-frame';
  frame.setAttribute('sandbox', FRAME_SANDBOX);
  // CSP Embedded Enforcement: the frame's document is held to the policy even if its own meta were gone.
  frame.setAttribute('csp', framePolicy(html));
  frame.setAttribute('referrerpolicy', 'no-referrer');
  frame.setAttribute('scrolling', 'no');
  frame.title = `Widget ${entry.widgetId}`;
  frame.tabIndex = -1;
  frame.dataset.widgetId = entry.widgetId;
  frame.dataset.bundleId = entry.bundleId;
  frame.srcdoc = widgetDocument(html, { timeZone: manifest.timeZone, width: size.width, height: size.height, locale: navigator.language }, dataUrls);
  return frame;
}

/** Resolves once the (attached) frame has loaded, or after LOAD_TIMEOUT_MS. */
export function frameLoaded(frame: HTMLIFrameElement): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, LOAD_TIMEOUT_MS);
    frame.addEventListener(
      'load',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** A layout zone showing a widget. */
export class WidgetZone {
  readonly root: HTMLDivElement;
  private shown: { bundleId: string; wrap: HTMLElement } | null = null;
  private stopped = false;
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly zone: Zone & { widget: NonNullable<Zone['widget']> },
    private manifest: PlayerManifest,
    private readonly ctx: WidgetViewContext,
    /** The zone's size in canvas pixels (the frame's viewport: the canvas is scaled as a whole). */
    private readonly box: { width: number; height: number },
  ) {
    this.root = document.createElement('div');
    this.root.className = 'pl-zone pl-widget-zone';
  }

  /** The bundle on screen (null before the first frame loaded). */
  get bundleId(): string | null {
    return this.shown?.bundleId ?? null;
  }

  start(): void {
    void this.load();
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  /** A new manifest: the same bundle stays on; another is built hidden and swapped in once loaded. */
  update(manifest: PlayerManifest): void {
    this.manifest = manifest;
    void this.load();
  }

  private async load(): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.stopped) return;
    const manifest = this.manifest;
    const entry = widgetOf(manifest, this.zone);
    const decision = frameDecision(this.shown?.bundleId ?? null, entry);
    if (decision === 'keep' || decision === 'wait' || !entry) return;
    const attempt = ++this.attempt;
    if (!this.ctx.cache.isReady(entry)) {
      // Not cached yet (the runtime is downloading it): what is on stays; try again shortly.
      this.retryTimer = setTimeout(() => void this.load(), RETRY_MS);
      return;
    }
    let frame: HTMLIFrameElement | null = null;
    try {
      frame = await widgetFrame(entry, manifest, this.ctx, this.box);
    } catch (err) {
      this.ctx.log(`Widget zone ${this.zone.id}: bundle ${entry.bundleId} could not be read: ${(err as Error).message}`);
    }
    if (this.stopped || attempt !== this.attempt) return;
    if (!frame) {
      this.retryTimer = setTimeout(() => void this.load(), RETRY_MS);
      return;
    }
    const wrap = document.createElement('div');
    wrap.className = 'pl-widget pl-widget-building';
    wrap.dataset.bundleId = entry.bundleId;
    wrap.append(frame);
    this.root.append(wrap);
    await frameLoaded(frame);
    if (this.stopped || attempt !== this.attempt) {
      wrap.remove();
      return;
    }
    // The new frame comes on in one go over the old one, which leaves a frame later.
    const old = this.shown?.wrap ?? null;
    this.shown = { bundleId: entry.bundleId, wrap };
    wrap.classList.remove('pl-widget-building');
    if (old) requestAnimationFrame(() => requestAnimationFrame(() => old.remove()));
  }
}
