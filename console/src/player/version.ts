/**
 * Which version this player is (docs/player-updates.md). The browser player reads
 * `version.json` beside its page's build (written by the build, vite.config.ts): a web
 * release served under /play/v/<version>/ carries its own. The Linux kiosk (`?kiosk=1`) is
 * the desktop-linux player: its updater passes the installed release's version in the
 * kiosk URL (`&playerVersion=`). The compiled PLAYER_VERSION when neither says.
 * No DOM types here: the unit tests import this file in Node.
 */
import { PLAYER_VERSION } from './protocol.js';

type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** A plausible version string (semver-ish, bounded): what a URL or a file may claim. */
export function cleanVersion(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const s = v.trim().replace(/^v/, '');
  return /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.test(s) && s.length <= 64 ? s : null;
}

/** The version a kiosk URL names (`playerVersion=`), only with `kiosk=1`. */
export function kioskVersionFromSearch(search: string, kiosk: boolean): string | null {
  if (!kiosk) return null;
  const params = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  return cleanVersion(params.get('playerVersion'));
}

/**
 * This build's version: `version.json` next to the build (`scriptUrl` is the module's
 * `import.meta.url`, inside `assets/`), the kiosk's URL for the Linux player, else PLAYER_VERSION.
 */
export async function loadPlayerVersion(opts: {
  scriptUrl: string;
  search: string;
  kiosk: boolean;
  fetchImpl?: FetchLike;
  timeoutMs?: number;
}): Promise<string> {
  const kiosk = kioskVersionFromSearch(opts.search, opts.kiosk);
  if (kiosk) return kiosk;
  const fetchImpl = opts.fetchImpl ?? ((input, init) => fetch(input, init));
  const controller = typeof AbortController === 'function' ? new AbortController() : null;
  const timer = controller ? setTimeout(() => controller.abort(), opts.timeoutMs ?? 5_000) : null;
  try {
    const res = await fetchImpl(new URL('../version.json', opts.scriptUrl).toString(), {
      cache: 'no-store',
      ...(controller ? { signal: controller.signal } : {}),
    } as RequestInit);
    if (!res.ok) return PLAYER_VERSION;
    const body = (await res.json()) as { version?: unknown };
    return cleanVersion(body?.version) ?? PLAYER_VERSION;
  } catch {
    // Offline start (the service worker may have no copy) or not a JSON file: the compiled one.
    return PLAYER_VERSION;
  } finally {
    if (timer) clearTimeout(timer);
  }
}
