import { z } from 'zod';
import { pageOf, pageQuery } from '../../platform/http/pagination.js';
import { checkRevision, etagOf } from '../../platform/http/revision.js';
import { created, defineRoute, ok } from '../../platform/http/route.js';
import { IdParams } from './data-sources.schemas.js';
import { envOf, type Env } from './data-sources.service.js';
import { CreateFormBody, DraftBody, FORM_TAGS, FormDto, FormQuery, PatchFormBody, PublishBody } from './forms.schemas.js';
import { createForm, getForm, listFormDtos, patchDraft, patchForm, publishForm, putWorkflow } from './forms.service.js';
import { WorkflowSchema } from './workflow-def.js';

const etag = { headers: { ETag: { description: 'The form’s revision; send it back in If-Match' } } };
const forbidden = (what: string) => ({ description: `forbidden: ${what}` });
const notTable = { description: 'not_found: no such source, or it is not a table (only a manual-table source has a form)' };

async function reply(env: Env, id: string, status: 200 | 201 = 200) {
  const dto = await getForm(env, id);
  return (status === 201 ? created : ok)(dto, etagOf(dto.revision));
}

export const formRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/forms',
    auth: 'session',
    minRole: 'viewer',
    tags: FORM_TAGS,
    summary: 'List forms by their table’s name',
    description: 'The forms of manual tables (a table made with POST /data-sources gets its form the first time it is opened).',
    query: pageQuery.extend({ q: z.string().max(200).optional() }),
    responses: { 200: { description: 'Forms', data: pageOf(FormDto) } },
    handler: async (ctx, { query, auth }) => ok(await listFormDtos(envOf(ctx, auth), query)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/forms',
    auth: 'session',
    minRole: 'editor',
    tags: FORM_TAGS,
    summary: 'Create a form and its table in one step',
    description:
      'Makes a manual-table source named `name` and its form. With `publish` (the default) the fields are published as version 1 and become the table’s columns. The caller owns the table. Send `Idempotency-Key` to make a retry safe: the same key and body answer the first reply again instead of making a second table.',
    body: CreateFormBody,
    idempotent: true,
    responses: { 201: { description: 'The form', data: FormDto, ...etag } },
    handler: async (ctx, { body, auth }) => {
      const env = envOf(ctx, auth);
      return reply(env, await createForm(env, body), 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/data-sources/{id}/form',
    auth: 'session',
    minRole: 'viewer',
    tags: FORM_TAGS,
    summary: 'A table’s form: draft, newest published version, workflow',
    params: IdParams,
    query: FormQuery,
    responses: {
      200: { description: 'The form', data: FormDto, ...etag },
      403: forbidden('the caller may not read this source'),
      404: notTable,
    },
    handler: async (ctx, { params, query, auth }) => {
      const dto = await getForm(envOf(ctx, auth), params.id, query.version);
      return ok(dto, etagOf(dto.revision));
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/data-sources/{id}/form',
    auth: 'session',
    minRole: 'viewer',
    tags: FORM_TAGS,
    summary: 'Change a form’s name (the table’s) and description',
    description: 'Needs editor access to the table. Send `If-Match: <revision>` to refuse the change (412) when someone changed the form meanwhile.',
    params: IdParams,
    body: PatchFormBody,
    ifMatch: true,
    responses: {
      200: { description: 'The form', data: FormDto, ...etag },
      403: forbidden('the caller’s access to this table is below editor'),
      404: notTable,
      409: { description: 'version_conflict: changed meanwhile by someone else (a race without If-Match)' },
    },
    handler: async (ctx, { params, body, auth }) => {
      const env = envOf(ctx, auth);
      await patchForm(env, params.id, body, (revision) => checkRevision(ctx, revision));
      return reply(env, params.id);
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/data-sources/{id}/form/draft',
    auth: 'session',
    minRole: 'viewer',
    tags: FORM_TAGS,
    summary: 'Replace the draft’s fields',
    description:
      'Needs editor access. The fields are checked whole (types, unique keys, bounds, patterns, currencies, defaults): 400 naming each problem. Published versions do not change. If-Match: 412 when stale.',
    params: IdParams,
    body: DraftBody,
    ifMatch: true,
    responses: {
      200: { description: 'The form', data: FormDto, ...etag },
      403: forbidden('the caller’s access to this table is below editor'),
      404: notTable,
      409: { description: 'version_conflict: changed meanwhile by someone else (a race without If-Match)' },
    },
    handler: async (ctx, { params, body, auth }) => {
      const env = envOf(ctx, auth);
      await patchDraft(env, params.id, body.fields, (revision) => checkRevision(ctx, revision));
      return reply(env, params.id);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/data-sources/{id}/form/publish',
    auth: 'session',
    minRole: 'viewer',
    tags: FORM_TAGS,
    summary: 'Publish the draft as the next version; the table’s columns follow it',
    description:
      'Needs owner access. The draft becomes version N+1 (never changed after). The table’s columns become the published fields shown on screens. When rows of the table would not fit, 409 lists them (`details.rows`: row index and fields) unless `migrate` says, per field, what those rows get.',
    params: IdParams,
    body: PublishBody,
    ifMatch: true,
    responses: {
      200: { description: 'The form', data: FormDto, ...etag },
      403: forbidden('the caller does not own this table'),
      404: notTable,
      409: { description: 'conflict: rows would break (details.rows, details.fields), or the draft is already published' },
    },
    handler: async (ctx, { params, body, auth }) => {
      const env = envOf(ctx, auth);
      await publishForm(env, params.id, body.migrate, (revision) => checkRevision(ctx, revision));
      return reply(env, params.id);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/data-sources/{id}/form/workflow',
    auth: 'session',
    minRole: 'viewer',
    tags: FORM_TAGS,
    summary: 'Set the form’s workflow definition',
    description:
      'Needs owner access. Checked whole: known and reachable states, a "published" state reachable from the initial one, unique transition names, approvals of at least 1, someone named in each `who`, existing users. Records follow it from then on; a definition that drops a state records are in is 409.',
    params: IdParams,
    body: WorkflowSchema,
    ifMatch: true,
    responses: {
      200: { description: 'The form', data: FormDto, ...etag },
      403: forbidden('the caller does not own this table'),
      404: notTable,
      409: {
        description:
          'conflict: records are in states the new definition drops (`details.states`: state -> count); version_conflict: changed meanwhile by someone else (a race without If-Match)',
      },
    },
    handler: async (ctx, { params, body, auth }) => {
      const env = envOf(ctx, auth);
      await putWorkflow(env, params.id, body, (revision) => checkRevision(ctx, revision));
      return reply(env, params.id);
    },
  }),
];
