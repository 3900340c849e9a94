/**
 * The manifest (DESIGN.md sections 6.3 and 11) read into the player's own model. The
 * reader is tolerant: unknown fields are ignored, a malformed entry is dropped (and
 * counted in `problems`) rather than stopping playback of the rest.
 */
import { type Overlay, readOverlays } from './overlay-config.js';
import { type NetworkInfo, readNetwork } from './sync.js';

export type ItemKind = 'image' | 'video' | 'website' | 'audio' | 'pdf' | 'widget' | 'unknown';

export interface DayPart {
  /** ISO weekdays, 1 = Monday .. 7 = Sunday; empty means every day. */
  days: number[];
  /** Minutes after local midnight; `end` <= `start` crosses midnight. */
  start: number;
  end: number;
}

/** What the cache needs of anything it downloads (a media variant, a data output). */
export interface CacheEntry {
  url: string;
  sizeBytes: number | null;
  sha256: string | null;
  /** The type stored when the server's answer names none. */
  contentType?: string;
}

export interface MediaEntry extends CacheEntry {
  assetId: string;
  variantId: string;
  url: string;
  contentType: string;
  sizeBytes: number | null;
  sha256: string | null;
  width: number | null;
  height: number | null;
}

/** A data output (DESIGN.md section 12): the JSON document of a source's rows, or of a view of them. */
export interface DataEntry extends CacheEntry {
  outputId: string;
  sourceId: string;
  viewKey: string | null;
  revision: number | null;
  contentType: 'application/json';
  /** The addresses in its image cells that the server keeps as media: the variant (listed in `media`) to show instead. */
  images: DataImage[];
}

/**
 * A widget's bundle (issue 19, docs/player.md "Widgets"): one self-contained HTML document,
 * cached and verified like media. `images` names the variant (listed in `media`) each
 * `placard-media:<assetId>` reference of the bundle is replaced with.
 */
export interface WidgetEntry extends CacheEntry {
  widgetId: string;
  bundleId: string;
  revision: number | null;
  contentType: string;
  images: Array<{ assetId: string; variantId: string }>;
}

/** An image cell's address and the media variant the player shows for it. */
export interface DataImage {
  url: string;
  assetId: string;
  variantId: string;
}

export interface PlaylistItem {
  id: string;
  kind: ItemKind;
  assetId: string | null;
  variantId: string | null;
  /** Websites: the page to show. */
  url: string | null;
  durationMs: number | null;
  validFrom: number | null;
  validUntil: number | null;
  dayParts: DayPart[];
  fit: 'contain' | 'cover' | 'fill';
  name: string | null;
  /** How this item comes on: a cross-fade (default), a slide, or a cut. */
  transition: { type: 'fade' | 'slide' | 'none'; durationMs: number };
  /** When it may play within the manifest's horizon, every rule applied by the server; null: always. */
  windows: Array<{ start: number; end: number }> | null;
  /** Until when `windows` speak (the manifest's horizon); past it the item's own rules do. */
  windowsUntil: number | null;
  /** Videos: the poster frame shown while the video starts. */
  posterVariantId: string | null;
  /** PDFs: one image variant per page, in order. */
  pageVariantIds: string[];
  muted: boolean;
  /** Widgets: the widget and the bundle the manifest named for it (the current one is looked up in `widgets` by widgetId). */
  widgetId: string | null;
  bundleId: string | null;
}

export interface Playlist {
  id: string;
  name: string | null;
  items: PlaylistItem[];
}

export interface Zone {
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
  zIndex: number;
  background: string | null;
  playlist: Playlist | null;
  /** A data zone: the output (`data[]`) whose rows it shows; null for other zones. */
  data: { sourceId: string; viewKey: string | null; outputId: string } | null;
  /** A widget zone: the widget (its bundle in `widgets[]`) it shows; null for other zones. */
  widget: { widgetId: string; bundleId: string | null } | null;
}

export interface Layout {
  id: string;
  name: string | null;
  width: number;
  height: number;
  background: string | null;
  /** An image under the zones (from the media list). */
  backgroundAssetId: string | null;
  backgroundVariantId: string | null;
  zones: Zone[];
}

export type Severity = 'info' | 'warning' | 'emergency';

/** What a segment shows: a playlist, a layout, a takeover's or override's message, or the idle slide. */
export type Content =
  | { type: 'playlist'; playlist: Playlist }
  | { type: 'layout'; layout: Layout }
  | { type: 'message'; message: { text: string; severity: Severity } }
  | { type: 'idle' };

export interface Segment {
  start: number;
  end: number;
  source: { type: string; id: string | null };
  campaignId: string | null;
  content: Content;
}

export interface PlayerManifest {
  revision: string;
  generatedAt: number | null;
  validUntil: number | null;
  /** Fetch again by then even without manifest.changed (the server's window moves). */
  refreshAfter: number | null;
  timeZone: string;
  timeline: Segment[];
  media: MediaEntry[];
  /** The data outputs the layouts' data zones show, cached like media. */
  data: DataEntry[];
  /** The widgets' bundles the playlists and zones show, cached like media. */
  widgets: WidgetEntry[];
  /** The plugin overlays this player draws (overlay-config.ts); bad or unknown ones are skipped. */
  overlays: Overlay[];
  problems: string[];
  /** The presentation network this screen plays in step with (sync.ts), else null. */
  network: NetworkInfo | null;
}

const obj = (v: unknown): Record<string, any> | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const time = (v: unknown): number | null => {
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : null;
};

const KINDS: ItemKind[] = ['image', 'video', 'website', 'audio', 'pdf', 'widget'];

function kindOf(raw: Record<string, any>, media: MediaEntry[]): ItemKind {
  const asset = obj(raw.asset);
  const declared = str(raw.kind) ?? str(raw.assetKind) ?? str(asset?.kind) ?? str(raw.type);
  if (declared && (KINDS as string[]).includes(declared)) return declared as ItemKind;
  if (str(raw.url) ?? str(obj(raw.website)?.url)) return 'website';
  const assetId = str(raw.assetId) ?? str(asset?.id);
  const entry = media.find((m) => m.assetId === assetId);
  if (entry?.contentType.startsWith('image/')) return 'image';
  if (entry?.contentType.startsWith('video/')) return 'video';
  if (entry?.contentType.startsWith('audio/')) return 'audio';
  return 'unknown';
}

/** "09:30" or "09:30:00" -> minutes after midnight. */
function minutesOf(v: unknown): number | null {
  if (typeof v === 'number' && v >= 0 && v <= 1440) return v;
  if (typeof v !== 'string') return null;
  const m = /^(\d{1,2}):(\d{2})(?::\d{2})?$/.exec(v);
  if (!m) return null;
  const h = Number(m[1]);
  const min = Number(m[2]);
  if (h > 24 || min > 59) return null;
  return h * 60 + min;
}

const DAY_NAMES: Record<string, number> = { mo: 1, tu: 2, we: 3, th: 4, fr: 5, sa: 6, su: 7 };

function dayOf(v: unknown): number | null {
  if (typeof v === 'number' && v >= 0 && v <= 7) return v === 0 ? 7 : v;
  if (typeof v === 'string') return DAY_NAMES[v.slice(0, 2).toLowerCase()] ?? null;
  return null;
}

function readDayParts(raw: Record<string, any>): DayPart[] {
  const list: unknown[] = Array.isArray(raw.dayParts) ? raw.dayParts : Array.isArray(raw.dayparts) ? raw.dayparts : [];
  const parts: DayPart[] = [];
  for (const p of list) {
    const o = obj(p);
    if (!o) continue;
    const start = minutesOf(o.from ?? o.start ?? o.startTime);
    const end = minutesOf(o.to ?? o.end ?? o.endTime);
    if (start === null || end === null) continue;
    const daysRaw: unknown[] = Array.isArray(o.days) ? o.days : Array.isArray(o.daysOfWeek) ? o.daysOfWeek : [];
    parts.push({ days: daysRaw.map(dayOf).filter((d): d is number => d !== null), start, end });
  }
  return parts;
}

function readItem(rawItem: unknown, media: MediaEntry[], problems: string[], where: string): PlaylistItem | null {
  const raw = obj(rawItem);
  if (!raw) {
    problems.push(`${where}: an item is not an object`);
    return null;
  }
  if (raw.enabled === false) return null;
  const asset = obj(raw.asset);
  const validity = obj(raw.validity);
  const kind = kindOf(raw, media);
  const id = str(raw.id) ?? str(raw.itemId) ?? `${where}#${Math.random().toString(36).slice(2)}`;
  const fit = str(raw.fit);
  const tr = obj(raw.transition);
  const trType = str(tr?.type);
  const trMs = num(tr?.durationMs);
  return {
    id,
    kind,
    assetId: str(raw.assetId) ?? str(asset?.id),
    variantId: str(raw.variantId) ?? str(obj(raw.variant)?.id),
    url: str(raw.url) ?? str(obj(raw.website)?.url) ?? str(asset?.url) ?? str(asset?.websiteUrl),
    durationMs: num(raw.durationMs) ?? num(raw.effectiveDurationMs) ?? num(asset?.durationMs),
    validFrom: time(raw.validFrom ?? raw.startsAt ?? validity?.from ?? validity?.startsAt),
    validUntil: time(raw.validUntil ?? raw.endsAt ?? validity?.until ?? validity?.endsAt),
    dayParts: readDayParts(raw),
    fit: fit === 'cover' || fit === 'fill' ? fit : 'contain',
    name: str(raw.name) ?? str(raw.label) ?? str(asset?.name),
    transition: {
      type: trType === 'slide' || trType === 'none' ? trType : 'fade',
      durationMs: trMs !== null ? Math.min(10_000, Math.max(0, trMs)) : 700,
    },
    windows: Array.isArray(raw.windows)
      ? raw.windows
          .map((w: unknown) => {
            const o = obj(w);
            const start = time(o?.startsAt);
            const end = time(o?.endsAt);
            return start !== null && end !== null && end > start ? { start, end } : null;
          })
          .filter((w: { start: number; end: number } | null): w is { start: number; end: number } => w !== null)
      : null,
    windowsUntil: null,
    posterVariantId: str(raw.posterVariantId),
    pageVariantIds: Array.isArray(raw.pageVariantIds) ? raw.pageVariantIds.filter((v: unknown): v is string => typeof v === 'string') : [],
    muted: raw.muted !== false,
    widgetId: str(raw.widgetId) ?? str(obj(raw.widget)?.widgetId) ?? str(obj(raw.widget)?.id),
    bundleId: str(raw.bundleId) ?? str(obj(raw.widget)?.bundleId),
  };
}

function readPlaylist(rawPlaylist: unknown, media: MediaEntry[], problems: string[]): Playlist | null {
  const raw = obj(rawPlaylist);
  if (!raw) return null;
  const id = str(raw.id) ?? 'playlist';
  const items = (Array.isArray(raw.items) ? raw.items : [])
    .map((it: unknown, i: number) => readItem(it, media, problems, `playlist ${id} item ${i}`))
    .filter((it: PlaylistItem | null): it is PlaylistItem => it !== null);
  return { id, name: str(raw.name), items };
}

function readLayout(rawLayout: unknown, media: MediaEntry[], problems: string[]): Layout | null {
  const raw = obj(rawLayout);
  if (!raw) return null;
  // A published layout may come as {id, name, content: {width, height, background, zones}}.
  const body = obj(raw.content) && Array.isArray(obj(raw.content)?.zones) ? obj(raw.content)! : raw;
  const canvas = obj(body.canvas);
  const width = num(body.width) ?? num(canvas?.width) ?? 1920;
  const height = num(body.height) ?? num(canvas?.height) ?? 1080;
  const bg = obj(body.background);
  const zones: Zone[] = [];
  const rawZones: unknown[] = Array.isArray(body.zones) ? body.zones : [];
  rawZones.forEach((z, i) => {
    const o = obj(z);
    if (!o) return;
    const x = num(o.x) ?? num(o.left);
    const y = num(o.y) ?? num(o.top);
    const w = num(o.width);
    const h = num(o.height);
    if (x === null || y === null || w === null || h === null || w <= 0 || h <= 0) {
      problems.push(`layout ${str(raw.id)} zone ${i}: no geometry`);
      return;
    }
    const content = obj(o.content);
    let playlist = readPlaylist(o.playlist ?? content?.playlist, media, problems);
    if (!playlist && (o.item || o.assetId || content?.type === 'asset')) {
      const item = readItem(o.item ?? (content?.type === 'asset' ? content : o), media, problems, `layout zone ${i}`);
      playlist = item ? { id: `zone-${str(o.id) ?? i}`, name: null, items: [item] } : null;
    }
    // The zone's fit applies to the items it shows.
    const zoneFit = str(o.fit);
    if (playlist && (zoneFit === 'contain' || zoneFit === 'cover' || zoneFit === 'fill'))
      playlist = { ...playlist, items: playlist.items.map((it) => ({ ...it, fit: zoneFit })) };
    zones.push({
      id: str(o.id) ?? `zone-${i}`,
      x,
      y,
      width: w,
      height: h,
      zIndex: num(o.zIndex) ?? num(o.z) ?? 0,
      background: str(o.background) ?? str(o.backgroundColor),
      playlist,
      data: readZoneData(o.data),
      widget: readZoneWidget(o.widget ?? (content?.type === 'widget' ? content : null)),
    });
  });
  return {
    id: str(raw.id) ?? str(raw.layoutId) ?? 'layout',
    name: str(raw.name),
    width,
    height,
    background: str(body.background) ?? str(bg?.color) ?? str(body.backgroundColor),
    backgroundAssetId: str(bg?.assetId) ?? str(obj(body.backgroundMedia)?.assetId),
    backgroundVariantId: str(obj(body.backgroundMedia)?.variantId),
    zones,
  };
}

function readMedia(raw: unknown, problems: string[]): MediaEntry | null {
  const o = obj(raw);
  const assetId = str(o?.assetId);
  const url = str(o?.url);
  if (!o || !assetId || !url) {
    problems.push('a media entry has no assetId or url');
    return null;
  }
  const sha = str(o.sha256);
  return {
    assetId,
    variantId: str(o.variantId) ?? assetId,
    url,
    contentType: str(o.contentType) ?? 'application/octet-stream',
    sizeBytes: num(o.sizeBytes),
    sha256: sha && /^[0-9a-f]{64}$/i.test(sha) ? sha.toLowerCase() : null,
    width: num(o.width),
    height: num(o.height),
  };
}

function readZoneData(raw: unknown): Zone['data'] {
  const o = obj(raw);
  const sourceId = str(o?.sourceId);
  const outputId = str(o?.outputId);
  return sourceId && outputId ? { sourceId, viewKey: str(o?.viewKey), outputId } : null;
}

function readZoneWidget(raw: unknown): Zone['widget'] {
  const o = obj(raw);
  const widgetId = str(o?.widgetId);
  return widgetId ? { widgetId, bundleId: str(o?.bundleId) } : null;
}

function readWidget(raw: unknown, problems: string[]): WidgetEntry | null {
  const o = obj(raw);
  const widgetId = str(o?.widgetId);
  const bundleId = str(o?.bundleId);
  const url = str(o?.url);
  if (!o || !widgetId || !bundleId || !url) {
    problems.push('a widget entry has no widgetId, bundleId or url');
    return null;
  }
  const sha = str(o.sha256);
  const images: WidgetEntry['images'] = [];
  for (const item of Array.isArray(o.images) ? o.images : []) {
    const assetId = str(obj(item)?.assetId);
    const variantId = str(obj(item)?.variantId);
    if (assetId && variantId) images.push({ assetId, variantId });
  }
  return {
    widgetId,
    bundleId,
    revision: num(o.revision),
    url,
    sizeBytes: num(o.sizeBytes),
    sha256: sha && /^[0-9a-f]{64}$/i.test(sha) ? sha.toLowerCase() : null,
    contentType: str(o.contentType) ?? 'text/html; charset=utf-8',
    images,
  };
}

function readData(raw: unknown, problems: string[]): DataEntry | null {
  const o = obj(raw);
  const outputId = str(o?.outputId);
  const url = str(o?.url);
  if (!o || !outputId || !url) {
    problems.push('a data entry has no outputId or url');
    return null;
  }
  const sha = str(o.sha256);
  return {
    outputId,
    sourceId: str(o.sourceId) ?? '',
    viewKey: str(o.viewKey),
    revision: num(o.revision),
    url,
    sizeBytes: num(o.sizeBytes),
    sha256: sha && /^[0-9a-f]{64}$/i.test(sha) ? sha.toLowerCase() : null,
    contentType: 'application/json',
    images: readDataImages(o.images),
  };
}

/** An output's images: entries without an address, asset or variant are left out (their cells stay text). */
function readDataImages(raw: unknown): DataImage[] {
  const out: DataImage[] = [];
  for (const item of Array.isArray(raw) ? raw : []) {
    const o = obj(item);
    const url = str(o?.url);
    const assetId = str(o?.assetId);
    const variantId = str(o?.variantId);
    if (url && assetId && variantId) out.push({ url, assetId, variantId });
  }
  return out;
}

/** Everything a manifest asks the cache to hold: its media, its data outputs and its widgets' bundles. */
export function cacheEntries(manifest: Pick<PlayerManifest, 'media' | 'data'> & { widgets?: readonly WidgetEntry[] }): CacheEntry[] {
  return [...manifest.media, ...manifest.data, ...(manifest.widgets ?? [])];
}

/** Reads a manifest as served (the `data` of GET /player/manifest). Throws only when it is not an object. */
export function readManifest(raw: unknown): PlayerManifest {
  const o = obj(raw);
  if (!o) throw new Error('The manifest is not an object');
  const problems: string[] = [];
  const media = (Array.isArray(o.media) ? o.media : [])
    .map((m: unknown) => readMedia(m, problems))
    .filter((m: MediaEntry | null): m is MediaEntry => m !== null);
  const data = (Array.isArray(o.data) ? o.data : []).map((d: unknown) => readData(d, problems)).filter((d: DataEntry | null): d is DataEntry => d !== null);
  const widgets = (Array.isArray(o.widgets) ? o.widgets : [])
    .map((w: unknown) => readWidget(w, problems))
    .filter((w: WidgetEntry | null): w is WidgetEntry => w !== null);
  const timeline: Segment[] = [];
  (Array.isArray(o.timeline) ? o.timeline : []).forEach((s: unknown, i: number) => {
    const seg = obj(s);
    const start = time(seg?.startsAt);
    const end = time(seg?.endsAt);
    if (!seg || start === null || end === null || end <= start) {
      problems.push(`timeline entry ${i}: no valid startsAt/endsAt`);
      return;
    }
    const source = obj(seg.source);
    const contentRef = obj(seg.content);
    let content: Content = { type: 'idle' };
    const layout = readLayout(seg.layout, media, problems);
    const playlist = layout ? null : readPlaylist(seg.playlist, media, problems);
    const message = obj(seg.message);
    const text = str(message?.text);
    const severity = str(message?.severity);
    if (layout) content = { type: 'layout', layout };
    else if (playlist) content = { type: 'playlist', playlist };
    else if (str(contentRef?.type) === 'message' && text)
      content = { type: 'message', message: { text, severity: severity === 'emergency' || severity === 'warning' ? severity : 'info' } };
    timeline.push({
      start,
      end,
      source: { type: str(source?.type) ?? 'schedule', id: str(source?.id) },
      campaignId: str(seg.campaignId) ?? (str(contentRef?.type) === 'campaign' ? str(contentRef?.id) : null),
      content,
    });
  });
  timeline.sort((a, b) => a.start - b.start);
  const horizon = time(o.validUntil) ?? (timeline.length ? Math.max(...timeline.map((s) => s.end)) : null);
  for (const seg of timeline) {
    const lists =
      seg.content.type === 'playlist' ? [seg.content.playlist] : seg.content.type === 'layout' ? seg.content.layout.zones.map((z) => z.playlist) : [];
    for (const list of lists) for (const item of list?.items ?? []) if (item.windows !== null) item.windowsUntil = horizon;
  }
  const revision = o.revision === undefined || o.revision === null ? '' : String(o.revision);
  return {
    revision,
    generatedAt: time(o.generatedAt),
    validUntil: time(o.validUntil),
    refreshAfter: time(o.refreshAfter),
    timeZone: validTimeZone(str(o.timeZone)) ?? 'UTC',
    timeline,
    media,
    data,
    widgets,
    overlays: readOverlays(o.overlays, media, problems),
    problems,
    network: readNetwork(o.presentationNetwork),
  };
}

export function validTimeZone(zone: string | null): string | null {
  if (!zone) return null;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone;
  } catch {
    return null;
  }
}

/** The media entry an item plays: its own variant when named, else the asset's best playable one. */
export function mediaForItem(manifest: Pick<PlayerManifest, 'media'>, item: PlaylistItem, display?: { width: number; height: number }): MediaEntry | null {
  if (!item.assetId) return null;
  const candidates = manifest.media.filter((m) => m.assetId === item.assetId);
  if (item.variantId) {
    const exact = candidates.find((m) => m.variantId === item.variantId);
    if (exact) return exact;
  }
  const wanted = item.kind === 'video' ? 'video/' : item.kind === 'image' ? 'image/' : item.kind === 'audio' ? 'audio/' : '';
  const playable = candidates.filter((m) => (wanted ? m.contentType.startsWith(wanted) : true));
  if (playable.length === 0) return null;
  if (!display) return playable[0] ?? null;
  // The smallest variant that covers the display, else the largest.
  const sized = [...playable].sort((a, b) => (a.width ?? 0) - (b.width ?? 0));
  return sized.find((m) => (m.width ?? Infinity) >= display.width && (m.height ?? Infinity) >= display.height) ?? sized[sized.length - 1] ?? null;
}
