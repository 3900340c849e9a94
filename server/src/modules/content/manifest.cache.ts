import type { AppDeps } from '../../platform/app-deps.js';

export interface CachedManifest {
  revision: number;
  windowStart: number;
  /** The screen's zone, location and groups when built: a change rebuilds even without a bump. */
  contextKey: string;
  etag: string;
  body: string;
  /** The body gzipped, made on the first request that accepts gzip. */
  gzip?: Buffer;
  /** Asset ids the manifest lets the screen download. */
  assetIds: Set<string>;
}

const caches = new WeakMap<AppDeps, Map<string, CachedManifest>>();

/** Built manifests per screen, per app (tests run several apps in one process). */
export function manifestCache(deps: AppDeps): Map<string, CachedManifest> {
  let cache = caches.get(deps);
  if (!cache) caches.set(deps, (cache = new Map()));
  return cache;
}
