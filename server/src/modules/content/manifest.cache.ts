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

const CACHE = new ScopeKey('content.manifests', () => new Map<string, CachedManifest>());

/** Built manifests per screen, per app (tests run several apps in one process). */
export function manifestCache(deps: AppDeps): Map<string, CachedManifest> {
  return deps.scope.get(CACHE);
}
