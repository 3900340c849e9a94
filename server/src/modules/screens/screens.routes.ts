import type { Context } from 'koa';
import { sql } from 'kysely';
import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { invalidReference, notFound } from '../../platform/http/errors.js';
import { afterCursor, decodeCursor, pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { forgetTarget, refuseIfUsed } from './usage.js';
import { CLOSE_CODES } from '../../platform/realtime/hub.js';
import { storableJson } from '../../platform/db/json.js';
import { bumpManifestRevision } from './revision.js';
import {
  findScreen,
  HISTORY_KINDS,
  nowIso,
  ORIENTATIONS,
  PLAYER_FAMILIES,
  recordHistory,
  SCREEN_STATUSES,
  ScreenDto,
  screenDtos,
  STALE_AFTER_MS,
  type ScreenRow,
} from './screens.repo.js';

const TAGS = ['Screens'];
export const IdParams = z.object({ id: uuidParam });
const boolQuery = z.enum(['true', 'false']).transform((v) => v === 'true');

export async function screenOr404(ctx: Context, id: string): Promise<ScreenRow> {
  const row = await findScreen(ctx.deps.db, id);
  if (!row) throw notFound('Screen');
  return row;
}

export async function oneScreenDto(ctx: Context, id: string): Promise<ScreenDto> {
  const row = await screenOr404(ctx, id);
  return (await screenDtos(ctx.deps, [row], (s) => ctx.realtime.count(s) > 0))[0]!;
}

/** SQL for "the derived status is X" (same thresholds as deriveStatus). */
function statusCondition(status: (typeof SCREEN_STATUSES)[number], now: number) {
  const online = sql`(${now} - last_seen_ms) <= (2 * expected_interval_sec + 15) * 1000`;
  const staleLimit = sql`max(${STALE_AFTER_MS}, 10 * expected_interval_sec * 1000, (2 * expected_interval_sec + 15) * 1000)`;
  switch (status) {
    case 'pending':
      return sql<boolean>`last_seen_ms is null`;
    case 'online':
      return sql<boolean>`last_seen_ms is not null and ${online}`;
    case 'stale':
      return sql<boolean>`last_seen_ms is not null and not ${online} and (${now} - last_seen_ms) <= ${staleLimit}`;
    case 'offline':
      return sql<boolean>`last_seen_ms is not null and (${now} - last_seen_ms) > ${staleLimit}`;
  }
}

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
      const now = Date.now();
      let q = ctx.deps.db
        .selectFrom('screens')
        .selectAll()
        .where(afterCursor('name', 'id', 'asc', query.cursor));
      if (query.status) q = q.where(statusCondition(query.status, now));
      if (query.groupId) {
        const g = query.groupId;
        q = q.where((eb) =>
          eb.exists(
            eb.selectFrom('screen_group_members').select('screen_id').whereRef('screen_group_members.screen_id', '=', 'screens.id').where('group_id', '=', g),
          ),
        );
      }
      if (query.locationId) q = q.where('location_id', '=', query.locationId);
      if (query.family) q = query.family === 'unknown' ? q.where('player_family', 'is', null) : q.where('player_family', '=', query.family);
      if (query.q) {
        const needle = query.q.toLowerCase();
        q = q.where((eb) => eb(eb.fn('instr', [eb.fn('lower', ['name']), eb.val(needle)]), '>', 0));
      }
      if (query.tag) {
        const tag = query.tag;
        q = q.where(sql<boolean>`exists (select 1 from json_each(screens.tags) where json_each.value = ${tag})`);
      }
      if (query.disabled !== undefined) q = q.where('disabled_at', query.disabled ? 'is not' : 'is', null);
      if (query.revoked !== undefined) q = q.where('revoked_at', query.revoked ? 'is not' : 'is', null);
      const rows = await q
        .orderBy('name')
        .orderBy('id')
        .limit(query.limit + 1)
        .execute();
      const page = toPage(rows, query.limit, (r) => r.name);
      return ok({ items: await screenDtos(ctx.deps, page.items, (id) => ctx.realtime.count(id) > 0), nextCursor: page.nextCursor });
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
    handler: async (ctx, { params }) => ok(await oneScreenDto(ctx, params.id)),
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
      const db = ctx.deps.db;
      const row = await screenOr404(ctx, params.id);
      if (body.locationId && !(await db.selectFrom('locations').select('id').where('id', '=', body.locationId).executeTakeFirst()))
        throw invalidReference(`No location ${body.locationId}`, { path: ['locationId'], message: 'no such location' });
      const set: Partial<ScreenRow> = { updated_at: nowIso() };
      if (body.name !== undefined) set.name = body.name;
      if (body.locationId !== undefined) set.location_id = body.locationId;
      if (body.notes !== undefined) set.notes = body.notes;
      if (body.orientation !== undefined) set.orientation = body.orientation;
      if (body.tags !== undefined) set.tags = storableJson(body.tags, 'tags');
      await db.updateTable('screens').set(set).where('id', '=', row.id).execute();
      // Where it is (time zone, location targets), how it is turned and its tags change what it plays.
      const affectsPlayback =
        (body.locationId !== undefined && body.locationId !== row.location_id) ||
        (body.orientation !== undefined && body.orientation !== row.orientation) ||
        (body.name !== undefined && body.name !== row.name) ||
        body.tags !== undefined;
      if (affectsPlayback) await bumpManifestRevision(ctx.deps, [row.id]);
      return ok(await oneScreenDto(ctx, row.id));
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
      const row = await screenOr404(ctx, params.id);
      if (!row.disabled_at) {
        await ctx.deps.db.updateTable('screens').set({ disabled_at: nowIso(), updated_at: nowIso() }).where('id', '=', row.id).execute();
        await recordHistory(ctx.deps.db, row.id, 'disabled', { by: (auth as SessionPrincipal).userId });
      }
      ctx.realtime.closeScreen(row.id, CLOSE_CODES.disabled, 'screen disabled');
      return ok(await oneScreenDto(ctx, row.id));
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
      const row = await screenOr404(ctx, params.id);
      if (row.disabled_at) {
        await ctx.deps.db.updateTable('screens').set({ disabled_at: null, updated_at: nowIso() }).where('id', '=', row.id).execute();
        await recordHistory(ctx.deps.db, row.id, 'enabled', { by: (auth as SessionPrincipal).userId });
      }
      return ok(await oneScreenDto(ctx, row.id));
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
      const db = ctx.deps.db;
      const row = await screenOr404(ctx, params.id);
      const now = nowIso();
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('device_credentials').set({ revoked_at: now }).where('screen_id', '=', row.id).where('revoked_at', 'is', null).execute();
        if (!row.revoked_at) {
          await trx.updateTable('screens').set({ revoked_at: now, updated_at: now }).where('id', '=', row.id).execute();
          await recordHistory(trx, row.id, 'revoked', { by: (auth as SessionPrincipal).userId });
        }
      });
      ctx.realtime.closeScreen(row.id, CLOSE_CODES.revoked, 'credential revoked');
      return ok(await oneScreenDto(ctx, row.id));
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
      const db = ctx.deps.db;
      const row = await screenOr404(ctx, params.id);
      await db.transaction().execute(async (trx) => {
        await refuseIfUsed(ctx.deps, trx, 'screen', row.id, `Screen "${row.name}"`);
        await trx.deleteFrom('screens').where('id', '=', row.id).execute();
        await forgetTarget(ctx.deps, trx, 'screen', row.id);
      });
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
      await screenOr404(ctx, params.id);
      let q = ctx.deps.db.selectFrom('screen_history').selectAll().where('screen_id', '=', params.id);
      if (query.cursor) q = q.where('id', '<', decodeHistoryCursor(query.cursor));
      if (query.kind) q = q.where('kind', 'in', query.kind.split(','));
      if (query.from) q = q.where('at_ms', '>=', Date.parse(query.from));
      if (query.to) q = q.where('at_ms', '<', Date.parse(query.to));
      const rows = await q
        .orderBy('id', 'desc')
        .limit(query.limit + 1)
        .execute();
      const page = toPage(rows, query.limit, (r) => r.at_ms);
      return ok({
        items: page.items.map((r) => ({ id: r.id, at: r.at, kind: r.kind, detail: JSON.parse(r.detail) as Record<string, unknown> })),
        nextCursor: page.nextCursor,
      });
    },
  }),
];

function decodeHistoryCursor(cursor: string): string {
  return decodeCursor(cursor).id;
}
