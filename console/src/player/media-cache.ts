/**
 * The page side of the media cache: downloads every variant and data output the manifest
 * lists into Cache Storage (verified by size and sha256 before it is stored), evicts what
 * the manifest no longer lists, and hands playback blob URLs (data zones read the bodies). The service worker (sw.ts) serves the same
 * cache first to any request for a variant URL, so media keeps loading with the server
 * gone. Without Cache Storage (an insecure http origin without the kiosk's
 * secure-origin flag), media is kept in memory for the life of the page instead.
 */
import { cacheKey, MEDIA_CACHE, planCache, toHex, verifyDownload, VERIFY_MAX_BYTES } from './cache-plan.js';
import type { CacheStatus } from './identity.js';
import type { CacheEntry } from './manifest.js';
import type { PlayerApi } from './protocol.js';

export interface SyncProgress {
  done: number;
  total: number;
  current: CacheEntry | null;
}

export class MediaCache {
  private readonly ready = new Set<string>();
  private readonly failedKeys = new Map<string, string>();
  private readonly memory = new Map<string, Blob>();
  private readonly urls = new Map<string, string>();
  private bytes = 0;
  private lastWanted = 0;
  private syncing: Promise<CacheStatus> | null = null;
  readonly persistent: boolean;

  constructor(
    private readonly api: PlayerApi,
    private readonly base: string,
  ) {
    this.persistent = typeof caches !== 'undefined' && typeof isSecureContext === 'boolean' && isSecureContext;
  }

  key(entry: CacheEntry): string {
    return cacheKey(entry.url, this.base);
  }

  isReady(entry: CacheEntry): boolean {
    return this.ready.has(this.key(entry));
  }

  status(): CacheStatus {
    return { items: this.ready.size, bytes: this.bytes, missing: Math.max(0, this.lastWanted - this.ready.size), failed: this.failedKeys.size };
  }

  private loading: Promise<void> | null = null;

  /** What is already cached (from an earlier run): counted ready without downloading again. */
  load(): Promise<void> {
    this.loading ??= this.doLoad().catch(() => undefined);
    return this.loading;
  }

  private async doLoad(): Promise<void> {
    if (!this.persistent) return;
    const cache = await caches.open(MEDIA_CACHE);
    for (const req of await cache.keys()) {
      this.ready.add(req.url);
      const res = await cache.match(req);
      this.bytes += Number(res?.headers.get('content-length') ?? 0) || 0;
    }
  }

  /** Brings the cache in line with `media` (cacheEntries(manifest)); one sync at a time (a second call waits for the first, then runs). */
  async sync(media: readonly CacheEntry[], onProgress?: (p: SyncProgress) => void): Promise<CacheStatus> {
    // Never download again what an earlier run left in the cache.
    await this.load();
    while (this.syncing) await this.syncing.catch(() => undefined);
    this.syncing = this.doSync(media, onProgress);
    try {
      return await this.syncing;
    } finally {
      this.syncing = null;
    }
  }

  private async doSync(media: readonly CacheEntry[], onProgress?: (p: SyncProgress) => void): Promise<CacheStatus> {
    const plan = planCache(media, [...this.ready], this.base);
    this.lastWanted = plan.keep.length + plan.fetch.length;
    let done = 0;
    for (const entry of plan.fetch) {
      onProgress?.({ done, total: plan.fetch.length, current: entry });
      try {
        await this.download(entry);
        this.failedKeys.delete(this.key(entry));
      } catch (err) {
        this.failedKeys.set(this.key(entry), (err as Error).message);
        // A network failure: stop here, the next sync carries on (nothing half-stored).
        if ((err as { network?: boolean }).network) break;
      }
      done += 1;
    }
    onProgress?.({ done, total: plan.fetch.length, current: null });
    return this.status();
  }

  /** Drops what the manifest no longer lists (run after the new manifest is on screen). */
  async evictExcept(media: readonly CacheEntry[]): Promise<number> {
    const plan = planCache(media, [...this.ready], this.base);
    const cache = this.persistent ? await caches.open(MEDIA_CACHE) : null;
    for (const key of plan.evict) {
      this.ready.delete(key);
      this.failedKeys.delete(key);
      this.memory.delete(key);
      const url = this.urls.get(key);
      if (url) {
        URL.revokeObjectURL(url);
        this.urls.delete(key);
      }
      await cache?.delete(key);
    }
    return plan.evict.length;
  }

  private async download(entry: CacheEntry): Promise<void> {
    const key = this.key(entry);
    const res = await this.api.media(entry.url);
    const type = res.headers.get('content-type') ?? entry.contentType ?? 'application/octet-stream';
    const declared = Number(res.headers.get('content-length') ?? entry.sizeBytes ?? 0);
    if (declared > VERIFY_MAX_BYTES && this.persistent) {
      // Too large to hash in memory: stream it into the cache and check its size.
      const cache = await caches.open(MEDIA_CACHE);
      await cache.put(key, res);
      const stored = await cache.match(key);
      const size = stored ? (await stored.blob()).size : -1;
      const check = verifyDownload(entry, size, null);
      if (!check.ok) {
        await cache.delete(key);
        throw new Error(check.reason);
      }
      this.bytes += size;
      this.ready.add(key);
      return;
    }
    const buffer = await res.arrayBuffer();
    const sha = typeof crypto !== 'undefined' && crypto.subtle ? toHex(await crypto.subtle.digest('SHA-256', buffer)) : null;
    const check = verifyDownload(entry, buffer.byteLength, sha);
    if (!check.ok) throw new Error(`${entry.url}: ${check.reason}`);
    if (this.persistent) {
      const cache = await caches.open(MEDIA_CACHE);
      await cache.put(
        key,
        new Response(buffer, {
          headers: { 'content-type': type, 'content-length': String(buffer.byteLength), ...(entry.sha256 ? { etag: `"${entry.sha256}"` } : {}) },
        }),
      );
    } else {
      this.memory.set(key, new Blob([buffer], { type }));
    }
    this.bytes += buffer.byteLength;
    this.ready.add(key);
  }

  /** A cached entry's verified body, or null when it is not cached. */
  async blob(entry: CacheEntry): Promise<Blob | null> {
    const key = this.key(entry);
    let blob: Blob | null = this.memory.get(key) ?? null;
    if (!blob && this.persistent) {
      const res = await (await caches.open(MEDIA_CACHE)).match(key);
      if (res) blob = await res.blob();
    }
    if (!blob) this.ready.delete(key);
    return blob;
  }

  /** A blob URL for playing a cached entry (made once, reused), or null when it is not cached. */
  async objectUrl(entry: CacheEntry): Promise<string | null> {
    const key = this.key(entry);
    const known = this.urls.get(key);
    if (known) return known;
    const blob = await this.blob(entry);
    if (!blob) return null;
    const url = URL.createObjectURL(blob.type || !entry.contentType ? blob : new Blob([blob], { type: entry.contentType }));
    this.urls.set(key, url);
    return url;
  }

  /** Forgets everything (the clear-cache command, or a revoked credential). */
  async clear(): Promise<void> {
    await this.load();
    for (const url of this.urls.values()) URL.revokeObjectURL(url);
    this.urls.clear();
    this.memory.clear();
    this.ready.clear();
    this.failedKeys.clear();
    this.bytes = 0;
    if (this.persistent) await caches.delete(MEDIA_CACHE);
  }
}
