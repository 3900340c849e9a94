import type { Db } from '../../platform/db/database.js';
import { schedulesShowing } from '../schedules/index.js';
import type { Usage } from './common.js';
import { assetUsages } from './content.hooks.js';
import { screensDependingOn, type DepRef } from './manifest.repo.js';
import { playlistUsage } from './playlists.repo.js';
import { screenNames } from './screen-context.repo.js';

export interface ImpactRequest {
  assetIds?: string[] | undefined;
  playlistIds?: string[] | undefined;
  layoutIds?: string[] | undefined;
  scheduleIds?: string[] | undefined;
}

/**
 * What an action would touch, asked before it is done (archive, delete, pause, publish...):
 * the screens showing any of the named things now (their current manifest uses them) and
 * what uses them (playlists and layouts an asset is in; playlists, layouts, schedules and
 * default-playlist assignments of a playlist; schedules of a layout), without the named
 * things themselves.
 */
export async function contentImpact(db: Db, body: ImpactRequest): Promise<{ screens: { id: string; name: string }[]; usedBy: Usage[] }> {
  const refs: DepRef[] = [
    ...(body.assetIds ?? []).map((id) => ({ kind: 'asset' as const, id })),
    ...(body.playlistIds ?? []).map((id) => ({ kind: 'playlist' as const, id })),
    ...(body.layoutIds ?? []).map((id) => ({ kind: 'layout' as const, id })),
    ...(body.scheduleIds ?? []).map((id) => ({ kind: 'schedule' as const, id })),
  ];
  const screens = await screenNames(db, await screensDependingOn(db, refs));
  const named = new Set(refs.map((r) => r.id));
  const seen = new Set<string>();
  const usedBy: Usage[] = [];
  const add = (u: Usage) => {
    const key = `${u.type}:${u.id}`;
    if (named.has(u.id) || seen.has(key)) return;
    seen.add(key);
    usedBy.push(u);
  };
  for (const u of await assetUsages(db, body.assetIds ?? [])) add({ type: u.type as Usage['type'], id: u.id, name: u.name });
  for (const id of body.playlistIds ?? []) for (const u of await playlistUsage(db, id)) add(u);
  for (const id of body.layoutIds ?? []) for (const s of await schedulesShowing(db, 'layout', id)) add({ type: 'schedule', id: s.id, name: s.name });
  return { screens, usedBy };
}
