import { z } from 'zod';
import { uuidParam } from '../../platform/http/route.js';

/** At most this many bytes per attachment (docs/data-sources.md "Comments and attachments"). */
export const MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;
/** At most this many attachments per record. */
export const MAX_ATTACHMENTS_PER_RECORD = 20;
/** What an attachment may be, decided from its bytes: images browsers show, and PDF. SVG is not (it can carry script). */
export const ATTACHMENT_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif', 'application/pdf'] as const;

export const RECORD_TAGS = ['Records'];

export const RecordParams = z.object({ id: uuidParam, recordId: uuidParam });
export const AttachmentParams = RecordParams.extend({ attachmentId: uuidParam });

export const AttachmentDto = z
  .object({
    id: z.string(),
    recordId: z.string(),
    fileName: z.string(),
    contentType: z.enum(ATTACHMENT_TYPES),
    sizeBytes: z.number().int(),
    sha256: z.string(),
    createdBy: z.string().nullable().describe('The user who attached it (null once that user is deleted)'),
    createdAt: z.string(),
    url: z.string().describe('GET it for the bytes (viewer access to the source)'),
  })
  .meta({ id: 'RecordAttachment' });
export type AttachmentDto = z.infer<typeof AttachmentDto>;

export const CommentBody = z.object({
  body: z.string().trim().min(1).max(5000),
  mentions: z.array(uuidParam).max(50).optional().describe('Users to notify: each must have access to the source'),
});

export const CommentDto = z
  .object({
    id: z.string(),
    recordId: z.string(),
    body: z.string(),
    mentions: z.array(z.string()),
    by: z.string().describe('The user who wrote it'),
    at: z.string(),
  })
  .meta({ id: 'RecordComment' });
export type CommentDto = z.infer<typeof CommentDto>;
