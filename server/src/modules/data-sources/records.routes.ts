import type { Context } from 'koa';
import type { Principal } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import { pageOf, pageQuery } from '../../platform/http/pagination.js';
import { checkRevision, etagOf } from '../../platform/http/revision.js';
import { created, defineRoute, noContent, ok } from '../../platform/http/route.js';
import { tokenMayWriteTable } from '../accounts/index.js';
import { callerOf } from './access.js';
import { IdParams } from './data-sources.schemas.js';
import { approvalsInbox } from './records-inbox.js';
import {
  ApprovalItemDto,
  CreateRecordBody,
  ListRecordsQuery,
  PatchRecordBody,
  RECORD_TAGS,
  RecordDetailDto,
  RecordDto,
  RecordParams,
  TransitionBody,
} from './records.schemas.js';
import { createRecord, deleteRecord, listRecordDtos, patchRecord, recordDetail, takeTransition, type Who, whoOf } from './records.service.js';

const etag = { headers: { ETag: { description: 'The record’s revision; send it back in If-Match' } } };
const notFound = { description: 'not_found: no such table (or it is not a manual table), or no such record in it' };
const who = (auth: Principal) => whoOf(callerOf(auth));

/**
 * Writers: a console user, or an integration token with manual_table_rows:write that was
 * granted this table (docs/data-sources.md "Integration tokens"); such a token writes as an
 * editor of the table would, so its records enter the workflow like anyone's.
 */
async function writer(ctx: Context, auth: Principal, sourceId: string): Promise<Who> {
  if (auth.kind !== 'integration') return who(auth);
  if (!(await tokenMayWriteTable(ctx.deps.db, auth, sourceId))) {
    throw new ApiError('forbidden', `This integration token was not granted the table ${sourceId}: a token writes only the tables named in its dataSourceIds`);
  }
  return { caller: null, actor: { userId: null, tokenId: auth.tokenId } };
}
const tokenAuth = ['session', 'integration:manual_table_rows:write'] as const;
const tokenForbidden = 'forbidden: the caller’s access to this table is below editor, or the integration token was not granted it';
const expect = (ctx: Context) => (revision: number) => checkRevision(ctx, revision);
const base = '/api/v1/data-sources/{id}/records';

export const recordRoutes = [
  defineRoute({
    method: 'GET',
    path: base,
    auth: 'session',
    minRole: 'viewer',
    tags: RECORD_TAGS,
    summary: 'A table’s records, filtered, sorted and paged',
    description:
      'Viewer access to the table. Filters: `state`, `live`, `q` (text in the values), `createdBy`, `updatedSince`. `sort`: position (the table’s order, default), updatedAt, createdAt or a field key of the published form; `direction` asc or desc.',
    params: IdParams,
    query: ListRecordsQuery,
    responses: {
      200: { description: 'Records', data: pageOf(RecordDto) },
      403: { description: 'forbidden: the caller may not read this table' },
      404: notFound,
    },
    handler: async (ctx, { params, query, auth }) => ok(await listRecordDtos(ctx.deps, who(auth), params.id, query)),
  }),
  defineRoute({
    method: 'POST',
    path: base,
    auth: [...tokenAuth],
    minRole: 'viewer',
    idempotent: true,
    tags: RECORD_TAGS,
    summary: 'Add a record; it starts in the workflow’s initial state',
    description:
      'Editor access to the table. `values` are checked against the published form (400 naming each field at values.<key>; fields left out get their default). `publishAt` / `unpublishAt` bound when a published record is live. `position` places it (default: last).',
    params: IdParams,
    body: CreateRecordBody,
    responses: {
      201: { description: 'The record', data: RecordDto, ...etag },
      403: { description: tokenForbidden },
      404: notFound,
      409: { description: 'conflict: the table’s form has no published version yet (publish the form first)' },
    },
    handler: async (ctx, { params, body, auth }) => {
      const dto = await createRecord(ctx.deps, await writer(ctx, auth, params.id), params.id, body);
      return created(dto, etagOf(dto.revision));
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${base}/{recordId}`,
    auth: 'session',
    minRole: 'viewer',
    tags: RECORD_TAGS,
    summary: 'A record, its audit trail (comments included) and the transitions from its state',
    params: RecordParams,
    responses: {
      200: { description: 'The record', data: RecordDetailDto, ...etag },
      403: { description: 'forbidden: the caller may not read this table' },
      404: notFound,
    },
    handler: async (ctx, { params, auth }) => {
      const dto = await recordDetail(ctx.deps, who(auth), params.id, params.recordId);
      return ok(dto, etagOf(dto.revision));
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: `${base}/{recordId}`,
    auth: [...tokenAuth],
    minRole: 'viewer',
    tags: RECORD_TAGS,
    summary: 'Change a record’s values, window or position',
    description:
      'Editor access. `values` are merged into the current ones and checked against the published form; the record moves to that form version. An edit of a published (or approved) record sends it back to the initial state unless the editor may publish it alone (docs: "Workflow"). If-Match: 412 when stale.',
    params: RecordParams,
    body: PatchRecordBody,
    ifMatch: true,
    responses: {
      200: { description: 'The record', data: RecordDto, ...etag },
      403: { description: tokenForbidden },
      404: notFound,
      409: { description: 'conflict: no published form (values need one); version_conflict: changed meanwhile (a race without If-Match)' },
    },
    handler: async (ctx, { params, body, auth }) => {
      const dto = await patchRecord(ctx.deps, await writer(ctx, auth, params.id), params.id, params.recordId, body, expect(ctx));
      return ok(dto, etagOf(dto.revision));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${base}/{recordId}`,
    auth: 'session',
    minRole: 'viewer',
    tags: RECORD_TAGS,
    summary: 'Delete a record (its audit trail is kept)',
    description: 'Editor access. If-Match optional: 412 when stale.',
    params: RecordParams,
    ifMatch: true,
    responses: {
      204: { description: 'Deleted' },
      403: { description: 'forbidden: the caller’s access to this table is below editor' },
      404: notFound,
    },
    handler: async (ctx, { params, auth }) => {
      await deleteRecord(ctx.deps, who(auth), params.id, params.recordId, expect(ctx));
      return noContent();
    },
  }),
  defineRoute({
    method: 'POST',
    path: `${base}/{recordId}/transitions`,
    auth: [...tokenAuth],
    minRole: 'viewer',
    tags: RECORD_TAGS,
    summary: 'Take one workflow transition',
    description:
      '409 when the transition does not leave the record’s state (`details.allowed` names those that do) or the caller already approved it; 403 when the caller is not among its `who`; 400 when it needs a comment and none came. A transition that needs N people records each approval (`pendingApprovals`) and moves the record at the Nth. If-Match optional.',
    params: RecordParams,
    body: TransitionBody,
    ifMatch: true,
    responses: {
      200: { description: 'The record after it', data: RecordDto, ...etag },
      403: {
        description:
          'forbidden: the caller may not take this transition (a token takes what an editor of the table may), or the token was not granted the table',
      },
      404: notFound,
      409: { description: 'conflict: not allowed from the current state, already approved by the caller, or another transition won a race' },
    },
    handler: async (ctx, { params, body, auth }) => {
      const dto = await takeTransition(ctx.deps, await writer(ctx, auth, params.id), params.id, params.recordId, body, expect(ctx));
      return ok(dto, etagOf(dto.revision));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/approvals',
    auth: 'session',
    minRole: 'viewer',
    tags: RECORD_TAGS,
    summary: 'Records waiting on the caller, across tables, oldest first',
    description:
      'Records in a state with a transition the caller may take and has not approved yet, leading neither to the initial state nor to "archived" (records in the initial state wait on nobody). Oldest state change first.',
    query: pageQuery,
    responses: { 200: { description: 'What waits on the caller', data: pageOf(ApprovalItemDto) } },
    handler: async (ctx, { query, auth }) => ok(await approvalsInbox(ctx.deps, callerOf(auth), query)),
  }),
];
