import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';

export interface CachedManifest {
  revision: number;
  windowStart: number;
  /** The screen's zone, location and groups when built: a change rebuilds even without a bump. */
  contextKey: string;
  etag: string;
  /** `{"data": manifest}` as UTF-8, made once: every 200 sends these bytes as they are. */
  bytes: Buffer;
  /** The same as text (decoded when asked). */
  readonly body: string;
  /** The body gzipped, started by the first request that accepts gzip (on libuv's threads: ~20 ms for 765 KiB). */
  gzip?: Promise<Buffer>;
  /** Asset ids the manifest lets the screen download. */
  assetIds: Set<string>;
  /** Data sources whose outputs the manifest lists (the screen may download them). */
  dataSourceIds: Set<string>;
  /** Widgets whose bundles the manifest lists (the screen may download them). */
  widgetIds: Set<string>;
}

/**
 * `parts` in one Buffer of exactly their size, for what the cache keeps per screen. A small
 * `Buffer.from`/`Buffer.concat` is a slice of Node's shared 8 KiB pool slab, and gzipSync's
 * result a slice of its 16 KiB output buffer: kept for a screen, each pins the whole (the
 * fleet simulator's memory readings showed ~34 KiB of Buffers per screen at 2,000).
 */
export function keptBytes(...parts: (string | Uint8Array)[]): Buffer {
  let size = 0;
  for (const p of parts) size += typeof p === 'string' ? Buffer.byteLength(p) : p.byteLength;
  const out = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const p of parts) {
    if (typeof p === 'string') at += out.write(p, at);
    else {
      out.set(p, at);
      at += p.byteLength;
    }
  }
  return out;
}

const CACHE = new ScopeKey('content.manifests', () => new Map<string, CachedManifest>());

/** Built manifests per screen, per app (tests run several apps in one process). */
export function manifestCache(deps: AppDeps): Map<string, CachedManifest> {
  return deps.scope.get(CACHE);
}
