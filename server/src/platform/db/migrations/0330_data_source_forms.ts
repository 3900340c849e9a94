import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Forms of manual tables (issue 18, docs/data-sources.md "Forms"): one form per table, with
 * its draft fields and workflow definition, and its published versions (immutable).
 */
export const m0330_data_source_forms: Migration = {
  version: 330,
  name: 'data_source_forms',
  async up(db: Kysely<any>) {
    await sql`
      create table data_source_forms (
        source_id text primary key references data_sources(id) on delete cascade,
        description text not null default '',
        draft text not null,
        workflow text not null,
        published_version integer not null default 0,
        revision integer not null default 1,
        created_by text references users(id) on delete set null,
        updated_by text references users(id) on delete set null,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`
      create table data_source_form_versions (
        source_id text not null references data_sources(id) on delete cascade,
        version integer not null,
        fields text not null,
        published_by text references users(id) on delete set null,
        published_at text not null,
        primary key (source_id, version)
      ) strict`.execute(db);
  },
};
