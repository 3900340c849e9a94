import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Noise history roll-ups (issue 22, docs/noise-reports.md): per screen, per UTC minute, per
 * UTC hour and per local day (the screen's zone when the buckets arrived), the sums that
 * make every report exact: bucket count, monitored ms, sum(average level x monitored ms),
 * max(peak level), warning ms, loud ms, trigger count. Written in the heartbeat's
 * transaction for the buckets actually inserted; kept longer than the raw buckets. No index
 * beyond the primary keys: every page an index adds is one more page the heartbeat's commit
 * writes, and reports and the retention both read by screen, then time.
 */
export const m0440_noise_rollups: Migration = {
  version: 440,
  name: 'noise_rollups',
  async up(db: Kysely<any>) {
    const sums = sql.raw(`
        bucket_count integer not null,
        monitored_ms integer not null,
        level_ms real not null,
        peak_level real not null,
        warning_ms integer not null,
        loud_ms integer not null,
        trigger_count integer not null`);
    for (const table of ['noise_minutes', 'noise_hours']) {
      await sql`
        create table ${sql.table(table)} (
          screen_id text not null references screens(id) on delete cascade,
          started_ms integer not null,
          started_at text not null,
          ${sums},
          primary key (screen_id, started_ms)
        ) strict, without rowid`.execute(db);
    }
    await sql`
      create table noise_days (
        screen_id text not null references screens(id) on delete cascade,
        time_zone text not null,
        day text not null,
        started_ms integer not null,
        started_at text not null,
        ends_ms integer not null,
        ${sums},
        primary key (screen_id, time_zone, day)
      ) strict, without rowid`.execute(db);
  },
};
