import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { notFound } from '../../platform/http/errors.js';
import { pageOf, pageQuery } from '../../platform/http/pagination.js';
import { created, defineRoute, ok, uuidParam as Uuid } from '../../platform/http/route.js';
import { EndBody, OverrideBody, OverrideDtoSchema, StopBody, TakeoverBody, TakeoverDtoSchema } from './takeovers.schemas.js';
import { actorOf, createOverride, endTakeover, listTakeovers, startTakeover, takeoverDto } from './takeovers.service.js';

const TAKEOVERS = ['Takeovers'];
const OVERRIDES = ['Presentation overrides'];
const IdParams = z.object({ id: Uuid });
const badBody = {
  description:
    'validation_failed: a field is wrong (both or neither of content and message, no target, endsAt not in the future) or names what does not exist (details.issues)',
};

const userOf = (auth: unknown) => (auth as SessionPrincipal).userId;

export const takeoverRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/takeovers',
    auth: 'session',
    minRole: 'viewer',
    tags: TAKEOVERS,
    summary: 'Takeovers, newest first (active, ended and cancelled)',
    query: pageQuery,
    responses: { 200: { description: 'Takeovers', data: pageOf(TakeoverDtoSchema) } },
    handler: async (ctx, { query }) => ok(await listTakeovers(ctx.deps.db, 'takeover', query.cursor, query.limit)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/takeovers',
    auth: 'session',
    minRole: 'publisher',
    tags: TAKEOVERS,
    summary: 'Start a takeover now: content or a message on the target screens, over everything else, until endsAt or cancelled',
    body: TakeoverBody,
    responses: { 201: { description: 'The takeover (active)', data: TakeoverDtoSchema }, 400: badBody },
    handler: async (ctx, { body, auth }) => created(await startTakeover(ctx.deps, body, await actorOf(ctx.deps.db, userOf(auth)))),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/takeovers/{id}',
    auth: 'session',
    minRole: 'viewer',
    tags: TAKEOVERS,
    summary: 'A takeover with its audit trail',
    params: IdParams,
    responses: { 200: { description: 'The takeover', data: TakeoverDtoSchema } },
    handler: async (ctx, { params }) => ok(await takeoverDto(ctx.deps.db, params.id, 'takeover')),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/takeovers/{id}/cancel',
    auth: 'session',
    minRole: 'publisher',
    tags: TAKEOVERS,
    summary: 'Cancel a takeover: screens return to what they played (one already over is answered unchanged)',
    params: IdParams,
    body: EndBody,
    responses: { 200: { description: 'The takeover', data: TakeoverDtoSchema }, 400: badBody },
    handler: async (ctx, { params, body, auth }) => {
      const dto = await endTakeover(ctx.deps, params.id, { by: await actorOf(ctx.deps.db, userOf(auth)), reason: body.reason, state: 'cancelled' });
      if (!dto) throw notFound('Takeover');
      return ok(dto);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/presentation-overrides',
    auth: 'session',
    minRole: 'viewer',
    tags: OVERRIDES,
    summary: 'Presentation overrides, newest first',
    query: pageQuery,
    responses: { 200: { description: 'Overrides', data: pageOf(OverrideDtoSchema) } },
    handler: async (ctx, { query }) => ok(await listTakeovers(ctx.deps.db, 'override', query.cursor, query.limit)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/presentation-overrides',
    auth: 'session',
    minRole: 'editor',
    tags: OVERRIDES,
    summary: 'Override what the target screens play from startsAt (default now) to endsAt: over schedules, under takeovers',
    body: OverrideBody,
    responses: { 201: { description: 'The override', data: OverrideDtoSchema }, 400: badBody },
    handler: async (ctx, { body, auth }) => created(await createOverride(ctx.deps, body, await actorOf(ctx.deps.db, userOf(auth)))),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/presentation-overrides/{id}/stop',
    auth: 'session',
    minRole: 'editor',
    tags: OVERRIDES,
    summary: 'Stop an override now (or drop one not started yet); one already over is answered unchanged',
    params: IdParams,
    body: StopBody,
    responses: { 200: { description: 'The override', data: OverrideDtoSchema }, 400: badBody },
    handler: async (ctx, { params, body, auth }) => {
      const dto = await endTakeover(ctx.deps, params.id, { by: await actorOf(ctx.deps.db, userOf(auth)), reason: body.reason }, 'override');
      if (!dto) throw notFound('Presentation override');
      return ok(dto);
    },
  }),
];
