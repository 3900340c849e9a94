import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { dialectOf, sqlText } from '../../platform/db/dialect.js';

/** Queries of data_source_images: the image addresses sources' rows use and their assets. */

/** Records addresses an output uses: new ones pending (due now), known ones seen again. */
export async function noteImageUrls(db: Db, sourceId: string, urls: readonly string[], at: string): Promise<number> {
  let added = 0;
  for (let i = 0; i < urls.length; i += 200) {
    const chunk = urls.slice(i, i + 200);
    const known = new Set(
      (await db.selectFrom('data_source_images').select('url').where('source_id', '=', sourceId).where('url', 'in', chunk).execute()).map((r) => r.url),
    );
    const fresh = chunk.filter((u) => !known.has(u));
    if (known.size)
      await db
        .updateTable('data_source_images')
        .set({ last_seen_at: at })
        .where('source_id', '=', sourceId)
        .where('url', 'in', [...known])
        .execute();
    if (fresh.length) {
      await db
        .insertInto('data_source_images')
        .values(
          fresh.map((url) => ({ source_id: sourceId, url, state: 'pending' as const, attempts: 0, next_attempt_at: at, last_seen_at: at, created_at: at })),
        )
        .onConflict((oc) => oc.columns(['source_id', 'url']).doNothing())
        .execute();
      added += fresh.length;
    }
  }
  return added;
}

export async function dueImages(db: Db, now: string, limit: number) {
  return db
    .selectFrom('data_source_images')
    .select(['source_id', 'url', 'attempts'])
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
}

export async function imageReady(db: Db, sourceId: string, url: string, assetId: string): Promise<void> {
  await db
    .updateTable('data_source_images')
    .set({ state: 'ready', asset_id: assetId, error: null, next_attempt_at: null })
    .where('source_id', '=', sourceId)
    .where('url', '=', url)
    .execute();
}

export async function imageFailed(db: Db, sourceId: string, url: string, error: string, attempts: number, retryAt: string | null): Promise<void> {
  await db
    .updateTable('data_source_images')
    .set({ state: retryAt ? 'pending' : 'failed', error, attempts, next_attempt_at: retryAt })
    .where('source_id', '=', sourceId)
    .where('url', '=', url)
    .execute();
}

/** The ready images of these addresses: url -> asset id. */
export async function readyImages(db: Db, sourceId: string, urls: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < urls.length; i += 300) {
    const rows = await db
      .selectFrom('data_source_images')
      .select(['url', 'asset_id'])
      .where('source_id', '=', sourceId)
      .where('state', '=', 'ready')
      .where('url', 'in', urls.slice(i, i + 300))
      .execute();
    for (const r of rows) if (r.asset_id) out.set(r.url, r.asset_id);
  }
  return out;
}

export async function imageCounts(db: Db, sourceId: string) {
  const rows = await db
    .selectFrom('data_source_images')
    .select((eb) => ['state', eb.fn.countAll<number>().as('n')])
    .where('source_id', '=', sourceId)
    .groupBy('state')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)])) as Partial<Record<'pending' | 'ready' | 'failed', number>>;
}

/** The last failures, for diagnostics. */
export async function failedImages(db: Db, sourceId: string, limit = 5) {
  return db
    .selectFrom('data_source_images')
    .select(['url', 'error', 'attempts'])
    .where('source_id', '=', sourceId)
    .where('error', 'is not', null)
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
}

/** Images recorded before `before` that no kept output version lists (a deleted source has none): what to drop, with their assets. */
export async function unusedImages(db: Db, before: string, limit: number) {
  const rows = await sql<{ source_id: string; url: string; asset_id: string | null }>`
    select i.source_id, i.url, i.asset_id from data_source_images i
    where i.created_at < ${before}
      and not exists (
        select 1 from data_source_outputs o, ${sql.raw(sqlText.jsonArrayItems(dialectOf(db), 'o.image_urls', null, 'j', true))}
        where o.source_id = i.source_id and j.value = i.url)
    limit ${limit}`.execute(db);
  return rows.rows;
}

export async function imagesOfSource(db: Db, sourceId: string) {
  return db.selectFrom('data_source_images').select(['source_id', 'url', 'asset_id']).where('source_id', '=', sourceId).execute();
}

export async function deleteImageRow(db: Db, sourceId: string, url: string): Promise<void> {
  await db.deleteFrom('data_source_images').where('source_id', '=', sourceId).where('url', '=', url).execute();
}

/** Which of the assets are a source's images: asset id -> source id and name. */
export async function sourcesOfImageAssets(db: Db, assetIds: readonly string[]) {
  if (assetIds.length === 0) return [];
  return db
    .selectFrom('data_source_images as i')
    .innerJoin('data_sources as s', 's.id', 'i.source_id')
    .select(['i.asset_id', 's.id', 's.name'])
    .where('i.asset_id', 'in', [...assetIds])
    .execute();
}

/** Images whose asset was deleted become pending again (due now); answers how many. */
export async function refetchImagesOfAssets(db: Db, assetIds: readonly string[], at: string): Promise<number> {
  if (assetIds.length === 0) return 0;
  const r = await db
    .updateTable('data_source_images')
    .set({ state: 'pending', asset_id: null, attempts: 0, error: null, next_attempt_at: at })
    .where('asset_id', 'in', [...assetIds])
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}
