/**
 * The player manifest (DESIGN.md sections 6.3 and 11; shape in docs/content.md): for one
 * screen, the resolved timeline of the next 48 hours in its time zone, each segment with
 * its layout or playlist flattened to playable items, every media variant, data output and
 * widget bundle to cache, and warnings for what was left out. Built on demand, cached per (screen, manifest
 * revision, hour), and recorded in `manifest_deps` so a change bumps exactly the screens
 * it alters.
 */
import { createHash } from 'node:crypto';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { contentChangeCount, type DepRef } from './changes.js';
import { bumpManifestRevision } from '../screens/index.js';
import type { ScreenContext } from './screen-context.js';
import { contentOf, type LayoutContent, publishedLayout } from './layouts.repo.js';
import { manifestCache, type CachedManifest } from './manifest.cache.js';
import { replaceManifestDeps } from './manifest.repo.js';
import { ContentLoader } from './playable.js';
import type { Daypart, FlatItem } from './plan.js';
import { effectiveDuration, widgetDuration } from './refs.js';
import type { VariantInfo } from './refs.repo.js';
import { resolveSubject, type Warning } from './resolve.js';
import { type OutputAnswer, outputFor, type View, viewKeyOf } from '../data-sources/index.js';
import { type WidgetBundleAnswer, type WidgetBundleRef, widgetBundleFor } from '../widgets/index.js';

export const HORIZON_MS = 48 * 3_600_000;
const HOUR_MS = 3_600_000;
/** The box a full-screen playlist fills when the screen has not reported its display size. */
const DEFAULT_BOX = { width: 1920, height: 1080 };

export interface ManifestItem {
  id: string;
  playlistId: string;
  kind: string;
  assetId: string | null;
  variantId: string | null;
  posterVariantId: string | null;
  pageVariantIds: string[];
  url: string | null;
  name: string;
  durationMs: number;
  transition: { type: string; durationMs: number };
  validFrom: string | null;
  validUntil: string | null;
  dayparts: Daypart[];
  windows: { startsAt: string; endsAt: string }[] | null;
  fit: 'contain' | 'cover' | 'fill';
  muted: boolean;
  /** Widget items: the widget and the `widgets[]` bundle to show (null for assets). */
  widgetId: string | null;
  bundleId: string | null;
}

export interface ManifestPlaylist {
  id: string;
  name: string;
  items: ManifestItem[];
}

export interface ManifestMedia {
  assetId: string;
  variantId: string;
  purpose: string;
  url: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  width: number | null;
  height: number | null;
}

/** A data output the screen downloads (DESIGN.md section 12): a source's rows, or a view's. */
export interface ManifestData {
  outputId: string;
  sourceId: string;
  viewKey: string | null;
  revision: number;
  url: string;
  sha256: string;
  sizeBytes: number;
  /** The rows' image addresses that are cached media (their variants are in `media`). */
  images: { url: string; assetId: string; variantId: string }[];
}

/** Answers a data source's output for (source, view); the data-sources module's `outputFor`. */
export type OutputResolver = (sourceId: string, view: View | null) => Promise<OutputAnswer>;

/** A widget bundle the screen downloads (w-contract "Manifest additions"): one self-contained HTML document. */
export interface ManifestWidget {
  widgetId: string;
  bundleId: string;
  revision: number;
  url: string;
  sha256: string;
  sizeBytes: number;
  /** The media the bundle names as `placard-media:<assetId>`, each with the variant (in `media`) to put there. */
  images: { assetId: string; variantId: string }[];
}

/** Answers a widget's current bundle (built when missing); the widgets module's `widgetBundleFor`. */
export type WidgetResolver = (widgetId: string) => Promise<WidgetBundleAnswer>;

export interface Manifest {
  screenId: string;
  revision: number;
  generatedAt: string;
  validUntil: string;
  refreshAfter: string;
  timeZone: string;
  timeline: {
    startsAt: string;
    endsAt: string;
    source: { type: string; id: string | null };
    content: { type: string; id: string } | null;
    playlist?: ManifestPlaylist;
    layout?: unknown;
  }[];
  media: ManifestMedia[];
  data: ManifestData[];
  widgets: ManifestWidget[];
  overlays: unknown[];
  warnings: Warning[];
}

export const variantUrl = (assetId: string, variantId: string) => `/api/v1/player/assets/${assetId}/variants/${variantId}`;

/** The smallest variant that covers the box, else the largest. */
function pickVariant(list: readonly VariantInfo[], box: { width: number; height: number }): VariantInfo | undefined {
  if (list.length <= 1) return list[0];
  const sorted = [...list].sort((a, b) => (a.width ?? 0) * (a.height ?? 0) - (b.width ?? 0) * (b.height ?? 0));
  return sorted.find((v) => (v.width ?? Infinity) >= box.width && (v.height ?? Infinity) >= box.height) ?? sorted.at(-1);
}

class Builder {
  readonly warnings: Warning[] = [];
  readonly media = new Map<string, ManifestMedia>();
  readonly data = new Map<string, ManifestData>();
  private readonly warned = new Set<string>();
  /** Each widget's answer (asked once per build) and the largest box it is shown in. */
  private readonly bundles = new Map<string, WidgetBundleAnswer>();
  private readonly widgetBoxes = new Map<string, { width: number; height: number }>();

  constructor(
    private readonly loader: ContentLoader,
    private readonly zone: string,
    private readonly from: number,
    private readonly to: number,
    private readonly outputs: OutputResolver | null,
    private readonly widgets: WidgetResolver | null = null,
  ) {}

  get deps() {
    return this.loader.deps;
  }

  dep(kind: DepRef['kind'], id: string) {
    this.loader.dep(kind, id);
  }

  warn(key: string, warning: Warning) {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.warnings.push(warning);
  }

  private addMedia(v: VariantInfo) {
    if (this.media.has(v.id)) return;
    this.media.set(v.id, {
      assetId: v.assetId,
      variantId: v.id,
      purpose: v.purpose,
      url: variantUrl(v.assetId, v.id),
      contentType: v.contentType,
      sizeBytes: v.sizeBytes,
      sha256: v.sha256,
      width: v.width,
      height: v.height,
    });
  }

  /** A playable item for an asset, or null (named in warnings) when it cannot play. */
  private assetItem(
    flat: Pick<FlatItem, 'id' | 'refId' | 'durationMs' | 'transition' | 'windows'> & { playlistId: string },
    rule: { validFrom: string | null; validUntil: string | null; dayparts: Daypart[] },
    box: { width: number; height: number },
    fit: ManifestItem['fit'],
    muted: boolean,
  ): ManifestItem | null {
    const assetId = flat.refId;
    const problem = this.loader.problem(assetId, flat.playlistId);
    if (problem) {
      this.warn(`asset:${assetId}`, problem);
      return null;
    }
    const asset = this.loader.assets.get(assetId)!;
    const variants = this.loader.variants.get(assetId) ?? [];
    const players = variants.filter((v) => v.purpose === 'player');
    let variant: VariantInfo | undefined;
    let poster: VariantInfo | undefined;
    let pages: VariantInfo[] = [];
    if (asset.kind === 'website') {
      // its address is all a player needs (checked by problem())
    } else if (asset.kind === 'pdf') {
      pages = players.filter((v) => v.contentType.startsWith('image/')).sort((a, b) => (a.page ?? 0) - (b.page ?? 0));
      const byPage = new Map<number, VariantInfo[]>();
      for (const p of pages) byPage.set(p.page ?? 0, [...(byPage.get(p.page ?? 0) ?? []), p]);
      pages = [...byPage.values()].map((list) => pickVariant(list, box)!);
      variant = pages[0];
    } else {
      variant = pickVariant(players, box);
      if (asset.kind === 'video') poster = variants.find((v) => v.purpose === 'poster');
    }
    for (const v of [variant, poster, ...pages]) if (v) this.addMedia(v);
    const durationMs = effectiveDuration(flat.durationMs, asset);
    return {
      id: flat.id,
      playlistId: flat.playlistId,
      kind: asset.kind,
      assetId,
      variantId: variant?.id ?? null,
      posterVariantId: poster?.id ?? null,
      pageVariantIds: pages.map((p) => p.id),
      url: asset.kind === 'website' ? asset.websiteUrl : null,
      name: asset.name,
      durationMs,
      transition: flat.transition,
      validFrom: rule.validFrom,
      validUntil: rule.validUntil,
      dayparts: rule.dayparts,
      windows: flat.windows ? flat.windows.map((w) => ({ startsAt: new Date(w.start).toISOString(), endsAt: new Date(w.end).toISOString() })) : null,
      fit,
      muted,
      widgetId: null,
      bundleId: null,
    };
  }

  /**
   * A widget's current bundle for a place of `box`, or null with a `widget_unavailable`
   * warning (deleted, failed to build, no data yet). Recorded as a dependency either way, so
   * a new bundle (an edit, a data change) or the widget's deletion bumps the screen.
   */
  private async widgetBundle(widgetId: string, box: { width: number; height: number }): Promise<WidgetBundleRef | null> {
    this.dep('widget', widgetId);
    let answer = this.bundles.get(widgetId);
    if (!answer) {
      answer = this.widgets ? await this.widgets(widgetId) : { ok: false, reason: 'no_bundle', message: 'Widget bundles are not built here' };
      this.bundles.set(widgetId, answer);
    }
    if (!answer.ok) {
      this.warn(`widget:${widgetId}`, { code: 'widget_unavailable', message: answer.message, widgetId, reason: answer.reason });
      return null;
    }
    const seen = this.widgetBoxes.get(widgetId);
    this.widgetBoxes.set(widgetId, seen ? { width: Math.max(seen.width, box.width), height: Math.max(seen.height, box.height) } : { ...box });
    return answer.bundle;
  }

  /** A playable item for a widget, or null (warned) when it has no bundle. */
  private async widgetItem(
    flat: Pick<FlatItem, 'id' | 'refId' | 'durationMs' | 'transition' | 'windows'> & { playlistId: string },
    rule: { validFrom: string | null; validUntil: string | null; dayparts: Daypart[] },
    box: { width: number; height: number },
    fit: ManifestItem['fit'],
    muted: boolean,
  ): Promise<ManifestItem | null> {
    const bundle = await this.widgetBundle(flat.refId, box);
    if (!bundle) return null;
    return {
      id: flat.id,
      playlistId: flat.playlistId,
      kind: 'widget',
      assetId: null,
      variantId: null,
      posterVariantId: null,
      pageVariantIds: [],
      url: null,
      name: bundle.name,
      durationMs: widgetDuration(flat.durationMs, bundle),
      transition: flat.transition,
      validFrom: rule.validFrom,
      validUntil: rule.validUntil,
      dayparts: rule.dayparts,
      windows: flat.windows ? flat.windows.map((w) => ({ startsAt: new Date(w.start).toISOString(), endsAt: new Date(w.end).toISOString() })) : null,
      fit,
      muted,
      widgetId: bundle.widgetId,
      bundleId: bundle.bundleId,
    };
  }

  /**
   * The `widgets` list: each bundle shown, with the media its images play from (their player
   * variant for the largest box the widget is shown in, added to `media` like a data zone's
   * images; an image that cannot play is left out and the player leaves its place empty).
   */
  async widgetList(): Promise<ManifestWidget[]> {
    const out: ManifestWidget[] = [];
    for (const [widgetId, answer] of this.bundles) {
      if (!answer.ok) continue;
      const { bundle } = answer;
      const box = this.widgetBoxes.get(widgetId) ?? DEFAULT_BOX;
      await this.loader.ensureAssets(bundle.images.map((i) => i.assetId));
      const images: ManifestWidget['images'] = [];
      for (const { assetId } of bundle.images) {
        if (images.some((i) => i.assetId === assetId) || this.loader.problem(assetId)) continue;
        const variant = pickVariant(
          (this.loader.variants.get(assetId) ?? []).filter((v) => v.purpose === 'player' && v.contentType.startsWith('image/')),
          box,
        );
        if (!variant) continue;
        this.addMedia(variant);
        images.push({ assetId, variantId: variant.id });
      }
      out.push({ widgetId, bundleId: bundle.bundleId, revision: bundle.revision, url: bundle.url, sha256: bundle.sha256, sizeBytes: bundle.sizeBytes, images });
    }
    return out.sort((a, b) => a.widgetId.localeCompare(b.widgetId));
  }

  private itemRule(playlistId: string, itemId: string) {
    const item = this.loader.playlists.get(playlistId)?.items.find((i) => i.id === itemId);
    return item
      ? { validFrom: item.rule.validFrom, validUntil: item.rule.validUntil, dayparts: [...item.rule.dayparts] }
      : { validFrom: null, validUntil: null, dayparts: [] };
  }

  /** A data zone's output (listed in `data`), or null with a warning when it has none yet. */
  private async dataZone(
    sourceId: string,
    view: View | null,
    box: { width: number; height: number },
  ): Promise<{ sourceId: string; viewKey: string | null; outputId: string } | null> {
    const { key } = viewKeyOf(view);
    this.dep('data-source', sourceId);
    this.dep('data-output', `${sourceId}/${key}`);
    const answer: OutputAnswer = this.outputs
      ? await this.outputs(sourceId, view)
      : { ok: false, reason: 'no_data', message: 'Data outputs are not built here' };
    if (!answer.ok) {
      this.warn(`data:${sourceId}/${key}`, { code: 'data_unavailable', message: answer.message, sourceId });
      return null;
    }
    const { outputId, viewKey } = answer.output;
    // Images in rows play from the cache like any media: their player variant for the zone's box.
    const images: ManifestData['images'] = [];
    await this.loader.ensureAssets(answer.images.map((i) => i.assetId));
    for (const image of answer.images) {
      if (this.loader.problem(image.assetId)) continue;
      const variant = pickVariant(
        (this.loader.variants.get(image.assetId) ?? []).filter((v) => v.purpose === 'player'),
        box,
      );
      if (!variant) continue;
      this.addMedia(variant);
      images.push({ url: image.url, assetId: image.assetId, variantId: variant.id });
    }
    const known = this.data.get(outputId);
    if (known) for (const i of images) if (!known.images.some((k) => k.url === i.url)) known.images.push(i);
    if (!known) this.data.set(outputId, { ...answer.output, images });
    return { sourceId, viewKey, outputId };
  }

  async playlist(id: string, box: { width: number; height: number }, fit: ManifestItem['fit'] = 'contain', muted = true): Promise<ManifestPlaylist> {
    const { items, problems } = await this.loader.flatten(id, this.zone, this.from, this.to);
    for (const p of problems) this.warn(`problem:${p}`, { code: 'playlist_problem', message: p, playlistId: id });
    const out: ManifestItem[] = [];
    for (const flat of items) {
      const playlistId = flat.path.at(-1)!;
      const item =
        flat.kind === 'widget'
          ? await this.widgetItem({ ...flat, playlistId }, this.itemRule(playlistId, flat.id), box, fit, muted)
          : this.assetItem({ ...flat, playlistId }, this.itemRule(playlistId, flat.id), box, fit, muted);
      if (item) out.push(item);
    }
    return { id, name: this.loader.playlists.get(id)?.name ?? '', items: out };
  }

  async layout(layoutId: string) {
    this.dep('layout', layoutId);
    const row = await publishedLayout(this.loader.db, layoutId);
    if (!row) return undefined;
    const content: LayoutContent = contentOf(row.content);
    const zones = [];
    for (const z of [...content.zones].sort((a, b) => a.zIndex - b.zIndex)) {
      const box = { width: z.width, height: z.height };
      let playlist: ManifestPlaylist | null = null;
      let data: Awaited<ReturnType<Builder['dataZone']>> = null;
      let widget: { widgetId: string; bundleId: string } | null = null;
      if (z.content?.type === 'data') data = await this.dataZone(z.content.sourceId, z.content.view, box);
      else if (z.content?.type === 'playlist') playlist = await this.playlist(z.content.playlistId, box, z.fit, z.muted);
      else if (z.content?.type === 'asset') {
        await this.loader.ensureAssets([z.content.assetId]);
        const item = this.assetItem(
          {
            id: `${layoutId}:${z.id}`,
            refId: z.content.assetId,
            durationMs: z.content.durationMs,
            transition: { type: 'none', durationMs: 0 },
            windows: null,
            playlistId: `${layoutId}:${z.id}`,
          },
          { validFrom: null, validUntil: null, dayparts: [] },
          box,
          z.fit,
          z.muted,
        );
        playlist = { id: `${layoutId}:${z.id}`, name: z.name, items: item ? [item] : [] };
      } else if (z.content?.type === 'widget') {
        const bundle = await this.widgetBundle(z.content.widgetId, box);
        if (bundle) widget = { widgetId: bundle.widgetId, bundleId: bundle.bundleId };
      }
      zones.push({
        id: z.id,
        name: z.name,
        x: z.x,
        y: z.y,
        width: z.width,
        height: z.height,
        zIndex: z.zIndex,
        fit: z.fit,
        muted: z.muted,
        playlist,
        data,
        widget,
      });
    }
    let backgroundMedia: { assetId: string; variantId: string } | null = null;
    if (content.background.assetId) {
      await this.loader.ensureAssets([content.background.assetId]);
      const item = this.assetItem(
        {
          id: `${layoutId}:background`,
          refId: content.background.assetId,
          durationMs: null,
          transition: { type: 'none', durationMs: 0 },
          windows: null,
          playlistId: layoutId,
        },
        { validFrom: null, validUntil: null, dayparts: [] },
        content,
        'cover',
        true,
      );
      if (item?.variantId) backgroundMedia = { assetId: item.assetId!, variantId: item.variantId };
    }
    return {
      id: row.id,
      name: row.name,
      revisionId: row.revisionId,
      revisionNumber: row.number,
      width: content.width,
      height: content.height,
      orientation: content.orientation,
      background: content.background.color,
      backgroundMedia,
      zones,
    };
  }
}

export interface BuiltManifest {
  manifest: Manifest;
  deps: DepRef[];
}

/** Builds a screen's manifest for the 48 hours from the start of the hour of `nowMs`. */
export async function buildManifest(
  db: Db,
  screen: ScreenContext,
  nowMs = Date.now(),
  outputs: OutputResolver | null = null,
  widgets: WidgetResolver | null = null,
): Promise<BuiltManifest> {
  const from = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
  const to = from + HORIZON_MS;
  const loader = new ContentLoader(db);
  const resolution = await resolveSubject(db, { kind: 'screen', screen }, from, to, { loader });
  const b = new Builder(loader, resolution.timeZone, from, to, outputs, widgets);
  for (const d of resolution.deps) b.dep(d.kind, d.id);
  for (const w of resolution.warnings) b.warn(`${w.code}:${JSON.stringify(w)}`, w);
  const playlists = new Map<string, ManifestPlaylist>();
  const layouts = new Map<string, Awaited<ReturnType<Builder['layout']>>>();
  const timeline: Manifest['timeline'] = [];
  for (const seg of resolution.segments) {
    const entry: Manifest['timeline'][number] = {
      startsAt: seg.startsAt,
      endsAt: seg.endsAt,
      source: seg.source,
      content: seg.content ? { type: seg.content.type, id: seg.content.id } : null,
    };
    if (seg.content?.type === 'playlist') {
      if (!playlists.has(seg.content.id)) playlists.set(seg.content.id, await b.playlist(seg.content.id, screen.display ?? DEFAULT_BOX));
      entry.playlist = playlists.get(seg.content.id)!;
    } else if (seg.content?.type === 'layout') {
      if (!layouts.has(seg.content.id)) layouts.set(seg.content.id, await b.layout(seg.content.id));
      const layout = layouts.get(seg.content.id);
      if (layout) entry.layout = layout;
      else entry.content = null;
    }
    timeline.push(entry);
  }
  const widgetList = await b.widgetList();
  const manifest: Manifest = {
    screenId: screen.id,
    revision: screen.manifestRevision,
    generatedAt: new Date(nowMs).toISOString(),
    validUntil: new Date(to).toISOString(),
    refreshAfter: new Date(from + HOUR_MS).toISOString(),
    timeZone: resolution.timeZone,
    timeline,
    media: [...b.media.values()].sort((x, y) => x.assetId.localeCompare(y.assetId) || x.variantId.localeCompare(y.variantId)),
    data: [...b.data.values()].sort((x, y) => x.sourceId.localeCompare(y.sourceId) || (x.viewKey ?? '').localeCompare(y.viewKey ?? '')),
    widgets: widgetList,
    overlays: [],
    warnings: b.warnings,
  };
  return { manifest, deps: [...b.deps.values()] };
}

/** Builds tried while content keeps changing under the build, before giving up on a quiet one. */
const MAX_BUILDS = 3;

/**
 * The screen's manifest for this hour: cached per (revision, hour), else built and recorded.
 *
 * A change that commits while the manifest is being built may be missed by the build
 * (read before it) and by the change push (the build's dependencies are recorded only at
 * its end). So the content change count is read before each build and after its
 * dependencies are recorded: if it moved, the build is done again (at most 3 times); if
 * content is still changing then, the last build is served but not cached, and the
 * screen's revision is bumped so the player fetches again (`manifest.changed`).
 */
export async function currentManifest(deps: AppDeps, screen: ScreenContext, nowMs = Date.now()): Promise<CachedManifest> {
  const windowStart = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
  const cache = manifestCache(deps);
  const contextKey = `${screen.timeZone}|${screen.locationId ?? ''}|${screen.groupIds.join(',')}`;
  const hit = cache.get(screen.id);
  if (hit && hit.revision === screen.manifestRevision && hit.windowStart === windowStart && hit.contextKey === contextKey) return hit;
  let built: BuiltManifest;
  let quiet = false;
  for (let attempt = 0; attempt < MAX_BUILDS && !quiet; attempt++) {
    const before = contentChangeCount(deps);
    built = await buildManifest(
      deps.db,
      screen,
      nowMs,
      (sourceId, view) => outputFor(deps, sourceId, view, new Date(nowMs)),
      (widgetId) => widgetBundleFor(deps, widgetId),
    );
    await replaceManifestDeps(deps.db, screen.id, built.deps);
    quiet = contentChangeCount(deps) === before;
  }
  const entry = cachedEntry(screen, windowStart, contextKey, built!);
  if (quiet) cache.set(screen.id, entry);
  else {
    deps.logger.warn({ screenId: screen.id }, 'content kept changing during manifest builds; serving the last one uncached and bumping the screen');
    // A direct bump, not contentChanged: that would count as one more change and send every
    // other build in progress round again.
    await bumpManifestRevision(deps, [screen.id]).catch((err: unknown) => deps.logger.error({ err }, 'could not bump a manifest'));
  }
  return entry;
}

function cachedEntry(screen: ScreenContext, windowStart: number, contextKey: string, built: BuiltManifest): CachedManifest {
  const { generatedAt: _g, ...stable } = built.manifest;
  const etag = `"m${screen.manifestRevision}-${createHash('sha256').update(JSON.stringify(stable)).digest('base64url').slice(0, 27)}"`;
  const entry: CachedManifest = {
    revision: screen.manifestRevision,
    windowStart,
    contextKey,
    etag,
    body: JSON.stringify({ data: built.manifest }),
    assetIds: new Set(built.manifest.media.map((m) => m.assetId)),
    dataSourceIds: new Set(built.manifest.data.map((d) => d.sourceId)),
    widgetIds: new Set(built.manifest.widgets.map((w) => w.widgetId)),
  };
  return entry;
}
