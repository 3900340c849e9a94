/**
 * The browser player's side of update deployments (docs/player-updates.md): a web release is
 * a build of this page served at /play/v/<version>/. Offered one (`update` of family `web` in
 * the manifest or the config), the player checks that the server serves it, reports
 * downloading / downloaded / installing, and moves there (keeping its query); the new build
 * reports `installed` with its version once it boots. At boot, a player whose version is not
 * the config's `webRelease` moves there. The Linux kiosk (`?kiosk=1`) is the desktop-linux
 * player: its updater (install.sh) applies its releases, so it ignores web ones.
 * No DOM types here: the unit tests run it in Node with fakes of the API and location.
 */
import type { PlayerConfig, UpdateInfo, UpdateOffer, UpdateStatus, WebReleaseRef } from './protocol.js';

type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 200;

/** `update` as the manifest or the config carries it, or null. */
export function readUpdateOffer(raw: unknown): UpdateOffer | null {
  const u = raw as Partial<UpdateOffer> | null | undefined;
  if (!u || typeof u !== 'object') return null;
  if (!str(u.deploymentId) || !str(u.releaseId) || !str(u.version) || !str(u.family)) return null;
  return { deploymentId: u.deploymentId, releaseId: u.releaseId, version: u.version, family: u.family };
}

/** `webRelease` of the config, or null (its path must be a /play/v/ path of this server). */
export function readWebRelease(raw: unknown): WebReleaseRef | null {
  const w = raw as Partial<WebReleaseRef> | null | undefined;
  if (!w || typeof w !== 'object' || !str(w.releaseId) || !str(w.version)) return null;
  const path = str(w.path) && /^\/play\/v\/[^/?#]+\/$/.test(w.path) ? w.path : releasePath(w.version);
  return { releaseId: w.releaseId, version: w.version, path };
}

/** Where a web release of `version` is served. */
export function releasePath(version: string): string {
  return `/play/v/${encodeURIComponent(version)}/`;
}

/**
 * Where a starting player goes (null: it stays): the config's web release when it runs
 * another version, unless it is the build an offer just brought here (it reports installed).
 */
export function bootTarget(input: { kiosk: boolean; ownVersion: string; config: Pick<PlayerConfig, 'update' | 'webRelease'> }): string | null {
  if (input.kiosk) return null;
  const offer = readUpdateOffer(input.config.update);
  if (offer && offer.family === 'web' && offer.version === input.ownVersion) return null;
  const web = readWebRelease(input.config.webRelease);
  if (!web || web.version === input.ownVersion) return null;
  return web.path;
}

export interface WebUpdaterDeps {
  api: {
    updateInfo(releaseId: string): Promise<UpdateInfo>;
    updateStatus(deploymentId: string, body: UpdateStatus): Promise<{ state: string }>;
  };
  ownVersion: string;
  kiosk: boolean;
  location: { search: string; pathname: string; replace(url: string): void };
  /** Where the last moves are remembered (sessionStorage): a release that does not say its version must not loop. */
  memory?: { getItem(k: string): string | null; setItem(k: string, v: string): void } | null;
  fetchImpl?: FetchLike;
  log: (message: string) => void;
  now?: () => number;
}

const MOVE_KEY = 'placard.player.webReleaseMove';
/**
 * Moves to the same place this often within MOVE_GUARD_MS are a loop (the release there does
 * not start as the version it claims): the next is refused.
 */
const MOVE_GUARD_MS = 5 * 60_000;
const MOVE_GUARD_COUNT = 3;

export class WebUpdater {
  private busy: string | null = null;
  /** Offers this build reported `installed` for (once each). */
  private readonly confirmed = new Set<string>();

  constructor(private readonly deps: WebUpdaterDeps) {}

  /** At boot, with the config: move to the screen's web release, or take the offer it carries. */
  async boot(config: Pick<PlayerConfig, 'update' | 'webRelease'>): Promise<void> {
    const target = bootTarget({ kiosk: this.deps.kiosk, ownVersion: this.deps.ownVersion, config });
    if (target && this.move(target, 'this screen runs web release')) return;
    await this.offer(config.update);
  }

  /** An `update` from the manifest or the config (null: none). */
  async offer(raw: unknown): Promise<void> {
    const offer = readUpdateOffer(raw);
    if (offer?.family !== 'web' || this.deps.kiosk) return;
    const key = `${offer.deploymentId}:${offer.releaseId}`;
    if (offer.version === this.deps.ownVersion) {
      // The new build, started: the install is done.
      if (this.confirmed.has(key)) return;
      this.confirmed.add(key);
      await this.report(offer.deploymentId, { state: 'installed', version: this.deps.ownVersion });
      return;
    }
    if (this.busy === key) return;
    this.busy = key;
    try {
      await this.install(offer);
    } finally {
      this.busy = null;
    }
  }

  private async install(offer: UpdateOffer): Promise<void> {
    const { api, log } = this.deps;
    let info: UpdateInfo;
    try {
      info = await api.updateInfo(offer.releaseId);
    } catch (err) {
      // Withdrawn (404) or the server is away: the next manifest tells.
      log(`Update ${offer.version}: ${(err as Error).message}`);
      return;
    }
    const version = info.version || offer.version;
    const base = releasePath(version);
    const fetchImpl = this.deps.fetchImpl ?? ((input, init) => fetch(input, init));
    try {
      await this.report(offer.deploymentId, { state: 'downloading', progress: 0 });
      // The release's page and its version, from the server: served, and the version it claims.
      const page = await fetchImpl(base, { cache: 'no-store' } as RequestInit);
      if (!page.ok) throw new Error(`the server does not serve ${base} (HTTP ${page.status})`);
      const html = await page.text();
      if (!/<div id="player">/.test(html)) throw new Error(`${base} is not a player page`);
      await this.report(offer.deploymentId, { state: 'downloading', progress: 0.5 });
      const file = await fetchImpl(`${base}version.json`, { cache: 'no-store' } as RequestInit);
      if (!file.ok) throw new Error(`the server does not serve ${base}version.json (HTTP ${file.status})`);
      const claimed = ((await file.json().catch(() => null)) as { version?: unknown } | null)?.version;
      if (claimed !== version) throw new Error(`${base}version.json says ${JSON.stringify(claimed)}, not ${version}`);
      await this.report(offer.deploymentId, { state: 'downloading', progress: 1 });
      await this.report(offer.deploymentId, { state: 'downloaded' });
      await this.report(offer.deploymentId, { state: 'installing' });
    } catch (err) {
      const message = (err as Error).message ?? String(err);
      log(`Update to ${version} failed: ${message}`);
      await this.report(offer.deploymentId, { state: 'failed', error: message.slice(0, 500) });
      return;
    }
    if (!this.move(base, `installing web release`)) {
      await this.report(offer.deploymentId, { state: 'failed', error: `${base} was opened moments ago and did not run version ${version}` });
    }
  }

  /** Navigates to `path` keeping the query; false when that same move was just made (a loop). */
  private move(path: string, why: string): boolean {
    const { location, memory, log } = this.deps;
    const now = (this.deps.now ?? Date.now)();
    try {
      const last = JSON.parse(memory?.getItem(MOVE_KEY) ?? 'null') as { path?: string; at?: number; count?: number } | null;
      const recent = last?.path === path && typeof last.at === 'number' && now - last.at < MOVE_GUARD_MS;
      const count = recent ? (last?.count ?? 1) + 1 : 1;
      if (count > MOVE_GUARD_COUNT) {
        log(`Not moving to ${path} again: it did not start as the version it was offered as`);
        return false;
      }
      memory?.setItem(MOVE_KEY, JSON.stringify({ path, at: recent ? last!.at : now, count }));
    } catch {
      // No session storage: no loop guard.
    }
    log(`${why}: moving to ${path}`);
    location.replace(`${path}${location.search}`);
    return true;
  }

  private async report(deploymentId: string, body: UpdateStatus): Promise<void> {
    try {
      await this.deps.api.updateStatus(deploymentId, body);
    } catch (err) {
      this.deps.log(`Update status ${body.state}: ${(err as Error).message}`);
      if (body.state !== 'failed' && body.state !== 'installed') throw err;
    }
  }
}
