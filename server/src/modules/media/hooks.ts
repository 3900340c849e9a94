import type { Logger } from 'pino';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';

/**
 * The seams other modules code against. Registries are process-wide: a module registers
 * from its install() (content's, once) and every app built in this process uses them.
 */

/** One place an asset is used, for DELETE's 409 answer. */
export interface Usage {
  assetId: string;
  /** What uses it: 'playlist', 'layout', 'schedule', ... */
  type: string;
  id: string;
  name: string;
}

export type AssetUsageFinder = (db: Db, assetIds: readonly string[]) => Promise<Usage[]>;

/**
 * Playlists, layouts (...) register a finder; deleting an asset any finder reports as
 * used answers 409 `conflict` with the usages in `details.usages` (unless forced by an
 * admin or owner).
 */
export const assetUsageFinders = new Set<AssetUsageFinder>();

/** Every usage of the given assets, from every registered finder. */
export async function findAssetUsages(db: Db, assetIds: readonly string[]): Promise<Usage[]> {
  if (assetIds.length === 0) return [];
  const all = await Promise.all([...assetUsageFinders].map((f) => f(db, assetIds)));
  return all.flat();
}

/**
 * Decides whether a screen may download an asset through
 * `GET /api/v1/player/assets/{assetId}/variants/{variantId}`. The playlists/manifest
 * module registers one. Choice (docs/media.md): while none is registered, a screen with
 * a valid device credential may download any ready asset; once one or more are
 * registered, at least one must answer true.
 */
export type PlayerAssetGuard = (deps: AppDeps, screenId: string, assetId: string) => Promise<boolean>;
export const playerAssetGuards = new Set<PlayerAssetGuard>();

export async function screenMayDownload(deps: AppDeps, screenId: string, assetId: string): Promise<boolean> {
  if (playerAssetGuards.size === 0) return true;
  for (const guard of playerAssetGuards) if (await guard(deps, screenId, assetId)) return true;
  return false;
}

export type AssetChange = 'ready' | 'failed' | 'archived' | 'restored' | 'deleted' | 'replaced' | 'updated';

export interface AssetChangeEvent {
  change: AssetChange;
  assetIds: readonly string[];
}

/**
 * Called after an asset's state changed and the change is committed (never inside the
 * transaction), so manifests can be bumped. Errors are logged, never thrown back.
 */
export type AssetChangeHook = (deps: { db: Db; logger: Logger }, event: AssetChangeEvent) => Promise<void> | void;
export const assetChangeHooks = new Set<AssetChangeHook>();

export async function fireAssetChange(deps: { db: Db; logger: Logger }, event: AssetChangeEvent): Promise<void> {
  if (event.assetIds.length === 0) return;
  for (const hook of assetChangeHooks) {
    try {
      await hook(deps, event);
    } catch (err) {
      deps.logger.error({ err, change: event.change }, 'asset change hook failed');
    }
  }
}
