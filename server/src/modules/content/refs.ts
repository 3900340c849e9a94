/**
 * What content needs to know about things other modules own (assets, widgets; campaigns
 * later). One place, so a change in the media module touches these two files
 * here: the rules content applies (this one) and the queries (refs.repo.ts).
 */
import { existsSync } from 'node:fs';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { MediaStore } from '../../platform/media/store.js';
import { type AssetInfo, assetInfos, readyAssetIdsTagged, variantsOf } from './refs.repo.js';

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

/**
 * A widget item's effective duration, the same way everywhere (the API, the playlist's length,
 * the manifest): its own, else the widget's default (`durationMs`), else 10 s.
 */
export function widgetDuration(own: number | null, widget: { durationMs: number | null } | undefined): number {
  return own ?? widget?.durationMs ?? DEFAULT_ITEM_DURATION_MS;
}

/** Ready assets carrying the rule's tags (any or all of them, case-insensitive). */
export async function assetsWithTags(db: Db, tags: readonly string[], match: 'any' | 'all'): Promise<AssetInfo[]> {
  if (tags.length === 0) return [];
  const wanted = [...new Set(tags.map((t) => t.toLowerCase()))];
  const infos = await assetInfos(db, [...new Set(await readyAssetIdsTagged(db, wanted))]);
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
