import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { dialectOf, sqlText } from '../../platform/db/dialect.js';
import type { AssetsTable, JobsTable } from '../../platform/db/schema.js';
import type { DbOrTrx } from './media.repo.js';

/**
 * The queries of the media library's housekeeping: which store files rows reference (the
 * orphan removal, the store sweep, prune-media), the status section's counts, and the
 * jobs the reprocess action and the website thumbnail backfill queue and follow.
 */

// ---------------------------------------------------------------- the store's files

/** Whether an asset or a variant references the file `sha` (a variant is only looked at when no asset does). */
export async function fileReferenced(db: DbOrTrx, sha: string): Promise<boolean> {
  return Boolean(
    (await db.selectFrom('assets').select('id').where('sha256', '=', sha).executeTakeFirst()) ??
      (await db.selectFrom('asset_variants').select('id').where('sha256', '=', sha).executeTakeFirst()),
  );
}

/** Media file hashes no asset or variant points at any more (for deletion from disk). */
export async function orphanedFiles(db: Db, candidates: readonly string[]): Promise<string[]> {
  const orphans: string[] = [];
  for (const sha of new Set(candidates)) if (!(await fileReferenced(db, sha))) orphans.push(sha);
  return orphans;
}

/** Every hash an asset or a variant references. */
export async function referencedHashes(db: Db): Promise<Set<string>> {
  const refs = new Set<string>();
  for (const r of await db.selectFrom('assets').select('sha256').where('sha256', 'is not', null).execute()) refs.add(r.sha256!);
  for (const r of await db.selectFrom('asset_variants').select('sha256').execute()) refs.add(r.sha256);
  return refs;
}

/** Every media file row's hash. */
export async function mediaFileHashes(db: Db): Promise<string[]> {
  return (await db.selectFrom('media_files').select('sha256').execute()).map((r) => r.sha256);
}

export async function mediaFileExists(db: Db, sha: string): Promise<boolean> {
  return Boolean(await db.selectFrom('media_files').select('sha256').where('sha256', '=', sha).executeTakeFirst());
}

/** Media file rows no asset or variant references. */
export async function unreferencedMediaFiles(db: Db): Promise<{ sha256: string; created_at: string }[]> {
  return db
    .selectFrom('media_files')
    .select(['sha256', 'created_at'])
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('assets').select('id').whereRef('assets.sha256', '=', 'media_files.sha256'))))
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('asset_variants').select('id').whereRef('asset_variants.sha256', '=', 'media_files.sha256'))))
    .execute();
}

export async function deleteMediaFile(db: Db, sha: string): Promise<void> {
  await db.deleteFrom('media_files').where('sha256', '=', sha).execute();
}

// ---------------------------------------------------------------- status

/**
 * The counts of the status section, read at once: assets by kind and state (with their
 * originals' bytes), variants that are not the original itself, the store's files, and
 * partial uploads.
 */
export async function mediaCounts(db: Db) {
  const [groups, variants, files, uploads] = await Promise.all([
    db
      .selectFrom('assets')
      .select((eb) => ['kind', 'state', eb.fn.countAll<number>().as('n'), eb.fn.sum<number | null>('size_bytes').as('bytes')])
      .groupBy(['kind', 'state'])
      .execute(),
    // Variants that are the original itself (a browser plays it as is) are not counted twice.
    sql<{ n: number; bytes: number | null }>`
      select count(*) as n, sum(v.size_bytes) as bytes
      from asset_variants v join assets a on a.id = v.asset_id
      where v.sha256 <> coalesce(a.sha256, '')`.execute(db),
    db
      .selectFrom('media_files')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number | null>('size_bytes').as('bytes')])
      .executeTakeFirst(),
    db
      .selectFrom('uploads')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number | null>('offset_bytes').as('bytes')])
      .executeTakeFirst(),
  ]);
  return { groups, variants: variants.rows[0], files, uploads };
}

// ---------------------------------------------------------------- jobs: reprocess, website thumbnails

/** What the reprocess action judges an asset by. */
export type ReprocessCandidate = Pick<AssetsTable, 'id' | 'kind' | 'state' | 'state_before_archive' | 'sha256'>;

const candidates = (db: Db) => db.selectFrom('assets').select(['id', 'kind', 'state', 'state_before_archive', 'sha256']);

/** The assets `ids` (at most a few hundred: one `in` list). */
export async function reprocessCandidatesByIds(db: Db, ids: readonly string[]): Promise<ReprocessCandidate[]> {
  return candidates(db).where('id', 'in', ids).execute();
}

/** Assets of `kinds` with an original that are ready (or were, before being archived), by id. */
export async function readyAssetsOfKinds(db: Db, kinds: readonly AssetsTable['kind'][]): Promise<ReprocessCandidate[]> {
  return candidates(db)
    .where('sha256', 'is not', null)
    .where('kind', 'in', kinds)
    .where((eb) => eb.or([eb('state', '=', 'ready'), eb.and([eb('state', '=', 'archived'), eb('state_before_archive', '=', 'ready')])]))
    .orderBy('id')
    .execute();
}

/** Website assets without a thumbnail variant (at most `limit`). */
export async function websitesWithoutThumbnail(db: Db, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('assets')
    .select('id')
    .where('kind', '=', 'website')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('asset_variants')
            .select('asset_variants.id')
            .whereRef('asset_variants.asset_id', '=', 'assets.id')
            .where('asset_variants.purpose', '=', 'thumbnail'),
        ),
      ),
    )
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** The payloads (JSON text) of the jobs of `kind` queued or running. */
export async function activeJobPayloads(db: Db, kind: string): Promise<string[]> {
  return (await db.selectFrom('jobs').select('payload').where('kind', '=', kind).where('state', 'in', ['queued', 'running']).execute()).map((j) => j.payload);
}

/** The `assetId` of each job of `kind` queued or running, read by SQLite from its payload. */
export async function activeJobAssetIds(db: Db, kind: string): Promise<string[]> {
  const rows = await db
    .selectFrom('jobs')
    .select(sql<string>`${sql.raw(sqlText.jsonValue(dialectOf(db), 'payload', '$.assetId'))}`.as('assetId'))
    .where('kind', '=', kind)
    .where('state', 'in', ['queued', 'running'])
    .execute();
  return rows.map((r) => r.assetId);
}

/** Job rows (JobQueue.row) in one transaction; kick the queue after. */
export async function insertJobs(db: Db, rows: readonly JobsTable[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const row of rows) await trx.insertInto('jobs').values(row).execute();
  });
}

/** Where the jobs `ids` are (a pruned job has no row). */
export async function jobStates(db: Db, ids: readonly string[]): Promise<Pick<JobsTable, 'id' | 'state' | 'payload' | 'last_error'>[]> {
  return db.selectFrom('jobs').select(['id', 'state', 'payload', 'last_error']).where('id', 'in', ids).execute();
}
