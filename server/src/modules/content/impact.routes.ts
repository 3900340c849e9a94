import { z } from 'zod';
import { defineRoute, ok, uuidParam } from '../../platform/http/route.js';
import { UsageDto } from './common.js';
import { contentImpact } from './impact.service.js';

const ids = z.array(uuidParam).max(500).optional();

/** What an action would touch, asked before it is done (impact.service.ts). */
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
    handler: async (ctx, { body }) => ok(await contentImpact(ctx.deps.db, body)),
  }),
];
