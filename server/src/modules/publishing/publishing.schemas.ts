import { z } from 'zod';
import { pageQuery } from '../../platform/http/pagination.js';
import { uuidParam } from '../../platform/http/route.js';
import { PUBLICATION_SOURCES } from '../../platform/publications.js';
import { NOTIFICATION_KINDS } from './notifications.repo.js';
import { SUBMISSION_ACTIONS, SUBMISSION_STATES } from './submissions.repo.js';

export const SUBMISSION_TAGS = ['Submissions'] as const;
export const HISTORY_TAGS = ['Content history'] as const;
export const NOTIFICATION_TAGS = ['Notifications'] as const;

/** `{type}`: checked by the handler, so an unknown one answers 404 naming the types there are. */
const TypeParam = z.string().min(1).max(100);

export const IdParams = z.object({ id: uuidParam });
export const ItemParams = z.object({ type: TypeParam, id: uuidParam });
export const PublicationParams = z.object({ type: TypeParam, id: uuidParam, publicationId: uuidParam });

const Instant = z.iso.datetime({ offset: true });

export const PublicationRef = z.object({ id: z.string(), number: z.int() });

export const SubmissionDto = z.object({
  id: z.string(),
  type: z.string(),
  contentId: z.string(),
  contentName: z.string(),
  kind: z.enum(['draft', 'rollback']),
  state: z.enum(SUBMISSION_STATES),
  message: z.string(),
  submittedBy: z.string().nullable(),
  submittedByName: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  draftRevision: z.int(),
  decidedBy: z.string().nullable(),
  decidedAt: z.string().nullable(),
  comment: z.string().nullable(),
  publishAt: z.string().nullable(),
  publication: PublicationRef.nullable(),
});

export const SubmissionDetailDto = SubmissionDto.extend({
  events: z.array(
    z.object({ at: z.string(), by: z.string().nullable(), byName: z.string().nullable(), action: z.enum(SUBMISSION_ACTIONS), comment: z.string().nullable() }),
  ),
});

export const ListSubmissionsQuery = pageQuery.extend({
  state: z.enum(SUBMISSION_STATES).optional(),
  type: z.string().min(1).max(100).optional(),
  contentId: uuidParam.optional(),
  submittedBy: z.union([z.literal('me'), uuidParam]).optional(),
});

export const SubmitBody = z.object({ message: z.string().trim().max(2000).optional() }).strict();
export const ApproveBody = z.object({ comment: z.string().trim().max(2000).optional() }).strict();
export const RequestChangesBody = z.object({ comment: z.string().trim().min(1).max(2000) }).strict();
export const PublishBody = z.object({ note: z.string().trim().max(2000).optional() }).strict();
export const ScheduleBody = z.object({ publishAt: Instant }).strict();

export const PublicationSummaryDto = z.object({
  id: z.string(),
  number: z.int(),
  publishedAt: z.string(),
  publishedBy: z.string().nullable(),
  note: z.string(),
  source: z.enum(PUBLICATION_SOURCES),
});
export const HistoryItemDto = PublicationSummaryDto.extend({ current: z.boolean() });

const Side = z.union([z.literal('published'), z.literal('draft'), uuidParam]);
export const CompareQuery = z.object({ from: Side.default('published'), to: Side.default('draft') });

const FieldChange = z.object({ field: z.string(), from: z.unknown(), to: z.unknown() });
const ItemRef = z.object({ key: z.string(), label: z.string() });
const CompareSide = z.object({ kind: z.enum(['publication', 'draft']), publication: PublicationSummaryDto.nullable() });
export const CompareDto = z.object({
  from: CompareSide,
  to: CompareSide,
  identical: z.boolean(),
  fields: z.array(FieldChange),
  items: z.object({
    added: z.array(ItemRef),
    removed: z.array(ItemRef),
    moved: z.array(ItemRef.extend({ fromIndex: z.int(), toIndex: z.int() })),
    changed: z.array(ItemRef.extend({ fields: z.array(FieldChange) })),
  }),
});

export const RestoredDto = z.object({ type: z.string(), id: z.string(), revision: z.int(), unpublishedChanges: z.boolean() });
export const RollbackBody = z.object({ note: z.string().trim().max(2000).optional() }).strict();

export const NotificationDto = z.object({
  id: z.string(),
  kind: z.enum(NOTIFICATION_KINDS),
  title: z.string(),
  body: z.string(),
  submissionId: z.string().nullable(),
  createdAt: z.string(),
  readAt: z.string().nullable(),
});
export const ListNotificationsQuery = pageQuery.extend({ unread: z.enum(['true', 'false']).optional() });
export const MarkReadBody = z.object({ ids: z.array(uuidParam).max(500).optional() }).strict();
