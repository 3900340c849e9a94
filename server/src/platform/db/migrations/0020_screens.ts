import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Screens and the player protocol: locations, screens, device credentials, pairing
 * sessions, groups (with span video walls), policies, commands, player history and
 * noise buckets (idempotent on screen + startedAt).
 */
export const m0020_screens: Migration = {
  version: 20,
  name: 'screens',
  async up(db: Kysely<any>) {
    await sql`
      create table locations (
        id text primary key,
        name text not null,
        address text,
        time_zone text not null,
        latitude real,
        longitude real,
        notes text,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`
      create table screens (
        id text primary key,
        name text not null,
        location_id text references locations(id) on delete restrict,
        notes text,
        orientation text not null default 'landscape',
        tags text not null default '[]',
        disabled_at text,
        revoked_at text,
        player_family text,
        player_architecture text,
        player_version text,
        last_heartbeat_at text,
        last_liveness_at text,
        last_seen_at text,
        last_seen_ms integer,
        last_status text,
        last_address text,
        known_status text not null default 'pending',
        expected_interval_sec integer not null default 30,
        manifest_revision integer not null default 1,
        policy text,
        power_assist text,
        power_assist_state text,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`create index screens_name on screens(name, id)`.execute(db);
    await sql`create index screens_location on screens(location_id)`.execute(db);
    await sql`
      create table device_credentials (
        id text primary key,
        screen_id text not null references screens(id) on delete cascade,
        public_id text not null unique,
        secret_hash text not null,
        created_at text not null,
        last_used_at text,
        revoked_at text
      ) strict`.execute(db);
    await sql`create index device_credentials_screen on device_credentials(screen_id)`.execute(db);
    await sql`
      create table pairing_sessions (
        id text primary key,
        code text not null,
        poll_secret_hash text not null,
        status text not null check (status in ('pending', 'approved', 'rejected', 'enrolled')),
        player_family text,
        player_version text,
        device_name text,
        address text,
        screen_id text references screens(id) on delete cascade,
        replaces_screen integer not null default 0,
        enrollment_token_hash text,
        enrollment_expires_at text,
        decided_by text references users(id) on delete set null,
        created_at text not null,
        expires_at text not null,
        decided_at text,
        enrolled_at text
      ) strict`.execute(db);
    await sql`create index pairing_sessions_code on pairing_sessions(code, expires_at)`.execute(db);
    await sql`create unique index pairing_sessions_token on pairing_sessions(enrollment_token_hash) where enrollment_token_hash is not null`.execute(db);
    await sql`
      create table screen_groups (
        id text primary key,
        name text not null,
        description text,
        policy text,
        span text,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`
      create table screen_group_members (
        group_id text not null references screen_groups(id) on delete cascade,
        screen_id text not null references screens(id) on delete cascade,
        added_at text not null,
        primary key (group_id, screen_id)
      ) strict, without rowid`.execute(db);
    await sql`create index screen_group_members_screen on screen_group_members(screen_id)`.execute(db);
    await sql`
      create table screen_commands (
        id text primary key,
        screen_id text not null references screens(id) on delete cascade,
        type text not null,
        params text not null default '{}',
        state text not null check (state in ('queued', 'delivered', 'acknowledged', 'succeeded', 'failed', 'expired')),
        created_by text references users(id) on delete set null,
        source text not null default 'console',
        created_at text not null,
        expires_at text not null,
        delivered_at text,
        acknowledged_at text,
        completed_at text,
        result text,
        screenshot_sha256 text,
        screenshot_type text
      ) strict`.execute(db);
    await sql`create index screen_commands_screen on screen_commands(screen_id, state)`.execute(db);
    await sql`
      create table screen_history (
        id text primary key,
        screen_id text not null references screens(id) on delete cascade,
        at text not null,
        at_ms integer not null,
        kind text not null,
        detail text not null default '{}'
      ) strict`.execute(db);
    await sql`create index screen_history_screen on screen_history(screen_id, at_ms)`.execute(db);
    await sql`create index screen_history_prune on screen_history(kind, at_ms)`.execute(db);
    await sql`
      create table noise_buckets (
        screen_id text not null references screens(id) on delete cascade,
        started_at text not null,
        started_ms integer not null,
        average_level real not null,
        peak_level real not null,
        monitored_ms integer not null,
        warning_ms integer not null,
        loud_ms integer not null,
        trigger_count integer,
        received_at text not null,
        primary key (screen_id, started_at)
      ) strict, without rowid`.execute(db);
    await sql`create index noise_buckets_time on noise_buckets(started_ms)`.execute(db);
  },
};
