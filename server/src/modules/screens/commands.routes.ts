import { mkdirSync, openSync, fsyncSync, writeSync, closeSync, renameSync, existsSync, createReadStream } from 'node:fs';
import path from 'node:path';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import { storableJson } from '../../platform/db/json.js';
import type { ScreenCommandsTable } from '../../platform/db/schema.js';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { pageOf, pageQuery, toPage, decodeCursor } from '../../platform/http/pagination.js';
import { created, defineRoute, ok, uuidParam } from '../../platform/http/route.js';
import type { RealtimeHub } from '../../platform/realtime/hub.js';
import { sha256Hex } from '../../platform/security/secrets.js';
import { screenOf } from './device-auth.js';
import { effectivePolicy } from './policies.js';
import { newId, nowIso, recordHistory } from './screens.repo.js';
import { screenOr404 } from './screens.routes.js';

import { COMMAND_TYPES, type CommandType } from './command-support.js';
export { COMMAND_TYPES, type CommandType };
export const COMMAND_STATES = ['queued', 'delivered', 'acknowledged', 'succeeded', 'failed', 'expired'] as const;
export const DEFAULT_COMMAND_TTL_SEC = 15 * 60;
export const MAX_COMMAND_TTL_SEC = 7 * 24 * 3600;
/** Screenshots up to 20 MB of base64 JSON. */
const RESULT_BODY_LIMIT = 28 * 1024 * 1024;
const SCREENSHOT_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
/** Commands a polling player gets at once unless it asks for another `limit`. */
const PLAYER_COMMANDS_PAGE = 100;

export const CommandDto = z
  .object({
    id: z.string(),
    screenId: z.string(),
    type: z.enum(COMMAND_TYPES),
    params: z.record(z.string(), z.unknown()),
    state: z.enum(COMMAND_STATES),
    source: z.string(),
    createdBy: z.string().nullable(),
    createdAt: z.string(),
    expiresAt: z.string(),
    deliveredAt: z.string().nullable(),
    acknowledgedAt: z.string().nullable(),
    completedAt: z.string().nullable(),
    result: z.record(z.string(), z.unknown()).nullable(),
    screenshot: z.object({ url: z.string(), contentType: z.string(), sha256: z.string() }).nullable(),
  })
  .meta({ id: 'ScreenCommand' });
export type CommandDto = z.infer<typeof CommandDto>;

/**
 * The state a row is in now: a command not acknowledged by its expiry reads as expired.
 * An acknowledged one may still report its result later (a reboot takes its time).
 */
function stateOf(r: ScreenCommandsTable, now = Date.now()): ScreenCommandsTable['state'] {
  if ((r.state === 'queued' || r.state === 'delivered') && Date.parse(r.expires_at) <= now) return 'expired';
  return r.state;
}

export function toCommandDto(r: ScreenCommandsTable): CommandDto {
  return {
    id: r.id,
    screenId: r.screen_id,
    type: r.type as CommandType,
    params: JSON.parse(r.params) as Record<string, unknown>,
    state: stateOf(r),
    source: r.source,
    createdBy: r.created_by,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    deliveredAt: r.delivered_at,
    acknowledgedAt: r.acknowledged_at,
    completedAt: r.completed_at,
    result: r.result ? (JSON.parse(r.result) as Record<string, unknown>) : null,
    screenshot:
      r.screenshot_sha256 && r.screenshot_type
        ? { url: `/api/v1/screens/${r.screen_id}/commands/${r.id}/screenshot`, contentType: r.screenshot_type, sha256: r.screenshot_sha256 }
        : null,
  };
}

/** Queues a command and tells the screen's socket (`command.pending`). */
export async function queueCommand(
  deps: { db: Db; realtime?: RealtimeHub },
  input: { screenId: string; type: CommandType; params?: Record<string, unknown>; ttlSec?: number; createdBy?: string | null; source?: string },
): Promise<ScreenCommandsTable> {
  const now = Date.now();
  const row: ScreenCommandsTable = {
    id: newId(),
    screen_id: input.screenId,
    type: input.type,
    params: storableJson(input.params ?? {}, 'params'),
    state: 'queued',
    created_by: input.createdBy ?? null,
    source: input.source ?? 'console',
    created_at: nowIso(now),
    expires_at: nowIso(now + (input.ttlSec ?? DEFAULT_COMMAND_TTL_SEC) * 1000),
    delivered_at: null,
    acknowledged_at: null,
    completed_at: null,
    result: null,
    screenshot_sha256: null,
    screenshot_type: null,
  };
  await deps.db.insertInto('screen_commands').values(row).execute();
  deps.realtime?.send(input.screenId, { type: 'command.pending', commandId: row.id, commandType: row.type });
  return row;
}

/** Marks commands past their expiry as expired (periodic). */
export async function expireCommands(db: Db, now = Date.now()): Promise<number> {
  const r = await db
    .updateTable('screen_commands')
    .set({ state: 'expired', completed_at: nowIso(now) })
    .where('state', 'in', ['queued', 'delivered'])
    .where('expires_at', '<=', nowIso(now))
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export function screenshotDir(dataDir: string): string {
  return path.join(dataDir, 'media', 'screenshots');
}

function sniffImage(buf: Buffer): (typeof SCREENSHOT_TYPES)[number] | null {
  if (buf.length > 8 && buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (buf.length > 3 && buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return 'image/jpeg';
  if (buf.length > 12 && buf.subarray(0, 4).toString('latin1') === 'RIFF' && buf.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return null;
}

/** Content-addressed, fsynced and renamed into place before the row that points to it commits. */
function storeScreenshot(dataDir: string, data: Buffer): string {
  const sha = sha256Hex(data);
  const dir = screenshotDir(dataDir);
  mkdirSync(dir, { recursive: true });
  const final = path.join(dir, sha);
  if (existsSync(final)) return sha;
  const tmp = path.join(dir, `.${sha}.${process.pid}.${Date.now()}.tmp`);
  const fd = openSync(tmp, 'w', 0o640);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, final);
  const dfd = openSync(dir, 'r');
  try {
    fsyncSync(dfd);
  } finally {
    closeSync(dfd);
  }
  return sha;
}

async function commandForScreen(ctx: Context, screenId: string, commandId: string): Promise<ScreenCommandsTable> {
  const row = await ctx.deps.db.selectFrom('screen_commands').selectAll().where('id', '=', commandId).where('screen_id', '=', screenId).executeTakeFirst();
  if (!row) throw notFound('Command');
  return row;
}

export interface CommandOutcome {
  status: 'succeeded' | 'failed';
  message?: string;
  output?: Record<string, unknown>;
  screenshot?: { contentType: (typeof SCREENSHOT_TYPES)[number]; dataBase64: string };
}

/** Whether an outcome is the one already recorded (a retry): same status, message, output and image. */
function sameOutcome(row: ScreenCommandsTable, resultText: string, body: CommandOutcome): boolean {
  if (row.state !== body.status || row.result !== resultText) return false;
  const sha = body.screenshot ? sha256Hex(Buffer.from(body.screenshot.dataBase64, 'base64')) : null;
  return sha === row.screenshot_sha256;
}

/** The answer for a command that already finished or expired: the row for a retry, else 409. */
function finishedAnswer(row: ScreenCommandsTable, resultText: string, body: CommandOutcome, now: number): ScreenCommandsTable {
  const state = stateOf(row, now);
  if ((state === 'succeeded' || state === 'failed') && sameOutcome(row, resultText, body)) return row;
  // A player that reports an expired command as failed (without running it) is right: nothing to change.
  if (state === 'expired' && body.status === 'failed') return row;
  throw new ApiError('conflict', state === 'expired' ? 'The command expired' : `The command is already ${state} with another result`);
}

/**
 * Records a command's outcome. `row` is the command as the caller read it; the write only
 * happens while the command is still open (queued or delivered and not expired, or
 * acknowledged), so of two results racing, one wins and the other gets 409, unless it is
 * identical to the winner (a retry), which answers the recorded command.
 */
export async function reportResult(
  deps: { db: Db; config: { dataDir: string } },
  row: ScreenCommandsTable,
  body: CommandOutcome,
  now = Date.now(),
): Promise<ScreenCommandsTable> {
  const resultText = storableJson({ status: body.status, message: body.message ?? null, output: body.output ?? null }, 'The result');
  const state = stateOf(row, now);
  if (state === 'succeeded' || state === 'failed' || state === 'expired') return finishedAnswer(row, resultText, body, now);
  if (JSON.stringify(body.output ?? {}).length > 65_536) throw new ApiError('validation_failed', 'output is larger than 64 KiB');
  let sha: string | null = null;
  let type: string | null = null;
  if (body.screenshot) {
    if (row.type !== 'screenshot') throw new ApiError('validation_failed', 'Only a screenshot command carries an image');
    const data = Buffer.from(body.screenshot.dataBase64, 'base64');
    const sniffed = sniffImage(data);
    if (!sniffed) throw new ApiError('validation_failed', 'screenshot.dataBase64 is not a PNG, JPEG or WebP image');
    if (sniffed !== body.screenshot.contentType) throw new ApiError('validation_failed', `The image is ${sniffed}, not ${body.screenshot.contentType}`);
    // Stored before the row names it; a file no row names is pruned (pruneScreenshots).
    sha = storeScreenshot(deps.config.dataDir, data);
    type = sniffed;
  }
  const nowText = nowIso(now);
  const updated = await deps.db
    .updateTable('screen_commands')
    .set({
      state: body.status,
      completed_at: nowText,
      acknowledged_at: row.acknowledged_at ?? nowText,
      delivered_at: row.delivered_at ?? nowText,
      result: resultText,
      screenshot_sha256: sha,
      screenshot_type: type,
    })
    .where('id', '=', row.id)
    .where((eb) => eb.or([eb('state', '=', 'acknowledged'), eb.and([eb('state', 'in', ['queued', 'delivered']), eb('expires_at', '>', nowText)])]))
    .executeTakeFirst();
  const current = await deps.db.selectFrom('screen_commands').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
  if (Number(updated.numUpdatedRows) === 1) return current;
  // Another result (or the expiry sweep) got there first.
  return finishedAnswer(current, resultText, body, now);
}

const TAGS = ['Screens: commands'];
const PLAYER_TAGS = ['Player'];
const IdParams = z.object({ id: uuidParam });

export const commandRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/screens/{id}/commands',
    auth: 'session',
    tags: TAGS,
    summary: 'Commands sent to a screen, newest first',
    params: IdParams,
    query: pageQuery.extend({ state: z.enum(COMMAND_STATES).optional() }),
    responses: { 200: { description: 'Commands', data: pageOf(CommandDto) } },
    handler: async (ctx, { params, query }) => {
      await screenOr404(ctx, params.id);
      let q = ctx.deps.db.selectFrom('screen_commands').selectAll().where('screen_id', '=', params.id);
      if (query.cursor) q = q.where('id', '<', decodeCursor(query.cursor).id);
      if (query.state) {
        const nowText = nowIso();
        if (query.state === 'expired')
          q = q.where((eb) => eb.or([eb('state', '=', 'expired'), eb.and([eb('state', 'in', ['queued', 'delivered']), eb('expires_at', '<=', nowText)])]));
        else if (['queued', 'delivered'].includes(query.state)) q = q.where('state', '=', query.state).where('expires_at', '>', nowText);
        else q = q.where('state', '=', query.state);
      }
      const rows = await q
        .orderBy('id', 'desc')
        .limit(query.limit + 1)
        .execute();
      const page = toPage(rows, query.limit, (r) => r.created_at);
      return ok({ items: page.items.map(toCommandDto), nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/screens/{id}/commands',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Queue a command (reload, reboot, screenshot, display_on/off, clear_cache, update_config, ...)',
    description:
      'Announced at once on the screen’s socket (`command.pending` with `commandId`, `commandType`); the command is `delivered` only when the player fetches it from `GET /player/commands` (a push is not a delivery: the socket may drop it). The player acknowledges, then reports a result. States: queued, delivered, acknowledged, succeeded, failed, expired. `expiresInSec` defaults to 900 (max 7 days). A screenshot is refused (409) when the screen’s policy turns screenshots off; a disabled or revoked screen cannot take commands (409).',
    params: IdParams,
    body: z
      .object({
        type: z.enum(COMMAND_TYPES),
        params: z.record(z.string(), z.unknown()).optional(),
        expiresInSec: z.number().int().min(10).max(MAX_COMMAND_TTL_SEC).optional(),
      })
      .strict(),
    responses: { 201: { description: 'The queued command', data: CommandDto }, 409: { description: 'conflict: screen disabled/revoked or screenshots off' } },
    handler: async (ctx, { params, body, auth }) => {
      const screen = await screenOr404(ctx, params.id);
      if (screen.disabled_at) throw new ApiError('conflict', 'The screen is disabled');
      if (screen.revoked_at) throw new ApiError('conflict', 'The screen is revoked; pair it again');
      if (body.type === 'screenshot' && !(await effectivePolicy(ctx.deps.db, screen.id)).values.screenshotsEnabled) {
        throw new ApiError('conflict', 'Screenshots are turned off by this screen’s policy');
      }
      if (JSON.stringify(body.params ?? {}).length > 16_384) throw new ApiError('validation_failed', 'params is larger than 16 KiB');
      const row = await queueCommand(ctx.deps, {
        screenId: screen.id,
        type: body.type,
        params: body.params,
        ttlSec: body.expiresInSec,
        createdBy: (auth as SessionPrincipal).userId,
      });
      await recordHistory(ctx.deps.db, screen.id, 'command', { commandId: row.id, type: row.type, by: (auth as SessionPrincipal).userId });
      return created(toCommandDto(row));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/screens/{id}/commands/{commandId}',
    auth: 'session',
    extension: true,
    tags: TAGS,
    summary: 'One command with its result',
    params: z.object({ id: uuidParam, commandId: uuidParam }),
    responses: { 200: { description: 'The command', data: CommandDto } },
    handler: async (ctx, { params }) => ok(toCommandDto(await commandForScreen(ctx, params.id, params.commandId))),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/screens/{id}/commands/{commandId}/screenshot',
    auth: 'session',
    extension: true,
    tags: TAGS,
    summary: 'The image a screenshot command returned',
    params: z.object({ id: uuidParam, commandId: uuidParam }),
    responses: {
      304: { description: 'Not modified: If-None-Match names this image' },
      200: { description: 'The image', content: { 'image/png': {}, 'image/jpeg': {}, 'image/webp': {} } },
    },
    handler: async (ctx, { params }) => {
      const row = await commandForScreen(ctx, params.id, params.commandId);
      if (!row.screenshot_sha256 || !row.screenshot_type) throw notFound('Screenshot');
      const file = path.join(screenshotDir(ctx.deps.config.dataDir), row.screenshot_sha256);
      if (!existsSync(file)) throw notFound('Screenshot');
      ctx.set('ETag', `"${row.screenshot_sha256}"`);
      ctx.set('Cache-Control', 'private, max-age=31536000, immutable');
      ctx.set('X-Content-Type-Options', 'nosniff');
      if (ctx.get('if-none-match') === `"${row.screenshot_sha256}"`) {
        ctx.status = 304;
        return;
      }
      ctx.type = row.screenshot_type;
      ctx.status = 200;
      ctx.body = createReadStream(file);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/player/commands',
    auth: 'device',
    tags: PLAYER_TAGS,
    summary: 'Pending commands for this screen (polling players); marks them delivered',
    description: `Oldest first, \`limit\` at a time (default ${PLAYER_COMMANDS_PAGE}); \`nextCursor\` names the next page when more are pending. A command stays listed until it is acknowledged or expires.`,
    query: pageQuery.extend({ limit: pageQuery.shape.limit.removeDefault().default(PLAYER_COMMANDS_PAGE) }),
    responses: { 200: { description: 'Commands not yet acknowledged, oldest first', data: pageOf(CommandDto) } },
    handler: async (ctx, { query }) => {
      const screen = screenOf(ctx);
      const db = ctx.deps.db;
      const nowText = nowIso();
      let q = db
        .selectFrom('screen_commands')
        .selectAll()
        .where('screen_id', '=', screen.id)
        .where('state', 'in', ['queued', 'delivered'])
        .where('expires_at', '>', nowText);
      if (query.cursor) q = q.where('id', '>', decodeCursor(query.cursor).id);
      const page = toPage(
        await q
          .orderBy('id')
          .limit(query.limit + 1)
          .execute(),
        query.limit,
        (r) => r.id,
      );
      const queued = page.items.filter((r) => r.state === 'queued').map((r) => r.id);
      if (queued.length)
        await db
          .updateTable('screen_commands')
          .set({ state: 'delivered', delivered_at: nowText })
          .where('id', 'in', queued)
          .where('state', '=', 'queued')
          .execute();
      return ok({
        items: page.items.map((r) => toCommandDto(r.state === 'queued' ? { ...r, state: 'delivered', delivered_at: nowText } : r)),
        nextCursor: page.nextCursor,
      });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/player/commands/{id}/acknowledge',
    auth: 'device',
    tags: PLAYER_TAGS,
    summary: 'The player has the command and is carrying it out',
    description: 'Idempotent while acknowledged. 409 when the command already finished or expired; 404 for another screen’s command.',
    params: IdParams,
    body: z.object({}).loose(),
    responses: { 200: { description: 'The command', data: CommandDto }, 409: { description: 'conflict: finished or expired' } },
    handler: async (ctx, { params }) => {
      const screen = screenOf(ctx);
      const row = await commandForScreen(ctx, screen.id, params.id);
      const state = stateOf(row);
      if (state === 'acknowledged') return ok(toCommandDto(row));
      if (state !== 'queued' && state !== 'delivered') throw new ApiError('conflict', `The command is ${state}`);
      const nowText = nowIso();
      await ctx.deps.db
        .updateTable('screen_commands')
        .set({ state: 'acknowledged', acknowledged_at: nowText, delivered_at: row.delivered_at ?? nowText })
        .where('id', '=', row.id)
        .where('state', 'in', ['queued', 'delivered'])
        .execute();
      return ok(toCommandDto(await commandForScreen(ctx, screen.id, row.id)));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/player/commands/{id}/result',
    auth: 'device',
    tags: PLAYER_TAGS,
    summary: 'The outcome: succeeded or failed, with output; a screenshot carries its image',
    description:
      '`screenshot` = `{contentType: image/png|image/jpeg|image/webp, dataBase64}` (at most 20 MB); the image is stored as a media file and served at the command’s `screenshot.url`. Accepted while the command is queued, delivered or acknowledged (not expired). Once it has a result, reporting the identical result again (status, message, output, image) answers 200; any other is 409, also when two different results race. Reporting an expired command as failed answers 200 and changes nothing.',
    params: IdParams,
    bodyLimitBytes: RESULT_BODY_LIMIT,
    body: z
      .object({
        status: z.enum(['succeeded', 'failed']),
        message: z.string().max(2000).optional(),
        output: z.record(z.string(), z.unknown()).optional(),
        screenshot: z.object({ contentType: z.enum(SCREENSHOT_TYPES), dataBase64: z.string().min(1).max(RESULT_BODY_LIMIT) }).optional(),
      })
      .strict(),
    responses: { 200: { description: 'The command', data: CommandDto }, 409: { description: 'conflict: finished with another outcome, or expired' } },
    handler: async (ctx, { params, body }) => {
      const screen = screenOf(ctx);
      const row = await commandForScreen(ctx, screen.id, params.id);
      return ok(toCommandDto(await reportResult(ctx.deps, row, body)));
    },
  }),
];
