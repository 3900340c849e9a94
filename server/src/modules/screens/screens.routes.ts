import type { Context } from 'koa';
import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { decodeCursor, pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { CLOSE_CODES } from '../../platform/realtime/hub.js';
import { HISTORY_KINDS, listScreens, ORIENTATIONS, PLAYER_FAMILIES, SCREEN_STATUSES, ScreenDto, screenHistoryPage } from './screens.repo.js';
import {
  type Connected,
  deleteScreen,
  disableScreen,
  enableScreen,
  oneScreenDto,
  patchScreen,
  revokeScreen,
  screenDtos,
  screenOr404,
} from './screens.service.js';

const TAGS = ['Screens'];
const IdParams = z.object({ id: uuidParam });
const boolQuery = z.enum(['true', 'false']).transform((v) => v === 'true');

/** The socket state the screen DTOs show, from this app's hub. */
const connectedIn =
  (ctx: Context): Connected =>
  (id) =>
    ctx.realtime.count(id) > 0;

/** `kind=` of the player history: known kinds separated by commas. */
const HISTORY_KIND_LIST = new RegExp(`^(${HISTORY_KINDS.join('|')})(,(${HISTORY_KINDS.join('|')}))*$`);
const HistoryItem = z.object({ id: z.string(), at: z.string(), kind: z.string(), detail: z.record(z.string(), z.unknown()) }).meta({ id: 'PlayerHistoryItem' });

export const screenRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/screens',
    auth: 'session',
    tags: TAGS,
    summary: 'List screens with their derived status',
    description:
      'Filters: `status` (online, offline, stale, pending: derived from heartbeat and liveness receipt times only), `groupId`, `locationId`, `family` (android, desktop-linux, edge, or `unknown`), `q` (name, literal, case-insensitive), `disabled`, `revoked`, `tag`. Ordered by name.',
    query: pageQuery.extend({
      status: z.enum(SCREEN_STATUSES).optional(),
      groupId: uuidParam.optional(),
      locationId: uuidParam.optional(),
      family: z.enum([...PLAYER_FAMILIES, 'unknown']).optional(),
      q: z.string().max(200).optional(),
      tag: z.string().max(100).optional(),
      disabled: boolQuery.optional(),
      revoked: boolQuery.optional(),
    }),
    responses: { 200: { description: 'Screens by name', data: pageOf(ScreenDto) } },
    handler: async (ctx, { query }) => {
      const page = toPage(await listScreens(ctx.deps.db, query, Date.now()), query.limit, (r) => r.name);
      return ok({ items: await screenDtos(ctx.deps, page.items, connectedIn(ctx)), nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/screens/{id}',
    auth: 'session',
    tags: TAGS,
    summary: 'One screen, with its last status document',
    params: IdParams,
    responses: { 200: { description: 'The screen', data: ScreenDto } },
    handler: async (ctx, { params }) => ok(await oneScreenDto(ctx.deps, params.id, connectedIn(ctx))),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/screens/{id}',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Rename, move, annotate, rotate or tag a screen',
    params: IdParams,
    body: z
      .object({
        name: z.string().trim().min(1).max(200).optional(),
        locationId: uuidParam.nullable().optional(),
        notes: z.string().max(5000).nullable().optional(),
        orientation: z.enum(ORIENTATIONS).optional(),
        tags: z
          .array(z.string().trim().min(1).max(100))
          .max(50)
          .transform((t) => [...new Set(t)])
          .optional(),
      })
      .strict(),
    responses: {
      200: { description: 'The screen', data: ScreenDto },
      400: { description: 'validation_failed: locationId names no location' },
      404: { description: 'not_found: the screen' },
    },
    handler: async (ctx, { params, body }) => {
      const row = await screenOr404(ctx.deps.db, params.id);
      await patchScreen(ctx.deps, row, body);
      return ok(await oneScreenDto(ctx.deps, row.id, connectedIn(ctx)));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/screens/{id}/disable',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Disable a screen: its heartbeats get 403 screen_disabled, its socket closes',
    params: IdParams,
    responses: { 200: { description: 'The screen', data: ScreenDto } },
    handler: async (ctx, { params, auth }) => {
      const row = await screenOr404(ctx.deps.db, params.id);
      await disableScreen(ctx.deps.db, row, (auth as SessionPrincipal).userId);
      ctx.realtime.closeScreen(row.id, CLOSE_CODES.disabled, 'screen disabled');
      return ok(await oneScreenDto(ctx.deps, row.id, connectedIn(ctx)));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/screens/{id}/enable',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Enable a disabled screen',
    params: IdParams,
    responses: { 200: { description: 'The screen', data: ScreenDto } },
    handler: async (ctx, { params, auth }) => {
      const row = await screenOr404(ctx.deps.db, params.id);
      await enableScreen(ctx.deps.db, row, (auth as SessionPrincipal).userId);
      return ok(await oneScreenDto(ctx.deps, row.id, connectedIn(ctx)));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/screens/{id}/revoke',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Revoke the screen’s credential: it gets 401 credential_revoked and must pair again',
    description: 'To put the same screen back (keeping its history, groups and assignments), approve a new pairing with `screenId`.',
    params: IdParams,
    responses: { 200: { description: 'The screen', data: ScreenDto } },
    handler: async (ctx, { params, auth }) => {
      const row = await screenOr404(ctx.deps.db, params.id);
      await revokeScreen(ctx.deps.db, row, (auth as SessionPrincipal).userId);
      ctx.realtime.closeScreen(row.id, CLOSE_CODES.revoked, 'credential revoked');
      return ok(await oneScreenDto(ctx.deps, row.id, connectedIn(ctx)));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/screens/{id}',
    auth: 'session',
    minRole: 'admin',
    extension: true,
    tags: TAGS,
    summary: 'Delete a screen: its credential, history, commands and group memberships go with it',
    description:
      'Refused (409 `conflict`) while schedules name the screen directly: `details.usedBy` lists them (`{type, id, name}`); change their targets first. The player is disconnected and its credential stops working (401 `invalid_credential`); it shows a new pairing code.',
    params: IdParams,
    responses: { 204: { description: 'Deleted' }, 409: { description: 'conflict: schedules still name the screen; details.usedBy lists them' } },
    handler: async (ctx, { params }) => {
      const row = await screenOr404(ctx.deps.db, params.id);
      await deleteScreen(ctx.deps, row);
      ctx.realtime.closeScreen(row.id, CLOSE_CODES.revoked, 'screen deleted');
      return noContent();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/screens/{id}/player-history',
    auth: 'session',
    tags: TAGS,
    summary: 'Heartbeats, versions, status changes and actions over time, newest first',
    description: `Kinds: ${HISTORY_KINDS.map((k) => `\`${k}\``).join(', ')}. Filter with \`kind\` (comma-separated; an unknown kind is 400) and \`from\`/\`to\`. Heartbeats and liveness pings are kept \`retention.heartbeatDays\` (settings, default 30), the rest a year (pruned by the periodic task \`screens.retention\`).`,
    params: IdParams,
    query: pageQuery.extend({
      kind: z
        .string()
        .max(200)
        .regex(HISTORY_KIND_LIST, { message: `kind must be one or more of ${HISTORY_KINDS.join(', ')}, separated by commas` })
        .optional()
        .meta({ description: `Comma-separated kinds: ${HISTORY_KINDS.join(', ')}` }),
      from: z.iso.datetime({ offset: true }).optional(),
      to: z.iso.datetime({ offset: true }).optional(),
    }),
    responses: { 200: { description: 'History, newest first', data: pageOf(HistoryItem) } },
    handler: async (ctx, { params, query }) => {
      await screenOr404(ctx.deps.db, params.id);
      const rows = await screenHistoryPage(ctx.deps.db, params.id, {
        beforeId: query.cursor ? decodeCursor(query.cursor).id : undefined,
        kinds: query.kind ? query.kind.split(',') : undefined,
        fromMs: query.from ? Date.parse(query.from) : undefined,
        toMs: query.to ? Date.parse(query.to) : undefined,
        limit: query.limit,
      });
      const page = toPage(rows, query.limit, (r) => r.at_ms);
      return ok({
        items: page.items.map((r) => ({ id: r.id, at: r.at, kind: r.kind, detail: JSON.parse(r.detail) as Record<string, unknown> })),
        nextCursor: page.nextCursor,
      });
    },
  }),
];
