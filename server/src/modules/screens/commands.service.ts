import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import { storableJson } from '../../platform/db/json.js';
import type { ScreenCommandsTable } from '../../platform/db/schema.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { toPage } from '../../platform/http/pagination.js';
import type { RealtimeHub } from '../../platform/realtime/hub.js';
import { sha256Hex } from '../../platform/security/secrets.js';
import { COMMAND_TYPES, type CommandType } from './command-support.js';
import { findScreenCommand, insertCommand, markAcknowledged, markDelivered, pendingCommandsPage, readCommand, recordOutcome } from './commands.repo.js';
import { effectivePolicy } from './policies.js';
import { newId, nowIso, recordHistory, type ScreenRow } from './screens.repo.js';

export { COMMAND_TYPES, type CommandType };
export const COMMAND_STATES = ['queued', 'delivered', 'acknowledged', 'succeeded', 'failed', 'expired'] as const;
export const DEFAULT_COMMAND_TTL_SEC = 15 * 60;
export const MAX_COMMAND_TTL_SEC = 7 * 24 * 3600;
export const SCREENSHOT_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;

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
export function stateOf(r: ScreenCommandsTable, now = Date.now()): ScreenCommandsTable['state'] {
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
  await insertCommand(deps.db, row);
  deps.realtime?.send(input.screenId, { type: 'command.pending', commandId: row.id, commandType: row.type });
  return row;
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

/** The command `commandId` sent to `screenId`; 404 otherwise. */
export async function commandOr404(db: Db, screenId: string, commandId: string): Promise<ScreenCommandsTable> {
  const row = await findScreenCommand(db, screenId, commandId);
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
  const wrote = await recordOutcome(deps.db, row, { state: body.status, result: resultText, screenshot_sha256: sha, screenshot_type: type }, nowText);
  const current = await readCommand(deps.db, row.id);
  if (wrote) return current;
  // Another result (or the expiry sweep) got there first.
  return finishedAnswer(current, resultText, body, now);
}

/**
 * Queues a command from the console (POST /screens/{id}/commands) and records it in the
 * screen's history: 409 for a disabled or revoked screen, or a screenshot its policy turns off.
 */
export async function sendCommand(
  deps: { db: Db; realtime?: RealtimeHub },
  screen: ScreenRow,
  input: { type: CommandType; params?: Record<string, unknown>; expiresInSec?: number },
  by: string,
): Promise<ScreenCommandsTable> {
  if (screen.disabled_at) throw new ApiError('conflict', 'The screen is disabled');
  if (screen.revoked_at) throw new ApiError('conflict', 'The screen is revoked; pair it again');
  if (input.type === 'screenshot' && !(await effectivePolicy(deps.db, screen.id)).values.screenshotsEnabled) {
    throw new ApiError('conflict', 'Screenshots are turned off by this screen’s policy');
  }
  if (JSON.stringify(input.params ?? {}).length > 16_384) throw new ApiError('validation_failed', 'params is larger than 16 KiB');
  const row = await queueCommand(deps, { screenId: screen.id, type: input.type, params: input.params, ttlSec: input.expiresInSec, createdBy: by });
  await recordHistory(deps.db, screen.id, 'command', { commandId: row.id, type: row.type, by });
  return row;
}

/**
 * A polling player's page of pending commands, oldest first; the queued ones on the page
 * become delivered (and read so).
 */
export async function takePendingCommands(
  db: Db,
  screenId: string,
  page: { afterId?: string; limit: number },
): Promise<{ items: ScreenCommandsTable[]; nextCursor: string | null }> {
  const nowText = nowIso();
  const { items, nextCursor } = toPage(await pendingCommandsPage(db, screenId, { ...page, nowText }), page.limit, (r) => r.id);
  const queued = items.filter((r) => r.state === 'queued').map((r) => r.id);
  if (queued.length) await markDelivered(db, queued, nowText);
  return { items: items.map((r) => (r.state === 'queued' ? { ...r, state: 'delivered' as const, delivered_at: nowText } : r)), nextCursor };
}

/** The player acknowledges a command: idempotent while acknowledged, 409 once finished or expired. */
export async function acknowledgeCommand(db: Db, row: ScreenCommandsTable): Promise<ScreenCommandsTable> {
  const state = stateOf(row);
  if (state === 'acknowledged') return row;
  if (state !== 'queued' && state !== 'delivered') throw new ApiError('conflict', `The command is ${state}`);
  await markAcknowledged(db, row, nowIso());
  return commandOr404(db, row.screen_id, row.id);
}
