/** Player updates (issue 23): releases (upload, the release source, cache) and deployments. docs/console-updates.md. */
import './updates.css';

export { ReleasesPage } from './releases';
export { DeploymentsPage } from './deployments';
export { DeploymentPage } from './deployment-detail';
