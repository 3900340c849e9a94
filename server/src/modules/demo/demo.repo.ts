import type { Db } from '../../platform/db/database.js';
import type {
  LayoutRevisionsTable,
  LayoutsTable,
  LocationsTable,
  PlaylistAssignmentsTable,
  PlaylistItemsTable,
  PlaylistsTable,
  SchedulesTable,
  ScreenGroupsTable,
  ScreensTable,
} from '../../platform/db/schema.js';

export async function readMeta(db: Db, key: string): Promise<string | null> {
  return (await db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst())?.value ?? null;
}

export async function writeMeta(db: Db, key: string, value: string): Promise<void> {
  await db
    .insertInto('meta')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}

/** How many rows a venue table holds, and the first 50 names (by name, then id). */
export async function countAndNames(db: Db, table: 'screens' | 'locations' | 'screen_groups' | 'assets' | 'playlists' | 'layouts' | 'schedules') {
  const count = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const rows = await db.selectFrom(table).select('name').orderBy('name').orderBy('id').limit(50).execute();
  return { count: Number(count.n), names: rows.map((r) => r.name) };
}

// ---------------------------------------------------------------- seeding (inside seedDemo's one transaction)

export async function insertLocation(db: Db, row: LocationsTable): Promise<void> {
  await db.insertInto('locations').values(row).execute();
}

export async function insertGroup(db: Db, row: ScreenGroupsTable): Promise<void> {
  await db.insertInto('screen_groups').values(row).execute();
}

/** A screen (a row of the screens module's newScreenRow), member of the group `groupId` since `t`. */
export async function insertScreenInGroup(db: Db, screen: ScreensTable, groupId: string, t: string): Promise<void> {
  await db.insertInto('screens').values(screen).execute();
  await db.insertInto('screen_group_members').values({ group_id: groupId, screen_id: screen.id, added_at: t }).execute();
}

/** A playlist and its items (rows of the content module's newItemRow). */
export async function insertPlaylist(db: Db, row: PlaylistsTable, items: PlaylistItemsTable[]): Promise<void> {
  await db.insertInto('playlists').values(row).execute();
  await db.insertInto('playlist_items').values(items).execute();
}

/** A layout, its first revision, and that revision published at `t`. */
export async function insertPublishedLayout(db: Db, layout: LayoutsTable, revision: LayoutRevisionsTable, t: string): Promise<void> {
  await db.insertInto('layouts').values(layout).execute();
  await db.insertInto('layout_revisions').values(revision).execute();
  await db.updateTable('layouts').set({ published_revision_id: revision.id, published_at: t }).where('id', '=', layout.id).execute();
}

/** A schedule row (its targets are the schedules module's writeTargets). */
export async function insertSchedule(db: Db, row: SchedulesTable): Promise<void> {
  await db.insertInto('schedules').values(row).execute();
}

export async function insertAssignment(db: Db, row: PlaylistAssignmentsTable): Promise<void> {
  await db.insertInto('playlist_assignments').values(row).execute();
}

// ---------------------------------------------------------------- wiping

/** What wipeVenue removed that has something outside the database: files, sockets, listeners. */
export interface WipedVenue {
  assetIds: string[];
  /** Hashes of the originals and variants (media files that may be orphans now). */
  shas: (string | null)[];
  layoutIds: string[];
  screenIds: string[];
  /** Distinct screenshot hashes of the removed screens' commands. */
  screenshots: string[];
}

/**
 * Removes the venue content in one transaction: schedules, assignments, layouts, playlists,
 * assets, library folders/collections/tags, screens (credentials, commands, history with
 * them), pairing sessions, groups, locations. Users, sessions, tokens and settings stay.
 */
export async function wipeVenue(db: Db): Promise<WipedVenue> {
  return db.transaction().execute(async (trx) => {
    const assets = await trx.selectFrom('assets').select(['id', 'sha256']).execute();
    const variants = await trx.selectFrom('asset_variants').select('sha256').execute();
    const layouts = await trx.selectFrom('layouts').select('id').execute();
    const screens = await trx.selectFrom('screens').select('id').execute();
    const screenshots = await trx.selectFrom('screen_commands').select('screenshot_sha256').where('screenshot_sha256', 'is not', null).execute();

    await trx.deleteFrom('schedules').execute(); // targets cascade
    await trx.deleteFrom('playlist_assignments').execute();
    await trx.deleteFrom('layouts').execute(); // revisions cascade
    await trx.deleteFrom('playlist_items').execute(); // nested items restrict playlist deletes
    await trx.deleteFrom('playlists').execute();
    await trx.deleteFrom('content_publications').where('content_type', '=', 'playlist').execute(); // the playlists' publications
    await trx.deleteFrom('assets').execute(); // variants, tags, collection links cascade
    await trx.updateTable('content_folders').set({ parent_id: null }).execute();
    await trx.deleteFrom('content_folders').execute();
    await trx.deleteFrom('content_collections').execute();
    await trx.deleteFrom('content_tags').execute();
    await trx.deleteFrom('pairing_sessions').execute();
    await trx.deleteFrom('screens').execute(); // credentials, commands, history, members cascade
    await trx.deleteFrom('manifest_screen_deps').execute();
    await trx.deleteFrom('manifest_dep_sets').execute();
    await trx.deleteFrom('screen_groups').execute();
    await trx.deleteFrom('locations').execute();
    return {
      assetIds: assets.map((a) => a.id),
      shas: [...assets.map((a) => a.sha256), ...variants.map((v) => v.sha256)],
      layoutIds: layouts.map((l) => l.id),
      screenIds: screens.map((s) => s.id),
      screenshots: [...new Set(screenshots.map((s) => s.screenshot_sha256!))],
    };
  });
}
