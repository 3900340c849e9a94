import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Indexes the retention tasks and status sections lean on (issue 8): screenshot commands
 * by completion time (screens retention, `retention.screenshotDays`; partial: only rows
 * that carry an image) and jobs by state and last update (job history pruning and the
 * failures of the last 24 hours in `GET /system/status`).
 */
export const m0210_retention_indexes: Migration = {
  version: 210,
  name: 'retention_indexes',
  async up(db: Kysely<any>) {
    await sql`create index screen_commands_screenshots on screen_commands(completed_at, screenshot_sha256) where screenshot_sha256 is not null`.execute(db);
    await sql`create index jobs_state_updated on jobs(state, updated_at)`.execute(db);
  },
};
