import { z } from 'zod';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { storableJson } from '../../platform/db/json.js';
import type { ScreenGroupsTable } from '../../platform/db/schema.js';
import { ApiError, invalidReference, notFound, unknownIdsIn } from '../../platform/http/errors.js';
import { uuidParam } from '../../platform/http/route.js';
import { queueCommand } from './commands.service.js';
import { addGroupMembers, deleteGroupRow, findGroup, insertGroup, membersOfGroups, removeGroupMember, updateGroup } from './groups.repo.js';
import { effectivePolicy } from './policies.js';
import { bumpManifestRevision } from './revision.js';
import { deriveStatus, existingScreenIds, newId, nowIso, SCREEN_STATUSES, screensByName } from './screens.repo.js';
import { groupMemberIds } from './targets.repo.js';
import { forgetTarget, refuseIfUsed } from './usage.js';

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
export type GroupDto = z.infer<typeof GroupDto>;

export async function groupDtos(db: Db, rows: readonly ScreenGroupsTable[]): Promise<GroupDto[]> {
  const members = await membersOfGroups(
    db,
    rows.map((r) => r.id),
  );
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

export async function groupOr404(db: Db, id: string): Promise<ScreenGroupsTable> {
  const row = await findGroup(db, id);
  if (!row) throw notFound('Screen group');
  return row;
}

/** One group's DTO; 404 when it does not exist. */
export async function oneGroup(db: Db, id: string): Promise<GroupDto> {
  return (await groupDtos(db, [await groupOr404(db, id)]))[0]!;
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

/** A screen's cell in a span group (404 when the group is not a span or the screen has no cell), with the whole wall. */
export async function spanPanel(db: Db, groupId: string, screenId: string) {
  const g = await findGroup(db, groupId);
  const span = g ? parseSpan(g.span) : null;
  if (!g || !span) throw notFound('Span');
  const geo = spanGeometry(g.id, span);
  const self = geo.cells.find((c) => c.screenId === screenId);
  if (!self) throw notFound('Span panel for this screen');
  return { self, span: geo };
}

/**
 * PUT /screen-groups/{id}/span: every cell inside the grid, one screen per cell, one cell
 * per screen, every cell screen a member (400 otherwise). Bumps the manifests of the
 * screens in the new and the old span.
 */
export async function setSpan(deps: AppDeps, g: ScreenGroupsTable, span: Span): Promise<SpanDto> {
  const members = new Set(await groupMemberIds(deps.db, g.id));
  const bad = (message: string) =>
    new ApiError('validation_failed', message, { details: { issues: [{ location: 'body', path: ['cells'], message, code: 'custom' }] } });
  const positions = new Set<string>();
  const screens = new Set<string>();
  for (const [i, c] of span.cells.entries()) {
    if (c.row >= span.rows || c.column >= span.columns) throw bad(`Cell (${c.row}, ${c.column}) is outside a ${span.rows}×${span.columns} grid`);
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
  await updateGroup(deps.db, g.id, { span: storableJson(span, 'The span'), updated_at: nowIso() });
  await bumpManifestRevision(deps, [...screens, ...(old?.cells.map((c) => c.screenId) ?? [])]);
  return spanGeometry(g.id, span);
}

// ---- Members ----

/** 400 naming each screenId of the body that is no screen (an unknown id in a body is invalid input; docs/api-conventions.md). */
async function assertScreens(db: Db, screenIds: readonly string[]): Promise<void> {
  const unique = [...new Set(screenIds)];
  if (unique.length === 0) return;
  const known = await existingScreenIds(db, unique);
  const refs = unknownIdsIn('screenIds', screenIds, known, 'no such screen');
  const missing = [...new Set(screenIds.filter((id) => !known.has(id)))];
  if (refs.length) throw invalidReference(`No such screen: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? '...' : ''}`, refs);
}

/** POST /screen-groups: 400 when a screenId names no screen; answers the new group's id. */
export async function createGroup(deps: AppDeps, input: { name: string; description?: string | null; screenIds?: string[] }): Promise<string> {
  const ids = [...new Set(input.screenIds ?? [])];
  await assertScreens(deps.db, input.screenIds ?? []);
  const now = nowIso();
  const id = newId();
  await insertGroup(deps.db, { id, name: input.name, description: input.description ?? null, policy: null, span: null, created_at: now, updated_at: now }, ids);
  await bumpManifestRevision(deps, ids);
  return id;
}

/** PATCH /screen-groups/{id}: group names order policy precedence, so a renamed group with a policy bumps its members. */
export async function changeGroup(deps: AppDeps, g: ScreenGroupsTable, changes: { name?: string; description?: string | null }): Promise<void> {
  await updateGroup(deps.db, g.id, {
    updated_at: nowIso(),
    ...(changes.name !== undefined ? { name: changes.name } : {}),
    ...(changes.description !== undefined ? { description: changes.description } : {}),
  });
  // Group names order policy precedence: members' effective policy may change.
  if (changes.name !== undefined && changes.name !== g.name && g.policy) await bumpManifestRevision(deps, await groupMemberIds(deps.db, g.id));
}

/** Deletes a group unless schedules target it (409); its members' manifests are bumped after. */
export async function deleteGroup(deps: AppDeps, g: ScreenGroupsTable): Promise<void> {
  const members = await groupMemberIds(deps.db, g.id);
  await deps.db.transaction().execute(async (trx) => {
    await refuseIfUsed(deps, trx, 'group', g.id, `Group "${g.name}"`);
    await deleteGroupRow(trx, g.id);
    await forgetTarget(deps, trx, 'group', g.id);
  });
  await bumpManifestRevision(deps, members);
}

/** Adds screens to a group (400 when one names no screen); the screens that joined get their manifests bumped. */
export async function addScreens(deps: AppDeps, g: ScreenGroupsTable, screenIds: string[]): Promise<void> {
  await assertScreens(deps.db, screenIds);
  const added = await addGroupMembers(deps.db, g.id, [...new Set(screenIds)], nowIso());
  await bumpManifestRevision(deps, added);
}

/** Removes a screen from a group and from its span (404 when not a member). */
export async function removeScreen(deps: AppDeps, g: ScreenGroupsTable, screenId: string): Promise<void> {
  if (!(await removeGroupMember(deps.db, g.id, screenId))) throw notFound('Group member');
  const span = parseSpan(g.span);
  const touched = [screenId];
  if (span?.cells.some((c) => c.screenId === screenId)) {
    span.cells = span.cells.filter((c) => c.screenId !== screenId);
    await updateGroup(deps.db, g.id, { span: JSON.stringify(span), updated_at: nowIso() });
    touched.push(...span.cells.map((c) => c.screenId));
  }
  await bumpManifestRevision(deps, touched);
}

// ---- Display control ----

export const DisplayAction = z.enum(['display_on', 'display_off']);
type DisplayAction = z.infer<typeof DisplayAction>;
export const DisplayMember = z.object({
  screenId: z.string(),
  name: z.string(),
  status: z.enum(SCREEN_STATUSES),
  action: DisplayAction,
  willQueue: z.boolean(),
  reason: z.string().nullable(),
});

/** What turning the group's displays on or off would do, member by member. */
export async function displayPlan(db: Db, groupId: string, action: DisplayAction): Promise<z.infer<typeof DisplayMember>[]> {
  const rows = await screensByName(db, await groupMemberIds(db, groupId));
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

/** Queues a display command for each member the plan says can take one; the others are skipped with the plan's reason. */
export async function controlDisplays(deps: AppDeps, groupId: string, input: { action: DisplayAction; expiresInSec?: number }, by: string) {
  const plan = await displayPlan(deps.db, groupId, input.action);
  const queued: { screenId: string; commandId: string }[] = [];
  const skipped: { screenId: string; reason: string }[] = [];
  for (const m of plan) {
    if (!m.willQueue) {
      skipped.push({ screenId: m.screenId, reason: m.reason ?? 'skipped' });
      continue;
    }
    const cmd = await queueCommand(deps, { screenId: m.screenId, type: input.action, ttlSec: input.expiresInSec, createdBy: by, source: `group:${groupId}` });
    queued.push({ screenId: m.screenId, commandId: cmd.id });
  }
  return { queued, skipped };
}
