import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Noise buckets lose their time index (`noise_buckets_time`, migration 0020). Every bucket a
 * heartbeat inserts went into it as well as into the table: with screens reporting the same
 * ten-second grid, each insert landed in the middle of the index, and that was 40% of the
 * insert's cost (issue 24: 3.1 µs of CPU a row with it, 1.8 without, 20 screens taking
 * turns). Everything reads buckets by screen, then time, along the primary key: the reports
 * (a range of `started_at`, which sorts as the time does) and the prune, screen by screen.
 */
export const m0470_noise_buckets_no_time_index: Migration = {
  version: 470,
  name: 'noise_buckets_no_time_index',
  async up(db: Kysely<any>) {
    await sql`drop index if exists noise_buckets_time`.execute(db);
  },
};
