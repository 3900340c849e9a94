import type { Context } from 'koa';
import { z } from 'zod';
import { defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { screenOf } from './device-auth.js';
import { fleetHealth, PowerAssist, powerAssistOf, reliabilityWindows, setPolicy, setPowerAssist } from './fleet.service.js';
import { groupOr404, SpanDto, spanPanel } from './groups.service.js';
import { EffectivePolicy, effectivePolicy, parsePolicy, PolicyDocument } from './policies.js';
import { deriveStatus, PLAYER_FAMILIES, SCREEN_STATUSES } from './screens.repo.js';
import { screenOr404 } from './screens.service.js';

const IdParams = z.object({ id: uuidParam });
const PolicyReply = z.object({ policy: PolicyDocument.nullable() });

const ReliabilityWindow = z.object({
  window: z.enum(['24h', '7d', '30d']),
  /** The window's start, or the screen's creation when later. */
  from: z.string(),
  to: z.string(),
  /**
   * Where the contact history the figures come from starts: `from`, or later when heartbeat
   * and liveness history older than the retention (`retention.heartbeatDays`) is pruned.
   * Uptime, gaps and regularity cover `coveredFrom`..`to` only.
   */
  coveredFrom: z.string(),
  uptimePercent: z.number().nullable(),
  onlineMs: z.number().int(),
  observedMs: z.number().int(),
  gaps: z.array(z.object({ from: z.string(), to: z.string(), durationMs: z.number().int() })),
  gapCount: z.number().int(),
  heartbeats: z.object({
    count: z.number().int(),
    expectedIntervalSec: z.number().int(),
    medianIntervalSec: z.number().nullable(),
    p95IntervalSec: z.number().nullable(),
    /** Share of intervals within 1.5× the expected one. */
    regularPercent: z.number().nullable(),
  }),
});

const PowerAssistReply = PowerAssist.extend({
  screenId: z.string(),
  timeZone: z.string(),
  desiredState: z.enum(['on', 'off']),
  lastAppliedState: z.enum(['on', 'off']).nullable(),
});

const FleetScreen = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(SCREEN_STATUSES),
  disabled: z.boolean(),
  revoked: z.boolean(),
  playerFamily: z.enum(PLAYER_FAMILIES).nullable(),
  playerVersion: z.string().nullable(),
  locationId: z.string().nullable(),
  lastSeenAt: z.string().nullable(),
});

export const fleetRoutes = [
  ...(['screen-groups', 'screens'] as const).flatMap((kind) => {
    const tags = [kind === 'screens' ? 'Screens: policies' : 'Screen groups'];
    const load = async (ctx: Context, id: string) => (kind === 'screens' ? await screenOr404(ctx.deps.db, id) : await groupOr404(ctx.deps.db, id));
    return [
      defineRoute({
        method: 'GET',
        path: `/api/v1/${kind}/{id}/policy`,
        auth: 'session',
        tags,
        summary: `The ${kind === 'screens' ? 'screen' : 'group'}’s own policy (null when none)`,
        params: IdParams,
        responses: { 200: { description: 'The policy', data: PolicyReply } },
        handler: async (ctx, { params }) => ok({ policy: parsePolicy((await load(ctx, params.id)).policy) }),
      }),
      defineRoute({
        method: 'PUT',
        path: `/api/v1/${kind}/{id}/policy`,
        auth: 'session',
        minRole: 'admin',
        tags,
        summary: `Set the ${kind === 'screens' ? 'screen' : 'group'}’s policy (replaces it; keys left out inherit)`,
        params: IdParams,
        body: PolicyDocument,
        responses: { 200: { description: 'The policy', data: PolicyReply } },
        handler: async (ctx, { params, body }) => {
          const row = await load(ctx, params.id);
          await setPolicy(ctx.deps, ctx.realtime, kind, row.id, body);
          return ok({ policy: body });
        },
      }),
      defineRoute({
        method: 'DELETE',
        path: `/api/v1/${kind}/{id}/policy`,
        auth: 'session',
        minRole: 'admin',
        tags,
        summary: `Remove the ${kind === 'screens' ? 'screen' : 'group'}’s policy`,
        params: IdParams,
        responses: { 204: { description: 'Removed' } },
        handler: async (ctx, { params }) => {
          const row = await load(ctx, params.id);
          await setPolicy(ctx.deps, ctx.realtime, kind, row.id, null);
          return noContent();
        },
      }),
    ];
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/screens/{id}/effective-policy',
    auth: 'session',
    tags: ['Screens: policies'],
    summary: 'The merged policy with the source of every value',
    description:
      'Defaults, then the screen’s groups (when groups disagree, the group whose name sorts first wins), then the screen’s own policy. `sources[key]` names where each value came from; `layers` lists the policies that took part, weakest first.',
    params: IdParams,
    responses: { 200: { description: 'Effective policy', data: EffectivePolicy } },
    handler: async (ctx, { params }) => {
      const s = await screenOr404(ctx.deps.db, params.id);
      return ok(await effectivePolicy(ctx.deps.db, s.id));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/screens/{id}/reliability',
    auth: 'session',
    tags: ['Screens'],
    summary: 'Uptime %, gaps and heartbeat regularity over 24 h, 7 d and 30 d',
    description:
      'From heartbeat and liveness receipts. Each window runs from `from` (its start, or the screen’s creation when later) to `to`, but the figures cover `coveredFrom`..`to` only: contact history older than the retention setting `retention.heartbeatDays` is pruned, so with a 7-day retention the 30-day window reports on its last 7 days (less one online window) rather than showing the pruned part as a gap.',
    params: IdParams,
    query: z.object({ window: z.enum(['24h', '7d', '30d']).optional() }),
    responses: {
      200: {
        description: 'Reliability per window',
        data: z.object({ screenId: z.string(), status: z.enum(SCREEN_STATUSES), windows: z.array(ReliabilityWindow) }),
      },
    },
    handler: async (ctx, { params, query }) => {
      const s = await screenOr404(ctx.deps.db, params.id);
      const windows = await reliabilityWindows(ctx.deps.db, s, query.window ? [query.window] : ['24h', '7d', '30d']);
      return ok({ screenId: s.id, status: deriveStatus(s), windows });
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/screens/{id}/power-assist',
    auth: 'session',
    minRole: 'admin',
    tags: ['Screens'],
    summary: 'Display on/off schedule in the screen’s local time; the scheduler turns it into commands',
    description:
      'Outside the `schedule` windows the display is turned off (`display_off` command), inside on. Times are the screen’s location time zone (UTC without a location). A window whose `offAt` is before `onAt` runs past midnight.',
    params: IdParams,
    body: PowerAssist,
    responses: { 200: { description: 'The power-assist settings and the state they ask for now', data: PowerAssistReply } },
    handler: async (ctx, { params, body }) => {
      const s = await screenOr404(ctx.deps.db, params.id);
      return ok(await setPowerAssist(ctx.deps.db, s.id, body));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/screens/{id}/power-assist',
    auth: 'session',
    extension: true,
    tags: ['Screens'],
    summary: 'The power-assist settings (null when never set)',
    params: IdParams,
    responses: { 200: { description: 'Settings', data: PowerAssistReply.nullable() } },
    handler: async (ctx, { params }) => {
      const s = await screenOr404(ctx.deps.db, params.id);
      return ok(await powerAssistOf(ctx.deps.db, s));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/player/span-panels/{id}',
    auth: 'device',
    tags: ['Player'],
    summary: 'This screen’s slice of a video wall (id: the span group)',
    description:
      '`self` is the cell and viewport of the calling screen within the canvas; `span` the whole wall. 404 when the group is not a span or the screen has no cell in it.',
    params: IdParams,
    responses: {
      200: {
        description: 'Panel geometry',
        data: z.object({
          self: z.object({
            screenId: z.string(),
            row: z.number().int(),
            column: z.number().int(),
            viewport: z.object({ xPx: z.number().int(), yPx: z.number().int(), widthPx: z.number().int(), heightPx: z.number().int() }),
          }),
          span: SpanDto,
        }),
      },
    },
    handler: async (ctx, { params }) => {
      const panel = await spanPanel(ctx.deps.db, params.id, screenOf(ctx).id);
      ctx.set('Cache-Control', 'no-cache');
      return ok(panel);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/fleet-health',
    auth: ['session', 'integration:fleet_health:read'],
    extension: true,
    tags: ['Screens'],
    summary: 'Fleet health: counts by status and every screen’s status (integration tokens with fleet_health:read)',
    responses: {
      200: {
        description: 'Fleet health',
        data: z.object({
          generatedAt: z.string(),
          totals: z.object({
            screens: z.number().int(),
            online: z.number().int(),
            stale: z.number().int(),
            offline: z.number().int(),
            pending: z.number().int(),
            disabled: z.number().int(),
            revoked: z.number().int(),
          }),
          screens: z.array(FleetScreen),
        }),
      },
    },
    handler: async (ctx) => ok(await fleetHealth(ctx.deps.db)),
  }),
];
