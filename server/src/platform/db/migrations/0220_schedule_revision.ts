import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Schedules carry a revision like playlists and layouts (DESIGN.md section 3): two people
 * editing one schedule in the console no longer overwrite each other silently; a stale
 * `If-Match` answers 412.
 */
export const m0220_schedule_revision: Migration = {
  version: 220,
  name: 'schedule_revision',
  async up(db: Kysely<any>) {
    await sql`alter table schedules add column revision integer not null default 1`.execute(db);
  },
};
