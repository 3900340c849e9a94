/**
 * The manifest's seam for presentation networks (docs/presentation-networks.md): a module
 * registers who a screen plays in step with. A member's manifest then carries the network
 * (`presentationNetwork`) and the leader's resolved timeline, so every member plays the same
 * items, with boundaries counted from the network's epoch on the server clock.
 */
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';

export interface ManifestNetwork {
  id: string;
  name: string;
  /** ISO time (server clock) the members' playlist cycles count from. */
  epoch: string;
  leaderScreenId: string | null;
  position: number;
  memberCount: number;
  /** Changes whenever what the member plays may (the leader's manifest revision, the membership). */
  key: string;
}

export type ManifestNetworkProvider = (db: Db, screenId: string) => Promise<ManifestNetwork | null>;

const PROVIDER = new ScopeKey<{ fn: ManifestNetworkProvider | null }>('content.manifest-network', () => ({ fn: null }));

/** One provider per app (the presentation-networks module's); registering again replaces it. */
export function registerManifestNetwork(deps: AppDeps, fn: ManifestNetworkProvider): void {
  deps.scope.get(PROVIDER).fn = fn;
}

/**
 * The network the screen plays in (null: none). Given the screen's context rather than its id,
 * a screen whose context says it is in no network (`inNetwork` false: read with the context,
 * in the same statement as its credential on the manifest route) asks the provider nothing.
 */
export function manifestNetworkOf(deps: AppDeps, screen: string | { id: string; inNetwork?: boolean }): Promise<ManifestNetwork | null> {
  if (typeof screen !== 'string' && screen.inNetwork === false) return NO_NETWORK;
  const fn = deps.scope.get(PROVIDER).fn;
  return fn ? fn(deps.db, typeof screen === 'string' ? screen : screen.id) : NO_NETWORK;
}

/** One settled answer for "none" (a new promise per manifest request is an async hook more). */
const NO_NETWORK: Promise<null> = Promise.resolve(null);
