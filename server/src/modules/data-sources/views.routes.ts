import { z } from 'zod';
import { defineRoute, ok } from '../../platform/http/route.js';
import { ColumnDto, IdParams, RowSchema, TAGS } from './data-sources.schemas.js';
import { envOf } from './data-sources.service.js';
import { viewSchema } from './views.js';
import { previewView } from './views.service.js';

const ViewPreviewDto = z.object({
  columns: z.array(ColumnDto).describe('The selected columns, in order'),
  rows: z.array(RowSchema).describe('The rows the view gives now'),
  revision: z.number().int().nullable().describe('The data revision they come from; null before the first data'),
  fetchedAt: z.string().nullable().describe('When that data was fetched or saved'),
});

export const viewRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/data-sources/{id}/views/preview',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'The rows a view (filter, sort, limit, fields) gives now, from the source’s current data',
    description:
      'Relative dates (today, tomorrow, {next: {days: N}}, ...) are read in the source’s time zone. Every mistake in the view (an unknown field, an operator the column’s type does not take, a value of the wrong kind) is listed in one 400.',
    params: IdParams,
    body: viewSchema,
    responses: {
      200: { description: 'The view’s rows', data: ViewPreviewDto },
      403: { description: 'forbidden: the caller may not read this source' },
    },
    handler: async (ctx, { params, body, auth }) => ok(await previewView(envOf(ctx, auth), params.id, body)),
  }),
];
