import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Widgets (issue 19, docs/widgets.md): a template plus settings, optionally bound to a data
 * source's view. `widget_bundles` are the compiled versions (the newest is current, a few
 * older ones stay for players on the previous manifest); `widget_bundle_blobs` the HTML
 * documents, content-addressed by sha256 and kept in the database (backed up with it).
 * `widget_preview_images` holds a preview someone uploaded, valid while the widget's
 * content revision is the one it was uploaded for.
 */
export const m0350_widgets: Migration = {
  version: 350,
  name: 'widgets',
  async up(db: Kysely<any>) {
    await sql`
      create table widgets (
        id text primary key,
        name text not null,
        type text not null,
        settings text not null default '{}',
        template text,
        binding text,
        revision integer not null default 1,
        content_revision integer not null default 1,
        errors text not null default '[]',
        created_at text not null,
        updated_at text not null,
        created_by text references users(id) on delete set null,
        updated_by text references users(id) on delete set null
      ) strict`.execute(db);
    await sql`create index widgets_name on widgets(name collate nocase, id)`.execute(db);
    await sql`
      create table widget_bundle_blobs (
        sha256 text primary key,
        bytes blob not null,
        size_bytes integer not null,
        created_at text not null
      ) strict`.execute(db);
    await sql`
      create table widget_bundles (
        id text primary key,
        widget_id text not null references widgets(id) on delete cascade,
        revision integer not null,
        sha256 text not null references widget_bundle_blobs(sha256),
        input_sha256 text not null,
        size_bytes integer not null,
        built_at text not null,
        images text not null default '[]',
        source_id text,
        source_revision integer
      ) strict`.execute(db);
    await sql`create index widget_bundles_widget on widget_bundles(widget_id, id)`.execute(db);
    await sql`create index widget_bundles_sha on widget_bundles(sha256)`.execute(db);
    await sql`create index widget_bundles_source on widget_bundles(source_id) where source_id is not null`.execute(db);
    // Which playlists show a widget (DELETE's 409, the manifest bump): without it, a scan of every item.
    await sql`create index playlist_items_widget on playlist_items(widget_id) where widget_id is not null`.execute(db);
    await sql`
      create table widget_preview_images (
        widget_id text primary key references widgets(id) on delete cascade,
        content_revision integer not null,
        bytes blob not null,
        width integer not null,
        height integer not null,
        uploaded_at text not null,
        uploaded_by text references users(id) on delete set null
      ) strict`.execute(db);
  },
};
