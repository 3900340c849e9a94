export { CampaignsPage } from './list';
export { CampaignPage } from './editor';
