import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Takeovers and presentation overrides (issue 21, docs/takeovers.md): both are windows
 * stronger than schedules, kept in one table (`kind`). Content or a message, targets in
 * `takeover_targets`, and an audit trail of every start, cancel, stop and natural end in
 * `takeover_events`. `state` is what was done to it; a passed `ends_at` ends it at read time.
 */
export const m0400_takeovers: Migration = {
  version: 400,
  name: 'takeovers',
  async up(db: Kysely<any>) {
    await sql`
      create table takeovers (
        id text primary key,
        kind text not null check (kind in ('takeover', 'override')),
        content_type text,
        content_id text,
        message_text text,
        message_severity text,
        severity text not null,
        audio text not null default 'default',
        targets text not null,
        starts_at text not null,
        ends_at text,
        reason text not null default '',
        state text not null default 'active',
        ended_at text,
        ended_by text references users(id) on delete set null,
        end_reason text,
        end_announced integer not null default 0,
        origin_kind text,
        origin_id text,
        origin_rule_id text,
        created_by text references users(id) on delete set null,
        created_by_label text not null default '',
        created_at text not null
      ) strict`.execute(db);
    await sql`create index takeovers_live on takeovers (state, ends_at)`.execute(db);
    await sql`create index takeovers_list on takeovers (kind, created_at, id)`.execute(db);
    await sql`
      create table takeover_targets (
        takeover_id text not null references takeovers(id) on delete cascade,
        target_type text not null,
        target_id text not null,
        primary key (takeover_id, target_type, target_id)
      ) strict`.execute(db);
    await sql`create index takeover_targets_target on takeover_targets (target_type, target_id)`.execute(db);
    await sql`
      create table takeover_events (
        id text primary key,
        takeover_id text not null references takeovers(id) on delete cascade,
        action text not null,
        actor_user_id text references users(id) on delete set null,
        actor_label text not null,
        reason text not null default '',
        at text not null
      ) strict`.execute(db);
    await sql`create index takeover_events_takeover on takeover_events (takeover_id, at)`.execute(db);
  },
};
