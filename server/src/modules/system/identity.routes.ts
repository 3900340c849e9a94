import { z } from 'zod';
import { ensureInstanceId } from '../../platform/db/meta.js';
import { defineRoute, ok } from '../../platform/http/route.js';
import { API_VERSION, SERVER_VERSION } from '../../version.js';
import { effectivePublicUrl, getSettings } from './settings.js';

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
      const settings = await getSettings(ctx.deps.db);
      return ok({
        product: 'placard',
        name: settings.serverName,
        version: SERVER_VERSION,
        apiVersion: API_VERSION,
        instanceId: await ensureInstanceId(ctx.deps.db),
        publicUrl: effectivePublicUrl(ctx.deps.config.publicUrl, settings, `${ctx.protocol}://${ctx.host}`),
      });
    },
  }),
];
