import { randomInt } from 'node:crypto';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError, invalidReference, notFound, unknownIdsIn, type Reference } from '../../platform/http/errors.js';
import { created, defineRoute, ok, uuidParam } from '../../platform/http/route.js';
import { CLOSE_CODES } from '../../platform/realtime/hub.js';
import { randomToken, safeEqual, sha256Hex } from '../../platform/security/secrets.js';
import { throttled } from '../accounts/index.js';
import { issueDeviceCredential } from './device-auth.js';
import { bumpManifestRevision } from './revision.js';
import { asFamily, findScreen, newId, newScreenRow, nowIso, PlayerFamilyField, recordHistory, ScreenDto } from './screens.repo.js';
import { screenDtos } from './screens.service.js';

/** Codes: 6 characters without look-alikes (no 0/O, 1/I/L). */
export const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
export const PAIRING_TTL_MS = 15 * 60_000;
export const ENROLLMENT_TTL_MS = 15 * 60_000;
export const POLL_INTERVAL_SEC = 3;
/** Live pending sessions one client address may hold at once. */
export const MAX_PENDING_PER_ADDRESS = 10;

const TAGS = ['Screens: pairing'];

function makeCode(): string {
  let code = '';
  for (let i = 0; i < 6; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

/** Case- and dash-insensitive: `abc-def`, `ABC DEF` and `ABCDEF` are one code. */
export function normalizeCode(input: string): string {
  return input.toUpperCase().replace(/[\s-]+/g, '');
}

type SessionStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'enrolled';

function statusOf(row: { status: string; expires_at: string; enrollment_expires_at: string | null }, now = Date.now()): SessionStatus {
  if (row.status === 'pending' && Date.parse(row.expires_at) <= now) return 'expired';
  if (row.status === 'approved' && row.enrollment_expires_at && Date.parse(row.enrollment_expires_at) <= now) return 'expired';
  return row.status as SessionStatus;
}

const PendingSession = z
  .object({
    id: z.string(),
    code: z.string(),
    status: z.enum(['pending', 'approved', 'rejected', 'expired', 'enrolled']),
    playerFamily: z.string().nullable(),
    playerVersion: z.string().nullable(),
    deviceName: z.string().nullable(),
    createdAt: z.string(),
    expiresAt: z.string(),
  })
  .meta({ id: 'PairingSession' });

async function liveSession(ctx: Context, id: string) {
  const row = await ctx.deps.db.selectFrom('pairing_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Pairing session');
  return row;
}

/**
 * Rejects a pairing session that is still pending (and not expired), in one conditional
 * write: an approve that got there first (or concurrently) wins and this is 409, so a
 * created screen is never left attached to a rejected session. Unknown: 404.
 */
export async function rejectPairingSession(db: Db, id: string, userId: string, now = Date.now()): Promise<void> {
  const updated = await db
    .updateTable('pairing_sessions')
    .set({ status: 'rejected', decided_by: userId, decided_at: nowIso(now) })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('expires_at', '>', nowIso(now))
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 1) return;
  const row = await db.selectFrom('pairing_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Pairing session');
  throw new ApiError('conflict', `The pairing session is ${statusOf(row, now)}, not pending`);
}

const IdParams = z.object({ id: uuidParam });

export const pairingRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/player/pairing-sessions',
    auth: 'public',
    tags: TAGS,
    summary: 'Start pairing: a code to show on the screen and a secret to poll with',
    description:
      'No credential. The player shows `code` and polls `GET /player/pairing-sessions/{id}` with header `X-Pairing-Secret: <pollSecret>` every `pollIntervalSec` until the status is `approved` (then enrols with `enrollmentToken`), `rejected` or `expired`. Sessions expire after 15 minutes. An unknown `playerFamily` is recorded as absent.',
    body: z.object({
      playerFamily: PlayerFamilyField,
      playerVersion: z.string().trim().max(100).optional(),
      deviceName: z.string().trim().max(200).optional(),
    }),
    rateLimited: 'live pairing sessions per address',
    responses: {
      201: {
        description: 'The session',
        data: z.object({ id: z.string(), code: z.string(), pollSecret: z.string(), expiresAt: z.string(), pollIntervalSec: z.number().int() }),
      },
    },
    handler: async (ctx, { body }) => {
      const db = ctx.deps.db;
      const now = Date.now();
      const live = await db
        .selectFrom('pairing_sessions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('address', '=', ctx.ip)
        .where('status', '=', 'pending')
        .where('expires_at', '>', nowIso(now))
        .executeTakeFirstOrThrow();
      if (Number(live.n) >= MAX_PENDING_PER_ADDRESS) {
        throw new ApiError('rate_limited', 'Too many pairing sessions waiting from this address; wait for them to expire', {
          headers: { 'Retry-After': '60' },
        });
      }
      // A code is unique among live sessions.
      let code = makeCode();
      for (let i = 0; i < 20; i++) {
        const clash = await db.selectFrom('pairing_sessions').select('id').where('code', '=', code).where('expires_at', '>', nowIso(now)).executeTakeFirst();
        if (!clash) break;
        code = makeCode();
      }
      const pollSecret = randomToken(32);
      const row = {
        id: newId(),
        code,
        poll_secret_hash: sha256Hex(pollSecret),
        status: 'pending' as const,
        player_family: asFamily(body.playerFamily),
        player_version: body.playerVersion || null,
        device_name: body.deviceName || null,
        address: ctx.ip,
        screen_id: null,
        replaces_screen: 0,
        enrollment_token_hash: null,
        enrollment_expires_at: null,
        decided_by: null,
        created_at: nowIso(now),
        expires_at: nowIso(now + PAIRING_TTL_MS),
        decided_at: null,
        enrolled_at: null,
      };
      await db.insertInto('pairing_sessions').values(row).execute();
      return created({ id: row.id, code, pollSecret, expiresAt: row.expires_at, pollIntervalSec: POLL_INTERVAL_SEC });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/player/pairing-sessions/{id}',
    auth: 'public',
    tags: TAGS,
    summary: 'Poll a pairing session (header X-Pairing-Secret)',
    description:
      'Status `pending`, `approved` (then with `enrollmentToken`, valid 15 minutes and once; each poll answers a fresh one and only the latest works), `rejected`, `expired` or `enrolled`. A wrong or missing secret is 401 `invalid_credential`.',
    params: IdParams,
    responses: {
      401: { description: 'invalid_credential: X-Pairing-Secret is missing or wrong' },
      200: {
        description: 'The session status',
        data: z.object({
          id: z.string(),
          status: z.enum(['pending', 'approved', 'rejected', 'expired', 'enrolled']),
          enrollmentToken: z.string().optional(),
          expiresAt: z.string(),
          pollIntervalSec: z.number().int(),
        }),
      },
    },
    handler: async (ctx, { params }) => {
      const secret = ctx.get('x-pairing-secret');
      const row = await liveSession(ctx, params.id);
      if (!secret || !safeEqual(row.poll_secret_hash, sha256Hex(secret))) throw new ApiError('invalid_credential', 'Missing or wrong X-Pairing-Secret');
      const status = statusOf(row);
      const base = {
        id: row.id,
        status,
        expiresAt: row.status === 'approved' && row.enrollment_expires_at ? row.enrollment_expires_at : row.expires_at,
        pollIntervalSec: POLL_INTERVAL_SEC,
      };
      if (status !== 'approved') return ok(base);
      const token = randomToken(32);
      await ctx.deps.db
        .updateTable('pairing_sessions')
        .set({ enrollment_token_hash: sha256Hex(token) })
        .where('id', '=', row.id)
        .where('status', '=', 'approved')
        .execute();
      return ok({ ...base, enrollmentToken: token });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/player/enroll',
    auth: 'public',
    tags: TAGS,
    summary: 'Trade the enrollment token for the device credential (shown once)',
    description: 'The token works once; after that, or when unknown or expired, 401 `invalid_credential`. Throttled per client address.',
    body: z.object({
      enrollmentToken: z.string().min(1).max(200),
      playerFamily: PlayerFamilyField,
      playerVersion: z.string().trim().max(100).optional(),
    }),
    rateLimited: 'failed enrolment tokens per address',
    responses: {
      201: {
        description: 'The credential: `Authorization: Bearer <credential>` from now on',
        data: z.object({ screenId: z.string(), credential: z.string() }),
      },
      401: { description: 'invalid_credential' },
    },
    handler: async (ctx, { body }) => {
      const db = ctx.deps.db;
      const result = await throttled(ctx, 'enroll', undefined, async () => {
        const hash = sha256Hex(body.enrollmentToken);
        const row = await db.selectFrom('pairing_sessions').selectAll().where('enrollment_token_hash', '=', hash).executeTakeFirst();
        if (!row || statusOf(row) !== 'approved' || !row.screen_id) return false;
        const screenId = row.screen_id;
        const credential = await db.transaction().execute(async (trx) => {
          const used = await trx
            .updateTable('pairing_sessions')
            .set({ status: 'enrolled', enrollment_token_hash: null, enrolled_at: nowIso() })
            .where('id', '=', row.id)
            .where('status', '=', 'approved')
            .where('enrollment_token_hash', '=', hash)
            .executeTakeFirst();
          if (Number(used.numUpdatedRows) !== 1) return null;
          const family = body.playerFamily !== undefined ? asFamily(body.playerFamily) : row.player_family;
          await trx
            .updateTable('screens')
            .set({
              revoked_at: null,
              player_family: family,
              player_architecture: null,
              player_version: body.playerVersion || row.player_version,
              updated_at: nowIso(),
            })
            .where('id', '=', screenId)
            .execute();
          const cred = await issueDeviceCredential(trx, screenId);
          await recordHistory(trx, screenId, 'enrolled', { playerFamily: family, playerVersion: body.playerVersion || row.player_version });
          return cred;
        });
        return credential ?? false;
      });
      if (result === false) throw new ApiError('invalid_credential', 'Unknown, used or expired enrollment token');
      const { screenId, credentialId } = await credentialRow(ctx, result);
      // Enrolling revoked the screen's earlier credential: sockets opened with it close now,
      // with the revoked code (4001): that player must pair again.
      ctx.realtime.closeScreen(screenId, CLOSE_CODES.revoked, 'credential replaced by a new enrolment', { exceptCredentialId: credentialId });
      return created({ screenId, credential: result });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/screens/pairing/resolve',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Find the pending pairing session a screen shows the code of',
    description: 'The code is case- and dash-insensitive. 404 when no live session has it. Throttled per client address.',
    body: z.object({ code: z.string().min(1).max(32) }),
    rateLimited: 'unknown codes per address',
    responses: { 200: { description: 'The pending session', data: PendingSession }, 404: { description: 'not_found' } },
    handler: async (ctx, { body }) => {
      const code = normalizeCode(body.code);
      const row = await throttled(ctx, 'pairing-resolve', undefined, async () => {
        if (!/^[A-Z0-9]{6}$/.test(code)) return false;
        const found = await ctx.deps.db
          .selectFrom('pairing_sessions')
          .selectAll()
          .where('code', '=', code)
          .where('status', '=', 'pending')
          .where('expires_at', '>', nowIso())
          .orderBy('created_at', 'desc')
          .executeTakeFirst();
        return found ?? false;
      });
      if (row === false) throw new ApiError('not_found', 'No pending pairing session has this code');
      return ok({
        id: row.id,
        code: row.code,
        status: statusOf(row),
        playerFamily: row.player_family,
        playerVersion: row.player_version,
        deviceName: row.device_name,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
      });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/screens/pairing/{id}/approve',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Approve a pairing: creates the screen (or re-pairs an existing one with screenId)',
    params: IdParams,
    body: z.object({
      name: z.string().trim().min(1).max(200),
      locationId: uuidParam.nullable().optional(),
      groupIds: z.array(uuidParam).max(100).optional(),
      screenId: uuidParam.optional().describe('Re-pair this existing (e.g. revoked) screen instead of creating one; its history is kept.'),
    }),
    responses: {
      200: { description: 'The screen', data: z.object({ screen: ScreenDto, pairingSessionId: z.string() }) },
      400: { description: 'validation_failed: locationId, a groupId or screenId names nothing' },
      404: { description: 'not_found: the pairing session' },
      409: { description: 'conflict: the session is no longer pending' },
    },
    handler: async (ctx, { params, body, auth }) => {
      const db = ctx.deps.db;
      const session = await liveSession(ctx, params.id);
      if (statusOf(session) !== 'pending') throw new ApiError('conflict', `The pairing session is ${statusOf(session)}, not pending`);
      // Ids in the body that name nothing are invalid input (400), unlike the session's path id (404).
      const unknown: Reference[] = [];
      if (body.locationId && !(await db.selectFrom('locations').select('id').where('id', '=', body.locationId).executeTakeFirst()))
        unknown.push({ path: ['locationId'], message: 'no such location' });
      const groupIds = [...new Set(body.groupIds ?? [])];
      if (groupIds.length) {
        const found = new Set((await db.selectFrom('screen_groups').select('id').where('id', 'in', groupIds).execute()).map((r) => r.id));
        unknown.push(...unknownIdsIn('groupIds', body.groupIds ?? [], found, 'no such screen group'));
      }
      if (body.screenId && !(await findScreen(db, body.screenId))) unknown.push({ path: ['screenId'], message: 'no such screen' });
      if (unknown.length) throw invalidReference(`The approval names what does not exist: ${unknown.map((u) => u.path.join('.')).join(', ')}`, unknown);
      const now = nowIso();
      const screenId = await db.transaction().execute(async (trx) => {
        let id = body.screenId;
        if (id) {
          await trx
            .updateTable('screens')
            .set({ name: body.name, updated_at: now, ...(body.locationId !== undefined ? { location_id: body.locationId } : {}) })
            .where('id', '=', id)
            .execute();
        } else {
          id = newId();
          await trx
            .insertInto('screens')
            .values(
              newScreenRow(
                { id, name: body.name, location_id: body.locationId ?? null, player_family: session.player_family, player_version: session.player_version },
                now,
              ),
            )
            .execute();
        }
        for (const g of groupIds) {
          await trx
            .insertInto('screen_group_members')
            .values({ group_id: g, screen_id: id, added_at: now })
            .onConflict((oc) => oc.doNothing())
            .execute();
        }
        const updated = await trx
          .updateTable('pairing_sessions')
          .set({
            status: 'approved',
            screen_id: id,
            replaces_screen: body.screenId ? 1 : 0,
            decided_by: (auth as SessionPrincipal).userId,
            decided_at: now,
            enrollment_expires_at: nowIso(Date.now() + ENROLLMENT_TTL_MS),
          })
          .where('id', '=', session.id)
          .where('status', '=', 'pending')
          .where('expires_at', '>', now)
          .executeTakeFirst();
        // Rejected (or expired) meanwhile: the transaction rolls back, no screen is created.
        if (Number(updated.numUpdatedRows) !== 1) throw new ApiError('conflict', 'The pairing session was decided meanwhile or expired');
        await recordHistory(trx, id, 'paired', { pairingSessionId: session.id, deviceName: session.device_name, by: (auth as SessionPrincipal).userId });
        return id;
      });
      if (body.screenId) await bumpManifestRevision(ctx.deps, [screenId]);
      const row = (await findScreen(db, screenId))!;
      const [screen] = await screenDtos(ctx.deps, [row], (id) => ctx.realtime.count(id) > 0);
      return ok({ screen: screen!, pairingSessionId: session.id });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/screens/pairing/{id}/reject',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Reject a pairing: the player sees `rejected`',
    params: IdParams,
    responses: {
      200: { description: 'The session', data: z.object({ id: z.string(), status: z.literal('rejected') }) },
      409: { description: 'conflict: not pending' },
    },
    handler: async (ctx, { params, auth }) => {
      await rejectPairingSession(ctx.deps.db, params.id, (auth as SessionPrincipal).userId);
      return ok({ id: params.id, status: 'rejected' as const });
    },
  }),
];

async function credentialRow(ctx: Context, credential: string): Promise<{ screenId: string; credentialId: string }> {
  const publicId = credential.slice('svc_device_'.length).split('.')[0]!;
  const row = await ctx.deps.db.selectFrom('device_credentials').select(['id', 'screen_id']).where('public_id', '=', publicId).executeTakeFirstOrThrow();
  return { screenId: row.screen_id, credentialId: row.id };
}
