import type { PlacardModule } from '../platform/module.js';
import { accountsModule } from './accounts/index.js';
import { campaignsModule } from './campaigns/index.js';
import { contentModule } from './content/index.js';
import { dataSourcesModule } from './data-sources/index.js';
import { demoModule } from './demo/index.js';
import { healthModule } from './health/index.js';
import { mediaModule } from './media/index.js';
import { noiseReportsModule } from './noise-reports/index.js';
import { playerReleasesModule } from './player-releases/index.js';
import { pluginsModule } from './plugins/index.js';
import { presentationNetworksModule } from './presentation-networks/index.js';
import { publishingModule } from './publishing/index.js';
import { provisioningModule } from './provisioning/index.js';
import { schedulesModule } from './schedules/index.js';
import { screensModule } from './screens/index.js';
import { systemModule } from './system/index.js';
import { takeoversModule } from './takeovers/index.js';
import { updateDeploymentsModule } from './update-deployments/index.js';
import { weatherAlertsModule } from './weather-alerts/index.js';
import { widgetsModule } from './widgets/index.js';

/**
 * Every module, in install order: a module comes after the modules it uses (the
 * architecture test checks the imports agree). Their routes, in this order, are the server's.
 */
export const MODULES: readonly PlacardModule[] = [
  healthModule,
  systemModule,
  accountsModule,
  provisioningModule,
  mediaModule,
  screensModule,
  schedulesModule,
  dataSourcesModule,
  widgetsModule,
  contentModule,
  takeoversModule,
  presentationNetworksModule,
  weatherAlertsModule,
  pluginsModule,
  noiseReportsModule,
  playerReleasesModule,
  updateDeploymentsModule,
  campaignsModule,
  publishingModule,
  demoModule,
];
