import { z } from 'zod';
import { ensureInstanceId } from '../../platform/db/meta.js';
import { defineRoute, ok } from '../../platform/http/route.js';
import { API_VERSION, SERVER_VERSION } from '../../version.js';

export const identityRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/system/identity',
    auth: 'public',
    tags: ['System'],
    summary: 'Which server this is: what a player or installer checks before trusting it',
    responses: {
      200: {
        description: 'Identity of this installation',
        data: z.object({
          product: z.literal('placard'),
          name: z.string(),
          version: z.string(),
          apiVersion: z.string(),
          instanceId: z.string(),
          publicUrl: z.string(),
        }),
      },
    },
    handler: async (ctx) => {
      const rows = await ctx.deps.db.selectFrom('meta').select(['key', 'value']).where('key', 'in', ['instance_id', 'server_name']).execute();
      const meta = Object.fromEntries(rows.map((r) => [r.key, r.value]));
      return ok({
        product: 'placard',
        name: meta.server_name ?? 'Placard',
        version: SERVER_VERSION,
        apiVersion: API_VERSION,
        instanceId: meta.instance_id ?? (await ensureInstanceId(ctx.deps.db)),
        publicUrl: ctx.deps.config.publicUrl ?? `${ctx.protocol}://${ctx.host}`,
      });
    },
  }),
];
