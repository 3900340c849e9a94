import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Several instances on one database (issue 25, platform/cluster.ts): the job a process runs
 * names that process (`jobs.locked_by`, its cluster key), so an instance starting or sweeping
 * runs again only the jobs of instances that are gone; and the periodic tasks' next due time
 * (`periodic_claims`), so each tick runs on one instance. On SQLite (one process) both are
 * written and never disputed.
 */
export const m0500_cluster: Migration = {
  version: 500,
  name: 'cluster',
  async up(db: Kysely<any>) {
    await sql`alter table jobs add column locked_by text`.execute(db);
    await sql`
      create table periodic_claims (
        name text primary key,
        due_ms integer not null,
        claimed_by text not null
      ) strict`.execute(db);
  },
};
