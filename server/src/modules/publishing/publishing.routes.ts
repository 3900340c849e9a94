import { z } from 'zod';
import type { Principal, SessionPrincipal } from '../../platform/http/auth.js';
import { pageOf } from '../../platform/http/pagination.js';
import { created, defineRoute, ok } from '../../platform/http/route.js';
import { compare, publicationsPage, restoreDraft, rollback } from './history.service.js';
import { listNotifications, markRead } from './notifications.repo.js';
import {
  ApproveBody,
  CompareDto,
  CompareQuery,
  HISTORY_TAGS,
  HistoryItemDto,
  IdParams,
  ItemParams,
  ListNotificationsQuery,
  ListSubmissionsQuery,
  MarkReadBody,
  NOTIFICATION_TAGS,
  NotificationDto,
  PublicationParams,
  PublicationSummaryDto,
  PublishBody,
  RequestChangesBody,
  RestoredDto,
  RollbackBody,
  ScheduleBody,
  SUBMISSION_TAGS,
  SubmissionDetailDto,
  SubmissionDto,
  SubmitBody,
} from './publishing.schemas.js';
import { publishableTypes } from './publishables.js';
import {
  approve,
  type Caller,
  cancelSchedule,
  listSubmissionDtos,
  publishSubmission,
  requestChanges,
  schedulePublish,
  submissionDetail,
  submitDraft,
} from './submissions.service.js';

const caller = (auth: Principal): Caller => {
  const s = auth as SessionPrincipal;
  return { userId: s.userId, role: s.role };
};
const base = '/api/v1/content-submissions';
const history = '/api/v1/content-history/{type}/{id}';
const unknownItem = () => ({ description: `not_found: no such content type (the types are ${publishableTypes().join(', ')}), or no such item` });
const noSubmission = { description: 'not_found: no such submission' };
const wrongState = (needed: string) => ({ description: `conflict: the submission is not ${needed} (the message names its state)` });

export const submissionRoutes = [
  defineRoute({
    method: 'GET',
    path: base,
    auth: 'session',
    minRole: 'viewer',
    tags: SUBMISSION_TAGS,
    summary: 'Submissions, newest first',
    description: 'Filters: `state`, `type`, `contentId`, `submittedBy` (a user id or `me`).',
    query: ListSubmissionsQuery,
    responses: { 200: { description: 'Submissions', data: pageOf(SubmissionDto) } },
    handler: async (ctx, { query, auth }) => ok(await listSubmissionDtos(ctx.deps.db, caller(auth), query)),
  }),
  defineRoute({
    method: 'GET',
    path: `${base}/{id}`,
    auth: 'session',
    minRole: 'viewer',
    tags: SUBMISSION_TAGS,
    summary: 'A submission with its audit trail',
    params: IdParams,
    responses: { 200: { description: 'The submission', data: SubmissionDetailDto }, 404: noSubmission },
    handler: async (ctx, { params }) => ok(await submissionDetail(ctx.deps.db, params.id)),
  }),
  defineRoute({
    method: 'POST',
    path: `${base}/{type}/{id}`,
    auth: 'session',
    minRole: 'editor',
    tags: SUBMISSION_TAGS,
    summary: 'Submit an item’s draft for approval',
    description:
      'The draft as it is now (its revision recorded: the submission goes stale if the draft changes before approval). Open submissions of the same item (pending, changes requested, approved) are cancelled: the newer one replaces them.',
    params: ItemParams,
    body: SubmitBody,
    responses: {
      201: { description: 'The submission, pending', data: SubmissionDto },
      404: unknownItem(),
      409: { description: 'conflict: nothing to submit (the draft is what screens play)' },
    },
    handler: async (ctx, { params, body, auth }) => created(await submitDraft(ctx.deps, caller(auth), params.type, params.id, body?.message)),
  }),
  defineRoute({
    method: 'POST',
    path: `${base}/{id}/approve`,
    auth: 'session',
    minRole: 'publisher',
    tags: SUBMISSION_TAGS,
    summary: 'Approve a pending submission',
    description:
      'Not one’s own unless `approvals.allowSelfApproval` is on (403). A draft changed since it was submitted makes the submission stale (409: resubmit).',
    params: IdParams,
    body: ApproveBody,
    responses: {
      200: { description: 'The submission, approved', data: SubmissionDto },
      403: { description: 'forbidden: the caller submitted it and self-approval is off' },
      404: noSubmission,
      409: { description: 'conflict: the submission is not pending, or the draft changed after submission (it is now stale)' },
    },
    handler: async (ctx, { params, body, auth }) => ok(await approve(ctx.deps, caller(auth), params.id, body?.comment)),
  }),
  defineRoute({
    method: 'POST',
    path: `${base}/{id}/request-changes`,
    auth: 'session',
    minRole: 'publisher',
    tags: SUBMISSION_TAGS,
    summary: 'Send a pending submission back with a comment',
    params: IdParams,
    body: RequestChangesBody,
    responses: { 200: { description: 'The submission', data: SubmissionDto }, 404: noSubmission, 409: wrongState('pending') },
    handler: async (ctx, { params, body, auth }) => ok(await requestChanges(ctx.deps, caller(auth), params.id, body.comment)),
  }),
  defineRoute({
    method: 'POST',
    path: `${base}/{id}/publish`,
    auth: 'session',
    minRole: 'publisher',
    tags: SUBMISSION_TAGS,
    summary: 'Publish an approved submission now',
    description:
      'The submitted snapshot becomes the item’s next publication (note: `note`, else the submission’s message) and screens are told. When it refers to what no longer exists the submission stays approved (409, event publish_failed).',
    params: IdParams,
    body: PublishBody,
    responses: {
      200: { description: 'The submission, published', data: SubmissionDto },
      404: { description: 'not_found: no such submission, or its item was deleted' },
      409: { description: 'conflict: the submission is not approved, or it refers to what no longer exists (details.missing)' },
    },
    handler: async (ctx, { params, body, auth }) => ok(await publishSubmission(ctx.deps, caller(auth), params.id, body?.note)),
  }),
  defineRoute({
    method: 'POST',
    path: `${base}/{id}/schedule`,
    auth: 'session',
    minRole: 'publisher',
    tags: SUBMISSION_TAGS,
    summary: 'Publish an approved submission at a time',
    description: '`publishAt`: an instant in the future, at most a year ahead. Published once at that time, restarts included.',
    params: IdParams,
    body: ScheduleBody,
    responses: { 200: { description: 'The submission, scheduled', data: SubmissionDto }, 404: noSubmission, 409: wrongState('approved') },
    handler: async (ctx, { params, body, auth }) => ok(await schedulePublish(ctx.deps, caller(auth), params.id, body.publishAt)),
  }),
  defineRoute({
    method: 'POST',
    path: `${base}/{id}/cancel-schedule`,
    auth: 'session',
    minRole: 'publisher',
    tags: SUBMISSION_TAGS,
    summary: 'Cancel a scheduled publish (the submission is approved again)',
    params: IdParams,
    responses: { 200: { description: 'The submission, approved', data: SubmissionDto }, 404: noSubmission, 409: wrongState('scheduled') },
    handler: async (ctx, { params, auth }) => ok(await cancelSchedule(ctx.deps, caller(auth), params.id)),
  }),
];

export const historyRoutes = [
  defineRoute({
    method: 'GET',
    path: `${history}/publications`,
    auth: 'session',
    minRole: 'viewer',
    tags: HISTORY_TAGS,
    summary: 'An item’s publications, newest first; `current` is the one screens play',
    params: ItemParams,
    query: ListSubmissionsQuery.pick({ limit: true, cursor: true }),
    responses: { 200: { description: 'Publications', data: pageOf(HistoryItemDto) }, 404: unknownItem() },
    handler: async (ctx, { params, query }) => ok(await publicationsPage(ctx.deps, params.type, params.id, query)),
  }),
  defineRoute({
    method: 'GET',
    path: `${history}/compare`,
    auth: 'session',
    minRole: 'viewer',
    tags: HISTORY_TAGS,
    summary: 'What changed between two publications, or a publication and the draft',
    description: '`from`: a publication id or `published` (default); `to`: a publication id or `draft` (default). Either side also takes the other keyword.',
    params: ItemParams,
    query: CompareQuery,
    responses: {
      200: { description: 'The difference', data: CompareDto },
      404: { description: 'not_found: no such type, item or publication of it' },
      409: { description: 'conflict: `published` was asked of an item never published' },
    },
    handler: async (ctx, { params, query }) => ok(await compare(ctx.deps, params.type, params.id, query.from, query.to)),
  }),
  defineRoute({
    method: 'POST',
    path: `${history}/publications/{publicationId}/restore-draft`,
    auth: 'session',
    minRole: 'editor',
    tags: HISTORY_TAGS,
    summary: 'Make a publication the item’s draft again (screens keep playing what they play)',
    params: PublicationParams,
    responses: {
      200: { description: 'The item’s draft state', data: RestoredDto },
      404: { description: 'not_found: no such type, item or publication of it' },
      409: { description: 'conflict: the publication refers to what no longer exists (details.missing)' },
    },
    handler: async (ctx, { params }) => ok(await restoreDraft(ctx.deps, params.type, params.id, params.publicationId)),
  }),
  defineRoute({
    method: 'POST',
    path: `${history}/publications/{publicationId}/rollback`,
    auth: 'session',
    minRole: 'editor',
    tags: HISTORY_TAGS,
    summary: 'Roll back to a publication',
    description:
      'Approvals off: publishes the publication’s snapshot again as a new publication (source `rollback`) at once: publisher role or above; 201. Approvals on: a pending submission of kind `rollback` carrying it; 202.',
    params: PublicationParams,
    body: RollbackBody,
    responses: {
      201: { description: 'Published', data: z.object({ publication: PublicationSummaryDto }) },
      202: { description: 'Submitted for approval', data: z.object({ submission: SubmissionDto }) },
      403: { description: 'forbidden: approvals are off and the caller is below publisher' },
      404: { description: 'not_found: no such type, item or publication of it' },
      409: { description: 'conflict: the publication refers to what no longer exists (details.missing)' },
    },
    handler: async (ctx, { params, body, auth }) => {
      const r = await rollback(ctx.deps, caller(auth), params.type, params.id, params.publicationId, body?.note);
      return { kind: 'json', status: r.status, data: r.data };
    },
  }),
];

export const notificationRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/notifications',
    auth: 'session',
    minRole: 'viewer',
    extension: true,
    tags: NOTIFICATION_TAGS,
    summary: 'My notifications, newest first (`unread=true`: the unread ones)',
    query: ListNotificationsQuery,
    responses: { 200: { description: 'Notifications', data: pageOf(NotificationDto) } },
    handler: async (ctx, { query, auth }) =>
      ok(await listNotifications(ctx.deps.db, caller(auth).userId, { unread: query.unread === 'true', cursor: query.cursor, limit: query.limit })),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/notifications/read',
    auth: 'session',
    minRole: 'viewer',
    extension: true,
    tags: NOTIFICATION_TAGS,
    summary: 'Mark my notifications read (`ids`, or all of mine when none are given)',
    body: MarkReadBody,
    responses: { 200: { description: 'How many were marked', data: z.object({ updated: z.int() }) } },
    handler: async (ctx, { body, auth }) => ok({ updated: await markRead(ctx.deps.db, caller(auth).userId, body?.ids) }),
  }),
];
