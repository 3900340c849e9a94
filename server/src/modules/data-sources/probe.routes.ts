import { z } from 'zod';
import { defineRoute, ok } from '../../platform/http/route.js';
import { TAGS } from './data-sources.schemas.js';
import { envOf } from './data-sources.service.js';
import { IdParams, InspectDto, PreviewDto, ProbeBody, ProviderParams } from './data-sources.schemas.js';
import { fieldsOf, type ProbeResult, probeSaved, probeUnsaved } from './probe.service.js';
import { providerOrNotFound } from './data-sources.service.js';

/**
 * Preview and inspect: run a provider once and answer what it gives, storing nothing. A
 * fetch or parse that fails is an answer too (200 with `error` and the attempt): the
 * request was fine, the document was not.
 */

const PreviewBody = ProbeBody.extend({ limit: z.number().int().min(1).max(200).default(20).describe('Rows answered (the first ones)') });

const providerNotFound = { description: 'not_found: no provider of that id (the message and details.providers list them)' };

function preview(result: ProbeResult, limit: number) {
  const d = result.dataset;
  return {
    columns: d?.columns ?? [],
    rows: d?.rows.slice(0, limit) ?? [],
    rowCount: d?.rows.length ?? 0,
    warnings: d?.warnings ?? [],
    attempt: result.attempt ? { ...result.attempt, outcome: result.error ? ('failed' as const) : ('data' as const) } : null,
    error: result.error,
  };
}

function inspect(result: ProbeResult) {
  const d = result.dataset;
  return {
    fields: d ? fieldsOf(d) : [],
    rowCount: d?.rows.length ?? 0,
    warnings: d?.warnings ?? [],
    attempt: result.attempt ? { ...result.attempt, outcome: result.error ? ('failed' as const) : ('data' as const) } : null,
    error: result.error,
  };
}

export const probeRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/data-sources/{provider}/preview',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Run an unsaved config end to end: the first rows and the warnings; nothing is stored',
    description:
      'The config is validated as for a create (400 with the issues). With `sourceId`, `{"set": true}` at a secret uses that source’s stored secret (editing it). A document that cannot be fetched or read answers 200 with `error`.',
    params: ProviderParams,
    body: PreviewBody,
    responses: { 200: { description: 'What the config gives now', data: PreviewDto }, 404: providerNotFound },
    handler: async (ctx, { params, body, auth }) => {
      const provider = providerOrNotFound(params.provider);
      return ok(preview(await probeUnsaved(envOf(ctx, auth), provider, body), body.limit));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/data-sources/{provider}/inspect',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Fetch a sample with an unsaved config: the fields found, their types and example values',
    params: ProviderParams,
    body: ProbeBody,
    responses: { 200: { description: 'The fields', data: InspectDto }, 404: providerNotFound },
    handler: async (ctx, { params, body, auth }) => {
      const provider = providerOrNotFound(params.provider);
      return ok(inspect(await probeUnsaved(envOf(ctx, auth), provider, body)));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/data-sources/{id}/inspect',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'Fetch a sample of a saved source now: the fields found, their types and example values; nothing is stored',
    params: IdParams,
    responses: { 200: { description: 'The fields', data: InspectDto }, 403: { description: 'forbidden: the caller may not read this source' } },
    handler: async (ctx, { params, auth }) => ok(inspect(await probeSaved(envOf(ctx, auth), params.id))),
  }),
];
