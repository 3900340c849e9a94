/**
 * What content needs to know about things other modules own (assets now; widgets and
 * campaigns later). One place, so a change in the media module touches one file here.
 */
import { sql } from 'kysely';
import type { AppDeps } from '../../app.js';
import type { Db } from '../../platform/db/database.js';

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

const hasAssets = new WeakMap<Db, boolean>();

/** Until the media module's tables exist, there are no assets to point at. */
async function assetsTableExists(db: Db): Promise<boolean> {
  if (hasAssets.get(db)) return true;
  const row = await sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'table' and name = 'assets'`.execute(db);
  const found = Number(row.rows[0]?.n ?? 0) > 0;
  if (found) hasAssets.set(db, true);
  return found;
}

export async function assetInfos(db: Db, ids: readonly string[]): Promise<Map<string, AssetInfo>> {
  const out = new Map<string, AssetInfo>();
  if (ids.length === 0 || !(await assetsTableExists(db))) return out;
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 500) {
    const chunk = unique.slice(i, i + 500);
    const rows = await sql<{ id: string; name: string; kind: string; state: string; duration_ms: number | null; width: number | null; height: number | null; tags: string | null; created_at: string }>`
      select id, name, kind, state, duration_ms, width, height, tags, created_at from assets where id in (${sql.join(chunk)})`.execute(db);
    for (const r of rows.rows) out.set(r.id, toInfo(r));
  }
  return out;
}

function toInfo(r: { id: string; name: string; kind: string; state: string; duration_ms: number | null; width: number | null; height: number | null; tags: string | null; created_at: string }): AssetInfo {
  let tags: string[] = [];
  try {
    const parsed = JSON.parse(r.tags ?? '[]');
    if (Array.isArray(parsed)) tags = parsed.map(String);
  } catch {
    /* no tags */
  }
  return { id: r.id, name: r.name, kind: r.kind, state: r.state, durationMs: r.duration_ms, width: r.width, height: r.height, tags, createdAt: r.created_at };
}

/** Ready assets carrying the rule's tags (any or all of them). */
export async function assetsWithTags(db: Db, tags: readonly string[], match: 'any' | 'all'): Promise<AssetInfo[]> {
  if (tags.length === 0 || !(await assetsTableExists(db))) return [];
  const rows = await sql<{ id: string; name: string; kind: string; state: string; duration_ms: number | null; width: number | null; height: number | null; tags: string | null; created_at: string }>`
    select id, name, kind, state, duration_ms, width, height, tags, created_at from assets where state = 'ready'`.execute(db);
  const wanted = tags.map((t) => t.toLowerCase());
  return rows.rows.map(toInfo).filter((a) => {
    const have = new Set(a.tags.map((t) => t.toLowerCase()));
    return match === 'all' ? wanted.every((t) => have.has(t)) : wanted.some((t) => have.has(t));
  });
}

/** The file of an asset's thumbnail variant, when it has one on disk. */
export async function assetThumbnailFile(_deps: AppDeps, _assetId: string): Promise<string | null> {
  return null; // wired to the media module's variants once they exist
}
