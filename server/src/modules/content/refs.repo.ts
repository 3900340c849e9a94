/**
 * What content reads of the media module's tables (assets, their variants and tags) and of
 * the widgets module's (a widget's name and default duration, for item lists and playlist
 * lengths that need no bundle), with plain SQL so this module does not reach into those
 * modules' files. refs.ts has the rules content applies to them.
 */
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { type DialectName, dialectOf, sqlText } from '../../platform/db/dialect.js';
import type { AssetVariantsTable } from '../../platform/db/schema.js';

export interface AssetInfo {
  id: string;
  name: string;
  kind: string;
  state: string;
  durationMs: number | null;
  width: number | null;
  height: number | null;
  tags: string[];
  /** Website assets: the page to show. */
  websiteUrl: string | null;
  createdAt: string;
}

export interface VariantInfo {
  id: string;
  assetId: string;
  purpose: 'player' | 'thumbnail' | 'poster' | 'preview';
  contentType: string;
  width: number | null;
  height: number | null;
  page: number | null;
  sizeBytes: number;
  sha256: string;
}

/** Variants of the given assets (of the given purposes only, when named), grouped by asset. */
export async function variantsOf(db: Db, assetIds: readonly string[], purposes?: readonly VariantInfo['purpose'][]): Promise<Map<string, VariantInfo[]>> {
  const out = new Map<string, VariantInfo[]>();
  const unique = [...new Set(assetIds)];
  if (unique.length === 0) return out;
  const only = purposes ? sql` and purpose in (${sql.join(purposes)})` : sql``;
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await sql<Omit<AssetVariantsTable, 'created_at'>>`
      select id, asset_id, purpose, content_type, width, height, page, size_bytes, sha256 from asset_variants where asset_id in (${sql.join(unique.slice(i, i + 500))})${only} order by asset_id, purpose, page, width, id`.execute(
      db,
    );
    for (const r of rows.rows) {
      const list = out.get(r.asset_id) ?? [];
      list.push({
        id: r.id,
        assetId: r.asset_id,
        purpose: r.purpose,
        contentType: r.content_type,
        width: r.width,
        height: r.height,
        page: r.page,
        sizeBytes: r.size_bytes,
        sha256: r.sha256,
      });
      out.set(r.asset_id, list);
    }
  }
  return out;
}

export async function assetInfos(db: Db, ids: readonly string[]): Promise<Map<string, AssetInfo>> {
  const out = new Map<string, AssetInfo>();
  if (ids.length === 0) return out;
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 500) {
    const chunk = unique.slice(i, i + 500);
    const rows = await sql<AssetRow>`${ASSET_SELECT[dialectOf(db)]} where a.id in (${sql.join(chunk)})`.execute(db);
    for (const r of rows.rows) out.set(r.id, toInfo(r));
  }
  return out;
}

/** What a screen plays of an asset (no tags, no dates): the manifest's and the resolution's read. */
export type PlayableAsset = Omit<AssetInfo, 'tags' | 'createdAt'>;

/**
 * `assetInfos` without the tags (a subquery per asset: three quarters of the read for a
 * manifest's 500 assets) and the creation date, which playing does not use.
 */
export async function playableAssets(db: Db, ids: readonly string[]): Promise<Map<string, PlayableAsset>> {
  const out = new Map<string, PlayableAsset>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await sql<Omit<AssetRow, 'tags' | 'created_at'>>`
      select id, name, kind, state, duration_ms, width, height, website from assets where id in (${sql.join(unique.slice(i, i + 500))})`.execute(db);
    for (const r of rows.rows)
      out.set(r.id, {
        id: r.id,
        name: r.name,
        kind: r.kind,
        state: r.state,
        durationMs: r.duration_ms,
        width: r.width,
        height: r.height,
        websiteUrl: r.website ? websiteUrlOf(r.website) : null,
      });
  }
  return out;
}

interface AssetRow {
  id: string;
  name: string;
  kind: string;
  state: string;
  duration_ms: number | null;
  width: number | null;
  height: number | null;
  tags: string | null;
  website: string | null;
  created_at: string;
}

const assetSelect = (d: DialectName) =>
  sql.raw(`
  select a.id, a.name, a.kind, a.state, a.duration_ms, a.width, a.height, a.website, a.created_at,
    (select ${sqlText.jsonArrayAgg(d, 't.name')} from asset_tags x join content_tags t on t.id = x.tag_id where x.asset_id = a.id) as tags
  from assets a`);
const ASSET_SELECT = { sqlite: assetSelect('sqlite'), postgres: assetSelect('postgres') };

function toInfo(r: AssetRow): AssetInfo {
  let tags: string[] = [];
  try {
    const parsed = JSON.parse(r.tags ?? '[]');
    if (Array.isArray(parsed)) tags = parsed.map(String);
  } catch {
    /* no tags */
  }
  const websiteUrl = r.website ? websiteUrlOf(r.website) : null;
  return {
    id: r.id,
    name: r.name,
    kind: r.kind,
    state: r.state,
    durationMs: r.duration_ms,
    width: r.width,
    height: r.height,
    tags,
    websiteUrl,
    createdAt: r.created_at,
  };
}

/** A website asset's address from its stored settings (null when none). */
function websiteUrlOf(website: string): string | null {
  try {
    const w = JSON.parse(website) as { url?: unknown } | null;
    return w && typeof w.url === 'string' ? w.url : null;
  } catch {
    return null; // not a website
  }
}

/** The ready assets carrying any of the tags (`lowerTags` lower-cased; matched case-insensitively). */
export async function readyAssetIdsTagged(db: Db, lowerTags: readonly string[]): Promise<string[]> {
  const tagged = await db
    .selectFrom('asset_tags')
    .innerJoin('content_tags', 'content_tags.id', 'asset_tags.tag_id')
    .innerJoin('assets', 'assets.id', 'asset_tags.asset_id')
    .select(['asset_tags.asset_id'])
    .where('assets.state', '=', 'ready')
    .where(sql<string>`lower(content_tags.name)`, 'in', [...lowerTags])
    .execute();
  return tagged.map((r) => r.asset_id);
}

export interface WidgetInfo {
  id: string;
  name: string;
  type: string;
  /** The widget's own default play time in a playlist (settings.durationMs), null: the 10 s default. */
  durationMs: number | null;
}

/** Name, type and default duration of the given widgets (ids that name no widget are left out). */
export async function widgetInfos(db: Db, ids: readonly string[]): Promise<Map<string, WidgetInfo>> {
  const out = new Map<string, WidgetInfo>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await sql<{ id: string; name: string; type: string; duration: unknown }>`
      select id, name, type, ${sql.raw(sqlText.jsonNumber(dialectOf(db), 'settings', '$.durationMs'))} as duration from widgets where id in (${sql.join(unique.slice(i, i + 500))})`.execute(
      db,
    );
    for (const r of rows.rows)
      out.set(r.id, {
        id: r.id,
        name: r.name,
        type: r.type,
        durationMs: typeof r.duration === 'number' && Number.isInteger(r.duration) && r.duration > 0 ? r.duration : null,
      });
  }
  return out;
}
