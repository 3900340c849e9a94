import type { PlacardModule } from '../../platform/module.js';
import { commandRoutes } from './commands.routes.js';
import { registerScreensExportSections } from './export-sections.js';
import { fleetRoutes } from './fleet.routes.js';
import { groupRoutes } from './groups.routes.js';
import { locationRoutes } from './locations.routes.js';
import { pairingRoutes } from './pairing.routes.js';
import { playerRoutes } from './player.routes.js';
import { installScreens, registerScreensStatus } from './screens.module.js';
import { screenRoutes } from './screens.routes.js';

/** Screens and the player protocol: pairing, heartbeats, commands, groups, locations, fleet views. */
export const screensModule: PlacardModule = {
  name: 'screens',
  routes: [...pairingRoutes, ...playerRoutes, ...screenRoutes, ...locationRoutes, ...groupRoutes, ...commandRoutes, ...fleetRoutes],
  install({ deps, realtime }) {
    registerScreensStatus(deps);
    registerScreensExportSections(deps);
    installScreens(deps, realtime);
  },
};

export { type DeviceContextRow, readsDeviceContextOnly } from './device-auth.js';
export { screenshotDir } from './commands.service.js';
export { registerNowShowingDescriber, type NowShowing, type NowShowingRequest } from './now-showing.js';
export { bumpManifestRevision } from './revision.js';
export { DEFAULT_DISPLAY, deriveStatus, newScreenRow } from './screens.repo.js';
export { groupCommit } from './group-commit.js';
export { registerTargetReferences, type TargetKind, type TargetUsage } from './usage.js';
export { localDay, purgeNoiseHistory } from './noise-rollups.repo.js';
export { MAX_BUCKET_MS, MIN_BUCKET_MS } from './heartbeat.repo.js';
export { screensOfTargets, type TargetRef } from './targets.repo.js';
export { type Targets, TargetsInput, unknownTargets } from './targets.js';
export { provideUpdateInfo, type UpdateInfoProvider, type UpdateOffer, updateOfferOf, type WebRelease, webReleaseOf } from './update-info.js';
