/**
 * What content needs to know about things other modules own (assets now; widgets and
 * campaigns later). One place, so a change in the media module touches one file here.
 */
import { existsSync } from 'node:fs';
import { sql } from 'kysely';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { MediaStore } from '../../platform/media/store.js';

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

/** Variants of the given assets, grouped by asset. */
export async function variantsOf(db: Db, assetIds: readonly string[]): Promise<Map<string, VariantInfo[]>> {
  const out = new Map<string, VariantInfo[]>();
  const unique = [...new Set(assetIds)];
  if (unique.length === 0) return out;
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await sql<{
      id: string;
      asset_id: string;
      purpose: VariantInfo['purpose'];
      content_type: string;
      width: number | null;
      height: number | null;
      page: number | null;
      size_bytes: number;
      sha256: string;
    }>`
      select id, asset_id, purpose, content_type, width, height, page, size_bytes, sha256 from asset_variants where asset_id in (${sql.join(unique.slice(i, i + 500))}) order by asset_id, purpose, page, width, id`.execute(
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

/** Where the media store keeps a file (content-addressed, as the media module writes it). */
export function mediaFile(dataDir: string, sha256: string): string {
  return new MediaStore(dataDir).pathOf(sha256);
}

/** How long an item plays when it gives no duration: images, pages, PDFs... */
export const DEFAULT_ITEM_DURATION_MS = 10_000;
/** How long a website item plays when it gives no duration (a page needs time to load and be read). */
export const WEBSITE_DEFAULT_DURATION_MS = 30_000;

/**
 * An item's effective duration, the one rule the API, the playlist's length and the
 * manifest all use: its own, else a video's or audio's length, else 30 s for a website,
 * else 10 s.
 */
export function effectiveDuration(own: number | null, asset: Pick<AssetInfo, 'kind' | 'durationMs'> | undefined): number {
  if (own !== null) return own;
  if (asset && (asset.kind === 'video' || asset.kind === 'audio') && asset.durationMs && asset.durationMs > 0) return asset.durationMs;
  if (asset?.kind === 'website') return WEBSITE_DEFAULT_DURATION_MS;
  return DEFAULT_ITEM_DURATION_MS;
}

export async function assetInfos(db: Db, ids: readonly string[]): Promise<Map<string, AssetInfo>> {
  const out = new Map<string, AssetInfo>();
  if (ids.length === 0) return out;
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 500) {
    const chunk = unique.slice(i, i + 500);
    const rows = await sql<AssetRow>`${ASSET_SELECT} where a.id in (${sql.join(chunk)})`.execute(db);
    for (const r of rows.rows) out.set(r.id, toInfo(r));
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

const ASSET_SELECT = sql`
  select a.id, a.name, a.kind, a.state, a.duration_ms, a.width, a.height, a.website, a.created_at,
    (select json_group_array(t.name) from asset_tags x join content_tags t on t.id = x.tag_id where x.asset_id = a.id) as tags
  from assets a`;

function toInfo(r: AssetRow): AssetInfo {
  let tags: string[] = [];
  try {
    const parsed = JSON.parse(r.tags ?? '[]');
    if (Array.isArray(parsed)) tags = parsed.map(String);
  } catch {
    /* no tags */
  }
  let websiteUrl: string | null = null;
  try {
    const w = r.website ? (JSON.parse(r.website) as { url?: unknown }) : null;
    if (w && typeof w.url === 'string') websiteUrl = w.url;
  } catch {
    /* not a website */
  }
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

/** Ready assets carrying the rule's tags (any or all of them, case-insensitive). */
export async function assetsWithTags(db: Db, tags: readonly string[], match: 'any' | 'all'): Promise<AssetInfo[]> {
  if (tags.length === 0) return [];
  const wanted = [...new Set(tags.map((t) => t.toLowerCase()))];
  const tagged = await db
    .selectFrom('asset_tags')
    .innerJoin('content_tags', 'content_tags.id', 'asset_tags.tag_id')
    .innerJoin('assets', 'assets.id', 'asset_tags.asset_id')
    .select(['asset_tags.asset_id'])
    .where('assets.state', '=', 'ready')
    .where(sql<string>`lower(content_tags.name)`, 'in', wanted)
    .execute();
  const infos = await assetInfos(db, [...new Set(tagged.map((r) => r.asset_id))]);
  return [...infos.values()].filter((a) => {
    const have = new Set(a.tags.map((t) => t.toLowerCase()));
    return match === 'all' ? wanted.every((t) => have.has(t)) : wanted.some((t) => have.has(t));
  });
}

/** The file of an asset's thumbnail variant, when it has one on disk. */
export async function assetThumbnailFile(deps: AppDeps, assetId: string): Promise<string | null> {
  const variants = (await variantsOf(deps.db, [assetId])).get(assetId) ?? [];
  const pick =
    variants.find((v) => v.purpose === 'thumbnail') ??
    variants.find((v) => v.purpose === 'poster') ??
    variants.find((v) => v.purpose === 'player' && v.contentType.startsWith('image/'));
  if (!pick) return null;
  const file = mediaFile(deps.config.dataDir, pick.sha256);
  return existsSync(file) ? file : null;
}
