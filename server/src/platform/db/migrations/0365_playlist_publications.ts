import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';
import type { Migration } from './migration.js';

/**
 * Playlists move onto the publication model (issue 20, docs/content.md "Drafts and
 * publications"): `playlists.published_publication_id` names the content_publications row
 * screens play (null: never published, plays nothing). Every existing playlist gets
 * publication 1 (source 'migration') of what it is now, so nothing a screen plays changes.
 * The snapshot built here has the shape (and key order) of `playlistSnapshot` in
 * modules/content/playlists.publishable.ts: {name, description, tagRule, items: [...]}.
 */
export const m0365_playlist_publications: Migration = {
  version: 365,
  name: 'playlist_publications',
  async up(db: Kysely<any>) {
    await sql`alter table playlists add column published_publication_id text`.execute(db);
    if (isPostgres(db)) return; // moves existing playlists; a PostgreSQL database has none yet (migration.ts)
    // One id per playlist, made in SQL (uuid-shaped random hex: the id is opaque text).
    await sql`
      insert into content_publications (id, content_type, content_id, number, snapshot, note, source, published_by, published_at)
      select
        lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-7' || substr(hex(randomblob(2)), 2) || '-' ||
              substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
        'playlist', p.id, 1,
        json_object(
          'name', p.name,
          'description', p.description,
          'tagRule', json(p.tag_rule),
          'items', (
            select json_group_array(json(x.item)) from (
              select json_object(
                'id', i.id,
                'assetId', i.asset_id,
                'widgetId', i.widget_id,
                'playlistId', i.child_playlist_id,
                'durationMs', i.duration_ms,
                'transition', json_object('type', i.transition_type, 'durationMs', i.transition_ms),
                'validFrom', i.valid_from,
                'validUntil', i.valid_until,
                'dayparts', json(i.dayparts),
                'enabled', json(case when i.enabled = 1 then 'true' else 'false' end)
              ) as item
              from playlist_items i where i.playlist_id = p.id order by i.position, i.id
            ) x
          )
        ),
        '', 'migration', null, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
      from playlists p`.execute(db);
    await sql`
      update playlists set published_publication_id = (
        select c.id from content_publications c where c.content_type = 'playlist' and c.content_id = playlists.id and c.number = 1
      )`.execute(db);
  },
};
