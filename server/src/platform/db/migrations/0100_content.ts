import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Playlists, layouts (draft + immutable revisions), schedules with their targets,
 * playlist assignments of screens and groups, and what each screen's last manifest
 * depended on (so a change bumps exactly the screens it alters).
 */
export const m0100_content: Migration = {
  version: 100,
  name: 'content',
  async up(db: Kysely<any>) {
    await sql`
      create table playlists (
        id text primary key,
        name text not null,
        description text not null default '',
        revision integer not null default 1,
        tag_rule text,
        created_by text references users(id) on delete set null,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`create index playlists_name on playlists(name, id)`.execute(db);
    await sql`
      create table playlist_items (
        id text primary key,
        playlist_id text not null references playlists(id) on delete cascade,
        position integer not null,
        asset_id text,
        widget_id text,
        child_playlist_id text references playlists(id) on delete restrict,
        duration_ms integer,
        transition_type text not null default 'none',
        transition_ms integer not null default 0,
        valid_from text,
        valid_until text,
        dayparts text not null default '[]',
        enabled integer not null default 1 check (enabled in (0, 1)),
        created_at text not null,
        updated_at text not null,
        check ((asset_id is not null) + (widget_id is not null) + (child_playlist_id is not null) = 1)
      ) strict`.execute(db);
    await sql`create index playlist_items_order on playlist_items(playlist_id, position)`.execute(db);
    await sql`create index playlist_items_asset on playlist_items(asset_id) where asset_id is not null`.execute(db);
    await sql`create index playlist_items_child on playlist_items(child_playlist_id) where child_playlist_id is not null`.execute(db);
    await sql`
      create table layouts (
        id text primary key,
        name text not null,
        description text not null default '',
        revision integer not null default 1,
        draft text not null,
        published_revision_id text,
        published_at text,
        preview_sha256 text,
        preview_content_type text,
        preview_updated_at text,
        created_by text references users(id) on delete set null,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`create index layouts_name on layouts(name, id)`.execute(db);
    await sql`
      create table layout_revisions (
        id text primary key,
        layout_id text not null references layouts(id) on delete cascade,
        number integer not null,
        content text not null,
        note text not null default '',
        created_by text references users(id) on delete set null,
        created_at text not null,
        unique (layout_id, number)
      ) strict`.execute(db);
    await sql`
      create table schedules (
        id text primary key,
        name text not null,
        content_type text not null check (content_type in ('playlist', 'layout', 'campaign')),
        playlist_id text references playlists(id) on delete restrict,
        layout_id text references layouts(id) on delete restrict,
        campaign_id text,
        starts_at text not null,
        ends_at text,
        rrule text,
        time_zone text not null,
        follow_screen_zone integer not null default 0 check (follow_screen_zone in (0, 1)),
        priority integer not null default 0,
        enabled integer not null default 1 check (enabled in (0, 1)),
        created_by text references users(id) on delete set null,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`create index schedules_playlist on schedules(playlist_id) where playlist_id is not null`.execute(db);
    await sql`create index schedules_layout on schedules(layout_id) where layout_id is not null`.execute(db);
    await sql`
      create table schedule_targets (
        schedule_id text not null references schedules(id) on delete cascade,
        target_type text not null check (target_type in ('screen', 'group', 'location')),
        target_id text not null,
        primary key (schedule_id, target_type, target_id)
      ) strict`.execute(db);
    await sql`create index schedule_targets_target on schedule_targets(target_type, target_id)`.execute(db);
    await sql`
      create table playlist_assignments (
        target_type text not null check (target_type in ('screen', 'group')),
        target_id text not null,
        playlist_id text not null references playlists(id) on delete restrict,
        updated_by text references users(id) on delete set null,
        updated_at text not null,
        primary key (target_type, target_id)
      ) strict`.execute(db);
    await sql`create index playlist_assignments_playlist on playlist_assignments(playlist_id)`.execute(db);
    await sql`
      create table manifest_deps (
        screen_id text not null,
        kind text not null,
        ref_id text not null,
        primary key (screen_id, kind, ref_id)
      ) strict, without rowid`.execute(db);
    await sql`create index manifest_deps_ref on manifest_deps(kind, ref_id)`.execute(db);
  },
};
