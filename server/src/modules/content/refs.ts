/**
 * What content needs to know about things other modules own (assets now; widgets and
 * campaigns later). One place, so a change in the media module touches one file here.
 */
import { existsSync } from 'node:fs';
import { sql } from 'kysely';
import type { AppDeps } from '../../app.js';
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
  createdAt: string;
}

/** Seconds an item plays when it gives no duration: images, pages, PDFs... */
export const DEFAULT_ITEM_DURATION_MS = 10_000;

/** An item's effective duration: its own, else the video's or audio's length, else the default. */
export function effectiveDuration(own: number | null, asset: Pick<AssetInfo, 'kind' | 'durationMs'> | undefined): number {
  if (own !== null) return own;
  if (asset && (asset.kind === 'video' || asset.kind === 'audio') && asset.durationMs && asset.durationMs > 0) return asset.durationMs;
  return DEFAULT_ITEM_DURATION_MS;
}

type AssetRow = { id: string; name: string; kind: string; state: string; duration_ms: number | null; width: number | null; height: number | null; created_at: string };

/** Tag names of the given assets (the media module keeps them in asset_tags). */
async function tagsOf(db: Db, ids: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const rows = await db
      .selectFrom('asset_tags')
      .innerJoin('content_tags', 'content_tags.id', 'asset_tags.tag_id')
      .select(['asset_tags.asset_id', 'content_tags.name'])
      .where('asset_tags.asset_id', 'in', chunk)
      .orderBy('content_tags.name')
      .execute();
    for (const r of rows) {
      const list = out.get(r.asset_id);
      if (list) list.push(r.name);
      else out.set(r.asset_id, [r.name]);
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
    const rows = await db.selectFrom('assets').select(['id', 'name', 'kind', 'state', 'duration_ms', 'width', 'height', 'created_at']).where('id', 'in', chunk).execute();
    const tags = await tagsOf(db, rows.map((r) => r.id));
    for (const r of rows) out.set(r.id, toInfo(r, tags.get(r.id) ?? []));
  }
  return out;
}

function toInfo(r: AssetRow, tags: string[]): AssetInfo {
  return { id: r.id, name: r.name, kind: r.kind, state: r.state, durationMs: r.duration_ms, width: r.width, height: r.height, tags, createdAt: r.created_at };
}

/** Ready assets carrying the rule's tags (any or all of them). */
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
  const ids = [...new Set(tagged.map((r) => r.asset_id))];
  const infos = await assetInfos(db, ids);
  return [...infos.values()].filter((a) => {
    const have = new Set(a.tags.map((t) => t.toLowerCase()));
    return match === 'all' ? wanted.every((t) => have.has(t)) : wanted.some((t) => have.has(t));
  });
}

/** The file of an asset's thumbnail variant, when it has one on disk. */
export async function assetThumbnailFile(deps: AppDeps, assetId: string): Promise<string | null> {
  const v = await deps.db.selectFrom('asset_variants').select('sha256').where('asset_id', '=', assetId).where('purpose', '=', 'thumbnail').executeTakeFirst();
  if (!v) return null;
  const file = new MediaStore(deps.config.dataDir).pathOf(v.sha256);
  return existsSync(file) ? file : null;
}
