/**
 * The player's service worker (scope `/play`). It makes the player start
 * and play with the server gone:
 * - media variants (`/api/v1/player/assets/{id}/variants/{id}`) and data outputs
 *   (`/api/v1/player/data-outputs/{id}`) and widget bundles
 *   (`/api/v1/player/widget-bundles/{id}`), immutable per id: cache first, from the cache
 *   the page fills and verifies (media-cache.ts); network when not cached;
 * - the player page and its built files (and version.json): network first, the cached copy when offline
 *   (hashed build files: cache first, they never change);
 * - every other API call goes to the network untouched.
 */
// Self-contained on purpose (no imports): the worker is built as one stable file,
// /play-sw.js, whose scope is /play. Keep these in step with cache-plan.ts.
const MEDIA_CACHE = 'placard-media-v1';
const SHELL_CACHE = 'placard-shell-v1';
const isMediaPath = (pathname: string) => /^\/api\/v1\/player\/(assets\/[^/]+\/variants\/[^/]+|data-outputs\/[^/]+|widget-bundles\/[^/]+)$/.test(pathname);

// The console's type library is DOM; the few worker types used here, declared locally.
interface ExtendableEvent extends Event {
  waitUntil(p: Promise<unknown>): void;
}
interface FetchEvent extends ExtendableEvent {
  request: Request;
  respondWith(r: Promise<Response> | Response): void;
}
interface WorkerScope {
  registration: { scope: string };
  location: Location;
  clients: { claim(): Promise<void> };
  skipWaiting(): Promise<void>;
  addEventListener(type: 'install' | 'activate', fn: (e: ExtendableEvent) => void): void;
  addEventListener(type: 'fetch', fn: (e: FetchEvent) => void): void;
}
const worker = self as unknown as WorkerScope;

worker.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(SHELL_CACHE);
      // The page that registered us and the build files it names: the page loaded them
      // before this worker existed, so they would not be cached otherwise.
      try {
        const page = await fetch(new Request(worker.registration.scope, { cache: 'reload' }));
        if (page.ok) {
          const html = await page.clone().text();
          await cache.put(worker.registration.scope, page);
          // play.html names them relatively (`./assets/...`, vite.config.ts): resolved against the page.
          const files = new Set([...html.matchAll(/(?:src|href)="((?:\.\/|\/)assets\/[^"?#]+)"/g)].map((m) => new URL(m[1]!, page.url).pathname));
          await Promise.all([...files].map((f) => cache.add(f).catch(() => undefined)));
        }
      } catch {
        // Offline while installing: the next online start fills the cache.
      }
      await worker.skipWaiting();
    })(),
  );
});

worker.addEventListener('activate', (event) => {
  event.waitUntil(worker.clients.claim());
});

/** The player page and the build files it loads (scope /play also prefixes /playlists: not ours). */
function isShell(url: URL): boolean {
  return (
    url.pathname === '/play' ||
    url.pathname.startsWith('/play/') ||
    url.pathname === '/play-sw.js' ||
    url.pathname === '/version.json' ||
    url.pathname.startsWith('/assets/')
  );
}

async function mediaFirst(request: Request): Promise<Response> {
  const cache = await caches.open(MEDIA_CACHE);
  const url = new URL(request.url);
  url.hash = '';
  const hit = await cache.match(url.toString());
  if (hit) {
    const range = request.headers.get('range');
    if (!range) return hit;
    // Media elements may ask for a byte range: answer it from the cached body.
    const body = await hit.blob();
    const m = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
    if (!m || (m[1] === '' && m[2] === '')) return new Response(null, { status: 416, headers: { 'content-range': `bytes */${body.size}` } });
    let start: number;
    let end: number;
    if (m[1] === '') {
      start = Math.max(0, body.size - Number(m[2]));
      end = body.size - 1;
    } else {
      start = Number(m[1]);
      end = m[2] === '' ? body.size - 1 : Math.min(Number(m[2]), body.size - 1);
    }
    if (start >= body.size || start > end) return new Response(null, { status: 416, headers: { 'content-range': `bytes */${body.size}` } });
    return new Response(body.slice(start, end + 1), {
      status: 206,
      headers: {
        'content-type': hit.headers.get('content-type') ?? 'application/octet-stream',
        'content-range': `bytes ${start}-${end}/${body.size}`,
        'content-length': String(end - start + 1),
      },
    });
  }
  return fetch(request);
}

async function shellNetworkFirst(request: Request): Promise<Response> {
  const cache = await caches.open(SHELL_CACHE);
  // Hashed build files, the server's own or a web release's (/play/v/<version>/assets/).
  const immutable = /^(?:\/play\/v\/[^/]+)?\/assets\//.test(new URL(request.url).pathname);
  if (immutable) {
    const hit = await cache.match(request);
    if (hit) return hit;
  }
  try {
    const res = await fetch(request);
    if (res.ok && res.type === 'basic') await cache.put(request, res.clone());
    return res;
  } catch (err) {
    const hit =
      (await cache.match(request, { ignoreSearch: true })) ?? (request.mode === 'navigate' ? await cache.match(worker.registration.scope) : undefined);
    if (hit) return hit;
    throw err;
  }
}

worker.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== worker.location.origin) return;
  if (isMediaPath(url.pathname)) {
    event.respondWith(mediaFirst(request));
    return;
  }
  if (isShell(url)) event.respondWith(shellNetworkFirst(request));
});
