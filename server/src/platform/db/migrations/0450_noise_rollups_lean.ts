import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * The noise roll-ups lose their `started_at` text (migration 0440): no report read it (they all
 * work on `started_ms`), and at 24 bytes a row it was a fifth of every minute row, which the
 * heartbeat writes twenty of per 120 buckets and keeps for 400 days (docs/noise-reports.md).
 */
export const m0450_noise_rollups_lean: Migration = {
  version: 450,
  name: 'noise_rollups_lean',
  async up(db: Kysely<any>) {
    for (const table of ['noise_minutes', 'noise_hours', 'noise_days']) await sql`alter table ${sql.table(table)} drop column started_at`.execute(db);
  },
};
