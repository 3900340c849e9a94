import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';

/**
 * The seams other modules code against. Registries belong to one app (deps.scope): a module
 * registers from its install(), and each add returns a function that removes the entry.
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
export function addAssetUsageFinder(deps: AppDeps, finder: AssetUsageFinder): () => void {
  return add(hooksOf(deps).usageFinders, finder);
}

/** Every usage of the given assets, from every registered finder. */
export async function findAssetUsages(deps: AppDeps, assetIds: readonly string[]): Promise<Usage[]> {
  if (assetIds.length === 0) return [];
  const all = await Promise.all([...hooksOf(deps).usageFinders].map((f) => f(deps.db, assetIds)));
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
export function addPlayerAssetGuard(deps: AppDeps, guard: PlayerAssetGuard): () => void {
  return add(hooksOf(deps).playerGuards, guard);
}

export async function screenMayDownload(deps: AppDeps, screenId: string, assetId: string): Promise<boolean> {
  const guards = hooksOf(deps).playerGuards;
  if (guards.size === 0) return true;
  for (const guard of guards) if (await guard(deps, screenId, assetId)) return true;
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
export type AssetChangeHook = (deps: AppDeps, event: AssetChangeEvent) => Promise<void> | void;

export function addAssetChangeHook(deps: AppDeps, hook: AssetChangeHook): () => void {
  return add(hooksOf(deps).changeHooks, hook);
}

export async function fireAssetChange(deps: AppDeps, event: AssetChangeEvent): Promise<void> {
  if (event.assetIds.length === 0) return;
  for (const hook of hooksOf(deps).changeHooks) {
    try {
      await hook(deps, event);
    } catch (err) {
      deps.logger.error({ err, change: event.change }, 'asset change hook failed');
    }
  }
}

interface MediaHooks {
  usageFinders: Set<AssetUsageFinder>;
  playerGuards: Set<PlayerAssetGuard>;
  changeHooks: Set<AssetChangeHook>;
}

const HOOKS = new ScopeKey<MediaHooks>('media.hooks', () => ({ usageFinders: new Set(), playerGuards: new Set(), changeHooks: new Set() }));
const hooksOf = (deps: AppDeps) => deps.scope.get(HOOKS);

function add<T>(set: Set<T>, entry: T): () => void {
  set.add(entry);
  return () => set.delete(entry);
}
