import type { Db } from '../../platform/db/database.js';
import type { DataSourceOutputsTable } from '../../platform/db/schema.js';

/** Queries of the outputs tables (data_output_keys, data_source_outputs, data_output_blobs). */

export type OutputRow = DataSourceOutputsTable;

/** Versions kept per (source, view): the current one and the ones before it, for players still on an older manifest. */
export const VERSIONS_KEPT = 3;

export async function outputKey(db: Db, sourceId: string, viewKey: string) {
  return db.selectFrom('data_output_keys').selectAll().where('source_id', '=', sourceId).where('view_key', '=', viewKey).executeTakeFirst();
}

export async function outputKeysOf(db: Db, sourceId: string) {
  return db.selectFrom('data_output_keys').selectAll().where('source_id', '=', sourceId).orderBy('view_key').execute();
}

/** Records that a manifest uses the key (created, or its last use moved on). */
export async function touchOutputKey(db: Db, sourceId: string, viewKey: string, view: string | null, at: string): Promise<void> {
  await db
    .insertInto('data_output_keys')
    .values({ source_id: sourceId, view_key: viewKey, view, created_at: at, last_used_at: at })
    .onConflict((oc) => oc.columns(['source_id', 'view_key']).doUpdateSet({ last_used_at: at }))
    .execute();
}

/** Records the key without touching its last use (an admin's rebuild is not a screen using it). */
export async function ensureOutputKey(db: Db, sourceId: string, viewKey: string, view: string | null, at: string): Promise<void> {
  await db
    .insertInto('data_output_keys')
    .values({ source_id: sourceId, view_key: viewKey, view, created_at: at, last_used_at: at })
    .onConflict((oc) => oc.columns(['source_id', 'view_key']).doNothing())
    .execute();
}

/** The current (newest) output of each asked key of a source; keys without one are absent. */
export async function currentOutputs(db: Db, sourceId: string, viewKeys?: readonly string[]): Promise<Map<string, OutputRow>> {
  let q = db.selectFrom('data_source_outputs').selectAll().where('source_id', '=', sourceId);
  if (viewKeys) {
    if (viewKeys.length === 0) return new Map();
    q = q.where('view_key', 'in', [...viewKeys]);
  }
  const out = new Map<string, OutputRow>();
  for (const r of await q.orderBy('id', 'desc').execute()) if (!out.has(r.view_key)) out.set(r.view_key, r);
  return out;
}

/** Every kept version of a source's outputs, newest first per key. */
export async function outputVersions(db: Db, sourceId: string): Promise<OutputRow[]> {
  return db.selectFrom('data_source_outputs').selectAll().where('source_id', '=', sourceId).orderBy('view_key').orderBy('id', 'desc').execute();
}

export async function outputById(db: Db, id: string): Promise<OutputRow | undefined> {
  return db.selectFrom('data_source_outputs').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function blobOf(db: Db, sha256: string): Promise<Buffer | undefined> {
  return (await db.selectFrom('data_output_blobs').select('bytes').where('sha256', '=', sha256).executeTakeFirst())?.bytes;
}

/** Stores a new version (and its blob when new), then drops versions beyond VERSIONS_KEPT and blobs no output references. Call in a transaction. */
export async function insertOutput(db: Db, row: OutputRow, bytes: Buffer): Promise<void> {
  await db
    .insertInto('data_output_blobs')
    .values({ sha256: row.sha256, bytes, size_bytes: bytes.length, created_at: row.generated_at })
    .onConflict((oc) => oc.column('sha256').doNothing())
    .execute();
  // Only the current version expires; the older ones are kept as they were built.
  await db
    .updateTable('data_source_outputs')
    .set({ expires_at: null })
    .where('source_id', '=', row.source_id)
    .where('view_key', '=', row.view_key)
    .where('expires_at', 'is not', null)
    .execute();
  await db.insertInto('data_source_outputs').values(row).execute();
  const old = await db
    .selectFrom('data_source_outputs')
    .select('id')
    .where('source_id', '=', row.source_id)
    .where('view_key', '=', row.view_key)
    .orderBy('id', 'desc')
    .offset(VERSIONS_KEPT)
    .limit(1000)
    .execute();
  if (old.length)
    await db
      .deleteFrom('data_source_outputs')
      .where(
        'id',
        'in',
        old.map((o) => o.id),
      )
      .execute();
  await deleteUnreferencedBlobs(db);
}

/** A rebuild that gave the same data: the current version stays, valid until the new expiry. */
export async function extendOutput(db: Db, id: string, checkedRevision: number, expiresAt: string | null): Promise<void> {
  await db.updateTable('data_source_outputs').set({ checked_revision: checkedRevision, expires_at: expiresAt }).where('id', '=', id).execute();
}

/** Drops keys no manifest asked for since `before` (their versions go with them), then orphaned blobs. */
export async function dropUnusedKeys(db: Db, before: string): Promise<number> {
  const r = await db.deleteFrom('data_output_keys').where('last_used_at', '<', before).executeTakeFirst();
  if (Number(r.numDeletedRows) > 0) await deleteUnreferencedBlobs(db);
  return Number(r.numDeletedRows);
}

/** Blobs no output version references any more (a source deleted, versions pruned). */
export async function deleteUnreferencedBlobs(db: Db): Promise<void> {
  await db
    .deleteFrom('data_output_blobs')
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('data_source_outputs').select('id').whereRef('data_source_outputs.sha256', '=', 'data_output_blobs.sha256'))),
    )
    .execute();
}

/** Current outputs whose relative-date view expired before `now`: (source, key) pairs to rebuild. */
export async function expiredOutputKeys(db: Db, now: string, limit: number) {
  return db.selectFrom('data_source_outputs').select(['source_id', 'view_key']).where('expires_at', '<=', now).distinct().limit(limit).execute();
}
