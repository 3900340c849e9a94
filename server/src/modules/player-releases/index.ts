import type { PlacardModule } from '../../platform/module.js';
import { resumeAndSweep } from './cache.service.js';
import { releaseRoutes } from './releases.routes.js';
import { sourceRoutes } from './source.routes.js';

/**
 * Player releases (issue 23, spec 4.12; docs/player-releases.md): the catalogue, uploads
 * checked to be what their family takes, the release source (a remote catalogue reached with
 * the OAuth 2.0 Device Authorization Grant, RFC 8628), check and cache (resumable, sha256 and
 * Ed25519 verified). The update-deployments module reads releases through the two functions below.
 */
export const playerReleasesModule: PlacardModule = {
  name: 'player-releases',
  routes: [...releaseRoutes, ...sourceRoutes],
  install({ deps, secrets }) {
    // Downloads left `downloading` by a restart resume from their .part; stale incoming uploads go.
    deps.periodic.every('player-releases.resume', 60_000, () => resumeAndSweep(deps, secrets));
  },
};

export { releaseArtifact, releaseView } from './views.js';
export type { Release } from './releases.schemas.js';
