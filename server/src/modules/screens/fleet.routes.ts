import type { Context } from 'koa';
import { DateTime } from 'luxon';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import { notFound } from '../../platform/http/errors.js';
import { defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { storableJson } from '../../platform/db/json.js';
import { queueCommand } from './commands.service.js';
import { screenOf } from './device-auth.js';
import { groupOr404, parseSpan, spanGeometry, SpanDto } from './groups.service.js';
import { EffectivePolicy, effectivePolicy, parsePolicy, PolicyDocument } from './policies.js';
import { cachedSettings } from '../system/index.js';
import { bumpManifestRevision } from './revision.js';
import { deriveStatus, nowIso, onlineWindowMs, PLAYER_FAMILIES, SCREEN_STATUSES, type ScreenRow } from './screens.repo.js';
import { screenOr404 } from './screens.service.js';
import { groupMemberIds, screenTimeZone } from './targets.js';

const IdParams = z.object({ id: uuidParam });
const PolicyReply = z.object({ policy: PolicyDocument.nullable() });

// ---- Reliability ----

export const WINDOWS = { '24h': 24 * 3600_000, '7d': 7 * 24 * 3600_000, '30d': 30 * 24 * 3600_000 } as const;
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

const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : null);

/**
 * Uptime from contact receipts (heartbeats and liveness pings): the screen counts as up
 * from each contact until the next one if that comes within the online window, else a
 * gap starts once the window passes. Measured from the window start or the screen's
 * creation, whichever is later, and only over the part of it the contact history still
 * covers: contacts older than `heartbeatDays` are pruned, so counting them as absent
 * would report false gaps. A contact covers the online window after it, so the covered
 * part starts one online window after the retention cutoff (the contact that covers its
 * first instant is then certainly kept).
 */
export async function reliability(db: Db, screen: ScreenRow, window: keyof typeof WINDOWS, now = Date.now(), heartbeatDays?: number) {
  const interval = screen.expected_interval_sec;
  const grace = onlineWindowMs(interval);
  const from = Math.max(now - WINDOWS[window], Date.parse(screen.created_at));
  const days = heartbeatDays ?? (await cachedSettings(db)).retention.heartbeatDays;
  const start = Math.min(now, Math.max(from, now - days * 24 * 3600_000 + grace));
  const rows = await db
    .selectFrom('screen_history')
    .select(['at_ms', 'kind'])
    .where('screen_id', '=', screen.id)
    .where('kind', 'in', ['heartbeat', 'liveness'])
    .where('at_ms', '>=', start - grace)
    .where('at_ms', '<=', now)
    .orderBy('at_ms')
    .execute();
  // Each contact covers [t, t + grace]; merged and clipped to [start, now], the rest are gaps.
  const end = now;
  const gaps: { from: number; to: number }[] = [];
  let online = 0;
  let cursor = start; // everything before this is accounted for
  for (const r of rows) {
    const from = Math.max(r.at_ms, start);
    const to = Math.min(r.at_ms + grace, end);
    if (to <= cursor) continue;
    if (from > cursor) gaps.push({ from: cursor, to: from });
    online += to - Math.max(from, cursor);
    cursor = to;
  }
  if (end > cursor) gaps.push({ from: cursor, to: end });
  const observed = end - start;
  const beats = rows.filter((r) => r.kind === 'heartbeat' && r.at_ms >= start).map((r) => r.at_ms);
  const intervals = beats
    .slice(1)
    .map((t, i) => (t - beats[i]!) / 1000)
    .sort((a, b) => a - b);
  const regular = intervals.filter((s) => s <= interval * 1.5).length;
  const significant = gaps.filter((g) => g.to - g.from >= 1000);
  return {
    window,
    from: nowIso(from),
    to: nowIso(end),
    coveredFrom: nowIso(start),
    uptimePercent: observed > 0 ? Math.round((online / observed) * 10000) / 100 : null,
    onlineMs: Math.round(online),
    observedMs: Math.round(observed),
    gaps: significant.slice(-100).map((g) => ({ from: nowIso(g.from), to: nowIso(g.to), durationMs: Math.round(g.to - g.from) })),
    gapCount: significant.length,
    heartbeats: {
      count: beats.length,
      expectedIntervalSec: interval,
      medianIntervalSec: quantile(intervals, 0.5),
      p95IntervalSec: quantile(intervals, 0.95),
      regularPercent: intervals.length ? Math.round((regular / intervals.length) * 10000) / 100 : null,
    },
  };
}

// ---- Power assist ----

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const HHMM = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM, 24-hour');
export const PowerAssist = z
  .object({
    enabled: z.boolean(),
    /** Windows when the display should be on; outside them it is turned off. */
    schedule: z
      .array(
        z
          .object({ days: z.array(z.enum(DAYS)).min(1).max(7), onAt: HHMM, offAt: HHMM })
          .strict()
          .refine((w) => w.onAt !== w.offAt, 'onAt and offAt differ'),
      )
      .max(28),
  })
  .strict();
export type PowerAssist = z.infer<typeof PowerAssist>;

const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));

/** Whether the display should be on at `now` in `zone` (a window past midnight belongs to its start day). */
export function powerDesired(pa: PowerAssist, zone: string, now = Date.now()): 'on' | 'off' {
  const local = DateTime.fromMillis(now, { zone });
  const today = DAYS[local.weekday - 1]!;
  const yesterday = DAYS[(local.weekday + 5) % 7]!;
  const m = local.hour * 60 + local.minute;
  for (const w of pa.schedule) {
    const on = minutes(w.onAt);
    const off = minutes(w.offAt);
    if (on < off) {
      if (w.days.includes(today) && m >= on && m < off) return 'on';
    } else {
      if (w.days.includes(today) && m >= on) return 'on';
      if (w.days.includes(yesterday) && m < off) return 'on';
    }
  }
  return 'off';
}

/** Periodic: queue display_on/off where a screen's power-assist state should change. */
export async function runPowerAssist(deps: Parameters<typeof queueCommand>[0], now = Date.now()): Promise<number> {
  const rows = await deps.db
    .selectFrom('screens')
    .selectAll()
    .where('power_assist', 'is not', null)
    .where('disabled_at', 'is', null)
    .where('revoked_at', 'is', null)
    .execute();
  let queued = 0;
  for (const s of rows) {
    const pa = PowerAssist.safeParse(JSON.parse(s.power_assist!));
    if (!pa.success || !pa.data.enabled) continue;
    const zone = (await screenTimeZone(deps.db, s.id)) ?? 'UTC';
    const desired = powerDesired(pa.data, zone, now);
    if (s.power_assist_state === desired) continue;
    await queueCommand(deps, { screenId: s.id, type: desired === 'on' ? 'display_on' : 'display_off', ttlSec: 30 * 60, source: 'power-assist' });
    await deps.db.updateTable('screens').set({ power_assist_state: desired }).where('id', '=', s.id).execute();
    queued++;
  }
  return queued;
}

const PowerAssistReply = PowerAssist.extend({
  screenId: z.string(),
  timeZone: z.string(),
  desiredState: z.enum(['on', 'off']),
  lastAppliedState: z.enum(['on', 'off']).nullable(),
});

async function powerReply(db: Db, screenId: string, pa: PowerAssist, state: string | null) {
  const zone = (await screenTimeZone(db, screenId)) ?? 'UTC';
  return { screenId, ...pa, timeZone: zone, desiredState: powerDesired(pa, zone), lastAppliedState: state === 'on' || state === 'off' ? state : null };
}

// ---- Routes ----

async function policyChanged(ctx: Context, screenIds: string[]) {
  await bumpManifestRevision(ctx.deps, screenIds);
  for (const id of screenIds) ctx.realtime.send(id, { type: 'config.changed' });
}

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
    const table = kind === 'screens' ? 'screens' : 'screen_groups';
    const load = async (ctx: Context, id: string) => (kind === 'screens' ? await screenOr404(ctx.deps.db, id) : await groupOr404(ctx.deps.db, id));
    const affected = async (ctx: Context, id: string) => (kind === 'screens' ? [id] : await groupMemberIds(ctx.deps.db, id));
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
          await ctx.deps.db
            .updateTable(table)
            .set({ policy: storableJson(body, 'The policy'), updated_at: nowIso() })
            .where('id', '=', row.id)
            .execute();
          await policyChanged(ctx, await affected(ctx, row.id));
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
          await ctx.deps.db.updateTable(table).set({ policy: null, updated_at: nowIso() }).where('id', '=', row.id).execute();
          await policyChanged(ctx, await affected(ctx, row.id));
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
      const windows = query.window ? [query.window] : (['24h', '7d', '30d'] as const);
      const out = [];
      const now = Date.now(); // one instant for every window
      const { heartbeatDays } = (await cachedSettings(ctx.deps.db)).retention;
      for (const w of windows) out.push(await reliability(ctx.deps.db, s, w, now, heartbeatDays));
      return ok({ screenId: s.id, status: deriveStatus(s), windows: out });
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
      await ctx.deps.db
        .updateTable('screens')
        .set({ power_assist: storableJson(body, 'Power assist'), power_assist_state: null, updated_at: nowIso() })
        .where('id', '=', s.id)
        .execute();
      return ok(await powerReply(ctx.deps.db, s.id, body, null));
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
      const pa = s.power_assist ? PowerAssist.safeParse(JSON.parse(s.power_assist)) : null;
      return ok(pa?.success ? await powerReply(ctx.deps.db, s.id, pa.data, s.power_assist_state) : null);
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
      const screen = screenOf(ctx);
      const g = await ctx.deps.db.selectFrom('screen_groups').selectAll().where('id', '=', params.id).executeTakeFirst();
      const span = g ? parseSpan(g.span) : null;
      if (!g || !span) throw notFound('Span');
      const geo = spanGeometry(g.id, span);
      const self = geo.cells.find((c) => c.screenId === screen.id);
      if (!self) throw notFound('Span panel for this screen');
      ctx.set('Cache-Control', 'no-cache');
      return ok({ self, span: geo });
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
    handler: async (ctx) => {
      const rows = await ctx.deps.db.selectFrom('screens').selectAll().orderBy('name').orderBy('id').execute();
      const now = Date.now();
      const totals = { screens: rows.length, online: 0, stale: 0, offline: 0, pending: 0, disabled: 0, revoked: 0 };
      const screens = rows.map((r) => {
        const status = deriveStatus(r, now);
        totals[status]++;
        if (r.disabled_at) totals.disabled++;
        if (r.revoked_at) totals.revoked++;
        return {
          id: r.id,
          name: r.name,
          status,
          disabled: r.disabled_at !== null,
          revoked: r.revoked_at !== null,
          playerFamily: (PLAYER_FAMILIES as readonly string[]).includes(r.player_family ?? '') ? (r.player_family as (typeof PLAYER_FAMILIES)[number]) : null,
          playerVersion: r.player_version,
          locationId: r.location_id,
          lastSeenAt: r.last_seen_at,
        };
      });
      return ok({ generatedAt: nowIso(now), totals, screens });
    },
  }),
];
