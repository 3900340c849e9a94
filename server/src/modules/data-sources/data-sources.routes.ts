import { z } from 'zod';
import { pageOf, pageQuery } from '../../platform/http/pagination.js';
import { checkRevision, etagOf } from '../../platform/http/revision.js';
import { created, defineRoute, noContent, ok } from '../../platform/http/route.js';
import { listSourceRows } from './data-sources.repo.js';
import { CreateBody, DataSourceDto, TAGS, DiagnosticsDto, IdParams, PatchBody, ProviderField } from './data-sources.schemas.js';
import { createSource, diagnostics, duplicateSource, type Env, envOf, patchSource, removeSource, sourceDto, sourceDtos } from './data-sources.service.js';

const etag = { headers: { ETag: { description: 'The source’s revision; send it back in If-Match' } } };
const forbidden = (what: string) => ({ description: `forbidden: ${what}` });

async function reply(env: Env, id: string, status: 200 | 201 = 200) {
  const dto = await sourceDto(env, id);
  return (status === 201 ? created : ok)(dto, etagOf(dto.revision));
}

export const dataSourceRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/data-sources',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'List data sources by name',
    description: 'Every source, with its state; `myAccess` says what the caller may do with each.',
    query: pageQuery.extend({ q: z.string().max(200).optional(), provider: ProviderField.optional() }),
    responses: { 200: { description: 'Data sources', data: pageOf(DataSourceDto) } },
    handler: async (ctx, { query, auth }) => {
      const page = await listSourceRows(ctx.deps.db, query);
      return ok({ items: await sourceDtos(envOf(ctx, auth), page.items), nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/data-sources',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Create a data source',
    description:
      'The config is validated by the provider’s schema (provider-catalog): 400 with the issues. Secrets are sealed at rest and answered as `{"set": true}`. A remote source is fetched by the refresh within seconds; a table takes its `rows` here. The caller owns the source.',
    body: CreateBody,
    responses: { 201: { description: 'The source', data: DataSourceDto, ...etag } },
    handler: async (ctx, { body, auth }) => {
      const env = envOf(ctx, auth);
      return reply(env, await createSource(env, body), 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/data-sources/{id}',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'A data source',
    params: IdParams,
    responses: { 200: { description: 'The source', data: DataSourceDto, ...etag } },
    handler: async (ctx, { params, auth }) => reply(envOf(ctx, auth), params.id),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/data-sources/{id}',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'Change a data source (name, config, refresh interval, time zone; a table’s rows)',
    description:
      'Needs editor access to the source (a grant may give it to a viewer, or take it from an editor). `config` replaces the config; `{"set": true}` at a secret keeps the stored one, unless the address moved to another site. A changed config is fetched again soon. Send `If-Match: <revision>` to refuse the change (412) when someone else changed the source meanwhile.',
    params: IdParams,
    body: PatchBody,
    ifMatch: true,
    responses: {
      200: { description: 'The source', data: DataSourceDto, ...etag },
      403: forbidden('the caller’s access to this source is below editor'),
      409: { description: 'conflict: the source’s provider is no longer offered' },
    },
    handler: async (ctx, { params, body, auth }) => {
      const env = envOf(ctx, auth);
      await patchSource(env, params.id, body, (revision) => checkRevision(ctx, revision));
      return reply(env, params.id);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/data-sources/{id}',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'Delete a data source that nothing uses',
    description: 'Needs owner access to the source (its maker, a grant, or an admin). Answers 409 naming what still uses it (`details.usedBy`).',
    params: IdParams,
    ifMatch: true,
    responses: {
      204: { description: 'Deleted' },
      403: forbidden('the caller does not own this source'),
      409: { description: 'conflict: in use; details.usedBy lists the users ({type, id, name})' },
    },
    handler: async (ctx, { params, auth }) => {
      await removeSource(envOf(ctx, auth), params.id, (revision) => checkRevision(ctx, revision));
      return noContent();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/data-sources/{id}/duplicate',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Copy a data source',
    description:
      'Copies the config (secrets stay sealed: the copy fetches with them, nobody sees them), the current data and a table’s rows. Needs editor access to the source; the caller owns the copy.',
    params: IdParams,
    body: z.object({ name: z.string().trim().min(1).max(200).optional() }),
    responses: { 201: { description: 'The copy', data: DataSourceDto, ...etag } },
    handler: async (ctx, { params, body, auth }) => {
      const env = envOf(ctx, auth);
      return reply(env, await duplicateSource(env, params.id, body.name), 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/data-sources/{id}/diagnostics',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'How a data source fetches: the last attempts, the next run, the data’s age, whether it is stale and why',
    params: IdParams,
    responses: { 200: { description: 'Diagnostics', data: DiagnosticsDto }, 403: forbidden('the caller may not read this source') },
    handler: async (ctx, { params, auth }) => ok(await diagnostics(envOf(ctx, auth), params.id)),
  }),
];
