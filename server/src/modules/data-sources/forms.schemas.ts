import { z } from 'zod';
import { TimeZoneName } from '../system/index.js';
import { AccessLevelSchema } from './data-sources.schemas.js';
import { FieldSchema, FieldsSchema } from './fields.js';
import { WorkflowSchema } from './workflow-def.js';

export const FORM_TAGS = ['Forms'];

export const FormVersionDto = z
  .object({
    version: z.number().int(),
    fields: z.array(FieldSchema),
    publishedBy: z.string().nullable(),
    publishedAt: z.string(),
  })
  .meta({ id: 'FormVersion' });

export const FormDto = z
  .object({
    sourceId: z.string().describe('The manual table whose form this is'),
    name: z.string().describe('The table’s name'),
    description: z.string(),
    draft: z.object({ fields: z.array(FieldSchema) }).describe('What editors change; publish makes it the next version'),
    published: FormVersionDto.nullable().describe('The newest published version (or the one asked with ?version=); null before the first publish'),
    publishedVersion: z.number().int().describe('The newest published version; 0 before the first publish'),
    workflow: WorkflowSchema.describe('The workflow records follow (docs: "Workflow")'),
    revision: z.number().int().describe('Changes with every change to the form (If-Match)'),
    myAccess: AccessLevelSchema.describe('viewer reads, editor changes the draft and settings, owner publishes and sets the workflow'),
    createdBy: z.string().nullable(),
    updatedBy: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Form' });
export type FormDto = z.infer<typeof FormDto>;

export const CreateFormBody = z.object({
  name: z.string().trim().min(1).max(200).describe('The table’s (and form’s) name'),
  description: z.string().max(2000).default(''),
  fields: FieldsSchema,
  workflow: WorkflowSchema.optional().describe('Default: draft -> submitted -> approved -> published, with rejected and archived'),
  publish: z.boolean().default(true).describe('Publish the fields as version 1 at once (the table’s columns); false keeps them as the draft'),
  timeZone: TimeZoneName.optional(),
});
export type CreateFormBody = z.output<typeof CreateFormBody>;

export const PatchFormBody = z.object({
  name: z.string().trim().min(1).max(200).optional().describe('Renames the table'),
  description: z.string().max(2000).optional(),
});
export type PatchFormBody = z.output<typeof PatchFormBody>;

export const DraftBody = z.object({ fields: FieldsSchema });

export const MigrateBody = z
  .record(
    z.string().max(64),
    z.union([z.literal('clear'), z.object({ default: z.union([z.string().max(65_536), z.number(), z.boolean(), z.array(z.string().max(200)).max(200)]) })]),
  )
  .describe('Per field key: what a row whose value breaks the new field gets: "clear" empties it, {default} puts that value');
export type MigrateBody = z.output<typeof MigrateBody>;

export const PublishBody = z.object({ migrate: MigrateBody.default({}) });

export const FormQuery = z.object({
  version: z.coerce.number().int().min(1).max(1_000_000).optional().describe('A published version to answer in `published`'),
});
