import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { nowIso } from '../../platform/db/ids.js';
import type { ContentCollectionsTable, ContentFoldersTable, ContentTagsTable } from '../../platform/db/schema.js';
import { invalidReference, unknownIdsIn } from '../../platform/http/errors.js';
import { afterCursor, toPage } from '../../platform/http/pagination.js';
import { ensureTags, tagAssets, unknownAssets, type DbOrTrx } from './media.repo.js';

/** Folders, collections and tags of the library, and moving assets among them. */

interface PageRequest {
  cursor?: string | undefined;
  limit: number;
}

export async function folderViews(db: DbOrTrx, rows: readonly ContentFoldersTable[]) {
  const all = await db.selectFrom('content_folders').select(['id', 'name', 'parent_id']).execute();
  const byId = new Map(all.map((f) => [f.id, f]));
  const counts = new Map(
    (
      await db
        .selectFrom('assets')
        .select(['folder_id', (eb) => eb.fn.countAll<number>().as('n')])
        .where('state', '!=', 'archived')
        .where('folder_id', 'is not', null)
        .groupBy('folder_id')
        .execute()
    ).map((r) => [r.folder_id, Number(r.n)]),
  );
  return rows.map((f) => {
    const path: string[] = [];
    let cur = f.parent_id ? byId.get(f.parent_id) : undefined;
    for (let i = 0; cur && i < 64; i++) {
      path.unshift(cur.name);
      cur = cur.parent_id ? byId.get(cur.parent_id) : undefined;
    }
    return { id: f.id, name: f.name, parentId: f.parent_id, path, assetCount: counts.get(f.id) ?? 0, createdAt: f.created_at, updatedAt: f.updated_at };
  });
}

export async function collectionViews(db: DbOrTrx, rows: readonly ContentCollectionsTable[]) {
  const counts = new Map(
    (
      await db
        .selectFrom('asset_collections')
        .select(['collection_id', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('collection_id')
        .execute()
    ).map((r) => [r.collection_id, Number(r.n)]),
  );
  return rows.map((c) => ({
    id: c.id,
    name: c.name,
    description: c.description,
    assetCount: counts.get(c.id) ?? 0,
    createdAt: c.created_at,
    updatedAt: c.updated_at,
  }));
}

export async function tagViews(db: DbOrTrx, rows: readonly ContentTagsTable[]) {
  const counts = new Map(
    (
      await db
        .selectFrom('asset_tags')
        .select(['tag_id', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('tag_id')
        .execute()
    ).map((r) => [r.tag_id, Number(r.n)]),
  );
  return rows.map((t) => ({ id: t.id, name: t.name, color: t.color, assetCount: counts.get(t.id) ?? 0, createdAt: t.created_at }));
}

export async function findFolder(db: DbOrTrx, id: string): Promise<ContentFoldersTable | undefined> {
  return db.selectFrom('content_folders').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function folderExists(db: DbOrTrx, id: string): Promise<boolean> {
  return Boolean(await db.selectFrom('content_folders').select('id').where('id', '=', id).executeTakeFirst());
}

/** 400 when a body's `folderId` names no folder (null and undefined name none). */
export async function checkFolderRef(db: DbOrTrx, folderId: string | null | undefined): Promise<void> {
  if (!folderId) return;
  if (!(await folderExists(db, folderId))) throw invalidReference('folderId names no folder', { path: ['folderId'], message: 'no such folder' });
}

/** True when `candidate` is `folderId` or one of its descendants (moving there would make a cycle). */
export async function isWithin(db: DbOrTrx, candidate: string, folderId: string): Promise<boolean> {
  let cur: string | null = candidate;
  for (let i = 0; cur && i < 256; i++) {
    if (cur === folderId) return true;
    const row: { parent_id: string | null } | undefined = await db.selectFrom('content_folders').select('parent_id').where('id', '=', cur).executeTakeFirst();
    cur = row?.parent_id ?? null;
  }
  return false;
}

/** Folders by name: all, or the children of `parentId` (`none`: the top level). */
export async function folderPage(db: DbOrTrx, query: PageRequest & { parentId?: string | undefined }) {
  let q = db.selectFrom('content_folders').selectAll();
  if (query.parentId === 'none') q = q.where('parent_id', 'is', null);
  else if (query.parentId) q = q.where('parent_id', '=', query.parentId);
  const rows = await q
    .where(afterCursor('name', 'id', 'asc', query.cursor))
    .orderBy('name')
    .orderBy('id')
    .limit(query.limit + 1)
    .execute();
  const page = toPage(rows, query.limit, (r) => r.name);
  return { items: await folderViews(db, page.items), nextCursor: page.nextCursor };
}

/** A taken name (case-insensitive, per parent) is refused by the unique index: 409 (platform/db/constraints.ts). */
/** The oldest top-level folder with this name. */
export async function rootFolderNamed(db: DbOrTrx, name: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('content_folders')
    .select('id')
    .where('parent_id', 'is', null)
    .where('name', '=', name)
    .orderBy('created_at')
    .orderBy('id')
    .executeTakeFirst();
  return row?.id;
}

export async function insertFolder(db: DbOrTrx, row: ContentFoldersTable): Promise<void> {
  await db.insertInto('content_folders').values(row).execute();
}

export async function updateFolder(db: DbOrTrx, id: string, set: Pick<ContentFoldersTable, 'name' | 'parent_id' | 'updated_at'>): Promise<void> {
  await db.updateTable('content_folders').set(set).where('id', '=', id).execute();
}

/** True when a folder holds a subfolder or an asset (archived ones included). */
export async function folderHoldsAnything(db: DbOrTrx, id: string): Promise<boolean> {
  const child = await db.selectFrom('content_folders').select('id').where('parent_id', '=', id).executeTakeFirst();
  const asset = await db.selectFrom('assets').select('id').where('folder_id', '=', id).executeTakeFirst();
  return Boolean(child || asset);
}

export async function deleteFolder(db: DbOrTrx, id: string): Promise<void> {
  await db.deleteFrom('content_folders').where('id', '=', id).execute();
}

export async function collectionPage(db: DbOrTrx, query: PageRequest) {
  const rows = await db
    .selectFrom('content_collections')
    .selectAll()
    .where(afterCursor('name', 'id', 'asc', query.cursor))
    .orderBy('name')
    .orderBy('id')
    .limit(query.limit + 1)
    .execute();
  const page = toPage(rows, query.limit, (r) => r.name);
  return { items: await collectionViews(db, page.items), nextCursor: page.nextCursor };
}

export async function insertCollection(db: DbOrTrx, row: ContentCollectionsTable): Promise<void> {
  await db.insertInto('content_collections').values(row).execute();
}

/** Tags by name; `q`: the name contains it (case-insensitive). */
export async function tagPage(db: DbOrTrx, query: PageRequest & { q?: string | undefined }) {
  let q = db.selectFrom('content_tags').selectAll();
  if (query.q) q = q.where(sql<boolean>`instr(lower(name), ${query.q.toLowerCase()}) > 0`);
  const rows = await q
    .where(afterCursor('name', 'id', 'asc', query.cursor))
    .orderBy('name')
    .orderBy('id')
    .limit(query.limit + 1)
    .execute();
  const page = toPage(rows, query.limit, (r) => r.name);
  return { items: await tagViews(db, page.items), nextCursor: page.nextCursor };
}

export async function insertTag(db: DbOrTrx, row: ContentTagsTable): Promise<void> {
  await db.insertInto('content_tags').values(row).execute();
}

/** What one bulk-organize request does to its assets. */
export interface OrganizeOps {
  moveTo?: { folderId: string | null } | undefined;
  addTags?: string[] | undefined;
  removeTags?: string[] | undefined;
  addToCollections?: string[] | undefined;
  removeFromCollections?: string[] | undefined;
}

/**
 * Moves, tags, untags, adds to and removes from collections the assets `ids` (distinct),
 * in one transaction: all or nothing. An id, the folder or a collection that names nothing
 * is a 400 naming its field (`assetIds` as the client sent them, for positions).
 */
export async function organizeAssets(db: Db, ids: readonly string[], sentIds: readonly string[], ops: OrganizeOps): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const found = await trx.selectFrom('assets').select('id').where('id', 'in', ids).execute();
    if (found.length !== ids.length) throw unknownAssets(sentIds, found, 'assetIds');
    const now = nowIso();
    if (ops.moveTo) {
      const folderId = ops.moveTo.folderId;
      if (folderId && !(await folderExists(trx, folderId))) {
        throw invalidReference('moveTo.folderId names no folder', { path: ['moveTo', 'folderId'], message: 'no such folder' });
      }
      await trx.updateTable('assets').set({ folder_id: folderId, updated_at: now }).where('id', 'in', ids).execute();
    }
    if (ops.addTags?.length) await tagAssets(trx, ids, await ensureTags(trx, ops.addTags));
    if (ops.removeTags?.length) {
      const lower = ops.removeTags.map((t) => t.toLowerCase());
      const tagIds = (await trx.selectFrom('content_tags').select('id').where(sql<string>`lower(name)`, 'in', lower).execute()).map((t) => t.id);
      if (tagIds.length) await trx.deleteFrom('asset_tags').where('asset_id', 'in', ids).where('tag_id', 'in', tagIds).execute();
    }
    for (const list of [ops.addToCollections, ops.removeFromCollections]) {
      if (!list?.length) continue;
      const existing = new Set((await trx.selectFrom('content_collections').select('id').where('id', 'in', list).execute()).map((r) => r.id));
      const refs = unknownIdsIn(list === ops.addToCollections ? 'addToCollections' : 'removeFromCollections', list, existing, 'no such collection');
      if (refs.length) throw invalidReference('A collection does not exist', refs);
    }
    for (const cid of ops.addToCollections ?? []) {
      for (const aid of ids)
        await trx
          .insertInto('asset_collections')
          .values({ asset_id: aid, collection_id: cid, added_at: now })
          .onConflict((oc) => oc.doNothing())
          .execute();
    }
    if (ops.removeFromCollections?.length)
      await trx.deleteFrom('asset_collections').where('asset_id', 'in', ids).where('collection_id', 'in', ops.removeFromCollections).execute();
    await trx.updateTable('assets').set({ updated_at: now }).where('id', 'in', ids).execute();
  });
}
