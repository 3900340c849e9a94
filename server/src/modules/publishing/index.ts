import type { PlacardModule } from '../../platform/module.js';
import { onContentDeleted } from '../../platform/publications.js';
import { historyRoutes, notificationRoutes, submissionRoutes } from './publishing.routes.js';
import { PUBLISH_DUE_TICK_MS, publishDue, withdrawSubmissionsOf } from './submissions.service.js';

/**
 * Publishing (issue 20, spec 4.7, docs/publishing.md): submissions for approval, scheduled
 * publishing, history (publications, compare, restore, rollback) and notifications, for every
 * content type through its `Publishable` (platform/publications.ts; publishables.ts).
 */
export const publishingModule: PlacardModule = {
  name: 'publishing',
  routes: [...submissionRoutes, ...historyRoutes, ...notificationRoutes],
  install({ deps }) {
    // A deleted item's submissions are withdrawn in the deleting transaction.
    onContentDeleted(deps, withdrawSubmissionsOf);
    // Scheduled submissions: a 1 s tick publishes what is due (state in the database: restarts resume).
    deps.periodic.every('publishing.scheduled', PUBLISH_DUE_TICK_MS, () => publishDue(deps).then(() => undefined));
  },
};

export { publishDue } from './submissions.service.js';
