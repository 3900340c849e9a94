import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Records of manual tables (issue 18, docs/data-sources.md "Records"). A table's rows become
 * its records: each keeps its workflow state, revision, the form version it was written with
 * and an optional publishing window. `live` is 1 for the records the outputs show (state
 * "published" inside the window); rows that existed before were on screens, so they start
 * published and live. Around them: the audit trail (also comments), pending approvals,
 * attachments, integration tokens' table grants and Idempotency-Key replies.
 */
export const m0340_data_source_records: Migration = {
  version: 340,
  name: 'data_source_records',
  async up(db: Kysely<any>) {
    for (const column of [
      `state text not null default 'published'`,
      'revision integer not null default 1',
      'form_version integer',
      'publish_at text',
      'unpublish_at text',
      'live integer not null default 1',
      'state_changed_at text',
      'created_by text references users(id) on delete set null',
      'updated_by text references users(id) on delete set null',
      'created_by_token text',
      'updated_by_token text',
    ]) {
      await sql.raw(`alter table data_source_rows add column ${column}`).execute(db);
    }
    await sql`update data_source_rows set state_changed_at = created_at`.execute(db);
    await sql`create index data_source_rows_state on data_source_rows(source_id, state, state_changed_at)`.execute(db);
    await sql`create index data_source_rows_window on data_source_rows(publish_at, unpublish_at) where publish_at is not null or unpublish_at is not null`.execute(
      db,
    );

    // Who changed what, when: every create, change, transition, approval, comment, attachment
    // and delete of a record. Kept when the record is deleted (record_id is not a reference).
    await sql`
      create table data_source_record_events (
        id text primary key,
        source_id text not null references data_sources(id) on delete cascade,
        record_id text not null,
        seq integer not null,
        kind text not null,
        user_id text references users(id) on delete set null,
        token_id text,
        data text not null default '{}',
        at text not null
      ) strict`.execute(db);
    await sql`create unique index data_source_record_events_seq on data_source_record_events(record_id, seq)`.execute(db);
    await sql`create index data_source_record_events_source on data_source_record_events(source_id, at)`.execute(db);

    // Approvals given toward a transition that needs N distinct people; cleared when the record moves.
    await sql`
      create table data_source_record_approvals (
        record_id text not null references data_source_rows(id) on delete cascade,
        transition text not null,
        user_id text not null references users(id) on delete cascade,
        comment text,
        at text not null,
        primary key (record_id, transition, user_id)
      ) strict`.execute(db);

    await sql`
      create table data_source_record_attachments (
        id text primary key,
        source_id text not null references data_sources(id) on delete cascade,
        record_id text not null references data_source_rows(id) on delete cascade,
        file_name text not null,
        content_type text not null,
        size_bytes integer not null,
        sha256 text not null,
        storage_key text not null,
        created_by text references users(id) on delete set null,
        created_by_token text,
        created_at text not null
      ) strict`.execute(db);
    await sql`create index data_source_record_attachments_record on data_source_record_attachments(record_id, created_at)`.execute(db);

    // Which tables an integration token with manual_table_rows:write may write (JSON array of source ids).
    await sql`alter table integration_tokens add column data_source_ids text not null default '[]'`.execute(db);

    // A client's Idempotency-Key and the reply it got, so a retried POST answers the same and writes once.
    await sql`
      create table idempotency_keys (
        principal text not null,
        key text not null,
        method text not null,
        path text not null,
        request_sha256 text not null,
        status integer,
        body text,
        created_at text not null,
        primary key (principal, key)
      ) strict`.execute(db);
    await sql`create index idempotency_keys_created on idempotency_keys(created_at)`.execute(db);
  },
};
