import type { Context } from 'koa';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import type { ScreenGroupsTable } from '../../platform/db/schema.js';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError, invalidReference, notFound, unknownIdsIn } from '../../platform/http/errors.js';
import { afterCursor, pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { created, defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { storableJson } from '../../platform/db/json.js';
import { queueCommand } from './commands.service.js';
import { effectivePolicy } from './policies.js';
import { bumpManifestRevision } from './revision.js';
import { deriveStatus, newId, nowIso, SCREEN_STATUSES } from './screens.repo.js';
import { groupMemberIds } from './targets.js';
import { forgetTarget, refuseIfUsed } from './usage.js';

const TAGS = ['Screen groups'];
const IdParams = z.object({ id: uuidParam });

export const GroupDto = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    screenIds: z.array(z.string()),
    memberCount: z.number().int(),
    hasPolicy: z.boolean(),
    hasSpan: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'ScreenGroup' });

async function groupDtos(db: Db, rows: readonly ScreenGroupsTable[]) {
  const members = new Map<string, string[]>(rows.map((r) => [r.id, []]));
  if (rows.length) {
    const m = await db
      .selectFrom('screen_group_members')
      .innerJoin('screens', 'screens.id', 'screen_group_members.screen_id')
      .select(['screen_group_members.group_id', 'screen_group_members.screen_id'])
      .where(
        'group_id',
        'in',
        rows.map((r) => r.id),
      )
      .orderBy('screens.name')
      .orderBy('screens.id')
      .execute();
    for (const r of m) members.get(r.group_id)?.push(r.screen_id);
  }
  return rows.map((r) => {
    const ids = members.get(r.id) ?? [];
    return {
      id: r.id,
      name: r.name,
      description: r.description,
      screenIds: ids,
      memberCount: ids.length,
      hasPolicy: r.policy !== null,
      hasSpan: r.span !== null,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    };
  });
}

export async function groupOr404(ctx: Context, id: string): Promise<ScreenGroupsTable> {
  const row = await ctx.deps.db.selectFrom('screen_groups').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Screen group');
  return row;
}

async function oneGroup(ctx: Context, id: string) {
  return (await groupDtos(ctx.deps.db, [await groupOr404(ctx, id)]))[0]!;
}

// ---- Span (video wall) ----

export const Span = z
  .object({
    rows: z.number().int().min(1).max(16),
    columns: z.number().int().min(1).max(16),
    panel: z.object({ widthPx: z.number().int().min(1).max(16384), heightPx: z.number().int().min(1).max(16384) }).strict(),
    bezel: z
      .object({
        /** Pixels hidden between two panels side by side (both bezels together). */
        horizontalPx: z.number().int().min(0).max(4096),
        /** Pixels hidden between two panels one above the other. */
        verticalPx: z.number().int().min(0).max(4096),
      })
      .strict()
      .default({ horizontalPx: 0, verticalPx: 0 }),
    cells: z.array(z.object({ screenId: uuidParam, row: z.number().int().min(0), column: z.number().int().min(0) }).strict()).max(256),
  })
  .strict();
type Span = z.infer<typeof Span>;

const Viewport = z.object({ xPx: z.number().int(), yPx: z.number().int(), widthPx: z.number().int(), heightPx: z.number().int() });
export const SpanDto = z
  .object({
    groupId: z.string(),
    rows: z.number().int(),
    columns: z.number().int(),
    panel: z.object({ widthPx: z.number().int(), heightPx: z.number().int() }),
    bezel: z.object({ horizontalPx: z.number().int(), verticalPx: z.number().int() }),
    canvas: z.object({ widthPx: z.number().int(), heightPx: z.number().int() }),
    cells: z.array(z.object({ screenId: z.string(), row: z.number().int(), column: z.number().int(), viewport: Viewport })),
  })
  .meta({ id: 'Span' });
type SpanDto = z.infer<typeof SpanDto>;

/**
 * Bezel compensation: the canvas includes the pixels hidden behind bezels, so a line
 * crossing two panels stays straight; each panel shows the slice of the canvas at its cell.
 */
export function spanGeometry(groupId: string, span: Span): SpanDto {
  const stepX = span.panel.widthPx + span.bezel.horizontalPx;
  const stepY = span.panel.heightPx + span.bezel.verticalPx;
  return {
    groupId,
    rows: span.rows,
    columns: span.columns,
    panel: span.panel,
    bezel: span.bezel,
    canvas: {
      widthPx: span.columns * span.panel.widthPx + (span.columns - 1) * span.bezel.horizontalPx,
      heightPx: span.rows * span.panel.heightPx + (span.rows - 1) * span.bezel.verticalPx,
    },
    cells: span.cells.map((c) => ({
      ...c,
      viewport: { xPx: c.column * stepX, yPx: c.row * stepY, widthPx: span.panel.widthPx, heightPx: span.panel.heightPx },
    })),
  };
}

export function parseSpan(text: string | null): Span | null {
  if (!text) return null;
  const r = Span.safeParse(JSON.parse(text));
  return r.success ? r.data : null;
}

// ---- Display control ----

const DisplayAction = z.enum(['display_on', 'display_off']);
const DisplayMember = z.object({
  screenId: z.string(),
  name: z.string(),
  status: z.enum(SCREEN_STATUSES),
  action: DisplayAction,
  willQueue: z.boolean(),
  reason: z.string().nullable(),
});

async function displayPlan(ctx: Context, groupId: string, action: z.infer<typeof DisplayAction>) {
  const db = ctx.deps.db;
  const ids = await groupMemberIds(db, groupId);
  const rows = ids.length ? await db.selectFrom('screens').selectAll().where('id', 'in', ids).orderBy('name').orderBy('id').execute() : [];
  const out: z.infer<typeof DisplayMember>[] = [];
  for (const s of rows) {
    const status = deriveStatus(s);
    let reason: string | null = null;
    let willQueue = true;
    if (s.revoked_at) [willQueue, reason] = [false, 'revoked: pair it again first'];
    else if (s.disabled_at) [willQueue, reason] = [false, 'disabled'];
    else if (!(await effectivePolicy(db, s.id)).values.displayControlEnabled) [willQueue, reason] = [false, 'display control is off in its policy'];
    else if (status !== 'online') reason = `${status}: the command waits until it reconnects (or expires)`;
    out.push({ screenId: s.id, name: s.name, status, action, willQueue, reason });
  }
  return out;
}

/** 400 naming each screenId of the body that is no screen (an unknown id in a body is invalid input; docs/api-conventions.md). */
async function assertScreens(db: Db, screenIds: readonly string[]): Promise<void> {
  const unique = [...new Set(screenIds)];
  if (unique.length === 0) return;
  const known = new Set((await db.selectFrom('screens').select('id').where('id', 'in', unique).execute()).map((r) => r.id));
  const refs = unknownIdsIn('screenIds', screenIds, known, 'no such screen');
  const missing = [...new Set(screenIds.filter((id) => !known.has(id)))];
  if (refs.length) throw invalidReference(`No such screen: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? '...' : ''}`, refs);
}

export const groupRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/screen-groups',
    auth: 'session',
    tags: TAGS,
    summary: 'List screen groups',
    query: pageQuery.extend({ q: z.string().max(200).optional() }),
    responses: { 200: { description: 'Groups by name', data: pageOf(GroupDto) } },
    handler: async (ctx, { query }) => {
      let q = ctx.deps.db
        .selectFrom('screen_groups')
        .selectAll()
        .where(afterCursor('name', 'id', 'asc', query.cursor));
      if (query.q) {
        const needle = query.q.toLowerCase();
        q = q.where((eb) => eb(eb.fn('instr', [eb.fn('lower', ['name']), eb.val(needle)]), '>', 0));
      }
      const rows = await q
        .orderBy('name')
        .orderBy('id')
        .limit(query.limit + 1)
        .execute();
      const page = toPage(rows, query.limit, (r) => r.name);
      return ok({ items: await groupDtos(ctx.deps.db, page.items), nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/screen-groups',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Create a group, optionally with members',
    body: z
      .object({
        name: z.string().trim().min(1).max(200),
        description: z.string().max(2000).nullable().optional(),
        screenIds: z.array(uuidParam).max(1000).optional(),
      })
      .strict(),
    responses: { 201: { description: 'The group', data: GroupDto }, 400: { description: 'validation_failed: a screenId names no screen' } },
    handler: async (ctx, { body }) => {
      const db = ctx.deps.db;
      const ids = [...new Set(body.screenIds ?? [])];
      await assertScreens(db, body.screenIds ?? []);
      const now = nowIso();
      const id = newId();
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('screen_groups')
          .values({ id, name: body.name, description: body.description ?? null, policy: null, span: null, created_at: now, updated_at: now })
          .execute();
        for (const s of ids) await trx.insertInto('screen_group_members').values({ group_id: id, screen_id: s, added_at: now }).execute();
      });
      await bumpManifestRevision(ctx.deps, ids);
      return created(await oneGroup(ctx, id));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/screen-groups/{id}',
    auth: 'session',
    tags: TAGS,
    summary: 'One group with its members',
    params: IdParams,
    responses: { 200: { description: 'The group', data: GroupDto } },
    handler: async (ctx, { params }) => ok(await oneGroup(ctx, params.id)),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/screen-groups/{id}',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Rename or describe a group',
    params: IdParams,
    body: z.object({ name: z.string().trim().min(1).max(200).optional(), description: z.string().max(2000).nullable().optional() }).strict(),
    responses: { 200: { description: 'The group', data: GroupDto } },
    handler: async (ctx, { params, body }) => {
      const g = await groupOr404(ctx, params.id);
      await ctx.deps.db
        .updateTable('screen_groups')
        .set({
          updated_at: nowIso(),
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
        })
        .where('id', '=', g.id)
        .execute();
      // Group names order policy precedence: members' effective policy may change.
      if (body.name !== undefined && body.name !== g.name && g.policy) await bumpManifestRevision(ctx.deps, await groupMemberIds(ctx.deps.db, g.id));
      return ok(await oneGroup(ctx, g.id));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/screen-groups/{id}',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Delete a group (its screens stay)',
    description:
      'Refused (409 `conflict`) while schedules target the group: `details.usedBy` lists them (`{type, id, name}`); change their targets first. The group’s playlist assignment goes with it; its members play what remains for them.',
    params: IdParams,
    responses: { 204: { description: 'Deleted' }, 409: { description: 'conflict: schedules still target the group; details.usedBy lists them' } },
    handler: async (ctx, { params }) => {
      const g = await groupOr404(ctx, params.id);
      const members = await groupMemberIds(ctx.deps.db, g.id);
      await ctx.deps.db.transaction().execute(async (trx) => {
        await refuseIfUsed(ctx.deps, trx, 'group', g.id, `Group "${g.name}"`);
        await trx.deleteFrom('screen_groups').where('id', '=', g.id).execute();
        await forgetTarget(ctx.deps, trx, 'group', g.id);
      });
      await bumpManifestRevision(ctx.deps, members);
      return noContent();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/screen-groups/{id}/screens',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Add screens to a group (already-members are fine)',
    params: IdParams,
    body: z.object({ screenIds: z.array(uuidParam).min(1).max(1000) }).strict(),
    responses: {
      200: { description: 'The group', data: GroupDto },
      400: { description: 'validation_failed: a screenId names no screen' },
      404: { description: 'not_found: the group' },
    },
    handler: async (ctx, { params, body }) => {
      const db = ctx.deps.db;
      const g = await groupOr404(ctx, params.id);
      const ids = [...new Set(body.screenIds)];
      await assertScreens(db, body.screenIds);
      const now = nowIso();
      const added: string[] = [];
      await db.transaction().execute(async (trx) => {
        for (const s of ids) {
          const r = await trx
            .insertInto('screen_group_members')
            .values({ group_id: g.id, screen_id: s, added_at: now })
            .onConflict((oc) => oc.doNothing())
            .executeTakeFirst();
          if (Number(r.numInsertedOrUpdatedRows ?? 0n) > 0) added.push(s);
        }
        await trx.updateTable('screen_groups').set({ updated_at: now }).where('id', '=', g.id).execute();
      });
      await bumpManifestRevision(ctx.deps, added);
      return ok(await oneGroup(ctx, g.id));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/screen-groups/{id}/screens/{screenId}',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Remove a screen from a group (and from its span)',
    params: z.object({ id: uuidParam, screenId: uuidParam }),
    responses: { 204: { description: 'Removed' }, 404: { description: 'not_found: group, or the screen is not a member' } },
    handler: async (ctx, { params }) => {
      const db = ctx.deps.db;
      const g = await groupOr404(ctx, params.id);
      const r = await db.deleteFrom('screen_group_members').where('group_id', '=', g.id).where('screen_id', '=', params.screenId).executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) throw notFound('Group member');
      const span = parseSpan(g.span);
      const touched = [params.screenId];
      if (span?.cells.some((c) => c.screenId === params.screenId)) {
        span.cells = span.cells.filter((c) => c.screenId !== params.screenId);
        await db
          .updateTable('screen_groups')
          .set({ span: JSON.stringify(span), updated_at: nowIso() })
          .where('id', '=', g.id)
          .execute();
        touched.push(...span.cells.map((c) => c.screenId));
      }
      await bumpManifestRevision(ctx.deps, touched);
      return noContent();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/screen-groups/{id}/span',
    auth: 'session',
    tags: TAGS,
    summary: 'The group’s video wall layout (null when not a span)',
    params: IdParams,
    responses: { 200: { description: 'The span with each cell’s viewport, or null', data: SpanDto.nullable() } },
    handler: async (ctx, { params }) => {
      const g = await groupOr404(ctx, params.id);
      const span = parseSpan(g.span);
      return ok(span ? spanGeometry(g.id, span) : null);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/screen-groups/{id}/span',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Make the group a video wall: rows × columns, panel size, bezel compensation, each member’s cell',
    description:
      'Rows and columns count from 0 in `cells`. Every cell screen must be a member; one screen per cell, one cell per screen. Members without a cell play normally.',
    params: IdParams,
    body: Span,
    responses: { 200: { description: 'The span', data: SpanDto }, 400: { description: 'validation_failed: cell outside the grid, duplicates, not a member' } },
    handler: async (ctx, { params, body }) => {
      const g = await groupOr404(ctx, params.id);
      const members = new Set(await groupMemberIds(ctx.deps.db, g.id));
      const bad = (message: string) =>
        new ApiError('validation_failed', message, { details: { issues: [{ location: 'body', path: ['cells'], message, code: 'custom' }] } });
      const positions = new Set<string>();
      const screens = new Set<string>();
      for (const [i, c] of body.cells.entries()) {
        if (c.row >= body.rows || c.column >= body.columns) throw bad(`Cell (${c.row}, ${c.column}) is outside a ${body.rows}×${body.columns} grid`);
        if (positions.has(`${c.row},${c.column}`)) throw bad(`Two screens in cell (${c.row}, ${c.column})`);
        if (screens.has(c.screenId)) throw bad(`Screen ${c.screenId} has two cells`);
        if (!members.has(c.screenId))
          throw invalidReference(`Screen ${c.screenId} is not a member of the group`, {
            path: ['cells', i, 'screenId'],
            message: 'not a screen of this group',
          });
        positions.add(`${c.row},${c.column}`);
        screens.add(c.screenId);
      }
      const old = parseSpan(g.span);
      await ctx.deps.db
        .updateTable('screen_groups')
        .set({ span: storableJson(body, 'The span'), updated_at: nowIso() })
        .where('id', '=', g.id)
        .execute();
      await bumpManifestRevision(ctx.deps, [...screens, ...(old?.cells.map((c) => c.screenId) ?? [])]);
      return ok(spanGeometry(g.id, body));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/screen-groups/{id}/display-control/preview',
    auth: 'session',
    tags: TAGS,
    summary: 'What turning the group’s displays on or off would do, member by member',
    params: IdParams,
    query: z.object({ action: DisplayAction }),
    responses: { 200: { description: 'The plan', data: z.object({ groupId: z.string(), action: DisplayAction, members: z.array(DisplayMember) }) } },
    handler: async (ctx, { params, query }) => {
      const g = await groupOr404(ctx, params.id);
      return ok({ groupId: g.id, action: query.action, members: await displayPlan(ctx, g.id, query.action) });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/screen-groups/{id}/display-control',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Turn the group’s displays on or off: queues a display command per member',
    params: IdParams,
    body: z
      .object({
        action: DisplayAction,
        expiresInSec: z
          .number()
          .int()
          .min(10)
          .max(7 * 24 * 3600)
          .optional(),
      })
      .strict(),
    responses: {
      200: {
        description: 'Queued and skipped members',
        data: z.object({
          groupId: z.string(),
          action: DisplayAction,
          queued: z.array(z.object({ screenId: z.string(), commandId: z.string() })),
          skipped: z.array(z.object({ screenId: z.string(), reason: z.string() })),
        }),
      },
    },
    handler: async (ctx, { params, body, auth }) => {
      const g = await groupOr404(ctx, params.id);
      const plan = await displayPlan(ctx, g.id, body.action);
      const queued: { screenId: string; commandId: string }[] = [];
      const skipped: { screenId: string; reason: string }[] = [];
      for (const m of plan) {
        if (!m.willQueue) {
          skipped.push({ screenId: m.screenId, reason: m.reason ?? 'skipped' });
          continue;
        }
        const cmd = await queueCommand(ctx.deps, {
          screenId: m.screenId,
          type: body.action,
          ttlSec: body.expiresInSec,
          createdBy: (auth as SessionPrincipal).userId,
          source: `group:${g.id}`,
        });
        queued.push({ screenId: m.screenId, commandId: cmd.id });
      }
      return ok({ groupId: g.id, action: body.action, queued, skipped });
    },
  }),
];
