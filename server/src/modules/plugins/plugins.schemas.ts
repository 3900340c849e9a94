/** The plugins' bodies and answers (spec 4.11; docs/plugins.md; the plugin contract). */
import { z } from 'zod';
import { TargetsInput } from '../screens/index.js';

export { type Targets, TargetsInput } from '../screens/index.js';

/** An instance body: its config is the plugin's schema (catalog.ts). */
export const instanceBody = (config: z.ZodType) =>
  z.object({
    name: z.string().trim().min(1).max(200),
    targets: TargetsInput,
    config: config.describe('the plugin’s config (GET /api/v1/plugins: configSchema)'),
  });

export const CatalogEntrySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    version: z.string(),
    description: z.string(),
    requires: z.array(z.string()).describe('the plugins it needs (installed with it)'),
    configSchema: z.record(z.string(), z.unknown()).nullable().describe('its instance config as JSON Schema (null: no instances)'),
    playerFamilies: z.array(z.string()).describe('the player families that draw it'),
    installed: z.boolean(),
    installedAt: z.string().nullable(),
    asDependency: z.boolean().describe('installed only because another plugin needs it'),
    instanceCount: z.number().int().describe('instances stored (delivered only while installed)'),
  })
  .meta({ id: 'PluginCatalogEntry' });
export type CatalogEntry = z.infer<typeof CatalogEntrySchema>;

export const DependencyGraphSchema = z
  .object({
    nodes: z.array(z.object({ id: z.string(), installed: z.boolean() })),
    edges: z.array(z.object({ from: z.string(), to: z.string() })).describe('from needs to'),
  })
  .meta({ id: 'PluginDependencyGraph' });

export const InstanceDtoSchema = z
  .object({
    id: z.string(),
    pluginId: z.string(),
    name: z.string(),
    targets: z.object({
      all: z.boolean().optional(),
      screenIds: z.array(z.string()).optional(),
      groupIds: z.array(z.string()).optional(),
      locationIds: z.array(z.string()).optional(),
    }),
    config: z.record(z.string(), z.unknown()).describe('defaults filled'),
    revision: z.number().int().describe('bumped by every change; send it back in If-Match'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'PluginInstance' });
export type InstanceDto = z.infer<typeof InstanceDtoSchema>;
