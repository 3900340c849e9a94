import { z } from 'zod';
import { viewSchema } from '../data-sources/index.js';
import { WIDGET_TYPES } from './types.js';

export const TAGS = ['Widgets'];

export const BindingSchema = z.object({
  sourceId: z
    .uuid()
    .transform((s) => s.toLowerCase())
    .describe('A data source'),
  view: viewSchema.nullable().optional().describe('Which rows and fields (a data-sources view); all rows when null'),
});

export const WidgetBody = z.object({
  name: z.string().trim().min(1).max(200),
  type: z.enum(WIDGET_TYPES as [string, ...string[]]).describe('A built-in type or `custom`'),
  settings: z.record(z.string(), z.unknown()).default({}).describe('The type’s settings (GET /widget-types lists their JSON Schemas)'),
  template: z.string().max(100_000).nullable().optional().describe('The custom type’s Liquid HTML template; built-in types take none'),
  binding: BindingSchema.nullable().optional().describe('The data source (and view) the widget shows'),
});

export const WidgetPatch = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  settings: z.record(z.string(), z.unknown()).optional().describe('Replaces the settings'),
  template: z.string().max(100_000).nullable().optional(),
  binding: BindingSchema.nullable().optional(),
});

export const TemplateErrorDto = z.object({ message: z.string(), line: z.number().int().nullable(), column: z.number().int().nullable() });

export const WidgetDto = z.object({
  id: z.string(),
  name: z.string(),
  type: z.string(),
  settings: z.record(z.string(), z.unknown()),
  template: z.string().nullable(),
  binding: z.object({ sourceId: z.string(), view: viewSchema.nullable() }).nullable(),
  revision: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  bundle: z
    .object({ id: z.string(), sha256: z.string(), sizeBytes: z.number().int(), builtAt: z.string() })
    .nullable()
    .describe('The current bundle; null when none could be built'),
  errors: z.array(TemplateErrorDto).describe('Why the last build failed (data changed under the template); empty when it did not'),
  publication: z
    .object({ id: z.string(), number: z.number().int(), publishedAt: z.string(), publishedBy: z.string().nullable() })
    .nullable()
    .describe('The publication screens play; null: never published (approvals on), players treat the widget as absent'),
  unpublishedChanges: z.boolean().describe('The fields above (the draft) differ from the publication, or it was never published'),
});

export const CompilePreviewDto = z.object({
  html: z.string().describe('The full bundle document (empty when compiling failed)'),
  errors: z.array(TemplateErrorDto),
});

export const WidgetTypeDto = z.object({
  type: z.string(),
  title: z.string(),
  description: z.string(),
  usesData: z.boolean(),
  settingsSchema: z.record(z.string(), z.unknown()).describe('JSON Schema of the settings'),
  template: z.string().nullable().describe('A starting template (custom)'),
});
