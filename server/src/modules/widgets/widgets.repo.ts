import type { Db } from '../../platform/db/database.js';
import { afterCursor } from '../../platform/http/pagination.js';
import type { Insertable, Updateable } from 'kysely';
import type { WidgetBundlesTable, WidgetPreviewImagesTable, WidgetsTable } from '../../platform/db/schema.js';

/** Queries of widgets, widget_bundles, widget_bundle_blobs and widget_preview_images. */

export type WidgetRow = WidgetsTable;
export type BundleRow = WidgetBundlesTable;

/** Versions kept per widget: the current one and the ones before it (players on the previous manifest). */
export const BUNDLES_KEPT = 3;

export async function findWidget(db: Db, id: string): Promise<WidgetRow | undefined> {
  return db.selectFrom('widgets').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listWidgetRows(db: Db, q: { cursor?: string; limit: number; q?: string; type?: string }) {
  let query = db
    .selectFrom('widgets')
    .selectAll()
    .where(afterCursor('name', 'id', 'asc', q.cursor));
  const text = q.q;
  if (text) query = query.where((eb) => eb(eb.fn('instr', [eb.fn('lower', ['name']), eb.val(text.toLowerCase())]), '>', 0));
  if (q.type) query = query.where('type', '=', q.type);
  return query
    .orderBy('name')
    .orderBy('id')
    .limit(q.limit + 1)
    .execute();
}

export async function existingWidgets(db: Db, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('widgets')
    .select('id')
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Set(rows.map((r) => r.id));
}

export async function publishedWidgets(db: Db, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('widgets')
    .select('id')
    .where('id', 'in', [...new Set(ids)])
    .where('published_at', 'is not', null)
    .execute();
  return new Set(rows.map((r) => r.id));
}

export async function widgetsBoundTo(db: Db, sourceId: string): Promise<WidgetRow[]> {
  return db.selectFrom('widgets').selectAll().where('binding', 'like', `%"sourceId":"${sourceId}"%`).execute();
}

export async function currentBundles(db: Db, widgetIds: readonly string[]): Promise<Map<string, BundleRow>> {
  const out = new Map<string, BundleRow>();
  if (widgetIds.length === 0) return out;
  const rows = await db
    .selectFrom('widget_bundles')
    .selectAll()
    .where('widget_id', 'in', [...widgetIds])
    .orderBy('id', 'desc')
    .execute();
  for (const r of rows) if (!out.has(r.widget_id)) out.set(r.widget_id, r);
  return out;
}

export async function bundleById(db: Db, id: string): Promise<BundleRow | undefined> {
  return db.selectFrom('widget_bundles').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function bundleBytes(db: Db, sha256: string): Promise<Buffer | undefined> {
  return (await db.selectFrom('widget_bundle_blobs').select('bytes').where('sha256', '=', sha256).executeTakeFirst())?.bytes;
}

/** Stores a new version (and its blob when new), drops versions beyond BUNDLES_KEPT and unreferenced blobs. Call in a transaction. */
export async function insertBundle(db: Db, row: BundleRow, bytes: Buffer): Promise<void> {
  await db
    .insertInto('widget_bundle_blobs')
    .values({ sha256: row.sha256, bytes, size_bytes: bytes.length, created_at: row.built_at })
    .onConflict((oc) => oc.column('sha256').doNothing())
    .execute();
  await db.insertInto('widget_bundles').values(row).execute();
  const old = await db
    .selectFrom('widget_bundles')
    .select('id')
    .where('widget_id', '=', row.widget_id)
    .orderBy('id', 'desc')
    .offset(BUNDLES_KEPT)
    .limit(1000)
    .execute();
  if (old.length)
    await db
      .deleteFrom('widget_bundles')
      .where(
        'id',
        'in',
        old.map((o) => o.id),
      )
      .execute();
  await deleteUnreferencedBlobs(db);
}

/** The sha256 of every kept bundle version (drawn previews of others can go). */
export async function keptBundleShas(db: Db): Promise<Set<string>> {
  const rows = await db.selectFrom('widget_bundles').select('sha256').distinct().execute();
  return new Set(rows.map((r) => r.sha256));
}

export async function deleteUnreferencedBlobs(db: Db): Promise<void> {
  await db
    .deleteFrom('widget_bundle_blobs')
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('widget_bundles').select('id').whereRef('widget_bundles.sha256', '=', 'widget_bundle_blobs.sha256'))),
    )
    .execute();
}

export async function insertWidget(db: Db, row: Insertable<WidgetsTable>): Promise<void> {
  await db.insertInto('widgets').values(row).execute();
}

export async function updateWidget(db: Db, id: string, set: Updateable<WidgetsTable>): Promise<void> {
  await db.updateTable('widgets').set(set).where('id', '=', id).execute();
}

export async function deleteWidgetRow(db: Db, id: string): Promise<void> {
  await db.deleteFrom('widgets').where('id', '=', id).execute();
}

export async function setWidgetErrors(db: Db, id: string, errorsJson: string): Promise<void> {
  await db.updateTable('widgets').set({ errors: errorsJson }).where('id', '=', id).execute();
}

/** The same bytes came out of newer inputs: the current version stays, noted as built from them. */
export async function markBundleCurrent(db: Db, bundleId: string, inputSha256: string, revision: number): Promise<void> {
  await db.updateTable('widget_bundles').set({ input_sha256: inputSha256, revision }).where('id', '=', bundleId).execute();
}

export async function previewUpload(db: Db, widgetId: string) {
  return db.selectFrom('widget_preview_images').selectAll().where('widget_id', '=', widgetId).executeTakeFirst();
}

export async function storePreviewUpload(db: Db, row: WidgetPreviewImagesTable): Promise<void> {
  await db
    .insertInto('widget_preview_images')
    .values(row)
    .onConflict((oc) => oc.column('widget_id').doUpdateSet(row))
    .execute();
}

export async function deletePreviewUpload(db: Db, widgetId: string): Promise<void> {
  await db.deleteFrom('widget_preview_images').where('widget_id', '=', widgetId).execute();
}
