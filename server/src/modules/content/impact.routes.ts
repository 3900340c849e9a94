import { z } from 'zod';
import { defineRoute, ok, uuidParam } from '../../platform/http/route.js';
import { assetUsages } from './content.hooks.js';
import { screensDependingOn, type DepRef } from './changes.js';
import { UsageDto, type Usage } from './common.js';
import { fleetExists } from './screen-context.js';
import { playlistUsage } from './playlists.repo.js';
import { schedulesShowing } from '../schedules/index.js';

const ids = z.array(uuidParam).max(500).optional();

/**
 * What an action would touch, asked before it is done (archive, delete, pause, publish...):
 * the screens showing any of the named things now (their current manifest uses them) and
 * what uses them (playlists and layouts an asset is in; playlists, layouts, schedules and
 * default-playlist assignments of a playlist; schedules of a layout).
 */
export const impactRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/content/impact',
    auth: 'session',
    minRole: 'viewer',
    extension: true,
    tags: ['Content'],
    summary: 'Which screens show these assets, playlists, layouts or schedules now, and what uses them',
    description:
      'For confirmations before archiving, deleting or pausing. `screens`: screens whose current manifest uses any of them (a screen that never fetched a manifest is not counted). `usedBy`: `{type, id, name}` of what uses them (`playlist`, `layout`, `schedule`, `screen-assignment`, `group-assignment`), without the named things themselves.',
    body: z
      .object({ assetIds: ids, playlistIds: ids, layoutIds: ids, scheduleIds: ids })
      .strict()
      .refine(
        (b) => (b.assetIds?.length ?? 0) + (b.playlistIds?.length ?? 0) + (b.layoutIds?.length ?? 0) + (b.scheduleIds?.length ?? 0) > 0,
        'name at least one asset, playlist, layout or schedule',
      ),
    responses: {
      200: {
        description: 'Screens showing them, and what uses them',
        data: z.object({ screens: z.array(z.object({ id: z.string(), name: z.string() })), usedBy: z.array(UsageDto) }),
      },
    },
    handler: async (ctx, { body }) => {
      const db = ctx.deps.db;
      const refs: DepRef[] = [
        ...(body.assetIds ?? []).map((id) => ({ kind: 'asset' as const, id })),
        ...(body.playlistIds ?? []).map((id) => ({ kind: 'playlist' as const, id })),
        ...(body.layoutIds ?? []).map((id) => ({ kind: 'layout' as const, id })),
        ...(body.scheduleIds ?? []).map((id) => ({ kind: 'schedule' as const, id })),
      ];
      const screenIds = await screensDependingOn(db, refs);
      let screens: { id: string; name: string }[] = [];
      if (screenIds.length && (await fleetExists(db))) {
        screens = await db.selectFrom('screens').select(['id', 'name']).where('id', 'in', screenIds).orderBy('name').orderBy('id').execute();
      }
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
      return ok({ screens, usedBy });
    },
  }),
];
