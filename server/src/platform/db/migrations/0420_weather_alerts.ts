import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Emergency weather alerts (issue 21, docs/weather-alerts.md): the one feed monitor (its
 * settings and poll state), the alerts read from it (one row per CAP identifier), the rules
 * that map alerts to takeovers, and what each alert did under each rule (the takeover it
 * started, or its wait for a person's confirmation).
 */
export const m0420_weather_alerts: Migration = {
  version: 420,
  name: 'weather_alerts',
  async up(db: Kysely<any>) {
    await sql`
      create table weather_monitor (
        id integer primary key check (id = 1),
        enabled integer not null,
        feed_url text not null,
        format text not null,
        zones text not null,
        poll_interval_sec integer not null,
        etag text,
        last_modified text,
        body_sha256 text,
        zones_seen text not null default '[]',
        consecutive_failures integer not null default 0,
        last_poll_at text,
        last_success_at text,
        last_error text,
        last_error_code text,
        next_poll_at text,
        updated_at text not null
      ) strict`.execute(db);
    await sql`
      create table weather_alerts (
        id text primary key,
        identifier text not null unique,
        sender text not null,
        sender_name text not null,
        msg_type text not null,
        event text not null,
        severity text not null,
        urgency text not null,
        certainty text not null,
        headline text not null,
        description text not null,
        instruction text not null,
        sent text,
        effective text,
        expires text,
        ends text,
        area_desc text not null,
        zones text not null,
        refs text not null,
        state text not null,
        superseded_by text,
        first_seen_at text not null,
        updated_at text not null,
        ended_at text
      ) strict`.execute(db);
    await sql`create index weather_alerts_state on weather_alerts (state, first_seen_at)`.execute(db);
    await sql`
      create table weather_rules (
        id text primary key,
        name text not null,
        match text not null,
        targets text not null,
        require_confirmation integer not null,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`
      create table weather_alert_actions (
        id text primary key,
        alert_id text not null references weather_alerts(id) on delete cascade,
        rule_id text not null,
        rule_name text not null,
        state text not null,
        takeover_id text,
        confirmed_by text references users(id) on delete set null,
        confirmed_at text,
        started_at text,
        ended_at text,
        end_reason text,
        error text,
        created_at text not null,
        unique (alert_id, rule_id)
      ) strict`.execute(db);
    await sql`create index weather_alert_actions_state on weather_alert_actions (state)`.execute(db);
  },
};
