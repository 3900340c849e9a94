import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Images data-source rows point at (issue 17, docs/data-sources.md "Images in rows"): each
 * address an output's image cells use is fetched once (under the outbound rules) and kept
 * as an asset processed like an upload, so screens cache it as media. Outputs remember the
 * addresses their rows use, so a manifest lists those assets next to the output.
 */
export const m0320_data_source_images: Migration = {
  version: 320,
  name: 'data_source_images',
  async up(db: Kysely<any>) {
    await sql`
      create table data_source_images (
        -- No cascade: a deleted source's rows stay until its assets are deleted with them.
        source_id text not null,
        url text not null,
        state text not null check (state in ('pending', 'ready', 'failed')),
        asset_id text,
        error text,
        attempts integer not null default 0,
        next_attempt_at text,
        last_seen_at text not null,
        created_at text not null,
        primary key (source_id, url)
      ) strict`.execute(db);
    await sql`create index data_source_images_due on data_source_images(next_attempt_at) where state = 'pending'`.execute(db);
    await sql`create index data_source_images_asset on data_source_images(asset_id) where asset_id is not null`.execute(db);
    await sql`alter table data_source_outputs add column image_urls text not null default '[]'`.execute(db);
    // The last data revision a version was checked against (a rebuild giving the same rows keeps the version).
    await sql`alter table data_source_outputs add column checked_revision integer not null default 0`.execute(db);
  },
};
