import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Data sources (issue 17, docs/data-sources.md): a source (provider + config with its
 * secrets sealed), its current snapshot (the rows an output is built from), what the last
 * successful fetch left for a conditional GET and when the next fetch is due, the last
 * fetch attempts (bounded, for diagnostics), per-user access grants, and the rows of
 * manual tables (a plain ordered list; records, forms and workflow come later on top).
 */
export const m0300_data_sources: Migration = {
  version: 300,
  name: 'data_sources',
  async up(db: Kysely<any>) {
    await sql`
      create table data_sources (
        id text primary key,
        name text not null,
        provider text not null,
        config text not null,
        columns text not null default '[]',
        refresh_interval_sec integer,
        time_zone text not null,
        revision integer not null default 1,
        created_by text references users(id) on delete set null,
        updated_by text references users(id) on delete set null,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`create index data_sources_name on data_sources(name, id)`.execute(db);
    await sql`
      create table data_source_snapshots (
        source_id text primary key references data_sources(id) on delete cascade,
        revision integer not null,
        sha256 text not null,
        columns text not null,
        rows text not null,
        row_count integer not null,
        size_bytes integer not null,
        warnings text not null default '[]',
        fetched_at text not null
      ) strict`.execute(db);
    await sql`
      create table data_source_fetch_state (
        source_id text primary key references data_sources(id) on delete cascade,
        etag text,
        last_modified text,
        body_sha256 text,
        next_fetch_at text,
        consecutive_failures integer not null default 0,
        last_attempt_at text,
        last_success_at text,
        last_error text,
        last_error_code text
      ) strict`.execute(db);
    await sql`create index data_source_fetch_due on data_source_fetch_state(next_fetch_at) where next_fetch_at is not null`.execute(db);
    await sql`
      create table data_source_attempts (
        id text primary key,
        source_id text not null references data_sources(id) on delete cascade,
        at text not null,
        url text not null,
        outcome text not null check (outcome in ('data', 'unchanged', 'failed')),
        status integer,
        bytes integer not null,
        latency_ms integer not null,
        error text,
        error_code text
      ) strict`.execute(db);
    await sql`create index data_source_attempts_source on data_source_attempts(source_id, id)`.execute(db);
    await sql`
      create table data_source_grants (
        source_id text not null references data_sources(id) on delete cascade,
        user_id text not null references users(id) on delete cascade,
        level text not null check (level in ('viewer', 'editor', 'owner')),
        granted_by text references users(id) on delete set null,
        created_at text not null,
        updated_at text not null,
        primary key (source_id, user_id)
      ) strict`.execute(db);
    await sql`create index data_source_grants_user on data_source_grants(user_id)`.execute(db);
    await sql`
      create table data_source_rows (
        id text primary key,
        source_id text not null references data_sources(id) on delete cascade,
        position integer not null,
        "values" text not null,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`create index data_source_rows_order on data_source_rows(source_id, position)`.execute(db);
  },
};
