import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Noise buckets and their roll-ups keyed by integers (issue 24). Each screen gets a stable
 * number (`screens.num`: unique, given on insert by a trigger, whatever inserts the screen;
 * existing screens take their rowid, which VACUUM may change later but `num` keeps), and the
 * noise tables are keyed by `(screen_num, started_ms)` instead of the screen's text id and a
 * text start: a 120-bucket insert cost 0.9 µs of SQLite a row with integer keys against 1.8
 * with the text ones (the key is most of the row, and every page the heartbeat's commit writes
 * holds twice the rows). `received_at` becomes `received_ms`. The rows move over as they are:
 * the API formats the ISO strings when it reads. A screen's noise still goes with the screen
 * (`on delete cascade` on its number).
 */
export const m0480_noise_integer_keys: Migration = {
  version: 480,
  name: 'noise_integer_keys',
  async up(db: Kysely<any>) {
    await sql`alter table screens add column num integer`.execute(db);
    await sql`update screens set num = rowid`.execute(db);
    await sql`create unique index screens_num on screens(num)`.execute(db);
    // Every insert path (the API, the demo, a restore's import, tests) gets a number: the next
    // after the highest. A number is reused only after its screen is gone, and its noise with it.
    await sql`
      create trigger screens_num after insert on screens for each row when new.num is null
      begin
        update screens set num = (select coalesce(max(num), 0) + 1 from screens) where rowid = new.rowid;
      end`.execute(db);

    const sums = sql.raw(`
        bucket_count integer not null,
        monitored_ms integer not null,
        level_ms real not null,
        peak_level real not null,
        warning_ms integer not null,
        loud_ms integer not null,
        trigger_count integer not null`);
    const sumColumns = sql.raw('bucket_count, monitored_ms, level_ms, peak_level, warning_ms, loud_ms, trigger_count');

    await sql`
      create table noise_buckets_by_num (
        screen_num integer not null references screens(num) on delete cascade,
        started_ms integer not null,
        average_level real not null,
        peak_level real not null,
        monitored_ms integer not null,
        warning_ms integer not null,
        loud_ms integer not null,
        trigger_count integer,
        received_ms integer not null,
        primary key (screen_num, started_ms)
      ) strict, without rowid`.execute(db);
    // `or ignore`: one row per screen and instant (the old key was the start's text, always
    // written in one form, so this drops nothing a report counted).
    await sql`
      insert or ignore into noise_buckets_by_num
      select s.num, b.started_ms, b.average_level, b.peak_level, b.monitored_ms, b.warning_ms, b.loud_ms, b.trigger_count,
        cast(round((julianday(b.received_at) - 2440587.5) * 86400000) as integer)
      from noise_buckets b join screens s on s.id = b.screen_id
      order by s.num, b.started_ms`.execute(db);

    for (const table of ['noise_minutes', 'noise_hours'] as const) {
      const next = `${table}_by_num`;
      await sql`
        create table ${sql.table(next)} (
          screen_num integer not null references screens(num) on delete cascade,
          started_ms integer not null,
          ${sums},
          primary key (screen_num, started_ms)
        ) strict, without rowid`.execute(db);
      await sql`
        insert into ${sql.table(next)} select s.num, r.started_ms, ${sumColumns}
        from ${sql.table(table)} r join screens s on s.id = r.screen_id
        order by s.num, r.started_ms`.execute(db);
    }
    await sql`
      create table noise_days_by_num (
        screen_num integer not null references screens(num) on delete cascade,
        time_zone text not null,
        day text not null,
        started_ms integer not null,
        ends_ms integer not null,
        ${sums},
        primary key (screen_num, time_zone, day)
      ) strict, without rowid`.execute(db);
    await sql`
      insert into noise_days_by_num select s.num, r.time_zone, r.day, r.started_ms, r.ends_ms, ${sumColumns}
      from noise_days r join screens s on s.id = r.screen_id
      order by s.num, r.time_zone, r.day`.execute(db);

    for (const table of ['noise_buckets', 'noise_minutes', 'noise_hours', 'noise_days']) {
      await sql`drop table ${sql.table(table)}`.execute(db);
      await sql`alter table ${sql.table(`${table}_by_num`)} rename to ${sql.table(table)}`.execute(db);
    }
  },
};
