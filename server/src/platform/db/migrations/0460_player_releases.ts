import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Player releases, the release source and staged update deployments (issue 23, spec 4.12 and
 * the update routes of 4.9; docs/player-releases.md, docs/update-deployments.md).
 * - `player_releases`: one per family and version (semver, compared as such in code).
 * - `player_release_artifacts`: a release's files, one per architecture (`any` for the web
 *   family), with where the bytes are (`stored_path` under the data directory once here).
 * - `release_source`: the one remote catalogue the server is connected to (RFC 8628 grant
 *   state while connecting; the token sealed).
 * - `update_deployments` and `update_deployment_screens`: a rollout in waves and each
 *   target screen's state in it.
 */
export const m0460_player_releases: Migration = {
  version: 460,
  name: 'player_releases',
  async up(db: Kysely<any>) {
    await sql`
      create table player_releases (
        id text primary key,
        family text not null,
        version text not null,
        channel text not null,
        notes text not null default '',
        source text not null,
        source_release_id text,
        created_by text references users(id) on delete set null,
        created_at text not null,
        updated_at text not null,
        unique (family, version)
      ) strict`.execute(db);
    await sql`
      create table player_release_artifacts (
        release_id text not null references player_releases(id) on delete cascade,
        architecture text not null,
        kind text not null,
        file_name text not null,
        size_bytes integer not null,
        sha256 text not null,
        signature text,
        remote_url text,
        stored_path text,
        cache_state text not null,
        cache_bytes integer not null default 0,
        cache_error text,
        updated_at text not null,
        primary key (release_id, architecture)
      ) strict`.execute(db);
    await sql`
      create table release_source (
        id integer primary key check (id = 1),
        url text not null,
        state text not null,
        device_code_sealed text,
        user_code text,
        verification_uri text,
        verification_uri_complete text,
        interval_sec integer,
        expires_at text,
        next_poll_at text,
        token_sealed text,
        error text,
        connected_at text,
        checked_at text,
        updated_at text not null
      ) strict`.execute(db);
    await sql`
      create table update_deployments (
        id text primary key,
        release_id text not null references player_releases(id) on delete restrict,
        state text not null,
        targets text not null,
        waves text not null,
        failure_threshold integer not null,
        wave_wait_sec integer not null,
        confirm_timeout_sec integer not null,
        maintenance_window text,
        current_wave integer not null default 0,
        wave_started_at text,
        paused_reason text,
        revision integer not null default 1,
        created_by text references users(id) on delete set null,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`
      create table update_deployment_screens (
        deployment_id text not null references update_deployments(id) on delete cascade,
        screen_id text not null references screens(id) on delete cascade,
        wave integer,
        state text not null,
        skip_reason text,
        progress real,
        error text,
        from_version text,
        installed_version text,
        offered_at text,
        confirmed_at text,
        updated_at text not null,
        primary key (deployment_id, screen_id)
      ) strict`.execute(db);
    await sql`create index update_deployment_screens_screen on update_deployment_screens(screen_id, state)`.execute(db);
  },
};
