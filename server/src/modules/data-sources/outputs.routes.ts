import { z } from 'zod';
import type { DevicePrincipal } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import { defineRoute, ok, uuidParam } from '../../platform/http/route.js';
import { etagMatches } from '../../platform/http/send-file.js';
import { IdParams, TAGS } from './data-sources.schemas.js';
import { envOf } from './data-sources.service.js';
import { forceRebuild, listOutputs, outputForScreen } from './outputs.service.js';
import { viewSchema } from './views.js';

const UsedBy = z.array(z.object({ type: z.string(), id: z.string(), name: z.string().nullable() }));

const OutputsDto = z.object({
  keys: z
    .array(
      z.object({
        viewKey: z.string().nullable().describe('null: the whole source'),
        view: viewSchema.nullable(),
        createdAt: z.string(),
        lastUsedAt: z.string().describe('The last manifest build that asked for it; unused for 7 days, it is dropped'),
      }),
    )
    .describe('What screens use: the whole source and the views placed on screens'),
  outputs: z
    .array(
      z.object({
        id: z.string(),
        viewKey: z.string().nullable(),
        revision: z.number().int().describe('The data revision it was built from'),
        sha256: z.string(),
        sizeBytes: z.number().int(),
        rowCount: z.number().int(),
        generatedAt: z.string(),
        expiresAt: z.string().nullable().describe('A view with relative dates is built again after this (the next midnight)'),
        current: z.boolean().describe('The version manifests list now; older ones stay for players on the previous manifest'),
        url: z.string().describe('Where a screen downloads it (device credential)'),
      }),
    )
    .describe('Every kept version, newest first per view'),
  usedBy: UsedBy.describe('Where the source is used'),
});

export const outputRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/data-sources/{id}/outputs',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'The documents players download for this source: versions, sizes, and who uses them',
    params: IdParams,
    responses: { 200: { description: 'Outputs', data: OutputsDto }, 403: { description: 'forbidden: the caller may not read this source' } },
    handler: async (ctx, { params, auth }) => ok(await listOutputs(envOf(ctx, auth), params.id)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/data-sources/{id}/outputs/rebuild',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Build the outputs again now (the whole source and every view in use), a new version each',
    description: 'Screens using an output are told (`manifest.changed`). Answers the outputs as GET does.',
    params: IdParams,
    responses: { 200: { description: 'Outputs after the rebuild', data: OutputsDto }, 403: { description: 'forbidden: the caller may not edit this source' } },
    handler: async (ctx, { params, auth }) => ok(await forceRebuild(envOf(ctx, auth), params.id)),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/player/data-outputs/{outputId}',
    auth: 'device',
    deviceIdOnly: true,
    tags: ['Player'],
    summary: 'Download a data output the screen’s manifest lists (`data[].url`); ETag = its sha256, 304; HEAD for size',
    description:
      'The JSON document `{sourceId, viewKey, revision, generatedAt, columns, rows}`. 404 for an output of a source the screen’s current manifest does not use.',
    params: z.object({ outputId: uuidParam }),
    responses: {
      200: { description: 'The document', content: { 'application/json': {} }, headers: { ETag: { description: 'The sha256, quoted' } } },
      304: { description: 'Not modified' },
    },
    handler: async (ctx, { params, auth }) => {
      const found = await outputForScreen(ctx.deps, (auth as DevicePrincipal).screenId, params.outputId);
      if (!found) throw new ApiError('not_found', 'No such data output for this screen');
      ctx.set('ETag', `"${found.row.sha256}"`);
      // A version never changes under its id.
      ctx.set('Cache-Control', 'private, max-age=31536000, immutable');
      if (etagMatches(ctx.get('if-none-match'), `"${found.row.sha256}"`)) {
        ctx.status = 304;
        return;
      }
      ctx.type = 'application/json';
      ctx.body = found.bytes;
    },
  }),
];
