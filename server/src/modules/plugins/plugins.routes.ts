import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { pageOf, pageQuery } from '../../platform/http/pagination.js';
import { etagOf } from '../../platform/http/revision.js';
import { created, defineRoute, noContent, ok, type ResponseSpec, uuidParam as Uuid } from '../../platform/http/route.js';
import { configSchemaOf, INSTANCE_PLUGINS, type InstancePluginId } from './catalog.js';
import { CatalogEntrySchema, DependencyGraphSchema, instanceBody, InstanceDtoSchema } from './plugins.schemas.js';
import {
  type Actor,
  catalog,
  createInstance,
  deleteInstance,
  dependencyGraph,
  getInstance,
  install,
  listInstances,
  uninstall,
  updateInstance,
} from './plugins.service.js';

const TAGS = ['Plugins'];
const PluginParams = z.object({ pluginId: z.string().min(1).max(100) });
const IdParams = z.object({ id: Uuid });
const boolQuery = z.enum(['true', 'false']).transform((v) => v === 'true');
const etag = { headers: { ETag: { description: 'The instance’s revision; send it back in If-Match' } } };
const unknownPlugin = { description: 'plugin_not_found: no built-in plugin has this id' };
const notInstalled = { description: 'plugin_not_installed: install the plugin first' };
const badBody: ResponseSpec = {
  codes: ['validation_failed', 'invalid_asset'],
  description:
    'validation_failed: a field is wrong (no target, loudLevel not above warningLevel, a bad colour or time) or a target id names nothing (details.issues); invalid_asset: a brand bug’s asset is not an image',
};

const actorOf = (auth: unknown): Actor => {
  const p = auth as SessionPrincipal;
  return { userId: p.userId, role: p.role };
};

/** The five instance routes of one plugin (literal paths, as spec 4.11 lists them). */
function instanceRoutes(pluginId: InstancePluginId) {
  const base = `/api/v1/plugins/${pluginId}/instances`;
  const Body = instanceBody(configSchemaOf(pluginId));
  const tags = [`Plugin: ${pluginId}`];
  const assetMissing: Record<number, ResponseSpec> = pluginId === 'brand-bug' ? { 404: { description: 'not_found: config.assetId names no asset' } } : {};
  return [
    defineRoute({
      method: 'GET',
      path: base,
      auth: 'session',
      minRole: 'viewer',
      tags,
      summary: `The ${pluginId} instances, by name (those of an uninstalled plugin too: kept, not delivered)`,
      query: pageQuery,
      responses: { 200: { description: 'Instances', data: pageOf(InstanceDtoSchema) } },
      handler: async (ctx, { query }) => ok(await listInstances(ctx.deps.db, pluginId, query.cursor, query.limit)),
    }),
    defineRoute({
      method: 'POST',
      path: base,
      auth: 'session',
      minRole: 'editor',
      tags,
      summary: `Add a ${pluginId} overlay on screens, groups, locations or all`,
      description: 'The config’s defaults are filled in the answer. The screens it reaches get `manifest.changed`.',
      body: Body,
      responses: {
        201: { description: 'The instance', data: InstanceDtoSchema, ...etag },
        400: badBody,
        ...assetMissing,
        409: notInstalled,
      },
      handler: async (ctx, { body, auth }) => {
        const dto = await createInstance(ctx.deps, pluginId, body, actorOf(auth));
        return created(dto, etagOf(dto.revision));
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${base}/{id}`,
      auth: 'session',
      minRole: 'viewer',
      tags,
      summary: `A ${pluginId} instance`,
      params: IdParams,
      responses: { 200: { description: 'The instance', data: InstanceDtoSchema, ...etag } },
      handler: async (ctx, { params }) => {
        const dto = await getInstance(ctx.deps.db, pluginId, params.id);
        return ok(dto, etagOf(dto.revision));
      },
    }),
    defineRoute({
      method: 'PUT',
      path: `${base}/{id}`,
      auth: 'session',
      minRole: 'editor',
      tags,
      summary: `Replace a ${pluginId} instance (name, targets, config)`,
      description: 'The screens it reached and reaches get `manifest.changed`.',
      params: IdParams,
      body: Body,
      ifMatch: true,
      responses: {
        200: { description: 'The instance', data: InstanceDtoSchema, ...etag },
        400: badBody,
        409: {
          codes: ['plugin_not_installed', 'version_conflict'],
          description: 'plugin_not_installed: install the plugin first; version_conflict: another change won meanwhile (no If-Match sent)',
        },
      },
      handler: async (ctx, { params, body, auth }) => {
        const dto = await updateInstance(ctx, pluginId, params.id, body, actorOf(auth));
        return ok(dto, etagOf(dto.revision));
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: `${base}/{id}`,
      auth: 'session',
      minRole: 'editor',
      tags,
      summary: `Delete a ${pluginId} instance (its screens drop the overlay)`,
      params: IdParams,
      ifMatch: true,
      responses: { 204: { description: 'Deleted' } },
      handler: async (ctx, { params, auth }) => {
        await deleteInstance(ctx, pluginId, params.id, actorOf(auth));
        return noContent();
      },
    }),
  ];
}

export const pluginRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/plugins',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'The built-in plugins: what each needs, its instance config (JSON Schema), the player families that draw it, whether installed',
    responses: { 200: { description: 'The catalog', data: z.array(CatalogEntrySchema) } },
    handler: async (ctx) => ok(await catalog(ctx.deps.db)),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/plugins/dependency-graph',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'Which plugin needs which (edges from the one that needs to the one needed)',
    responses: { 200: { description: 'The graph', data: DependencyGraphSchema } },
    handler: async (ctx) => ok(await dependencyGraph(ctx.deps.db)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/plugins/{pluginId}/install',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Install a plugin with what it needs (idempotent); its stored instances are delivered again',
    params: PluginParams,
    responses: { 200: { description: 'The plugin’s catalog entry', data: CatalogEntrySchema }, 404: unknownPlugin },
    handler: async (ctx, { params, auth }) => ok(await install(ctx.deps, params.pluginId, actorOf(auth))),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/plugins/{pluginId}/installation',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Uninstall a plugin: its instances leave the screens but stay stored (with the noise history) unless purge=true',
    description:
      'Refused (409 `plugin_required`) while an installed plugin needs it. `purge=true` deletes its instances and, for noise-meter, all noise history (raw buckets and roll-ups).',
    params: PluginParams,
    query: z.object({ purge: boolQuery.default(false) }),
    responses: {
      204: { description: 'Uninstalled' },
      404: { codes: ['plugin_not_found', 'not_installed'], description: 'plugin_not_found: no such plugin; not_installed: it is not installed' },
      409: { description: 'plugin_required: an installed plugin needs it (details.requiredBy)' },
    },
    handler: async (ctx, { params, query, auth }) => {
      await uninstall(ctx.deps, params.pluginId, query.purge, actorOf(auth));
      return noContent();
    },
  }),
  ...INSTANCE_PLUGINS.flatMap(instanceRoutes),
];
