/**
 * Playlist parts kept between manifest builds (docs/performance.md "Manifest parts kept between
 * builds"): per (playlist, zone, window), what the resolution asked of it (when it can play,
 * whether it was ever published) and, per (box, fit, muted), the manifest playlist the builder
 * made of it, with everything that build did besides (dependencies, warnings, media, widget
 * bundles asked) and its JSON text. A build after a change re-uses every part the change did
 * not touch.
 *
 * A part is dropped when content announces a change to any ref it depends on (changes.ts
 * `contentChanged` calls `forgetPartsUsing`: the same refs a manifest build records as its dependencies), and is
 * kept only when no change was announced since the build that made it began (the rule
 * `currentManifest` applies to whole manifests). A restore drops them all. Parts are kept per
 * database (one per app: tests run several apps in one process).
 */
import type { Db } from '../../platform/db/database.js';
import type { DepRef } from './manifest.repo.js';

/**
 * What every kept part has: the refs it used, as `ContentLoader.deps` keeps them (`kind:id`,
 * the ref). The resolution's part is `WindowsPart` (playable.ts), the builder's `BuiltPart`
 * (manifest.builder.ts): this file knows only their dependencies and size (no import circle).
 */
export interface KeptPart {
  deps: readonly (readonly [string, DepRef])[];
}

export interface KeptBuilt extends KeptPart {
  /** The playlist's JSON text (its size counts towards the bound). */
  text: string;
}

interface Part {
  windows?: KeptPart;
  built: Map<string, KeptBuilt>;
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

  windows(key: string): KeptPart | undefined {
    return this.parts.get(key)?.windows;
  }

  built(key: string, builtKey: string): KeptBuilt | undefined {
    return this.parts.get(key)?.built.get(builtKey);
  }

  /** Keeps `windows` unless a change was announced since `since` (the build's start). */
  putWindows(key: string, windows: KeptPart, since: number): void {
    if (since !== this.changes) return;
    this.partOf(key, windows.deps).windows = windows;
  }

  /** Keeps `built` unless a change was announced since `since` (the build's start). */
  putBuilt(key: string, builtKey: string, built: KeptBuilt, since: number): void {
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

  private partOf(key: string, deps: readonly (readonly [string, DepRef])[]): Part {
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
    for (const [ref] of deps) {
      let keys = this.byRef.get(ref);
      if (!keys) this.byRef.set(ref, (keys = new Set()));
      keys.add(key);
    }
    return part;
  }
}

const stores = new WeakMap<object, PlaylistParts>();

/**
 * The parts kept for this database (made when first asked). Keyed by its kysely adapter: one
 * per opened database, shared by its transactions and by `db.withPlugin(..)` copies (which
 * read the same data, and must see the changes announced through the app's `deps.db`).
 */
export function playlistParts(db: Db): PlaylistParts {
  const key = db.getExecutor().adapter;
  let parts = stores.get(key);
  if (!parts) stores.set(key, (parts = new PlaylistParts()));
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
