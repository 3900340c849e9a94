import { z } from 'zod';
import type { DevicePrincipal } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import { defineRoute, uuidParam } from '../../platform/http/route.js';
import { sendFile } from '../../platform/http/send-file.js';
import { screenMayDownload } from './hooks.js';
import { readyVariantOf } from './media.repo.js';

const params = z.object({ assetId: uuidParam, variantId: uuidParam });

/** A screen downloads a media variant its manifest lists (device credential); Range and ETag for resumable caching. */
export const playerMediaRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/player/assets/{assetId}/variants/{variantId}',
    auth: 'device',
    deviceIdOnly: true,
    tags: ['Player'],
    summary: 'Download a media variant (Range, If-Range, ETag = sha256, 304); HEAD for its size and hash',
    params,
    responses: {
      416: { description: 'range_not_satisfiable: Content-Range gives the length' },
      200: {
        description: 'The bytes, as the variant’s content type',
        content: { 'image/*': {}, 'video/*': {}, 'audio/*': {}, 'application/pdf': {} },
        headers: { ETag: { description: 'The sha256, quoted' } },
      },
      206: { description: 'A range of the bytes', content: { 'image/*': {}, 'video/*': {}, 'audio/*': {}, 'application/pdf': {} } },
      304: { description: 'Not modified' },
    },
    handler: async (ctx, { params, auth }) => {
      const screenId = (auth as DevicePrincipal).screenId;
      const variant = await readyVariantOf(ctx.deps.db, params.assetId, params.variantId);
      if (!variant || !(await screenMayDownload(ctx.deps, screenId, params.assetId))) throw new ApiError('not_found', 'No such media for this screen');
      await sendFile(ctx, {
        path: ctx.media.store.pathOf(variant.sha256),
        contentType: variant.content_type,
        etag: variant.sha256,
        // Content never changes under a variant id: players and proxies may cache it for good.
        cacheControl: 'private, max-age=31536000, immutable',
      });
    },
  }),
];
