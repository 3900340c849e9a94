import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Publications of every content type that has no table of its own for them (issue 20,
 * docs/publishing.md): playlists, schedules, widgets, campaigns. Layouts keep
 * `layout_revisions`. A publication is immutable: a JSON snapshot of what screens play,
 * numbered per content item, attributed, with why it was made.
 */
export const m0360_publications: Migration = {
  version: 360,
  name: 'publications',
  async up(db: Kysely<any>) {
    await sql`
      create table content_publications (
        id text primary key,
        content_type text not null,
        content_id text not null,
        number integer not null,
        snapshot text not null,
        note text not null default '',
        source text not null,
        published_by text references users(id) on delete set null,
        published_at text not null,
        unique (content_type, content_id, number)
      ) strict`.execute(db);
    // Where layout revisions came from (edits before this migration were all edits).
    await sql`alter table layout_revisions add column source text not null default 'edit'`.execute(db);
  },
};
