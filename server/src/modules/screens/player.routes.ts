import { z } from 'zod';
import type { DevicePrincipal } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import { defineRoute, ok } from '../../platform/http/route.js';
import { screenOf } from './device-auth.js';
import { HeartbeatBody, HeartbeatReply, ingestHeartbeat, precheckHeartbeatBody, recordLiveness } from './heartbeat.js';
import { effectivePolicy } from './policies.js';
import { nowIso } from './screens.repo.js';
import { screenTimeZone } from './targets.repo.js';
import { updateOfferOf, webReleaseOf } from './update-info.js';

const TAGS = ['Player'];

export const playerRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/player/heartbeat',
    auth: 'device',
    // It reads what it compares with in its own transaction.
    deviceIdOnly: true,
    tags: TAGS,
    summary: 'The player status document: status, playback, noise history',
    description:
      'The screen is the credential’s, never a `screenId` in the body. Unknown or malformed credential 401 `invalid_credential`, revoked 401 `credential_revoked`, disabled screen 403 `screen_disabled`, invalid body 400 `validation_failed` with details. A `playerFamily` outside android, desktop-linux, edge is recorded as absent; `playerArchitecture` (x86_64, aarch64) is kept only for edge. Malformed playback identifiers are dropped and named in `ignoredFields`. Noise buckets are stored idempotently on (screen, startedAt) and durable before the reply; `noiseHistory.accepted` counts the request’s buckets now stored, so a retry gets the same answer. Fields beyond these are accepted (additive contract).',
    body: HeartbeatBody,
    bodyPrecheck: precheckHeartbeatBody,
    responses: {
      200: { description: 'Accepted', data: HeartbeatReply },
      400: { description: 'validation_failed' },
      401: { description: 'invalid_credential or credential_revoked' },
      403: { description: 'screen_disabled' },
    },
    handler: async (ctx, { body, auth }) =>
      ok(await ingestHeartbeat({ db: ctx.deps.db, realtime: ctx.realtime }, (auth as DevicePrincipal).screenId, body, ctx.ip)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/player/liveness',
    auth: 'device',
    deviceIdOnly: true,
    tags: TAGS,
    summary: 'A light ping that keeps the screen online between heartbeats',
    body: z.object({}).loose(),
    responses: {
      200: { description: 'Seen', data: z.object({ serverTime: z.string(), manifestRevision: z.number().int(), heartbeatIntervalSec: z.number().int() }) },
    },
    handler: async (ctx, { auth }) => {
      const r = await recordLiveness(ctx.deps.db, (auth as DevicePrincipal).screenId, ctx.ip);
      return ok({ serverTime: nowIso(), ...r });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/player/socket',
    auth: 'device',
    tags: TAGS,
    summary: 'WebSocket: pushes manifest.changed, command.pending, takeover.started/ended, ping',
    description:
      'Upgrade with the device credential in `Authorization: Bearer …` (native players) or as the subprotocol `bearer.<credential>` next to `placard.v1` (browsers). Anything else is refused before the upgrade (401). A revoked or disabled screen’s socket is closed at once (close code 4001 revoked, 4003 disabled). The server pings every 25 s. A plain GET answers 426 `upgrade_required`.',
    responses: { 101: { description: 'Switching Protocols (WebSocket)' }, 426: { description: 'upgrade_required: not a WebSocket request' } },
    handler: () => {
      throw new ApiError('upgrade_required', 'Open this route as a WebSocket', { headers: { Upgrade: 'websocket', Connection: 'Upgrade' } });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/player/config',
    auth: 'device',
    tags: TAGS,
    summary: 'The effective policy as the player needs it, and the update offered to it',
    responses: {
      200: {
        description: 'Configuration',
        data: z.object({
          screenId: z.string(),
          name: z.string(),
          orientation: z.string(),
          timeZone: z.string().nullable(),
          serverTime: z.string(),
          manifestRevision: z.number().int(),
          heartbeatIntervalSec: z.number().int(),
          policy: z.record(z.string(), z.unknown()),
          update: z
            .object({ deploymentId: z.string(), releaseId: z.string(), version: z.string(), family: z.string() })
            .nullable()
            .describe(
              'an update offered to this screen: fetch /api/v1/player/updates/{releaseId}, then report to /api/v1/player/update-deployments/{deploymentId}/status',
            ),
          webRelease: z
            .object({ releaseId: z.string(), version: z.string(), path: z.string() })
            .nullable()
            .describe('the newest web release this screen installed through a deployment (/play runs it from `path`); null: the bundled build'),
        }),
      },
    },
    handler: async (ctx) => {
      const screen = screenOf(ctx);
      const policy = await effectivePolicy(ctx.deps.db, screen.id);
      return ok({
        screenId: screen.id,
        name: screen.name,
        orientation: screen.orientation,
        timeZone: await screenTimeZone(ctx.deps.db, screen.id),
        serverTime: nowIso(),
        manifestRevision: screen.manifest_revision,
        heartbeatIntervalSec: policy.values.heartbeatIntervalSec,
        policy: policy.values,
        update: await updateOfferOf(ctx.deps, screen.id),
        webRelease: await webReleaseOf(ctx.deps, screen.id),
      });
    },
  }),
];
