import { createReadStream, existsSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { notFound } from '../../platform/http/errors.js';
import { decodeCursor, pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { created, defineRoute, ok, uuidParam } from '../../platform/http/route.js';
import { screenCommandsPage } from './commands.repo.js';
import {
  acknowledgeCommand,
  COMMAND_STATES,
  COMMAND_TYPES,
  CommandDto,
  commandOr404,
  MAX_COMMAND_TTL_SEC,
  reportResult,
  SCREENSHOT_TYPES,
  screenshotDir,
  sendCommand,
  takePendingCommands,
  toCommandDto,
} from './commands.service.js';
import { screenOf } from './device-auth.js';
import { nowIso } from './screens.repo.js';
import { screenOr404 } from './screens.service.js';

/** Screenshots up to 20 MB of base64 JSON. */
const RESULT_BODY_LIMIT = 28 * 1024 * 1024;
/** Commands a polling player gets at once unless it asks for another `limit`. */
const PLAYER_COMMANDS_PAGE = 100;
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
      await screenOr404(ctx.deps.db, params.id);
      const rows = await screenCommandsPage(ctx.deps.db, params.id, {
        beforeId: query.cursor ? decodeCursor(query.cursor).id : undefined,
        state: query.state,
        nowText: nowIso(),
        limit: query.limit,
      });
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
      const screen = await screenOr404(ctx.deps.db, params.id);
      const row = await sendCommand(ctx.deps, screen, body, (auth as SessionPrincipal).userId);
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
    handler: async (ctx, { params }) => ok(toCommandDto(await commandOr404(ctx.deps.db, params.id, params.commandId))),
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
      const row = await commandOr404(ctx.deps.db, params.id, params.commandId);
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
      const page = await takePendingCommands(ctx.deps.db, screen.id, {
        afterId: query.cursor ? decodeCursor(query.cursor).id : undefined,
        limit: query.limit,
      });
      return ok({ items: page.items.map(toCommandDto), nextCursor: page.nextCursor });
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
      const row = await commandOr404(ctx.deps.db, screen.id, params.id);
      return ok(toCommandDto(await acknowledgeCommand(ctx.deps.db, row)));
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
      const row = await commandOr404(ctx.deps.db, screen.id, params.id);
      return ok(toCommandDto(await reportResult(ctx.deps, row, body)));
    },
  }),
];
