import type { Context } from 'koa';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { checkRevision, etagOf } from '../../platform/http/revision.js';
import { notFound } from '../../platform/http/errors.js';
import { created, defineRoute, noContent, ok, uuidParam as Uuid } from '../../platform/http/route.js';
import { type CampaignDraft, draftOf, getCampaignRow, getReleaseRow, listCampaignRows, listReleaseRows } from './campaigns.repo.js';
import { restoreRelease } from './campaigns.publishable.js';
import {
  checkDraft,
  createCampaign,
  deleteCampaign,
  publishCampaign,
  publishedRelease,
  releaseSummary,
  unpublishedChanges,
  writeDraft,
} from './campaigns.service.js';
import { preflight } from './campaigns.preflight.js';

const TAGS = ['Campaigns'];
const IdParams = z.object({ id: Uuid });

const Instant = z.iso.datetime({ offset: true });
const WindowInput = z.object({ startsAt: Instant, endsAt: Instant }).describe('when the campaign plays; its placements repeat within it');
const ShowInput = z.object({ type: z.enum(['playlist', 'layout']), id: Uuid }).describe('what the campaign plays');
const ContentItem = z.object({ type: z.enum(['playlist', 'layout', 'widget']), id: Uuid });
const PlacementInput = z.object({
  name: z.string().trim().max(200).optional(),
  targets: z.object({
    screenIds: z.array(Uuid).max(1000).optional(),
    groupIds: z.array(Uuid).max(1000).optional(),
    locationIds: z.array(Uuid).max(1000).optional(),
  }),
  priority: z.number().int().min(-1000).max(1000).default(0),
  rrule: z.string().trim().max(1000).nullable().optional(),
  timeZone: z.string().max(100).nullable().optional(),
});
const DraftFields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000),
  window: WindowInput.nullable(),
  show: ShowInput.nullable(),
  content: z.array(ContentItem).max(50).describe('released with it (the show is always included)'),
  placements: z.array(PlacementInput).max(20).describe('the schedules the release makes within the window'),
};

const Summary = z.object({
  id: z.string(),
  number: z.number().int(),
  publishedAt: z.string(),
  publishedBy: z.string().nullable(),
  note: z.string(),
  source: z.string(),
});
const DraftDto = z.object({
  name: z.string(),
  description: z.string(),
  window: z.object({ startsAt: z.string(), endsAt: z.string() }).nullable(),
  show: z.object({ type: z.string(), id: z.string() }).nullable(),
  content: z.array(z.object({ type: z.string(), id: z.string() })),
  placements: z.array(
    z.object({
      name: z.string().optional(),
      targets: z.object({ screenIds: z.array(z.string()).optional(), groupIds: z.array(z.string()).optional(), locationIds: z.array(z.string()).optional() }),
      priority: z.number(),
      rrule: z.string().nullable().optional(),
      timeZone: z.string().nullable().optional(),
    }),
  ),
});
const CampaignDto = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    draft: DraftDto,
    revision: z.number().int().describe('bumped by every change of the draft; send it back in If-Match'),
    publication: Summary.nullable().describe('the release screens play'),
    unpublishedChanges: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Campaign' });
const ReleaseDto = Summary.extend({ snapshot: z.unknown().optional() }).meta({ id: 'CampaignRelease' });
const Finding = z.looseObject({ code: z.string(), message: z.string() });

async function dto(db: Db, id: string) {
  const row = await getCampaignRow(db, id);
  const release = await publishedRelease(db, row);
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    draft: draftOf(row),
    revision: row.revision,
    publication: release ? releaseSummary(release) : null,
    unpublishedChanges: unpublishedChanges(row, release),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

async function reply(db: Db, id: string, status: 200 | 201 = 200) {
  const d = await dto(db, id);
  return (status === 201 ? created : ok)(d, etagOf(d.revision));
}

const userOf = (auth: unknown) => (auth as SessionPrincipal).userId;
const ifMatchSent = (ctx: Context) => Boolean(ctx.get('if-match'));
const etag = { headers: { ETag: { description: 'The campaign’s revision; send it back in If-Match' } } };
const stale = {
  409: { description: 'version_conflict: another change won meanwhile (no If-Match sent)' },
  412: { description: 'version_conflict: If-Match named a stale revision' },
};
const badRefs = { description: 'validation_failed or invalid_reference: a field is wrong or names what does not exist (details.issues)' };

export const campaignRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/campaigns',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'List campaigns by name',
    query: pageQuery,
    responses: { 200: { description: 'Campaigns', data: pageOf(CampaignDto) } },
    handler: async (ctx, { query }) => {
      const rows = await listCampaignRows(ctx.deps.db, query.cursor, query.limit);
      const page = toPage(rows, query.limit, (r) => r.name);
      const items = [];
      for (const r of page.items) items.push(await dto(ctx.deps.db, r.id));
      return ok({ items, nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/campaigns',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Create a campaign (a draft; nothing plays until it is released)',
    body: z.object({
      name: DraftFields.name,
      description: DraftFields.description.default(''),
      window: DraftFields.window.default(null),
      show: DraftFields.show.default(null),
      content: DraftFields.content.default([]),
      placements: DraftFields.placements.default([]),
    }),
    responses: { 201: { description: 'The campaign', data: CampaignDto, ...etag }, 400: badRefs },
    handler: async (ctx, { body, auth }) => {
      const id = await createCampaign(ctx.deps.db, body as CampaignDraft, userOf(auth));
      return reply(ctx.deps.db, id, 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/campaigns/{id}',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'A campaign: its draft, revision, published release and whether the draft differs',
    params: IdParams,
    responses: { 200: { description: 'The campaign', data: CampaignDto, ...etag } },
    handler: async (ctx, { params }) => reply(ctx.deps.db, params.id),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/campaigns/{id}',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Delete a campaign, its releases and every schedule showing it (screens stop playing it)',
    params: IdParams,
    ifMatch: true,
    responses: {
      204: { description: 'Deleted' },
      403: { description: 'forbidden: approvals are on and screens play it; needs the publisher role' },
      412: stale[412],
    },
    handler: async (ctx, { params, auth }) => {
      const row = await getCampaignRow(ctx.deps.db, params.id);
      checkRevision(ctx, row.revision);
      await deleteCampaign(ctx.deps, row, (auth as SessionPrincipal).role);
      return noContent();
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/campaigns/{id}/draft',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Change the draft (any field; screens keep the released campaign until the next release)',
    params: IdParams,
    body: z.object(DraftFields).partial(),
    ifMatch: true,
    responses: { 200: { description: 'The campaign', data: CampaignDto, ...etag }, 400: badRefs, ...stale },
    handler: async (ctx, { params, body }) => {
      const row = await getCampaignRow(ctx.deps.db, params.id);
      checkRevision(ctx, row.revision);
      const draft = { ...draftOf(row), ...body } as CampaignDraft;
      await checkDraft(ctx.deps.db, draft);
      await writeDraft(ctx.deps.db, row, draft, ifMatchSent(ctx));
      return reply(ctx.deps.db, row.id);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/campaigns/{id}/preflight',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'What would stop releasing the draft (errors) and what may surprise (warnings)',
    params: IdParams,
    responses: {
      200: { description: 'The findings', data: z.object({ ok: z.boolean(), errors: z.array(Finding), warnings: z.array(Finding) }) },
    },
    handler: async (ctx, { params }) => ok(await preflight(ctx.deps.db, await getCampaignRow(ctx.deps.db, params.id))),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/campaigns/{id}/releases',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'Releases, newest first',
    params: IdParams,
    query: pageQuery,
    responses: { 200: { description: 'Releases', data: pageOf(ReleaseDto) } },
    handler: async (ctx, { params, query }) => {
      await getCampaignRow(ctx.deps.db, params.id);
      const rows = await listReleaseRows(ctx.deps.db, params.id, query.cursor, query.limit);
      const page = toPage(rows, query.limit, (r) => r.number);
      return ok({ items: page.items.map((r) => ({ ...releaseSummary(r), snapshot: JSON.parse(r.snapshot) as unknown })), nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/campaigns/{id}/releases/{releaseId}/restore',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Make a release’s campaign draft the draft again (screens unchanged until the next release)',
    params: z.object({ id: Uuid, releaseId: Uuid }),
    ifMatch: true,
    responses: {
      200: { description: 'The campaign', data: CampaignDto, ...etag },
      409: { description: 'conflict: the release refers to what no longer exists (or version_conflict)' },
      412: stale[412],
    },
    handler: async (ctx, { params }) => {
      const row = await getCampaignRow(ctx.deps.db, params.id);
      checkRevision(ctx, row.revision);
      const release = await getReleaseRow(ctx.deps.db, params.id, params.releaseId);
      if (!release) throw notFound('Release');
      await restoreRelease(ctx.deps.db, row.id, release);
      return reply(ctx.deps.db, row.id);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/campaigns/{id}/publish',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Release the draft: publish its content, schedule its placements, all or nothing',
    description:
      'In one transaction: every content item with unpublished changes is published (source `campaign`), the campaign’s own schedules are replaced by its placements over the window, and the release is recorded. Anything missing or a window that has ended (409, details name it) leaves everything as it was. With approvals on: 409 (submit it instead).',
    params: IdParams,
    body: z.object({ note: z.string().max(500).optional() }),
    responses: {
      201: { description: 'The release', data: ReleaseDto },
      409: {
        description:
          'conflict: approvals are on, or the draft has no window/show, its window has ended, or it refers to what no longer exists (nothing published)',
      },
    },
    handler: async (ctx, { params, body, auth }) => {
      const release = await publishCampaign(ctx.deps, params.id, body.note ?? '', userOf(auth));
      return created({ ...releaseSummary(release), snapshot: JSON.parse(release.snapshot) as unknown });
    },
  }),
];
