import { type Kysely, sql, type Transaction } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import { prepared } from '../../platform/db/prepared.js';
import type { AssetKind, AssetsTable, AssetVariantsTable, Database, JobsTable, MediaFilesTable } from '../../platform/db/schema.js';
import { type ApiError, invalidReference, notFound, unknownIdsIn } from '../../platform/http/errors.js';
import { afterCursor, toPage } from '../../platform/http/pagination.js';
import { type ASSET_STATES, type AssetView, toVariant, type WebsiteSettings } from './media.schemas.js';

export type DbOrTrx = Kysely<Database> | Transaction<Database>;

/** The small read API the manifest builder uses. */
export async function getAsset(db: DbOrTrx, id: string): Promise<AssetsTable | undefined> {
  return db.selectFrom('assets').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The asset `id` names; 404 when none. */
export async function mustGetAsset(db: DbOrTrx, id: string): Promise<AssetsTable> {
  const row = await getAsset(db, id);
  if (!row) throw notFound('Asset');
  return row;
}

export async function listVariants(db: DbOrTrx, assetId: string): Promise<AssetVariantsTable[]> {
  return db
    .selectFrom('asset_variants')
    .selectAll()
    .where('asset_id', '=', assetId)
    .orderBy('purpose')
    .orderBy('page')
    .orderBy('width')
    .orderBy('id')
    .execute();
}

/** Full views of the given asset rows (tags, collections, variants), in the same order. */
export async function assetViews(db: DbOrTrx, rows: readonly AssetsTable[]): Promise<AssetView[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [tags, cols, variants] = await Promise.all([
    db
      .selectFrom('asset_tags')
      .innerJoin('content_tags', 'content_tags.id', 'asset_tags.tag_id')
      .select(['asset_tags.asset_id', 'content_tags.name'])
      .where('asset_tags.asset_id', 'in', ids)
      .orderBy('content_tags.name')
      .execute(),
    db.selectFrom('asset_collections').select(['asset_id', 'collection_id']).where('asset_id', 'in', ids).orderBy('added_at').execute(),
    db
      .selectFrom('asset_variants')
      .selectAll()
      .where('asset_id', 'in', ids)
      .orderBy('purpose')
      .orderBy('page')
      .orderBy('width')
      .orderBy('content_type')
      .execute(),
  ]);
  const group = <T>(list: T[], key: (t: T) => string) => {
    const m = new Map<string, T[]>();
    for (const item of list) {
      const k = key(item);
      const arr = m.get(k);
      if (arr) arr.push(item);
      else m.set(k, [item]);
    }
    return m;
  };
  const tagsBy = group(tags, (t) => t.asset_id);
  const colsBy = group(cols, (c) => c.asset_id);
  const varsBy = group(variants, (v) => v.asset_id);
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    state: r.state,
    name: r.name,
    sha256: r.sha256,
    sizeBytes: r.size_bytes,
    contentType: r.content_type,
    originalFilename: r.original_filename,
    width: r.width,
    height: r.height,
    durationMs: r.duration_ms,
    pageCount: r.page_count,
    folderId: r.folder_id,
    tags: (tagsBy.get(r.id) ?? []).map((t) => t.name),
    collectionIds: (colsBy.get(r.id) ?? []).map((c) => c.collection_id),
    failureReason: r.failure_reason,
    progress: r.progress,
    metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    website: r.website ? (JSON.parse(r.website) as WebsiteSettings) : null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    archivedAt: r.archived_at,
    variants: (varsBy.get(r.id) ?? []).map(toVariant),
  }));
}

export async function assetView(db: DbOrTrx, id: string): Promise<AssetView | undefined> {
  const row = await getAsset(db, id);
  if (!row) return undefined;
  return (await assetViews(db, [row]))[0];
}

/** Full views of the assets `ids`, newest first. */
export async function assetViewsOf(db: DbOrTrx, ids: readonly string[]): Promise<AssetView[]> {
  const rows = await db.selectFrom('assets').selectAll().where('id', 'in', ids).orderBy('created_at', 'desc').execute();
  return assetViews(db, rows);
}

/** What the asset list filters on (GET /api/v1/assets). */
export interface AssetListQuery {
  kind?: AssetKind | undefined;
  state?: (typeof ASSET_STATES)[number] | undefined;
  /** A folder, or `none` for the root. */
  folderId?: string | undefined;
  collectionId?: string | undefined;
  /** A tag's name (case-insensitive). */
  tag?: string | undefined;
  /** The name contains it (case-insensitive). */
  q?: string | undefined;
  archived: 'exclude' | 'include' | 'only' | 'true' | 'false';
  cursor?: string | undefined;
  limit: number;
}

/** A page of assets, newest first. */
export async function assetPage(db: DbOrTrx, query: AssetListQuery): Promise<{ items: AssetView[]; nextCursor: string | null }> {
  let q = db.selectFrom('assets').selectAll('assets');
  if (query.kind) q = q.where('kind', '=', query.kind);
  if (query.state) q = q.where('state', '=', query.state);
  const archived = query.archived === 'true' ? 'only' : query.archived === 'false' ? 'exclude' : query.archived;
  if (!query.state && archived === 'exclude') q = q.where('state', '!=', 'archived');
  if (archived === 'only') q = q.where('state', '=', 'archived');
  if (query.folderId === 'none') q = q.where('folder_id', 'is', null);
  else if (query.folderId) q = q.where('folder_id', '=', query.folderId);
  if (query.collectionId) {
    const cid = query.collectionId;
    q = q.where('id', 'in', (eb) => eb.selectFrom('asset_collections').select('asset_id').where('collection_id', '=', cid));
  }
  if (query.tag) {
    const tag = query.tag.toLowerCase();
    q = q.where('id', 'in', (eb) =>
      eb
        .selectFrom('asset_tags')
        .innerJoin('content_tags', 'content_tags.id', 'asset_tags.tag_id')
        .select('asset_tags.asset_id')
        .where(sql<string>`lower(content_tags.name)`, '=', tag),
    );
  }
  if (query.q) q = q.where(sql<boolean>`instr(lower(assets.name), ${query.q.toLowerCase()}) > 0`);
  const rows = await q
    .where(afterCursor('assets.created_at', 'assets.id', 'desc', query.cursor))
    .orderBy('assets.created_at', 'desc')
    .orderBy('assets.id', 'desc')
    .limit(query.limit + 1)
    .execute();
  const page = toPage(rows, query.limit, (r) => r.created_at);
  return { items: await assetViews(db, page.items), nextCursor: page.nextCursor };
}

/**
 * Archives the assets `ids` (distinct) not archived yet, remembering the state each had, in
 * one transaction; 400 when one names no asset (`sentIds`: the list as sent, for positions).
 * Answers the ids that changed.
 */
export async function archiveAssets(db: Db, ids: readonly string[], sentIds: readonly string[]): Promise<string[]> {
  const now = nowIso();
  const changed: string[] = [];
  await db.transaction().execute(async (trx) => {
    const rows = await trx.selectFrom('assets').select(['id', 'state']).where('id', 'in', ids).execute();
    if (rows.length !== ids.length) throw unknownAssets(sentIds, rows, 'ids');
    for (const r of rows) {
      if (r.state === 'archived') continue;
      await trx
        .updateTable('assets')
        .set({ state: 'archived', state_before_archive: r.state, archived_at: now, updated_at: now })
        .where('id', '=', r.id)
        .execute();
      changed.push(r.id);
    }
  });
  return changed;
}

/** Puts archived assets back in the state they had (as archiveAssets); answers the ids that changed. */
export async function restoreAssets(db: Db, ids: readonly string[], sentIds: readonly string[]): Promise<string[]> {
  const now = nowIso();
  const changed: string[] = [];
  await db.transaction().execute(async (trx) => {
    const rows = await trx.selectFrom('assets').select(['id', 'state', 'state_before_archive']).where('id', 'in', ids).execute();
    if (rows.length !== ids.length) throw unknownAssets(sentIds, rows, 'ids');
    for (const r of rows) {
      if (r.state !== 'archived') continue;
      await trx
        .updateTable('assets')
        .set({ state: r.state_before_archive ?? 'ready', state_before_archive: null, archived_at: null, updated_at: now })
        .where('id', '=', r.id)
        .execute();
      changed.push(r.id);
    }
  });
  return changed;
}

/** Renames an asset, moves it to a folder (null: the root) or replaces its tags, in one transaction. */
export async function updateAsset(
  db: Db,
  id: string,
  change: { name?: string | undefined; folderId?: string | null | undefined; tags?: readonly string[] | undefined },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const set: Partial<AssetsTable> = { updated_at: nowIso() };
    if (change.name !== undefined) set.name = change.name;
    if (change.folderId !== undefined) set.folder_id = change.folderId;
    await trx.updateTable('assets').set(set).where('id', '=', id).execute();
    if (change.tags) {
      await trx.deleteFrom('asset_tags').where('asset_id', '=', id).execute();
      await tagAssets(trx, [id], await ensureTags(trx, change.tags));
    }
  });
}

export async function insertAsset(db: DbOrTrx, row: AssetsTable): Promise<void> {
  await db.insertInto('assets').values(row).execute();
}

/** Its variants, tags and collection entries go with it (foreign keys). */
export async function deleteAssetRow(db: DbOrTrx, id: string): Promise<void> {
  await db.deleteFrom('assets').where('id', '=', id).execute();
}

/** A file of the media store, by its hash (already recorded: nothing to do). */
export async function insertMediaFile(db: DbOrTrx, row: MediaFilesTable): Promise<void> {
  await db
    .insertInto('media_files')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** A job row (JobQueue.row), inserted with the change that needs it; kick the queue after the commit. */
export async function insertJob(db: DbOrTrx, row: JobsTable): Promise<void> {
  await db.insertInto('jobs').values(row).execute();
}

/** A failed asset goes back to processing, with its job, in one transaction. */
export async function processAgain(db: Db, id: string, job: JobsTable): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('assets').set({ state: 'processing', failure_reason: null, progress: 0, updated_at: nowIso() }).where('id', '=', id).execute();
    await insertJob(trx, job);
  });
}

/** A website asset's settings (stored JSON) and the size its viewport gives it. */
export async function setWebsite(db: DbOrTrx, id: string, website: string, size: { width: number | null; height: number | null }): Promise<void> {
  await db.updateTable('assets').set({ website, width: size.width, height: size.height, updated_at: nowIso() }).where('id', '=', id).execute();
}

export async function findVariant(db: DbOrTrx, assetId: string, variantId: string): Promise<AssetVariantsTable | undefined> {
  return db.selectFrom('asset_variants').selectAll().where('id', '=', variantId).where('asset_id', '=', assetId).executeTakeFirst();
}

const readyVariant = prepared((db: Db, assetId: string, variantId: string) =>
  db
    .selectFrom('asset_variants as v')
    .innerJoin('assets as a', 'a.id', 'v.asset_id')
    .select(['v.sha256', 'v.content_type'])
    .where('v.id', '=', variantId)
    .where('v.asset_id', '=', assetId)
    .where('a.state', '=', 'ready'),
);

/** What a player needs to download a variant of a ready asset, in one prepared read (after a change, every screen downloads its new media at once). */
export async function readyVariantOf(db: Db, assetId: string, variantId: string): Promise<Pick<AssetVariantsTable, 'sha256' | 'content_type'> | undefined> {
  return (await readyVariant(db, assetId, variantId)).rows[0];
}

/** An asset's state, and the one it had before it was archived; undefined when it is gone. */
export async function assetStateOf(db: DbOrTrx, id: string): Promise<Pick<AssetsTable, 'state' | 'state_before_archive'> | undefined> {
  return db.selectFrom('assets').select(['state', 'state_before_archive']).where('id', '=', id).executeTakeFirst();
}

/** How far processing is (0 to 1), shown while the asset is processing. */
export async function setAssetProgress(db: DbOrTrx, id: string, progress: number): Promise<void> {
  await db.updateTable('assets').set({ progress }).where('id', '=', id).execute();
}

/** What processing found out about an asset, as its row stores it (`metadata`: JSON). */
export interface ProcessedFacts {
  width: number | null;
  height: number | null;
  durationMs: number | null;
  pageCount: number | null;
  metadata: string;
}

/** Processing succeeded: the asset is ready (an archived one will be, when restored) with what was found out. */
export async function recordAssetReady(db: DbOrTrx, id: string, archived: boolean, facts: ProcessedFacts, now: string): Promise<void> {
  await db
    .updateTable('assets')
    .set({
      ...(archived ? { state_before_archive: 'ready' as const } : { state: 'ready' as const }),
      width: facts.width,
      height: facts.height,
      duration_ms: facts.durationMs,
      page_count: facts.pageCount,
      metadata: facts.metadata,
      failure_reason: null,
      progress: null,
      updated_at: now,
    })
    .where('id', '=', id)
    .execute();
}

/** Processing failed for good: the asset is failed (an archived one will be, when restored), saying why. */
export async function recordAssetFailure(db: DbOrTrx, id: string, archived: boolean, reason: string): Promise<void> {
  await db
    .updateTable('assets')
    .set({
      ...(archived ? { state_before_archive: 'failed' as const } : { state: 'failed' as const }),
      failure_reason: reason,
      progress: null,
      updated_at: nowIso(),
    })
    .where('id', '=', id)
    .execute();
}

/** The asset changed beyond its own columns (its variants). */
export async function touchAsset(db: DbOrTrx, id: string, now: string): Promise<void> {
  await db.updateTable('assets').set({ updated_at: now }).where('id', '=', id).execute();
}

/** A website asset's settings and metadata (both JSON), as the thumbnail job compares and extends them. */
export async function websiteAndMetadata(db: DbOrTrx, id: string): Promise<Pick<AssetsTable, 'website' | 'metadata'> | undefined> {
  return db.selectFrom('assets').select(['website', 'metadata']).where('id', '=', id).executeTakeFirst();
}

export async function setAssetMetadata(db: DbOrTrx, id: string, metadata: string, now: string): Promise<void> {
  await db.updateTable('assets').set({ metadata, updated_at: now }).where('id', '=', id).execute();
}

/** A rendered file recorded as a variant of an asset. */
export interface VariantFile {
  purpose: AssetVariantsTable['purpose'];
  contentType: string;
  width: number | null;
  height: number | null;
  page: number | null;
  size: number;
  sha256: string;
}

/** Records `file` as a new variant (a new id) of the asset. */
export async function insertVariant(db: DbOrTrx, assetId: string, file: VariantFile, now: string): Promise<void> {
  await db
    .insertInto('asset_variants')
    .values({
      id: newId(),
      asset_id: assetId,
      purpose: file.purpose,
      content_type: file.contentType,
      width: file.width,
      height: file.height,
      page: file.page,
      size_bytes: file.size,
      sha256: file.sha256,
      created_at: now,
    })
    .execute();
}

export async function deleteVariants(db: DbOrTrx, ids: readonly string[]): Promise<void> {
  await db.deleteFrom('asset_variants').where('id', 'in', ids).execute();
}

/** The asset's variants (those of one purpose, when given). */
export async function deleteVariantsOf(db: DbOrTrx, assetId: string, purpose?: AssetVariantsTable['purpose']): Promise<void> {
  let q = db.deleteFrom('asset_variants').where('asset_id', '=', assetId);
  if (purpose) q = q.where('purpose', '=', purpose);
  await q.execute();
}

/** Tag ids for names, creating the missing tags (case-insensitive match). */
export async function ensureTags(trx: DbOrTrx, names: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  const seen = new Set<string>();
  for (const raw of names) {
    const name = raw.trim();
    if (!name || seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    const found =
      (await trx.selectFrom('content_tags').select('id').where('name', '=', name).executeTakeFirst()) ??
      (await trx
        .selectFrom('content_tags')
        .select('id')
        .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
        .executeTakeFirst());
    if (found) {
      ids.push(found.id);
      continue;
    }
    const id = newId();
    await trx.insertInto('content_tags').values({ id, name, color: null, created_at: nowIso() }).execute();
    ids.push(id);
  }
  return ids;
}

export async function tagAssets(trx: DbOrTrx, assetIds: readonly string[], tagIds: readonly string[]): Promise<void> {
  for (const asset_id of assetIds) {
    for (const tag_id of tagIds) {
      await trx
        .insertInto('asset_tags')
        .values({ asset_id, tag_id })
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  }
}

/**
 * 400 for asset ids of a body list that name no asset (`details.missing` lists them; an
 * issue per position names the field). An unknown id inside a body is invalid input.
 */
export function unknownAssets(ids: readonly string[], found: readonly { id: string }[], field: string): ApiError {
  const known = new Set(found.map((f) => f.id));
  const missing = [...new Set(ids.filter((i) => !known.has(i)))];
  return invalidReference(
    `Some assets do not exist: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? '...' : ''}`,
    unknownIdsIn(field, ids, known, 'no such asset'),
    {
      missing,
    },
  );
}
