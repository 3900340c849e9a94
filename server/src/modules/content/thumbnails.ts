import type { AppDeps } from '../../platform/app-deps.js';
import { MAX_NESTING } from './plan.js';
import type { Zone } from './layouts.repo.js';
import { enabledItemRefs } from './playlists.repo.js';
import { assetThumbnailFile } from './refs.js';

/** The thumbnail file that stands for a zone: its asset's, or its playlist's first asset's. */
export async function thumbnailFor(deps: AppDeps, content: Zone['content']): Promise<string | null> {
  if (!content) return null;
  if (content.type === 'asset') return assetThumbnailFile(deps, content.assetId);
  if (content.type !== 'playlist') return null;
  const seen = new Set<string>();
  let playlistId: string | undefined = content.playlistId;
  for (let depth = 0; playlistId && depth < MAX_NESTING && !seen.has(playlistId); depth++) {
    seen.add(playlistId);
    const items = await enabledItemRefs(deps.db, playlistId);
    for (const item of items) {
      if (!item.asset_id) continue;
      const file = await assetThumbnailFile(deps, item.asset_id);
      if (file) return file;
    }
    playlistId = items.find((i) => i.child_playlist_id)?.child_playlist_id ?? undefined;
  }
  return null;
}
