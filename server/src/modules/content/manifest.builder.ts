/**
 * Builds one manifest's parts from a resolution (manifest.ts drives it): playlists flattened
 * to playable items, layouts with their zones, and the media variants, data outputs and
 * widget bundles they need, with warnings for what is left out.
 */
import type { DepRef } from './changes.js';
import { contentOf, type LayoutContent, publishedLayout } from './layouts.repo.js';
import type { ManifestData, ManifestItem, ManifestMedia, ManifestPlaylist, ManifestWidget, OutputResolver, WidgetResolver } from './manifest.shapes.js';
import { variantUrl } from './manifest.shapes.js';
import type { ContentLoader } from './playable.js';
import type { Daypart, FlatItem } from './plan.js';
import { effectiveDuration, widgetDuration } from './refs.js';
import type { VariantInfo } from './refs.repo.js';
import type { Warning } from './resolve.js';
import { type OutputAnswer, type View, viewKeyOf } from '../data-sources/index.js';
import type { WidgetBundleAnswer, WidgetBundleRef } from '../widgets/index.js';
import { DEFAULT_DISPLAY } from '../screens/index.js';
import { PlaylistParts } from './playlist-parts.js';
import { type BuiltPart, freezePlaylist } from './playlist-built.js';

/** What a playlist's build did besides its items (a part in the making, playlist-parts.ts). */
interface Capture {
  warnings: [string, Warning][];
  media: Map<string, ManifestMedia>;
  widgets: BuiltPart['widgets'][number][];
}

/** The box a full-screen playlist fills when the screen has not reported its display size. */
export const DEFAULT_BOX: { width: number; height: number } = DEFAULT_DISPLAY;

/** The smallest variant that covers the box, else the largest. */
function pickVariant(list: readonly VariantInfo[], box: { width: number; height: number }): VariantInfo | undefined {
  if (list.length <= 1) return list[0];
  const sorted = [...list].sort((a, b) => (a.width ?? 0) * (a.height ?? 0) - (b.width ?? 0) * (b.height ?? 0));
  return sorted.find((v) => (v.width ?? Infinity) >= box.width && (v.height ?? Infinity) >= box.height) ?? sorted.at(-1);
}

export class Builder {
  readonly warnings: Warning[] = [];
  readonly media = new Map<string, ManifestMedia>();
  readonly data = new Map<string, ManifestData>();
  private readonly warned = new Set<string>();
  /** Each widget's answer (asked once per build) and the largest box it is shown in. */
  private readonly bundles = new Map<string, WidgetBundleAnswer>();
  private readonly widgetBoxes = new Map<string, { width: number; height: number }>();
  /** Parts being made (`playlist`): what `warn`, `addMedia` and `widgetBundle` do goes to each. */
  private readonly captures: Capture[] = [];

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
    for (const c of this.captures) c.warnings.push([key, warning]);
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.warnings.push(warning);
  }

  private addMedia(v: VariantInfo) {
    if (!this.media.has(v.id)) this.media.set(v.id, this.mediaOf(v));
    for (const c of this.captures) c.media.set(v.id, this.media.get(v.id)!);
  }

  private mediaOf(v: VariantInfo): ManifestMedia {
    return {
      assetId: v.assetId,
      variantId: v.id,
      purpose: v.purpose,
      url: variantUrl(v.assetId, v.id),
      contentType: v.contentType,
      sizeBytes: v.sizeBytes,
      sha256: v.sha256,
      width: v.width,
      height: v.height,
    };
  }

  /**
   * An overlay's image (a brand bug's logo): the player variant of an image asset for `box`,
   * added to `media`, or null with a warning when the asset is missing, not ready or not an
   * image. Recorded as a dependency either way.
   */
  async overlayImage(assetId: string, box: { width: number; height: number }, source: Record<string, unknown>): Promise<ManifestMedia | null> {
    this.dep('asset', assetId);
    await this.loader.ensureAssets([assetId]);
    const key = `overlay:${JSON.stringify(source)}:${assetId}`;
    const problem = this.loader.problem(assetId);
    if (problem) {
      this.warn(key, { ...problem, ...source, message: `${problem.message} (an overlay's image; the overlay is left out)` });
      return null;
    }
    const asset = this.loader.assets.get(assetId)!;
    const players = (this.loader.variants.get(assetId) ?? []).filter((v) => v.purpose === 'player' && v.contentType.startsWith('image/'));
    const variant = asset.kind === 'image' ? pickVariant(players, box) : undefined;
    if (!variant) {
      this.warn(key, {
        code: 'overlay_image_unusable',
        message: `"${asset.name}" is not an image with a player variant; the overlay is left out`,
        assetId,
        ...source,
      });
      return null;
    }
    this.addMedia(variant);
    return this.media.get(variant.id)!;
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
    for (const c of this.captures) c.widgets.push({ widgetId, answer, box: { ...box } });
    if (!answer.ok) {
      this.warn(`widget:${widgetId}`, { code: 'widget_unavailable', message: answer.message, widgetId, reason: answer.reason });
      return null;
    }
    // The screen shows the bound source too (its diagnostics list the screen; it cannot be deleted while bound).
    if (answer.bundle.sourceId) this.dep('data-source', answer.bundle.sourceId);
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

  /**
   * A playlist of one asset or widget (what a takeover or override of an asset or widget
   * plays): the player shows it like any full-screen playlist. Empty (warned) when it cannot play.
   */
  async single(type: 'asset' | 'widget', refId: string, playlistId: string, box: { width: number; height: number }, muted: boolean): Promise<ManifestPlaylist> {
    const flat = { id: `${playlistId}:item`, refId, durationMs: null, transition: { type: 'none', durationMs: 0 }, windows: null, playlistId };
    const rule = { validFrom: null, validUntil: null, dayparts: [] };
    let item: ManifestItem | null;
    if (type === 'widget') item = await this.widgetItem(flat, rule, box, 'contain', muted);
    else {
      this.dep('asset', refId);
      await this.loader.ensureAssets([refId]);
      item = this.assetItem(flat, rule, box, 'contain', muted);
    }
    return { id: playlistId, name: item?.name ?? '', items: item ? [item] : [] };
  }

  /**
   * A playlist's items for a box, fit and sound: the part kept for them (playlist-parts.ts) with
   * what its build did replayed here (dependencies, warnings, media, widget bundles), else built
   * and kept.
   */
  async playlist(id: string, box: { width: number; height: number }, fit: ManifestItem['fit'] = 'contain', muted = true): Promise<ManifestPlaylist> {
    const parts = this.loader.parts;
    const key = PlaylistParts.key(id, this.zone, this.from, this.to);
    const builtKey = PlaylistParts.builtKey(box, fit, muted);
    const kept = parts.built(key, builtKey) as BuiltPart | undefined;
    if (kept) {
      this.replay(kept);
      return kept.playlist;
    }
    const recorded = this.loader.startRecording();
    const mark = this.loader.mark();
    const capture: Capture = { warnings: [], media: new Map(), widgets: [] };
    this.captures.push(capture);
    let playlist: ManifestPlaylist;
    let used: [string, DepRef][];
    try {
      playlist = await this.buildPlaylist(id, box, fit, muted);
    } finally {
      this.captures.splice(this.captures.indexOf(capture), 1);
      used = this.loader.endRecording(recorded);
    }
    // A widget without a bundle now may have one soon without a change to announce it, and an
    // asset processing or failed may move on unannounced: not kept.
    if (capture.widgets.every((w) => w.answer.ok) && this.loader.keepable(mark)) {
      const text = JSON.stringify(playlist);
      const part: BuiltPart = {
        playlist: freezePlaylist(playlist, text),
        text,
        deps: used,
        warnings: capture.warnings,
        media: [...capture.media.values()],
        widgets: capture.widgets,
      };
      parts.putBuilt(key, builtKey, part, this.loader.since);
    }
    return playlist;
  }

  /** Does here what a kept part's build did besides its items. */
  private replay(part: BuiltPart): void {
    this.loader.addDeps(part.deps);
    for (const [key, warning] of part.warnings) this.warn(key, warning);
    for (const m of part.media) {
      if (!this.media.has(m.variantId)) this.media.set(m.variantId, m);
      for (const c of this.captures) c.media.set(m.variantId, this.media.get(m.variantId)!);
    }
    for (const w of part.widgets) {
      if (!this.bundles.has(w.widgetId)) this.bundles.set(w.widgetId, w.answer);
      for (const c of this.captures) c.widgets.push(w);
      if (!this.bundles.get(w.widgetId)!.ok) continue;
      const seen = this.widgetBoxes.get(w.widgetId);
      this.widgetBoxes.set(w.widgetId, seen ? { width: Math.max(seen.width, w.box.width), height: Math.max(seen.height, w.box.height) } : { ...w.box });
    }
  }

  private async buildPlaylist(id: string, box: { width: number; height: number }, fit: ManifestItem['fit'], muted: boolean): Promise<ManifestPlaylist> {
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
