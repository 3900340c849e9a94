/**
 * Which screens a content change alters, and telling them. A screen's manifest build
 * records what it used (playlists, layouts, assets, schedules, tag rules: manifest.repo.ts);
 * a change to any of those bumps exactly those screens' manifest
 * revision, which pushes `manifest.changed` on their sockets. Changes that add content
 * to a screen (a new schedule or assignment) name the screens directly.
 */
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import { bumpManifestRevision } from '../screens/index.js';
import { manifestCache } from './manifest.cache.js';
import { type DepRef, screensDependingOn } from './manifest.repo.js';
import { forgetAllParts, forgetPartsUsing } from './playlist-parts.js';

export type { DepKind, DepRef } from './manifest.repo.js';

const CHANGES = new ScopeKey('content.change-count', () => ({ count: 0 }));

/**
 * How many content changes this app has announced. `contentChanged` counts one before
 * it looks anything up (and after the change committed), so a manifest build that reads
 * the count before and after knows whether a change may have slipped between its reads
 * and the recording of its dependencies (a change then finds no recorded dependency for
 * a first build, or only the old ones).
 */
export function contentChangeCount(deps: AppDeps): number {
  return deps.scope.get(CHANGES).count;
}

/** Bumps the manifests of the screens that used `refs`, plus `screenIds`. Never throws. */
export async function contentChanged(deps: AppDeps, refs: readonly DepRef[], screenIds: readonly string[] = []): Promise<void> {
  deps.scope.get(CHANGES).count++;
  forgetPartsUsing(deps.db, refs); // the playlist parts built from what changed (playlist-parts.ts)
  // The other instances keep parts too (their manifests rebuild by the bumped revision). Told
  // before the screens are looked up: a build there whose dependency record this lookup misses
  // (not committed yet) hears of the change before it caches (manifest.ts buildAndCache).
  if (refs.length > 0) await deps.cluster.publish('content.changed', refs.length <= 100 ? refs : null);
  try {
    const affected = new Set([...screenIds, ...(await screensDependingOn(deps.db, refs))]);
    if (affected.size === 0) return;
    for (const id of affected) manifestCache(deps).delete(id);
    await bumpManifestRevision(deps, [...affected]);
  } catch (err) {
    deps.logger.error({ err }, 'could not bump manifests after a content change');
  }
}

/**
 * What another instance's content change means here (PostgreSQL, several instances): the
 * change is counted and the playlist parts built from what changed are forgotten (null: too
 * many refs to send, or messages were missed while reconnecting: all of them). The screens'
 * revisions were bumped in the database; their manifests here rebuild by it.
 */
export function relayContentChanges(deps: AppDeps): void {
  const forget = (refs: DepRef[] | null) => {
    deps.scope.get(CHANGES).count++;
    if (Array.isArray(refs)) forgetPartsUsing(deps.db, refs);
    else forgetAllParts(deps.db);
  };
  deps.cluster.on('content.changed', forget);
  deps.cluster.on('cluster.resync', () => forget(null));
}
