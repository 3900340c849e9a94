import type { PlacardModule } from '../../platform/module.js';
import { campaignRoutes } from './campaigns.routes.js';

/**
 * Campaigns (issue 20, docs/campaigns.md): bundles of content and placements released
 * together; their schedules show the campaign, which plays its released show.
 */
export const campaignsModule: PlacardModule = {
  name: 'campaigns',
  routes: campaignRoutes,
};

export { campaignPublishable } from './campaigns.publishable.js';
