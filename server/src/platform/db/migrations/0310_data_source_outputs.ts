import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Data-source outputs (issue 17, docs/data-sources.md "Outputs"): what players download.
 * `data_output_keys` are the (source, view) pairs screens use (the whole source has view
 * key ''); `data_source_outputs` the versions built for each key (the newest is current, a
 * few older ones stay for players still on the previous manifest); `data_output_blobs`
 * the documents themselves, content-addressed by sha256 (one blob however many outputs
 * have the same bytes), kept in the database so they are backed up and restored with it.
 */
export const m0310_data_source_outputs: Migration = {
  version: 310,
  name: 'data_source_outputs',
  async up(db: Kysely<any>) {
    await sql`
      create table data_output_blobs (
        sha256 text primary key,
        bytes blob not null,
        size_bytes integer not null,
        created_at text not null
      ) strict`.execute(db);
    await sql`
      create table data_output_keys (
        source_id text not null references data_sources(id) on delete cascade,
        view_key text not null,
        view text,
        created_at text not null,
        last_used_at text not null,
        primary key (source_id, view_key)
      ) strict`.execute(db);
    await sql`
      create table data_source_outputs (
        id text primary key,
        source_id text not null,
        view_key text not null,
        revision integer not null,
        sha256 text not null references data_output_blobs(sha256),
        data_sha256 text not null,
        size_bytes integer not null,
        row_count integer not null,
        generated_at text not null,
        expires_at text,
        foreign key (source_id, view_key) references data_output_keys(source_id, view_key) on delete cascade
      ) strict`.execute(db);
    await sql`create index data_source_outputs_key on data_source_outputs(source_id, view_key, id)`.execute(db);
    await sql`create index data_source_outputs_sha on data_source_outputs(sha256)`.execute(db);
    await sql`create index data_source_outputs_expiry on data_source_outputs(expires_at) where expires_at is not null`.execute(db);
  },
};
