/**
 * What the media cache must do for a manifest: fetch what is listed and missing, keep
 * what is listed and present, evict what the manifest no longer lists. The manifest's
 * data outputs (`data[]`) and widget bundles (`widgets[]`) are cached the same way, in the
 * same cache, next to its media.
 * Cache keys are absolute URLs without query strings' volatile parts, so the page and the
 * service worker agree on them.
 */
import type { CacheEntry } from './manifest.js';

export const MEDIA_CACHE = 'placard-media-v1';
export const SHELL_CACHE = 'placard-shell-v1';
export const STATE_CACHE = 'placard-state-v1';

/** Variants larger than this are checked by size only (hashing needs the whole file in memory). */
export const VERIFY_MAX_BYTES = 512 * 1024 * 1024;

/** The cache key of a media URL (absolute, no fragment). */
export function cacheKey(url: string, base: string): string {
  const u = new URL(url, base);
  u.hash = '';
  return u.toString();
}

/**
 * Whether a request path is a player download the cache holds (what the service worker
 * serves cache-first): a media variant, a data output or a widget bundle (all immutable per id).
 */
export function isMediaPath(pathname: string): boolean {
  return /^\/api\/v1\/player\/(assets\/[^/]+\/variants\/[^/]+|data-outputs\/[^/]+|widget-bundles\/[^/]+)$/.test(pathname);
}

export interface CachePlan<T extends CacheEntry = CacheEntry> {
  fetch: T[];
  keep: T[];
  evict: string[];
}

export function planCache<T extends CacheEntry>(media: readonly T[], cachedKeys: readonly string[], base: string): CachePlan<T> {
  const cached = new Set(cachedKeys);
  const wanted = new Map<string, T>();
  for (const m of media) wanted.set(cacheKey(m.url, base), m);
  const plan: CachePlan<T> = { fetch: [], keep: [], evict: [] };
  for (const [key, entry] of wanted) (cached.has(key) ? plan.keep : plan.fetch).push(entry);
  for (const key of cached) if (!wanted.has(key)) plan.evict.push(key);
  // Small files first: more of the playlist becomes playable sooner.
  plan.fetch.sort((a, b) => (a.sizeBytes ?? Infinity) - (b.sizeBytes ?? Infinity));
  return plan;
}

/** Whether a downloaded body matches its manifest entry (size always, sha256 when given and computed). */
export function verifyDownload(entry: CacheEntry, sizeBytes: number, sha256Hex: string | null): { ok: true } | { ok: false; reason: string } {
  if (entry.sizeBytes !== null && entry.sizeBytes !== sizeBytes)
    return { ok: false, reason: `size ${sizeBytes} differs from the manifest's ${entry.sizeBytes}` };
  if (entry.sha256 && sha256Hex !== null && entry.sha256 !== sha256Hex.toLowerCase()) return { ok: false, reason: 'sha256 differs from the manifest' };
  return { ok: true };
}

export function toHex(buffer: ArrayBuffer): string {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');
}
