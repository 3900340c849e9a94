/**
 * The screens module's `nowShowing` (screens/now-showing.ts): names for what a player
 * reported, and, for a screen that reported nothing current, what the resolver (the same
 * one the manifest and the preview use) says plays now.
 */
import type { Db } from '../../platform/db/database.js';
import type { NowShowing, NowShowingRequest } from '../screens/now-showing.js';
import { screenContext } from './fleet.js';
import { resolveSubject } from './resolve.js';

async function namesOf(db: Db, table: 'assets' | 'playlists' | 'layouts' | 'schedules', ids: Set<string>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (ids.size === 0) return out;
  for (const r of await db.selectFrom(table).select(['id', 'name']).where('id', 'in', [...ids]).execute()) out.set(r.id, r.name);
  return out;
}

export async function describeNowShowing(db: Db, requests: readonly NowShowingRequest[], now: number): Promise<Map<string, NowShowing | null>> {
  const found = new Map<string, Omit<NowShowing, 'assetName' | 'playlistName' | 'layoutName' | 'scheduleName'> | null>();
  for (const q of requests) {
    if (q.reported) {
      const { reportedAt, ...ids } = q.reported;
      found.set(q.screenId, { planned: false, reportedAt, ...ids });
      continue;
    }
    const screen = await screenContext(db, q.screenId);
    if (!screen) {
      found.set(q.screenId, null);
      continue;
    }
    const seg = (await resolveSubject(db, { kind: 'screen', screen }, now, now + 1000)).segments[0];
    const content = seg?.content;
    if (!seg || !content || content.type === 'campaign') {
      found.set(q.screenId, null);
      continue;
    }
    found.set(q.screenId, {
      planned: true,
      reportedAt: null,
      assetId: null,
      playlistId: content.type === 'playlist' ? content.id : null,
      layoutId: content.type === 'layout' ? content.id : null,
      scheduleId: seg.source.type === 'schedule' ? seg.source.id : null,
    });
  }
  const ids = { assets: new Set<string>(), playlists: new Set<string>(), layouts: new Set<string>(), schedules: new Set<string>() };
  for (const f of found.values()) {
    if (!f) continue;
    if (f.assetId) ids.assets.add(f.assetId);
    if (f.playlistId) ids.playlists.add(f.playlistId);
    if (f.layoutId) ids.layouts.add(f.layoutId);
    if (f.scheduleId) ids.schedules.add(f.scheduleId);
  }
  const [assets, playlists, layouts, schedules] = await Promise.all([namesOf(db, 'assets', ids.assets), namesOf(db, 'playlists', ids.playlists), namesOf(db, 'layouts', ids.layouts), namesOf(db, 'schedules', ids.schedules)]);
  const out = new Map<string, NowShowing | null>();
  for (const [screenId, f] of found) {
    out.set(
      screenId,
      f && {
        ...f,
        assetName: f.assetId ? (assets.get(f.assetId) ?? null) : null,
        playlistName: f.playlistId ? (playlists.get(f.playlistId) ?? null) : null,
        layoutName: f.layoutId ? (layouts.get(f.layoutId) ?? null) : null,
        scheduleName: f.scheduleId ? (schedules.get(f.scheduleId) ?? null) : null,
      },
    );
  }
  return out;
}
