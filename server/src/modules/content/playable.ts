/**
 * What a playlist can actually play: its items (nested playlists and tag rules expanded)
 * whose assets exist, are ready and have something a player can show, and whose widgets exist. One loader serves
 * a whole resolution and manifest build, so the precedence ("a schedule whose playlist
 * has nothing to play falls through") and the manifest's items follow the same rule, and
 * each playlist, asset and variant list is read once. Records what it read as manifest
 * dependencies.
 */
import type { Db } from '../../platform/db/database.js';
import type { DepRef } from './changes.js';
import { flattenPlaylist, mergeIntervals, type FlattenResult, type Interval, type PlanItem, type PlanPlaylist } from './plan.js';
import { planPlaylistRow, tagRuleAssets } from './playlists.repo.js';
import { publishedPlaylist, publishedPlaylists, type PlaylistSnapshot } from './playlists.publishable.js';
import { playableAssets, variantsOf, type PlayableAsset, type VariantInfo } from './refs.repo.js';
import { publishedWidgetIds } from '../widgets/index.js';
import { type KeptPart, PlaylistParts, playlistParts } from './playlist-parts.js';

/** A problem found while resolving what a screen plays (shown in previews and plans). */
export interface Warning {
  code: string;
  message: string;
  [key: string]: unknown;
}

/** What `playableWindows` answered for a playlist over a window, and what it used (a part kept between builds, playlist-parts.ts). */
export interface WindowsPart extends KeptPart {
  windows: readonly Interval[];
  /** The playlist was never published (the resolution's warning says so). */
  unpublished: boolean;
}

export class ContentLoader {
  readonly playlists = new Map<string, PlanPlaylist>();
  readonly assets = new Map<string, PlayableAsset>();
  /** Each asset's player and poster variants (the ones screens play; not thumbnails or previews). */
  readonly variants = new Map<string, VariantInfo[]>();
  readonly deps = new Map<string, DepRef>();
  private readonly flattened = new Map<string, FlattenResult>();
  private readonly fetched = new Set<string>();
  /** Widgets read so far, and which of them exist. */
  private readonly widgetsFetched = new Set<string>();
  private readonly widgetsFound = new Set<string>();
  /** Playlists loaded that were never published (they play nothing). */
  readonly unpublished = new Set<string>();

  /** Publications read ahead by `prefetch` (null: never published; undefined: no such playlist). */
  private readonly snapshots = new Map<string, PlaylistSnapshot | null | undefined>();
  /** Loaded playlists with a tag rule (their items depend on every asset's tags). */
  private readonly tagRuled = new Set<string>();
  /** Dependency sets being recorded (a part in the making): every `dep` goes to each. */
  private readonly recording: Map<string, DepRef>[] = [];
  /**
   * Assets met in a passing state (uploading, processing, failed): not every move out of one is
   * announced (a retry puts a failed asset back to processing silently), so a part that met one
   * is not kept (`keepable`).
   */
  private passing = 0;

  /** The parts kept between builds (playlist-parts.ts), and their change count when this loader began. */
  readonly parts: PlaylistParts;
  readonly since: number;

  constructor(readonly db: Db) {
    this.parts = playlistParts(db);
    this.since = this.parts.changes;
  }

  /** Starts recording what `dep` is told (ended by `endRecording` with the set returned). */
  startRecording(): Map<string, DepRef> {
    const set = new Map<string, DepRef>();
    this.recording.push(set);
    return set;
  }

  /** A mark to give `keepable` later. */
  mark(): number {
    return this.passing;
  }

  /** Whether what was built since `mark` may be kept: it met no asset in a passing state. */
  keepable(mark: number): boolean {
    return this.passing === mark;
  }

  endRecording(set: Map<string, DepRef>): [string, DepRef][] {
    const i = this.recording.lastIndexOf(set);
    if (i >= 0) this.recording.splice(i, 1);
    return [...set.entries()];
  }

  /** Records dependencies a kept part used (`kind:id` and the ref, as `deps` keeps them). */
  addDeps(entries: readonly (readonly [string, DepRef])[]): void {
    for (const [key, ref] of entries) {
      this.deps.set(key, ref);
      for (const set of this.recording) set.set(key, ref);
    }
  }

  /**
   * Reads ahead what `load` and `flatten` of these playlists will ask: their publications and
   * those of the playlists nested in them (one query a level of nesting), then the assets and
   * widgets their enabled items name (one query each), instead of a few queries per playlist.
   * Records no dependency: `load`, `problem` and `widgetExists` record what the build uses.
   */
  async prefetch(ids: readonly string[], window?: { zone: string; from: number; to: number }): Promise<void> {
    // A playlist whose part for this window is kept needs nothing read (playableWindows answers from the part).
    const kept = (id: string) => window !== undefined && this.parts.windows(partKey(id, window)) !== undefined;
    let level = [...new Set(ids)].filter((id) => !this.snapshots.has(id) && !this.playlists.has(id) && !kept(id));
    const assets: string[] = [];
    const widgets: string[] = [];
    while (level.length) {
      const read = await publishedPlaylists(this.db, level);
      const next = new Set<string>();
      for (const id of level) {
        const snapshot = read.get(id);
        this.snapshots.set(id, snapshot);
        for (const i of snapshot?.items ?? []) {
          if (!i.enabled) continue;
          if (i.assetId) assets.push(i.assetId);
          else if (i.widgetId) widgets.push(i.widgetId);
          else if (i.playlistId && !this.snapshots.has(i.playlistId) && !this.playlists.has(i.playlistId)) next.add(i.playlistId);
        }
      }
      level = [...next];
    }
    await this.ensureAssets(assets);
    await this.ensureWidgets(widgets);
  }

  dep(kind: DepRef['kind'], id: string): void {
    const key = `${kind}:${id}`;
    const ref = { kind, id };
    this.deps.set(key, ref);
    for (const set of this.recording) set.set(key, ref);
  }

  /**
   * Loads a playlist and everything nested in it (tag rules expanded into items). Records the
   * whole tree as dependencies every time (a part in the making needs it even when loaded before).
   */
  async load(rootId: string): Promise<void> {
    const queue = [rootId];
    const seen = new Set<string>();
    while (queue.length) {
      const id = queue.shift()!;
      if (seen.has(id)) continue;
      seen.add(id);
      this.dep('playlist', id);
      const loaded = this.playlists.get(id);
      if (loaded) {
        if (this.tagRuled.has(id)) this.dep('tag-rule', '*');
        for (const p of loaded.items) if (p.kind === 'playlist' && p.enabled) queue.push(p.refId);
        continue;
      }
      // Screens play the playlist's publication (issue 20), not its draft rows; a playlist
      // never published plays nothing (like an empty one).
      const published = this.snapshots.has(id) ? this.snapshots.get(id) : await publishedPlaylist(this.db, id);
      if (published === undefined) continue;
      if (published === null) this.unpublished.add(id);
      const snapshot = published ?? { name: (await planPlaylistRow(this.db, id))?.name ?? '', tagRule: null, items: [] };
      const plan: PlanItem[] = snapshot.items.map((r) => ({
        id: r.id,
        kind: r.assetId ? 'asset' : r.widgetId ? 'widget' : 'playlist',
        refId: (r.assetId ?? r.widgetId ?? r.playlistId)!,
        durationMs: r.durationMs,
        transition: { type: r.transition.type, durationMs: r.transition.durationMs },
        rule: { validFrom: r.validFrom, validUntil: r.validUntil, dayparts: r.dayparts ?? [] },
        enabled: r.enabled,
      }));
      const rule = snapshot.tagRule;
      if (rule?.tags.length) {
        this.tagRuled.add(id);
        this.dep('tag-rule', '*');
        for (const a of await tagRuleAssets(this.db, rule)) {
          plan.push({
            id: `${id}:tag:${a.id}`,
            kind: 'asset',
            refId: a.id,
            durationMs: rule.durationMs,
            transition: { type: 'none', durationMs: 0 },
            rule: { validFrom: null, validUntil: null, dayparts: [] },
            enabled: true,
          });
        }
      }
      this.playlists.set(id, { id, name: snapshot.name, items: plan });
      for (const p of plan) if (p.kind === 'playlist' && p.enabled) queue.push(p.refId);
    }
  }

  /** Reads the assets (and their variants) not read yet. */
  async ensureAssets(ids: readonly string[]): Promise<void> {
    const missing = [...new Set(ids)].filter((id) => !this.fetched.has(id));
    if (missing.length === 0) return;
    for (const [id, a] of await playableAssets(this.db, missing)) this.assets.set(id, a);
    // What plays (problem(), the manifest): player variants and video posters; thumbnails and previews are the console's.
    const variants = await variantsOf(this.db, missing, ['player', 'poster']);
    for (const id of missing) {
      this.variants.set(id, variants.get(id) ?? []);
      this.fetched.add(id);
    }
  }

  /** Reads which of the widgets exist and were published (those not read yet): a never-published one plays nothing. */
  async ensureWidgets(ids: readonly string[]): Promise<void> {
    const missing = [...new Set(ids)].filter((id) => !this.widgetsFetched.has(id));
    if (missing.length === 0) return;
    for (const id of await publishedWidgetIds(this.db, missing)) this.widgetsFound.add(id);
    for (const id of missing) this.widgetsFetched.add(id);
  }

  /**
   * Whether a widget exists (call after `ensureWidgets`), recorded as a dependency: its
   * bundle changing or the widget going bumps the screen. Whether its bundle builds is the
   * manifest's to find out (`widget_unavailable`); for precedence an existing widget plays.
   */
  widgetExists(widgetId: string): boolean {
    this.dep('widget', widgetId);
    return this.widgetsFound.has(widgetId);
  }

  /**
   * Why an asset cannot play, as the warning the manifest gives, or null when it can:
   * it exists, is ready, and has a player variant (a PDF: page images; a website: its address).
   * Call after `ensureAssets`.
   */
  problem(assetId: string, playlistId?: string): Warning | null {
    this.dep('asset', assetId);
    const asset = this.assets.get(assetId);
    if (!asset)
      return { code: 'asset_missing', message: `An item refers to asset ${assetId}, which no longer exists`, assetId, ...(playlistId ? { playlistId } : {}) };
    if (asset.state !== 'ready' && asset.state !== 'archived') this.passing++;
    if (asset.state !== 'ready')
      return {
        code: asset.state === 'archived' ? 'asset_archived' : 'asset_not_ready',
        message: `"${asset.name}" is ${asset.state}; it is left out until it is ready`,
        assetId,
        state: asset.state,
      };
    if (asset.kind === 'website') return asset.websiteUrl ? null : { code: 'asset_not_ready', message: `Website "${asset.name}" has no address`, assetId };
    const players = (this.variants.get(assetId) ?? []).filter((v) => v.purpose === 'player' && (asset.kind !== 'pdf' || v.contentType.startsWith('image/')));
    return players.length ? null : { code: 'asset_not_ready', message: `"${asset.name}" has no player variant yet; it is left out`, assetId };
  }

  /** The playlist flattened over [from, to) in `zone` (kept: the resolution and the manifest ask alike). */
  async flatten(id: string, zone: string, from: number, to: number): Promise<FlattenResult> {
    const key = `${id}|${zone}|${from}|${to}`;
    let result = this.flattened.get(key);
    if (!result) {
      await this.load(id);
      result = flattenPlaylist(id, this.playlists, zone, from, to);
      await this.ensureAssets(result.items.filter((i) => i.kind === 'asset').map((i) => i.refId));
      await this.ensureWidgets(result.items.filter((i) => i.kind === 'widget').map((i) => i.refId));
      this.flattened.set(key, result);
    } else if (this.recording.length) await this.load(id); // the tree's dependencies, for the part being recorded
    return result;
  }

  /**
   * When within [from, to) the playlist has at least one item that can play (sorted,
   * merged; empty: never). A widget item can play when its widget exists.
   */
  async playableWindows(id: string, zone: string, from: number, to: number): Promise<Interval[]> {
    const key = partKey(id, { zone, from, to });
    const kept = this.parts.windows(key) as WindowsPart | undefined;
    if (kept) {
      this.addDeps(kept.deps);
      if (kept.unpublished) this.unpublished.add(id);
      return kept.windows.map((w) => ({ start: w.start, end: w.end }));
    }
    const recorded = this.startRecording();
    const mark = this.mark();
    let merged: Interval[];
    let used: [string, DepRef][];
    try {
      const { items } = await this.flatten(id, zone, from, to);
      const windows: Interval[] = [];
      for (const item of items) {
        if (item.kind === 'widget' ? !this.widgetExists(item.refId) : this.problem(item.refId)) continue;
        windows.push(...(item.windows ?? [{ start: from, end: to }]));
      }
      merged = mergeIntervals(windows);
    } finally {
      used = this.endRecording(recorded);
    }
    const part: WindowsPart = { windows: Object.freeze(merged.map((w) => Object.freeze({ ...w }))), unpublished: this.unpublished.has(id), deps: used };
    if (this.keepable(mark)) this.parts.putWindows(key, part, this.since);
    return merged;
  }
}

/** The part key of a playlist over a window in a zone. */
function partKey(id: string, window: { zone: string; from: number; to: number }): string {
  return PlaylistParts.key(id, window.zone, window.from, window.to);
}
