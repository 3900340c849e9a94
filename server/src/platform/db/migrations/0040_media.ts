import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * The media library: content-addressed files, assets and their variants, folders,
 * collections, tags, partial tus uploads, and the persisted job queue.
 */
export const m0040_media: Migration = {
  version: 40,
  name: 'media',
  async up(db: Kysely<any>) {
    await sql`
      create table jobs (
        id text primary key,
        kind text not null,
        payload text not null,
        state text not null check (state in ('queued', 'running', 'done', 'failed')),
        attempts integer not null default 0,
        max_attempts integer not null,
        run_after text not null,
        progress real,
        last_error text,
        locked_at text,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`create index jobs_due on jobs(state, run_after)`.execute(db);

    await sql`
      create table media_files (
        sha256 text primary key check (length(sha256) = 64),
        size_bytes integer not null,
        content_type text not null,
        created_at text not null
      ) strict`.execute(db);

    await sql`
      create table content_folders (
        id text primary key,
        name text not null,
        parent_id text references content_folders(id) on delete restrict,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`create unique index content_folders_name on content_folders(coalesce(parent_id, ''), name collate nocase)`.execute(db);

    await sql`
      create table content_collections (
        id text primary key,
        name text not null,
        description text,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`create unique index content_collections_name on content_collections(name collate nocase)`.execute(db);

    await sql`
      create table content_tags (
        id text primary key,
        name text not null,
        color text,
        created_at text not null
      ) strict`.execute(db);
    await sql`create unique index content_tags_name on content_tags(name collate nocase)`.execute(db);

    await sql`
      create table uploads (
        id text primary key,
        length_bytes integer not null,
        offset_bytes integer not null default 0,
        metadata text not null default '{}',
        filename text,
        filetype text,
        created_by text references users(id) on delete set null,
        created_at text not null,
        updated_at text not null,
        expires_at text not null
      ) strict`.execute(db);
    await sql`create index uploads_expiry on uploads(expires_at)`.execute(db);

    await sql`
      create table assets (
        id text primary key,
        kind text not null check (kind in ('image', 'video', 'audio', 'pdf', 'website', 'widget')),
        state text not null check (state in ('uploading', 'processing', 'ready', 'failed', 'archived')),
        state_before_archive text,
        name text not null,
        sha256 text references media_files(sha256),
        size_bytes integer,
        content_type text,
        original_filename text,
        width integer,
        height integer,
        duration_ms integer,
        page_count integer,
        folder_id text references content_folders(id) on delete set null,
        failure_reason text,
        progress real,
        metadata text not null default '{}',
        website text,
        created_by text references users(id) on delete set null,
        created_at text not null,
        updated_at text not null,
        archived_at text
      ) strict`.execute(db);
    await sql`create index assets_created on assets(created_at, id)`.execute(db);
    await sql`create index assets_folder on assets(folder_id)`.execute(db);
    await sql`create index assets_sha on assets(sha256)`.execute(db);

    await sql`
      create table asset_variants (
        id text primary key,
        asset_id text not null references assets(id) on delete cascade,
        purpose text not null check (purpose in ('player', 'thumbnail', 'poster', 'preview')),
        content_type text not null,
        width integer,
        height integer,
        page integer,
        size_bytes integer not null,
        sha256 text not null references media_files(sha256),
        created_at text not null
      ) strict`.execute(db);
    await sql`create index asset_variants_asset on asset_variants(asset_id)`.execute(db);
    await sql`create index asset_variants_sha on asset_variants(sha256)`.execute(db);

    await sql`
      create table asset_tags (
        asset_id text not null references assets(id) on delete cascade,
        tag_id text not null references content_tags(id) on delete cascade,
        primary key (asset_id, tag_id)
      ) strict, without rowid`.execute(db);
    await sql`create index asset_tags_tag on asset_tags(tag_id)`.execute(db);

    await sql`
      create table asset_collections (
        asset_id text not null references assets(id) on delete cascade,
        collection_id text not null references content_collections(id) on delete cascade,
        added_at text not null,
        primary key (asset_id, collection_id)
      ) strict, without rowid`.execute(db);
    await sql`create index asset_collections_collection on asset_collections(collection_id)`.execute(db);
  },
};
