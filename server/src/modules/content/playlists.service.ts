/**
 * Changes of playlists and their items. Each runs in one transaction that first reads the
 * playlist and checks If-Match against it, then bumps its revision; once committed, the
 * screens that used the playlist are told (contentChanged).
 */
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { newId } from '../../platform/db/ids.js';
import { storableJson } from '../../platform/db/json.js';
import { ApiError, invalidReference, notFound } from '../../platform/http/errors.js';
import { contentChanged } from './changes.js';
import { inUse, now, type RevisionCheck } from './common.js';
import {
  assertNestable,
  assertNoNestedDuration,
  assertValidity,
  deleteItems,
  deletePlaylistRow,
  getItemRow,
  getPlaylistRow,
  insertItems,
  insertPlaylist,
  itemChanges,
  itemsOf,
  newItemRow,
  playlistExists,
  playlistUsage,
  renumber,
  touchPlaylist,
  updateItem,
  updatePlaylist,
  type ItemRow,
  type PlaylistRow,
} from './playlists.repo.js';
import { MAX_ITEMS_PER_PLAYLIST, type ItemPatch, type NewItem, type TagRule } from './playlists.schemas.js';
import { assetInfos } from './refs.repo.js';
import { existingWidgetIds } from '../widgets/index.js';
import { roleAtLeast, type Role } from '../../platform/http/auth.js';
import { afterPlaylistWrite } from './playlists.publishable.js';
import { approvalsRequired } from '../system/index.js';
import { publisherNeededToDelete } from '../../platform/publications.js';
import { forgetContent } from '../../platform/publications.js';

/** 400 naming the field: an id in the body that names nothing (or nothing usable) is invalid input. */
function badRef(field: string, message: string): ApiError {
  return invalidReference(message, { path: [field], message });
}

/** Checks what a new item points at: exactly one existing asset, widget or playlist. */
async function checkNewItem(db: Db, playlistId: string, item: NewItem, field = 'item'): Promise<void> {
  const refs = [item.assetId, item.widgetId, item.playlistId].filter((x) => x !== undefined);
  if (refs.length !== 1) throw badRef(field, 'An item shows exactly one of assetId, widgetId or playlistId');
  if (item.widgetId && !(await existingWidgetIds(db, [item.widgetId])).has(item.widgetId)) throw badRef('widgetId', `No widget ${item.widgetId}`);
  if (item.assetId) {
    const asset = (await assetInfos(db, [item.assetId])).get(item.assetId);
    if (!asset) throw badRef('assetId', `No asset ${item.assetId}`);
    if (asset.state === 'archived') throw badRef('assetId', `Asset "${asset.name}" is archived; restore it before using it`);
  }
  if (item.playlistId) {
    if (item.durationMs != null) assertNoNestedDuration(['new item'], 'durationMs');
    if (!(await playlistExists(db, item.playlistId))) throw badRef('playlistId', `No playlist ${item.playlistId}`);
    await assertNestable(db, playlistId, item.playlistId);
  }
  assertValidity(item.validFrom ?? null, item.validUntil ?? null);
}

/**
 * Runs a change of playlist `id` in one transaction that first reads the playlist and
 * checks If-Match against it, so a concurrent change cannot slip between the check and
 * the write (the connection is held for the whole transaction, and `touchPlaylist` only
 * bumps the revision it read). 412 or any error rolls everything back.
 */
function change<T>(db: Db, id: string, check: RevisionCheck, by: string | null, fn: (trx: Db, row: PlaylistRow) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const row = await getPlaylistRow(trx, id);
    check(row.revision);
    const result = await fn(trx, row);
    // Approvals off: the change is published at once (issue 20); on: it stays in the draft.
    await afterPlaylistWrite(trx, id, by);
    return result;
  });
}

async function changed(deps: AppDeps, id: string) {
  await contentChanged(deps, [{ kind: 'playlist', id }]);
}

export interface NewPlaylist {
  name: string;
  description?: string | undefined;
  items?: NewItem[] | undefined;
  tagRule?: TagRule | null | undefined;
}

/** Creates a playlist with its first items (nested playlists are added afterwards); answers its id. */
export async function createPlaylist(db: Db, input: NewPlaylist, createdBy: string): Promise<string> {
  const id = newId();
  const items = input.items ?? [];
  for (const [i, item] of items.entries()) {
    if (item.playlistId) throw badRef(`items.${i}.playlistId`, 'Add nested playlists after creating the playlist');
    await checkNewItem(db, id, item, `items.${i}`);
  }
  const t = now();
  await db.transaction().execute(async (trx) => {
    await insertPlaylist(trx, {
      id,
      name: input.name,
      description: input.description ?? '',
      revision: 1,
      tag_rule: input.tagRule?.tags.length ? storableJson(input.tagRule, 'tagRule') : null,
      created_by: createdBy,
      created_at: t,
      updated_at: t,
      published_publication_id: null,
    });
    if (items.length)
      await insertItems(
        trx,
        items.map((item, i) => newItemRow(id, item, i)),
      );
    await afterPlaylistWrite(trx, id, createdBy);
  });
  return id;
}

/** Renames or describes a playlist. */
export async function describePlaylist(
  deps: AppDeps,
  id: string,
  patch: { name?: string | undefined; description?: string | undefined },
  check: RevisionCheck,
  by: string | null,
) {
  await change(deps.db, id, check, by, async (trx, row) => {
    const set: { name?: string; description?: string } = {};
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.description !== undefined) set.description = patch.description;
    if (Object.keys(set).length) await updatePlaylist(trx, id, set);
    await touchPlaylist(trx, id, row.revision);
  });
  await changed(deps, id);
}

/** Deletes a playlist nothing uses (409 naming the users otherwise). */
export async function deletePlaylist(deps: AppDeps, id: string, check: RevisionCheck, role: Role) {
  await deps.db.transaction().execute(async (trx) => {
    const row = await getPlaylistRow(trx, id);
    check(row.revision);
    // While approvals are on, only a publisher may take away what screens play.
    if (row.published_publication_id && !roleAtLeast(role, 'publisher') && (await approvalsRequired(trx)))
      throw publisherNeededToDelete(`Playlist "${row.name}"`);
    const users = await playlistUsage(trx, id);
    if (users.length) throw inUse(`Playlist "${row.name}"`, users);
    // What is left are assignments of screens or groups deleted since.
    await deletePlaylistRow(trx, id, row.revision);
    await forgetContent(deps, trx, 'playlist', id, row.name);
  });
  await changed(deps, id);
}

/** Adds an item at `item.position` (default: the end); answers it, its position and the playlist's new revision. */
export async function addItem(deps: AppDeps, id: string, item: NewItem, check: RevisionCheck, by: string | null) {
  const result = await change(deps.db, id, check, by, async (trx, playlist) => {
    // Checked in the write's transaction: a concurrent nesting cannot close a cycle.
    await checkNewItem(trx, id, item);
    const existing = await itemsOf(trx, id);
    if (existing.length >= MAX_ITEMS_PER_PLAYLIST) throw new ApiError('conflict', `A playlist holds at most ${MAX_ITEMS_PER_PLAYLIST} items`);
    const position = Math.min(item.position ?? existing.length, existing.length);
    const row = newItemRow(id, item, position);
    await insertItems(trx, [row]);
    const order = existing.map((r) => r.id);
    order.splice(position, 0, row.id);
    await renumber(trx, order);
    return { row, position, revision: await touchPlaylist(trx, id, playlist.revision) };
  });
  await changed(deps, id);
  return result;
}

/** Puts the items in the order of `itemIds` (every item once). */
export async function reorderItems(deps: AppDeps, id: string, itemIds: readonly string[], check: RevisionCheck, by: string | null) {
  await change(deps.db, id, check, by, async (trx, playlist) => {
    const have = (await itemsOf(trx, id)).map((r) => r.id);
    const given = new Set(itemIds);
    const missing = have.filter((x) => !given.has(x));
    const unknown = itemIds.filter((x) => !have.includes(x));
    if (given.size !== itemIds.length || missing.length || unknown.length) {
      throw new ApiError('validation_failed', 'itemIds must list every item of the playlist exactly once', {
        details: {
          missing,
          unknown,
          issues: [{ location: 'body', path: ['itemIds'], message: 'not a permutation of the playlist’s items', code: 'invalid_order' }],
        },
      });
    }
    await renumber(trx, itemIds);
    await touchPlaylist(trx, id, playlist.revision);
  });
  await changed(deps, id);
}

export interface BulkItemEdit {
  itemIds?: string[] | undefined;
  set?: ItemPatch | undefined;
  items?: (ItemPatch & { id: string })[] | undefined;
  delete?: string[] | undefined;
}

/** Many item changes in one transaction, every result checked before anything is written. */
export async function bulkEditItems(deps: AppDeps, id: string, body: BulkItemEdit, check: RevisionCheck, by: string | null) {
  await change(deps.db, id, check, by, async (trx, playlist) => {
    const rows = await itemsOf(trx, id);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const named = [...(body.itemIds ?? []), ...(body.items ?? []).map((i) => i.id), ...(body.delete ?? [])];
    const unknown = [...new Set(named.filter((x) => !byId.has(x)))];
    if (unknown.length) {
      throw new ApiError('validation_failed', `${unknown.length} item id(s) are not in this playlist`, {
        details: { unknown, issues: [{ location: 'body', path: ['items'], message: 'unknown item ids', code: 'invalid_reference' }] },
      });
    }
    // Apply in memory first to check every result before writing anything.
    const changes = new Map<string, Partial<ItemRow>>();
    for (const itemId of body.itemIds ?? []) changes.set(itemId, { ...itemChanges(body.set ?? {}) });
    for (const { id: itemId, ...patch } of body.items ?? []) changes.set(itemId, { ...(changes.get(itemId) ?? {}), ...itemChanges(patch) });
    const deleted = new Set(body.delete ?? []);
    const live = [...changes].filter(([itemId]) => !deleted.has(itemId));
    assertNoNestedDuration(live.filter(([itemId, set]) => byId.get(itemId)!.child_playlist_id && set.duration_ms != null).map(([itemId]) => itemId));
    for (const [itemId, set] of live) {
      const row = { ...byId.get(itemId)!, ...set };
      assertValidity(row.valid_from, row.valid_until);
    }
    const t = now();
    for (const [itemId, set] of changes) {
      if (deleted.has(itemId) || Object.keys(set).length === 0) continue;
      await updateItem(trx, itemId, { ...set, updated_at: t });
    }
    if (deleted.size) {
      await deleteItems(trx, [...deleted]);
      await renumber(
        trx,
        rows.filter((r) => !deleted.has(r.id)).map((r) => r.id),
      );
    }
    await touchPlaylist(trx, id, playlist.revision);
  });
  await changed(deps, id);
}

/** Sets the tag rule (an empty `tags` list turns it off). */
export async function setTagRule(deps: AppDeps, id: string, rule: TagRule, check: RevisionCheck, by: string | null) {
  const tags = [...new Set(rule.tags)];
  await change(deps.db, id, check, by, async (trx, playlist) => {
    await updatePlaylist(trx, id, { tag_rule: tags.length ? storableJson({ ...rule, tags }, 'The tag rule') : null });
    await touchPlaylist(trx, id, playlist.revision);
  });
  await changed(deps, id);
}

/** Changes one item; answers the item's row as it is now and the playlist's new revision. */
export async function patchItem(deps: AppDeps, id: string, itemId: string, patch: ItemPatch, check: RevisionCheck, by: string | null) {
  const result = await change(deps.db, id, check, by, async (trx, playlist) => {
    const row = await getItemRow(trx, id, itemId);
    if (!row) throw notFound('Item');
    const set = itemChanges(patch);
    if (row.child_playlist_id && set.duration_ms != null) assertNoNestedDuration([row.id]);
    const next = { ...row, ...set, updated_at: now() };
    assertValidity(next.valid_from, next.valid_until);
    await updateItem(trx, row.id, { ...set, updated_at: next.updated_at });
    return { next, revision: await touchPlaylist(trx, id, playlist.revision) };
  });
  await changed(deps, id);
  return result;
}

/** Removes one item; answers the playlist's new revision. */
export async function removeItem(deps: AppDeps, id: string, itemId: string, check: RevisionCheck, by: string | null): Promise<number> {
  const revision = await change(deps.db, id, check, by, async (trx, playlist) => {
    const rows = await itemsOf(trx, id);
    if (!rows.some((r) => r.id === itemId)) throw notFound('Item');
    await deleteItems(trx, [itemId]);
    await renumber(
      trx,
      rows.filter((r) => r.id !== itemId).map((r) => r.id),
    );
    return touchPlaylist(trx, id, playlist.revision);
  });
  await changed(deps, id);
  return revision;
}
