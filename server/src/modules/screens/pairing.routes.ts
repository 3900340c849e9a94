import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import { created, defineRoute, ok, uuidParam } from '../../platform/http/route.js';
import { CLOSE_CODES } from '../../platform/realtime/hub.js';
import { throttled } from '../accounts/index.js';
import { credentialOwner } from './device-auth.js';
import {
  approvePairing,
  normalizeCode,
  pairingSessionOr404,
  pendingSessionByCode,
  pollPairing,
  redeemEnrollmentToken,
  rejectPairingSession,
  startPairing,
  statusOf,
} from './pairing.service.js';
import { findScreen, PlayerFamilyField, ScreenDto } from './screens.repo.js';
import { screenDtos } from './screens.service.js';

const TAGS = ['Screens: pairing'];

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
    handler: async (ctx, { body }) => created(await startPairing(ctx.deps.db, ctx.ip, body)),
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
    handler: async (ctx, { params }) => ok(await pollPairing(ctx.deps.db, params.id, ctx.get('x-pairing-secret'))),
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
      const result = await throttled(ctx, 'enroll', undefined, () => redeemEnrollmentToken(ctx.deps.db, body));
      if (result === false) throw new ApiError('invalid_credential', 'Unknown, used or expired enrollment token');
      const { screenId, credentialId } = await credentialOwner(ctx.deps.db, result);
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
      const row = await throttled(ctx, 'pairing-resolve', undefined, () => pendingSessionByCode(ctx.deps.db, code));
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
      const session = await pairingSessionOr404(ctx.deps.db, params.id);
      const screenId = await approvePairing(ctx.deps, session, body, (auth as SessionPrincipal).userId);
      const row = (await findScreen(ctx.deps.db, screenId))!;
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
