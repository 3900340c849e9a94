/**
 * What a player learns about updates (issue 23; docs/update-deployments.md): the update
 * offered to the screen and the web release it runs. The screens module serves them in
 * `GET /player/config` and the content module in the manifest, but neither knows about
 * deployments: the update-deployments module registers a provider here in its install(),
 * as modules register window and overlay providers with content.
 */
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';

/** An update offered to the screen: fetch `/api/v1/player/updates/{releaseId}`. */
export interface UpdateOffer {
  deploymentId: string;
  releaseId: string;
  version: string;
  family: string;
}

/** The newest web release the screen installed through a deployment (the /play build to run). */
export interface WebRelease {
  releaseId: string;
  version: string;
  path: string;
}

export interface UpdateInfoProvider {
  offer(db: Db, screenId: string): Promise<UpdateOffer | null>;
  webRelease(db: Db, screenId: string): Promise<WebRelease | null>;
}

const PROVIDERS = new ScopeKey('screens.update-info-providers', (): UpdateInfoProvider[] => []);

/** A module with update offers registers its provider here, in its install(). */
export function provideUpdateInfo(deps: AppDeps, provider: UpdateInfoProvider): void {
  deps.scope.get(PROVIDERS).push(provider);
}

/** The update offered to a screen (the first provider's answer), or null (none registered: null). */
export async function updateOfferOf(deps: AppDeps, screenId: string, db: Db = deps.db): Promise<UpdateOffer | null> {
  for (const p of deps.scope.get(PROVIDERS)) {
    const offer = await p.offer(db, screenId);
    if (offer) return offer;
  }
  return null;
}

/** The web release a screen should run, or null (the bundled build). */
export async function webReleaseOf(deps: AppDeps, screenId: string, db: Db = deps.db): Promise<WebRelease | null> {
  for (const p of deps.scope.get(PROVIDERS)) {
    const web = await p.webRelease(db, screenId);
    if (web) return web;
  }
  return null;
}
