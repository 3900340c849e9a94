/**
 * Playlist parts kept between manifest builds (docs/performance.md "Manifest parts kept between
 * builds"): per (playlist, zone, window), what the resolution asked of it (when it can play,
 * whether it was ever published) and, per (box, fit, muted), the manifest playlist the builder
 * made of it, with everything that build did besides (dependencies, warnings, media, widget
 * bundles asked) and its JSON text. A build after a change re-uses every part the change did
 * not touch.
 *
 * A part is dropped when content announces a change to any ref it depends on (changes.ts
 * `contentChanged` calls `forgetPartsUsing`: the same refs `manifest_deps` records), and is
 * kept only when no change was announced since the build that made it began (the rule
 * `currentManifest` applies to whole manifests). A restore drops them all. Parts are keyed by
 * the database (one per app: tests run several apps in one process).
 */
import type { Db } from '../../platform/db/database.js';
import type { DepRef } from './changes.js';
import type { ManifestMedia, ManifestPlaylist } from './manifest.shapes.js';
import type { Interval } from './plan.js';
import type { Warning } from './playable.js';
import type { WidgetBundleAnswer } from '../widgets/index.js';

/** What `ContentLoader.playableWindows` answered for a playlist, and what it used. */
export interface WindowsPart {
  windows: readonly Interval[];
  /** The playlist was never published (the resolution's warning says so). */
  unpublished: boolean;
  deps: readonly DepRef[];
}

/** What `Builder.playlist` made of a playlist for one (box, fit, muted), and everything it did on the way. */
export interface BuiltPart {
  /** Frozen (freezePlaylist): every manifest that shows it shares it. */
  playlist: ManifestPlaylist;
  /** `JSON.stringify(playlist)`. */
  text: string;
  deps: readonly DepRef[];
  /** Every `warn` call, in order (the build keeps the first of each key). */
  warnings: readonly (readonly [string, Warning])[];
  /** Every media entry the items use. */
  media: readonly ManifestMedia[];
  /** Every widget bundle asked, with the box it is shown in. */
  widgets: readonly { widgetId: string; answer: WidgetBundleAnswer; box: { width: number; height: number } }[];
}

interface Part {
  windows?: WindowsPart;
  built: Map<string, BuiltPart>;
  /** Approximate size (the built parts' JSON text), for the bound. */
  size: number;
}

/** Parts kept at once, and their JSON text in total (beyond either: all forgotten, built again when asked). */
const MAX_PARTS = 4000;
const MAX_TEXT = 64 * 1024 * 1024;

export class PlaylistParts {
  /** Changes announced so far: a build keeps its parts only when none came since it began. */
  changes = 0;
  private readonly parts = new Map<string, Part>();
  /** Part keys by the refs they depend on (`kind:id`); may name parts already gone. */
  private readonly byRef = new Map<string, Set<string>>();
  private text = 0;

  static key(playlistId: string, zone: string, from: number, to: number): string {
    return `${playlistId}|${zone}|${from}|${to}`;
  }

  static builtKey(box: { width: number; height: number }, fit: string, muted: boolean): string {
    return `${box.width}x${box.height}|${fit}|${muted}`;
  }

  windows(key: string): WindowsPart | undefined {
    return this.parts.get(key)?.windows;
  }

  built(key: string, builtKey: string): BuiltPart | undefined {
    return this.parts.get(key)?.built.get(builtKey);
  }

  /** Keeps `windows` unless a change was announced since `since` (the build's start). */
  putWindows(key: string, windows: WindowsPart, since: number): void {
    if (since !== this.changes) return;
    this.partOf(key, windows.deps).windows = windows;
  }

  /** Keeps `built` unless a change was announced since `since` (the build's start). */
  putBuilt(key: string, builtKey: string, built: BuiltPart, since: number): void {
    if (since !== this.changes) return;
    const part = this.partOf(key, built.deps);
    part.built.set(builtKey, built);
    part.size += built.text.length;
    this.text += built.text.length;
  }

  /** Content announced a change to `refs` (counted even when none: a build in progress keeps nothing). */
  forgetUsing(refs: readonly DepRef[]): void {
    this.changes++;
    for (const r of refs) {
      const ref = `${r.kind}:${r.id}`;
      const keys = this.byRef.get(ref);
      if (!keys) continue;
      this.byRef.delete(ref);
      for (const key of keys) this.drop(key);
    }
  }

  forgetAll(): void {
    this.changes++;
    this.parts.clear();
    this.byRef.clear();
    this.text = 0;
  }

  get size(): number {
    return this.parts.size;
  }

  private drop(key: string): void {
    const part = this.parts.get(key);
    if (!part) return;
    this.text -= part.size;
    this.parts.delete(key);
  }

  private partOf(key: string, deps: readonly DepRef[]): Part {
    let part = this.parts.get(key);
    if (!part) {
      if (this.parts.size >= MAX_PARTS || this.text >= MAX_TEXT || this.byRef.size >= 8 * MAX_PARTS) {
        this.parts.clear();
        this.byRef.clear();
        this.text = 0;
      }
      part = { built: new Map(), size: 0 };
      this.parts.set(key, part);
    }
    for (const d of deps) {
      const ref = `${d.kind}:${d.id}`;
      let keys = this.byRef.get(ref);
      if (!keys) this.byRef.set(ref, (keys = new Set()));
      keys.add(key);
    }
    return part;
  }
}

const stores = new WeakMap<Db, PlaylistParts>();

/** The parts kept for this database (made when first asked). */
export function playlistParts(db: Db): PlaylistParts {
  let parts = stores.get(db);
  if (!parts) stores.set(db, (parts = new PlaylistParts()));
  return parts;
}

/** Content announced a change to `refs` (changes.ts): the parts that used any of them go. */
export function forgetPartsUsing(db: Db, refs: readonly DepRef[]): void {
  playlistParts(db).forgetUsing(refs);
}

/** The database was replaced (a restore): no part of the old one may serve. */
export function forgetAllParts(db: Db): void {
  playlistParts(db).forgetAll();
}

/** Freezes the playlist, its item list and its items (a part's playlist is shared by every manifest showing it). */
export function freezePlaylist(playlist: ManifestPlaylist): ManifestPlaylist {
  for (const item of playlist.items) Object.freeze(item);
  Object.freeze(playlist.items);
  return Object.freeze(playlist);
}
