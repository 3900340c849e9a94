import { createReadStream, existsSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Middleware, Next } from 'koa';
import type { AppDeps } from '../app-deps.js';
import { ScopeKey } from '../app-scope.js';
import type { Route } from './route.js';

/**
 * Serves the built console (`/`) and browser player (`/play`) from console/dist on the
 * API's port. Rules:
 * - only GET and HEAD; never `/api`, `/healthz`, `/readyz`, `/install*`, nor any other
 *   path a registered route answers (those fall through to the router and its envelopes);
 * - `/assets/*` are Vite's content-hashed files: cached for a year, `immutable`; a
 *   missing one is a 404, never the HTML page;
 * - `/play` and `/play/...` answer play.html unless a real file exists there (the
 *   player's service worker may live under /play/ for its scope); the player page names its
 *   build files relatively (`./assets/...`), so `/play/<anything>/assets/<file>` is the
 *   build's `/assets/<file>` (a page opened at `/play/` still loads);
 * - `/play/v/<version>/...` is a stored web release (docs/player-updates.md): its files from
 *   the directory `webRelease` resolves (extracted once), its play.html for `/play/v/<version>/`
 *   and any other path under it; an unknown version is a 404; `/play/v/<version>` (no slash)
 *   redirects to the slash so the page's relative URLs resolve inside the release;
 * - other existing files (favicon, theme script) are revalidated (`no-cache` + ETag);
 * - source maps (`*.map`) are never served, even if a build left some: 404;
 * - any other extension-less path is a console route: index.html (SPA fallback);
 * - HTML is never cached stale (`no-cache`), so a new build shows at the next load.
 */

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

/**
 * The console's policy: scripts only from this origin; images/media also from data: and
 * blob: (QR codes, local previews); websites may be previewed in frames; no framing of
 * the console itself. The player page sets its own policy (it frames arbitrary sites).
 */
function consoleCsp(scriptHashes: readonly string[]): string {
  return [
    "default-src 'self'",
    ["script-src 'self'", ...scriptHashes.map((h) => `'sha256-${h}'`)].join(' '),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    'frame-src http: https:',
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const SCRIPT_HASHES = new ScopeKey('console.script-hashes', () => new Set<string>());

/**
 * Lets one inline script (by its base64 sha256) run in the console page's documents: the
 * widgets' runtime in the editor's sandboxed srcdoc preview, which inherits this policy.
 */
export function addConsoleScriptHash(deps: Pick<AppDeps, 'scope'>, sha256Base64: string): void {
  deps.scope.get(SCRIPT_HASHES).add(sha256Base64);
}

export function consoleScriptHashes(deps: Pick<AppDeps, 'scope'>): string[] {
  return [...deps.scope.get(SCRIPT_HASHES)].sort();
}

/** console/dist next to the package.json of this checkout or release (works from src and from dist/). */
export function defaultConsoleDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'console'))) return path.join(dir, 'console', 'dist');
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return path.resolve('console', 'dist');
}

const RESERVED = [/^\/api(\/|$)/, /^\/healthz$/, /^\/readyz$/, /^\/install/];

function routeMatcher(routes: readonly Route[]): (p: string) => boolean {
  const patterns = routes
    .filter((r) => !r.path.startsWith('/api/'))
    .map((r) => new RegExp(`^${r.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+')}/?$`));
  return (p) => RESERVED.some((re) => re.test(p)) || patterns.some((re) => re.test(p));
}

function statFile(file: string): Stats | null {
  try {
    const st = statSync(file);
    return st.isFile() ? st : null;
  } catch {
    return null;
  }
}

function send(ctx: Context, file: string, st: Stats, cacheControl: string, extraHeaders: Record<string, string> = {}): void {
  const type = TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
  ctx.set('Cache-Control', cacheControl);
  ctx.set('ETag', `W/"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`);
  ctx.set('Last-Modified', st.mtime.toUTCString());
  ctx.set(extraHeaders);
  ctx.type = type;
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  // HEAD: status and headers only (Koa ends the response without a body).
  if (ctx.method !== 'HEAD') ctx.body = createReadStream(file);
  ctx.length = st.size;
}

function notBuilt(ctx: Context, dir: string): void {
  ctx.status = 503;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = `<!doctype html><meta charset="utf-8"><title>Placard</title><h1>Placard</h1><p>The console is not built (no ${path.join(dir, 'index.html').replace(/&/g, '&amp;').replace(/</g, '&lt;')}). Run <code>npm run build</code> (or <code>npm start</code>, which builds first).</p><p>The API answers under <a href="/api/v1/openapi.json">/api/v1</a>.</p>`;
}

export interface ConsoleStaticOptions {
  /** Where a console page asked for over plain HTTP goes instead (308), or null to serve it (PLACARD_HTTPS_REDIRECT). */
  httpsRedirect?: (ctx: Context) => string | null;
  /** Inline scripts (base64 sha256) the console's policy lets run (addConsoleScriptHash). */
  scriptHashes?: () => readonly string[];
  /**
   * The directory holding the extracted build of the stored web release of `version`
   * (modules/update-deployments/web-releases.ts), or null when there is none: /play/v/<version>/.
   */
  webRelease?: (version: string) => Promise<string | null>;
}

const PLAY_RELEASE = /^\/play\/v\/([^/]+)(\/.*)?$/;
const PLAY_ASSET = /^\/play\/(?:[^/]+\/)*assets\/([^/]+)$/;

/** `file` inside `root` (the root itself excluded), or null. */
function inside(root: string, p: string): string | null {
  const file = path.resolve(root, `.${path.posix.normalize(`/${p}`)}`);
  return file.startsWith(root + path.sep) ? file : null;
}

/** A stored web release's files under /play/v/<version>/ (`rest` starts with '/'). */
function serveRelease(ctx: Context, dir: string, rest: string, next: () => Promise<unknown>) {
  const root = path.resolve(dir);
  if (rest.startsWith('/assets/')) {
    const file = inside(root, rest);
    const st = file ? statFile(file) : null;
    return st && file ? send(ctx, file, st, IMMUTABLE) : next();
  }
  const file = rest.endsWith('/') ? null : inside(root, rest);
  const st = file ? statFile(file) : null;
  if (st && file && !/\.html$/i.test(file)) return send(ctx, file, st, REVALIDATE);
  const page = path.join(root, 'play.html');
  const pst = statFile(page);
  return pst ? send(ctx, page, pst, REVALIDATE) : next();
}

export function consoleStatic(dir: string, routes: readonly Route[], options: ConsoleStaticOptions = {}): Middleware {
  const root = path.resolve(dir);
  let csp = { key: '', value: consoleCsp([]) };
  const policy = () => {
    const hashes = options.scriptHashes?.() ?? [];
    const key = hashes.join(' ');
    if (key !== csp.key) csp = { key, value: consoleCsp(hashes) };
    return csp.value;
  };
  const isServerPath = routeMatcher(routes);
  // A plain function in front: the API, /healthz and other methods pass on without the
  // promise (and its async hook: platform/http/middleware.ts) of the async part.
  return (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.path.startsWith('/api/')) return next();
    let p: string;
    try {
      p = decodeURIComponent(ctx.path);
    } catch {
      return next();
    }
    if (isServerPath(p) || p.includes('\0')) return next();
    return serveStatic(ctx, next, p);
  };
  async function serveStatic(ctx: Context, next: Next, p: string): Promise<unknown> {
    // Source maps would publish the sources: a missing file (404), whatever the build left.
    if (/\.map$/i.test(p)) return next();
    const file = path.resolve(root, `.${path.posix.normalize(`/${p}`)}`);
    if (file !== root && !file.startsWith(root + path.sep)) return next();
    const html = (name: 'index.html' | 'play.html') => {
      // Only the console's pages move to HTTPS: /play, assets and the API stay for players
      // and scripts on plain HTTP.
      const target = name === 'index.html' ? options.httpsRedirect?.(ctx) : null;
      if (target) {
        ctx.status = 308; // keeps the method; ctx.redirect keeps a 3xx status set before it
        ctx.set('Cache-Control', 'no-store');
        ctx.redirect(target);
        return;
      }
      const page = path.join(root, name);
      const st = statFile(page);
      if (!st) return notBuilt(ctx, root);
      send(ctx, page, st, REVALIDATE, name === 'index.html' ? { 'Content-Security-Policy': policy(), 'X-Frame-Options': 'DENY' } : {});
    };

    const release = PLAY_RELEASE.exec(p);
    if (release) {
      const [, version, rest] = release;
      const dir = options.webRelease ? await options.webRelease(version!) : null;
      if (!dir) return next();
      if (rest === undefined) {
        ctx.status = 302;
        ctx.set('Cache-Control', 'no-store');
        ctx.redirect(`/play/v/${encodeURIComponent(version!)}/${ctx.querystring ? `?${ctx.querystring}` : ''}`);
        return;
      }
      return serveRelease(ctx, dir, rest, next);
    }
    const playAsset = PLAY_ASSET.exec(p);
    if (p.startsWith('/assets/') || playAsset) {
      const asset = playAsset ? path.join(root, 'assets', playAsset[1]!) : file;
      const st = statFile(asset);
      if (!st) return next(); // a missing hashed file is a 404, not the console page
      return send(ctx, asset, st, IMMUTABLE);
    }
    const st = p.endsWith('/') ? null : statFile(file);
    if (st && !/\.html$/i.test(file)) return send(ctx, file, st, REVALIDATE);
    if (p === '/play' || p.startsWith('/play/') || p === '/play.html') return html('play.html');
    // A missing file with an extension is a 404; any other path is a console route.
    if (/\.[a-z0-9]+$/i.test(path.posix.basename(p)) && p !== '/index.html') return next();
    return html('index.html');
  }
}
