import { z } from 'zod';
import { pageQuery } from '../../platform/http/pagination.js';
import { uuidParam } from '../../platform/http/route.js';
import { AttachmentDto } from './records-attachments.schemas.js';

export const RECORD_TAGS = ['Records'];

const Instant = z.iso.datetime({ offset: true }).transform((s) => new Date(s).toISOString());

export const ValueSchema = z.union([z.string().max(65_536), z.number(), z.boolean(), z.array(z.string().max(200)).max(200), z.null()]);
export const ValuesSchema = z.record(z.string().max(64), ValueSchema).describe('Per field key, its value (multi-choice: a list of options)');

export const RecordParams = z.object({ id: uuidParam, recordId: uuidParam });

export const PendingApprovalDto = z.object({
  transition: z.string(),
  userIds: z.array(z.string()).describe('Who approved so far'),
  needed: z.number().int().describe('How many distinct people the transition needs'),
});

export const RecordDto = z
  .object({
    id: z.string(),
    sourceId: z.string(),
    values: z.record(z.string(), z.unknown()).describe('Every field of the form the record was written with, hidden ones too'),
    state: z.string().describe('Its workflow state'),
    revision: z.number().int().describe('Goes up with every change (values, state, approvals); send it back in If-Match'),
    formVersion: z.number().int().nullable().describe('The published form version it was last written with (null: rows written before forms)'),
    publishAt: z.string().nullable(),
    unpublishAt: z.string().nullable(),
    live: z.boolean().describe('The outputs (screens) show it: published and inside its window'),
    position: z.number().int(),
    createdBy: z.string().nullable(),
    updatedBy: z.string().nullable(),
    createdByToken: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    stateChangedAt: z.string().nullable(),
    pendingApprovals: z.array(PendingApprovalDto).optional().describe('Approvals given toward transitions that need several people'),
  })
  .meta({ id: 'DataRecord' });
export type RecordDto = z.infer<typeof RecordDto>;

export const RecordEventDto = z
  .object({
    id: z.string(),
    seq: z.number().int(),
    kind: z.string().describe('created, updated, deleted, transition, approval, comment, attachment_added, attachment_removed, scheduled'),
    userId: z.string().nullable(),
    userName: z.string().nullable(),
    tokenId: z.string().nullable(),
    data: z.record(z.string(), z.unknown()),
    at: z.string(),
  })
  .meta({ id: 'DataRecordEvent' });

export const RecordDetailDto = RecordDto.extend({
  history: z.array(RecordEventDto).describe('The audit trail, oldest first (comments are its events of kind "comment"); at most 1000'),
  transitions: z
    .array(z.object({ name: z.string(), label: z.string().nullable(), to: z.string(), mayTake: z.boolean() }))
    .describe('Those that leave its state'),
  attachments: z.array(AttachmentDto).describe('Its attached files, oldest first (GET each one’s url for the bytes)'),
}).meta({ id: 'DataRecordDetail' });

export const ListRecordsQuery = pageQuery.extend({
  state: z.string().max(40).optional(),
  live: z.enum(['true', 'false']).optional().describe('Only records the screens show (true) or the others'),
  q: z.string().min(1).max(200).optional().describe('Text search over the values'),
  createdBy: z.uuid().optional(),
  updatedSince: Instant.optional().describe('Changed at or after this time'),
  sort: z
    .string()
    .regex(/^(position|updatedAt|createdAt|[A-Za-z][A-Za-z0-9_]{0,63})$/)
    .default('position')
    .describe('position (the table’s order), updatedAt, createdAt, or a field key'),
  direction: z.enum(['asc', 'desc']).default('asc'),
});
export type ListRecordsQuery = z.output<typeof ListRecordsQuery>;

const windowFields = {
  publishAt: Instant.nullable().optional().describe('Published records are live from then (null: at once)'),
  unpublishAt: Instant.nullable().optional().describe('... until then (null: no end); after publishAt'),
  position: z.number().int().min(0).max(1_000_000).optional().describe('Its place in the table (0: first); default: last'),
};

export const CreateRecordBody = z.object({ values: ValuesSchema, ...windowFields });
export type CreateRecordBody = z.output<typeof CreateRecordBody>;

export const PatchRecordBody = z.object({ values: ValuesSchema.optional().describe('Merged into the current values'), ...windowFields });
export type PatchRecordBody = z.output<typeof PatchRecordBody>;

export const TransitionBody = z.object({
  transition: z.string().min(1).max(40),
  comment: z.string().max(5000).optional(),
});
export type TransitionBody = z.output<typeof TransitionBody>;

export const ApprovalItemDto = z
  .object({
    sourceId: z.string(),
    sourceName: z.string(),
    record: RecordDto,
    transitions: z.array(
      z.object({ name: z.string(), label: z.string().nullable(), to: z.string(), commentRequired: z.boolean(), approvals: z.number().int() }),
    ),
  })
  .meta({ id: 'DataRecordApproval' });
