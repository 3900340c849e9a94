/** The queries of playlists' publications (playlists.publishable.ts; issue 20). */
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { dialectOf, sqlText } from '../../platform/db/dialect.js';
import type { ContentPublicationsTable, PlaylistItemsTable, PlaylistsTable } from '../../platform/db/schema.js';
type PlaylistRow = PlaylistsTable;
type ItemRow = PlaylistItemsTable;

/** The publication a playlist row points at (screens play it), or undefined. */
export function currentPublicationRow(db: Db, row: Pick<PlaylistRow, 'id' | 'published_publication_id'>): Promise<ContentPublicationsTable | undefined> {
  if (!row.published_publication_id) return Promise.resolve(undefined);
  return db
    .selectFrom('content_publications')
    .selectAll()
    .where('id', '=', row.published_publication_id)
    .where('content_type', '=', 'playlist')
    .where('content_id', '=', row.id)
    .executeTakeFirst();
}

/** A playlist's published snapshot text (null: never published), or undefined when there is no such playlist. */
export function publishedSnapshotRow(db: Db, id: string): Promise<{ id: string; snapshot: string | null } | undefined> {
  return db
    .selectFrom('playlists as p')
    .leftJoin('content_publications as c', (j) => j.onRef('c.id', '=', 'p.published_publication_id').on('c.content_type', '=', 'playlist'))
    .select(['p.id', 'c.snapshot'])
    .where('p.id', '=', id)
    .executeTakeFirst();
}

/** `publishedSnapshotRow` for many playlists at once (ids that name no playlist are left out). */
export async function publishedSnapshotRows(db: Db, ids: readonly string[]): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db
      .selectFrom('playlists as p')
      .leftJoin('content_publications as c', (j) => j.onRef('c.id', '=', 'p.published_publication_id').on('c.content_type', '=', 'playlist'))
      .select(['p.id', 'c.snapshot'])
      .where('p.id', 'in', unique.slice(i, i + 500))
      .execute();
    for (const r of rows) out.set(r.id, r.snapshot);
  }
  return out;
}

/** Points the playlist at the publication screens play. */
export async function setPublishedPublication(db: Db, id: string, publicationId: string): Promise<void> {
  await db.updateTable('playlists').set({ published_publication_id: publicationId }).where('id', '=', id).execute();
}

/** Which of the playlists exist. */
export async function existingPlaylistIds(db: Db, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  return new Set(
    (
      await db
        .selectFrom('playlists')
        .select('id')
        .where('id', 'in', [...ids])
        .execute()
    ).map((r) => r.id),
  );
}

/** Deletes every item of the playlist (a restore writes them all again). */
export async function deleteAllItems(db: Db, playlistId: string): Promise<void> {
  await db.deleteFrom('playlist_items').where('playlist_id', '=', playlistId).execute();
}

/** Writes restored items. */
export async function insertItemRows(db: Db, rows: readonly ItemRow[]): Promise<void> {
  if (rows.length)
    await db
      .insertInto('playlist_items')
      .values([...rows])
      .execute();
}

/** Sets the restored name, description and tag rule and bumps the revision while `revision` is current. */
export async function restorePlaylistFields(
  db: Db,
  id: string,
  revision: number,
  set: Pick<PlaylistRow, 'name' | 'description' | 'tag_rule' | 'updated_at'>,
): Promise<void> {
  await db
    .updateTable('playlists')
    .set((eb) => ({ ...set, revision: eb('revision', '+', 1) }))
    .where('id', '=', id)
    .where('revision', '=', revision)
    .execute();
}

/**
 * The playlists whose current publication (what screens play) has an item showing one of
 * `ids` as `field` (one row per ref and playlist): a delete guard counts these as well as the
 * draft's items, so what a screen plays cannot go just because a draft dropped it.
 */
export async function publishedPlaylistsWith(
  db: Db,
  field: 'assetId' | 'widgetId' | 'playlistId',
  ids: readonly string[],
): Promise<{ ref: string; id: string; name: string }[]> {
  if (ids.length === 0) return [];
  const d = dialectOf(db);
  const ref = sql.raw(sqlText.jsonValue(d, 'i.value', `$.${field}`));
  const rows = await sql<{ ref: string; id: string; name: string }>`
    select distinct ${ref} as ref, p.id, p.name
    from playlists p
    join content_publications c on c.id = p.published_publication_id and c.content_type = 'playlist'
    cross join ${sql.raw(sqlText.jsonArrayItems(d, 'c.snapshot', '$.items', 'i'))}
    where ${ref} in (${sql.join([...ids])})`.execute(db);
  return rows.rows;
}
