import { z } from 'zod';
import { defineRoute, ok } from '../../platform/http/route.js';
import { ASSET_KINDS } from '../media/index.js';
import { PROVIDERS } from './providers/index.js';
import { COLUMN_TYPES } from './providers/types.js';
import { moreContentDefinitions } from './hooks.js';
import { viewSchema } from './views.js';

/**
 * The catalogs the console builds its forms from: the providers (their config as JSON
 * Schema, the same schema the server validates with) and the kinds of content an editor can
 * place. Both are computed from the definitions, once per app start (they do not change).
 */

const JsonSchema = z.record(z.string(), z.unknown()).describe('A JSON Schema (draft 2020-12)');

const ProviderEntry = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  needs: z.array(z.string()).describe('What it needs, in words'),
  refresh: z
    .object({ minSec: z.number().int(), defaultSec: z.number().int(), maxSec: z.number().int() })
    .nullable()
    .describe('Bounds of refreshIntervalSec; null: it does not refresh'),
  fetches: z.boolean().describe('It fetches a document over the network (preview and inspect do too)'),
  configSchema: JsonSchema,
  secretPaths: z.array(z.string()).describe('Config paths kept secret (`*`: every key of a map): sealed at rest, answered as {"set": true}'),
});

/** The JSON Schema of a config as a client writes it (defaults optional). */
export function configJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', ...out };
}

export function providerCatalog() {
  return PROVIDERS.map((p) => ({
    id: p.id,
    name: p.name,
    description: p.description,
    needs: p.needs,
    refresh: p.refresh,
    fetches: Boolean(p.fetch),
    configSchema: configJsonSchema(p.configSchema),
    secretPaths: p.secretPaths,
  }));
}

const ASSET_WORDS: Record<(typeof ASSET_KINDS)[number], [string, string]> = {
  image: ['Image', 'A picture (PNG, JPEG, WebP, GIF, AVIF, SVG), shown for a duration'],
  video: ['Video', 'A video, played for its length unless a duration is given'],
  audio: ['Audio', 'Sound, played for its length'],
  pdf: ['PDF', 'A document, its pages shown in turn'],
  website: ['Website', 'A web page, shown live'],
  widget: ['Widget asset', 'A packaged widget (not listed: widgets are widget:<type> entries)'],
};

const DefinitionEntry = z.object({
  id: z.string().describe('asset:<kind>, data:<kind> or widget:<type>'),
  category: z.enum(['asset', 'data', 'widget']),
  name: z.string(),
  description: z.string(),
  schema: JsonSchema.describe('What placing it takes (a playlist item or a layout zone’s content)'),
  settingsSchema: JsonSchema.optional().describe('A widget type’s settings (widget:<type> entries)'),
});

const Placement = {
  asset: z.object({
    assetId: z.uuid().describe('An asset of this kind'),
    durationMs: z.number().int().min(1000).max(86_400_000).optional().describe('How long it shows; default its own length or 10 s'),
  }),
  data: z.object({
    sourceId: z.uuid().describe('A data source'),
    view: viewSchema.describe('Which rows and fields (a view); all of them when left out'),
  }),
};

export function contentDefinitions() {
  // Widgets are their own entries (widget:<type>, added by the widgets module), not an asset kind.
  const assets = ASSET_KINDS.filter((kind) => kind !== 'widget').map((kind) => ({
    id: `asset:${kind}`,
    category: 'asset' as const,
    name: ASSET_WORDS[kind][0],
    description: ASSET_WORDS[kind][1],
    schema: configJsonSchema(Placement.asset),
  }));
  const data = {
    id: 'data:data-source',
    category: 'data' as const,
    name: 'Data',
    description: `Rows of a data source (${PROVIDERS.map((p) => p.name).join(', ')}), their columns typed ${COLUMN_TYPES.join(', ')}: a layout zone {type: 'data', sourceId, view} shows them as a table, offline too`,
    schema: configJsonSchema(Placement.data),
  };
  return [...assets, data];
}

export const catalogRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/provider-catalog',
    auth: 'session',
    minRole: 'viewer',
    tags: ['Data sources'],
    summary: 'The data-source providers: what each needs, its refresh bounds and its config as JSON Schema',
    responses: { 200: { description: 'The providers', data: z.object({ providers: z.array(ProviderEntry) }) } },
    handler: () => ok({ providers: providerCatalog() }),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/content-definitions',
    auth: 'session',
    minRole: 'viewer',
    tags: ['Data sources'],
    summary: 'The kinds of content an editor can place (asset kinds, data-bound content), each with the JSON Schema of what placing it takes',
    responses: { 200: { description: 'The kinds of content', data: z.object({ definitions: z.array(DefinitionEntry) }) } },
    handler: (ctx) => ok({ definitions: [...contentDefinitions(), ...moreContentDefinitions(ctx.deps)] }),
  }),
];
