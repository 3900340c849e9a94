import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { invalidReference, notFound } from '../../platform/http/errors.js';
import { created, defineRoute, noContent, ok, uuidParam as Uuid } from '../../platform/http/route.js';
import { TargetsInput as SharedTargets, unknownTargets } from '../screens/index.js';
import { MIN_POLL_SEC, decide, poll, reconcileNow } from './weather.service.js';
import {
  actionRowsOf,
  deleteRule,
  insertMonitor,
  insertRule,
  updateMonitor,
  updateRule,
  userLabel,
  type AlertRow,
  monitorRow,
  type MonitorRow,
  parseJson,
  recentAlertRows,
  type RuleRow,
  ruleMatch,
  ruleRow,
  ruleRows,
  ruleTargets,
  zonesSeen,
} from './weather.repo.js';

const TAGS = ['Weather alerts'];
/** Ended alerts stay in the list this long. */
const RECENT_DAYS = 7;
const RECENT_LIMIT = 200;

const SEVERITIES = ['Extreme', 'Severe', 'Moderate', 'Minor', 'Unknown'] as const;
const URGENCIES = ['Immediate', 'Expected', 'Future', 'Past', 'Unknown'] as const;
const CERTAINTIES = ['Observed', 'Likely', 'Possible', 'Unlikely', 'Unknown'] as const;

const ZoneCode = z.string().trim().min(1).max(100);
const MonitorInput = z.object({
  enabled: z.boolean(),
  feedUrl: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .meta({ pattern: '^[Hh][Tt][Tt][Pp][Ss]?://' })
    .describe('The http or https address of the feed'),
  format: z.enum(['cap-atom', 'nws-geojson']),
  zones: z.array(ZoneCode).max(500).describe('zone codes to watch (UGC, SAME, CAP geocode values); empty: every alert in the feed'),
  pollIntervalSec: z.number().int().min(MIN_POLL_SEC).max(86_400),
});
const nonEmpty = <T extends z.ZodType>(t: T) => z.array(t).min(1).max(200).optional();
const MatchInput = z
  .object({
    events: nonEmpty(z.string().trim().min(1).max(200)).describe('event names (case-insensitive), e.g. "Tornado Warning"'),
    severities: nonEmpty(z.enum(SEVERITIES)),
    urgencies: nonEmpty(z.enum(URGENCIES)),
    certainties: nonEmpty(z.enum(CERTAINTIES)),
    zones: nonEmpty(ZoneCode).describe('any of these zone codes'),
  })
  .strict();
const TargetsInput = SharedTargets.strict().refine((t) => t.all === true || Boolean(t.screenIds?.length || t.groupIds?.length || t.locationIds?.length), {
  message: 'name the screens: all, or at least one screen, group or location',
});
const RuleInput = z.object({
  name: z.string().trim().min(1).max(200),
  match: MatchInput,
  targets: TargetsInput,
  requireConfirmation: z.boolean().default(false),
});
const Decision = z.object({ alertId: Uuid, ruleId: Uuid });
const PollInput = z
  .object({
    fetch: z.boolean().default(true).describe('poll the feed (false: only apply the decisions)'),
    confirm: z.array(Decision).max(100).default([]).describe('alerts waiting for confirmation under a rule: put them on air'),
    dismiss: z.array(Decision).max(100).default([]).describe('alerts waiting for confirmation under a rule: never put them on air'),
  })
  .default({ fetch: true, confirm: [], dismiss: [] });

const MatchDto = z.object({
  events: z.array(z.string()).optional(),
  severities: z.array(z.string()).optional(),
  urgencies: z.array(z.string()).optional(),
  certainties: z.array(z.string()).optional(),
  zones: z.array(z.string()).optional(),
});
const TargetsDto = z.object({
  all: z.boolean().optional(),
  screenIds: z.array(z.string()).optional(),
  groupIds: z.array(z.string()).optional(),
  locationIds: z.array(z.string()).optional(),
});
const RuleDto = z
  .object({
    id: z.string(),
    name: z.string(),
    match: MatchDto,
    targets: TargetsDto,
    requireConfirmation: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'WeatherAlertRule' });
const MonitorDto = z
  .object({
    enabled: z.boolean(),
    feedUrl: z.string(),
    format: z.enum(['cap-atom', 'nws-geojson']),
    zones: z.array(z.string()),
    pollIntervalSec: z.number().int(),
    state: z.object({
      lastPollAt: z.string().nullable(),
      lastSuccessAt: z.string().nullable(),
      lastError: z.string().nullable(),
      lastErrorCode: z.string().nullable(),
      consecutiveFailures: z.number().int(),
      nextPollAt: z.string().nullable(),
    }),
    updatedAt: z.string(),
  })
  .meta({ id: 'WeatherMonitor' });
const ActionDto = z.object({
  ruleId: z.string(),
  ruleName: z.string(),
  state: z.enum(['pending_confirmation', 'starting', 'active', 'ended', 'dismissed', 'failed']),
  takeoverId: z.string().nullable(),
  confirmedBy: z.string().nullable().describe('who confirmed (or dismissed) it; null when it needed no confirmation'),
  confirmedAt: z.string().nullable(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  endReason: z.string().nullable(),
  error: z.string().nullable(),
});
const AlertDto = z
  .object({
    id: z.string(),
    identifier: z.string(),
    sender: z.string(),
    senderName: z.string(),
    messageType: z.enum(['Alert', 'Update', 'Cancel']),
    event: z.string(),
    severity: z.string(),
    urgency: z.string(),
    certainty: z.string(),
    headline: z.string(),
    description: z.string(),
    instruction: z.string(),
    sent: z.string().nullable(),
    effective: z.string().nullable(),
    expires: z.string().nullable(),
    ends: z.string().nullable(),
    areaDesc: z.string(),
    zones: z.array(z.string()),
    references: z.array(z.string()),
    state: z.enum(['active', 'expired', 'cancelled', 'superseded', 'cancel']),
    supersededBy: z.string().nullable(),
    firstSeenAt: z.string(),
    endedAt: z.string().nullable(),
    actions: z.array(ActionDto).describe('what the alert did under each rule it matched'),
  })
  .meta({ id: 'WeatherAlert' });
const ChangesDto = z.object({
  alerts: z.array(z.object({ alertId: z.string(), identifier: z.string(), change: z.enum(['new', 'updated', 'cancelled', 'expired', 'superseded']) })),
  started: z.array(z.object({ alertId: z.string(), ruleId: z.string(), takeoverId: z.string() })),
  ended: z.array(z.object({ alertId: z.string(), ruleId: z.string(), takeoverId: z.string(), reason: z.string() })),
  pendingConfirmation: z.array(z.object({ alertId: z.string(), ruleId: z.string() })),
  failed: z.array(z.object({ alertId: z.string(), ruleId: z.string(), error: z.string() })),
});

function monitorDto(m: MonitorRow | undefined) {
  if (!m) return null;
  return {
    enabled: Boolean(m.enabled),
    feedUrl: m.feed_url,
    format: m.format as 'cap-atom' | 'nws-geojson',
    zones: parseJson<string[]>(m.zones, []),
    pollIntervalSec: m.poll_interval_sec,
    state: {
      lastPollAt: m.last_poll_at,
      lastSuccessAt: m.last_success_at,
      lastError: m.last_error,
      lastErrorCode: m.last_error_code,
      consecutiveFailures: m.consecutive_failures,
      nextPollAt: m.next_poll_at,
    },
    updatedAt: m.updated_at,
  };
}

const ruleDto = (r: RuleRow) => ({
  id: r.id,
  name: r.name,
  match: ruleMatch(r),
  targets: ruleTargets(r),
  requireConfirmation: Boolean(r.require_confirmation),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

async function alertDtos(db: Db, rows: AlertRow[]) {
  const actions = await actionRowsOf(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((a) => ({
    id: a.id,
    identifier: a.identifier,
    sender: a.sender,
    senderName: a.sender_name,
    messageType: a.msg_type as 'Alert' | 'Update' | 'Cancel',
    event: a.event,
    severity: a.severity,
    urgency: a.urgency,
    certainty: a.certainty,
    headline: a.headline,
    description: a.description,
    instruction: a.instruction,
    sent: a.sent,
    effective: a.effective,
    expires: a.expires,
    ends: a.ends,
    areaDesc: a.area_desc,
    zones: parseJson<string[]>(a.zones, []),
    references: parseJson<string[]>(a.refs, []),
    state: a.state as z.infer<typeof AlertDto>['state'],
    supersededBy: a.superseded_by,
    firstSeenAt: a.first_seen_at,
    endedAt: a.ended_at,
    actions: actions
      .filter((x) => x.alert_id === a.id)
      .map((x) => ({
        ruleId: x.rule_id,
        ruleName: x.rule_name,
        state: x.state as z.infer<typeof ActionDto>['state'],
        takeoverId: x.takeover_id,
        confirmedBy: x.confirmed_by,
        confirmedAt: x.confirmed_at,
        startedAt: x.started_at,
        endedAt: x.ended_at,
        endReason: x.end_reason,
        error: x.error,
      })),
  }));
}

/** Target ids that name nothing: 400 invalid_reference. */
async function checkTargets(db: Db, t: z.output<typeof TargetsInput>) {
  const refs = await unknownTargets(db, t);
  if (refs.length) throw invalidReference('Some targets name nothing', refs);
}

const ruleValues = (body: z.output<typeof RuleInput>) => ({
  name: body.name,
  match: JSON.stringify(body.match),
  targets: JSON.stringify(body.targets),
  require_confirmation: body.requireConfirmation ? 1 : 0,
});

const IdParams = z.object({ id: Uuid });

export const weatherRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/alerts/weather',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'Active and recent weather alerts and what each did, the monitor (settings and poll state) and the rules',
    description: `Alerts that are active, plus those seen or ended in the last ${RECENT_DAYS} days (newest first, at most ${RECENT_LIMIT}). An action in state pending_confirmation waits for a person: confirm it with POST /alerts/weather/poll {confirm: [{alertId, ruleId}]}.`,
    responses: {
      200: {
        description: 'Alerts, monitor, rules',
        data: z.object({
          alerts: z.array(AlertDto),
          pendingConfirmation: z.array(z.object({ alertId: z.string(), ruleId: z.string(), ruleName: z.string(), headline: z.string() })),
          monitor: MonitorDto.nullable().describe('null until PUT /alerts/weather/monitor'),
          rules: z.array(RuleDto),
        }),
      },
    },
    handler: async (ctx) => {
      const { db } = ctx.deps;
      const alerts = await alertDtos(db, await recentAlertRows(db, nowIso(Date.now() - RECENT_DAYS * 86_400_000), RECENT_LIMIT));
      const pendingConfirmation = alerts.flatMap((a) =>
        a.actions
          .filter((x) => x.state === 'pending_confirmation')
          .map((x) => ({ alertId: a.id, ruleId: x.ruleId, ruleName: x.ruleName, headline: a.headline || a.event })),
      );
      return ok({ alerts, pendingConfirmation, monitor: monitorDto(await monitorRow(db)), rules: (await ruleRows(db)).map(ruleDto) });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/alerts/weather/zones',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'The zones the configured feed offers (as of its last successful poll)',
    description:
      'Every zone code the last document held: NWS GeoJSON geocode.UGC and SAME codes, CAP Atom geocode values (kind is the valueName), each with the area it describes. Empty until the first successful poll.',
    responses: {
      200: {
        description: 'Zones',
        data: z.object({
          zones: z.array(z.object({ code: z.string(), kind: z.string(), areaDesc: z.string() })),
          feedUrl: z.string().nullable(),
          asOf: z.string().nullable().describe('when the feed last answered'),
        }),
      },
    },
    handler: async (ctx) => {
      const m = await monitorRow(ctx.deps.db);
      return ok({ zones: zonesSeen(m), feedUrl: m?.feed_url ?? null, asOf: m?.last_success_at ?? null });
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/alerts/weather/monitor',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Set the feed monitor: feed, format, zones watched, poll interval, on or off',
    description: 'A new feed URL or format forgets the last document (conditional GET state and zones) and polls at the next tick.',
    body: MonitorInput,
    responses: { 200: { description: 'The monitor', data: MonitorDto } },
    handler: async (ctx, { body }) => {
      const { db } = ctx.deps;
      const at = nowIso();
      const old = await monitorRow(db);
      const values = {
        enabled: body.enabled ? 1 : 0,
        feed_url: body.feedUrl,
        format: body.format,
        zones: JSON.stringify([...new Set(body.zones)]),
        poll_interval_sec: body.pollIntervalSec,
        updated_at: at,
      };
      const sameFeed = old && old.feed_url === body.feedUrl && old.format === body.format;
      const reset = sameFeed
        ? {}
        : { etag: null, last_modified: null, body_sha256: null, zones_seen: '[]', consecutive_failures: 0, last_error: null, last_error_code: null };
      // A changed zone list reads the document again (the last one may hold alerts for the new zones).
      const zonesChanged = old && old.zones !== values.zones ? { etag: null, last_modified: null, body_sha256: null } : {};
      const next = { next_poll_at: body.enabled ? at : null };
      if (old) await updateMonitor(db, { ...values, ...reset, ...zonesChanged, ...next });
      else await insertMonitor(db, { id: 1, ...values, ...next, zones_seen: '[]', consecutive_failures: 0 });
      return ok(monitorDto(await monitorRow(db)));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/alerts/weather/poll',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Poll the feed now and answer what changed; also confirms or dismisses alerts waiting for a person',
    description:
      'Decisions first (all checked before any applies: 409 when one is not waiting), then the poll. outcome: data, unchanged, failed (error says why; nothing changed), disabled or not_configured (no fetch).',
    body: PollInput,
    responses: {
      200: {
        description: 'What changed',
        data: z.object({
          outcome: z.enum(['data', 'unchanged', 'failed', 'disabled', 'not_configured', 'skipped', 'not_polled']),
          error: z.string().nullable(),
          changes: ChangesDto,
        }),
      },
      409: {
        description: 'conflict: an alert named in confirm/dismiss is not waiting for confirmation under that rule (details.notPending)',
        codes: ['conflict'],
      },
    },
    handler: async (ctx, { body, auth }) => {
      const p = auth as SessionPrincipal;
      let decided: Awaited<ReturnType<typeof decide>> | null = null;
      if (body.confirm.length || body.dismiss.length) {
        decided = await decide(ctx.deps, { id: p.userId, label: await userLabel(ctx.deps.db, p.userId) }, body.confirm, body.dismiss);
      }
      const polled = body.fetch
        ? await poll(ctx.deps, true)
        : { outcome: 'not_polled' as const, error: null, changes: { alerts: [], started: [], ended: [], pendingConfirmation: [], failed: [] } };
      const changes = decided
        ? {
            alerts: [...decided.alerts, ...polled.changes.alerts],
            started: [...decided.started, ...polled.changes.started],
            ended: [...decided.ended, ...polled.changes.ended],
            pendingConfirmation: [...decided.pendingConfirmation, ...polled.changes.pendingConfirmation],
            failed: [...decided.failed, ...polled.changes.failed],
          }
        : polled.changes;
      return ok({ outcome: polled.outcome, error: polled.error, changes });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/alerts/weather/rules',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Add a rule: alerts it matches take over its target screens (after a person confirms, when it asks for that)',
    body: RuleInput,
    responses: {
      201: { description: 'The rule', data: RuleDto },
      400: { description: 'validation_failed: a field is wrong or a target names nothing (details.issues)' },
    },
    handler: async (ctx, { body }) => {
      const { db } = ctx.deps;
      await checkTargets(db, body.targets);
      const id = newId();
      const at = nowIso();
      await insertRule(db, { id, ...ruleValues(body), created_at: at, updated_at: at });
      await reconcileNow(ctx.deps);
      return created(ruleDto((await ruleRow(db, id))!));
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/alerts/weather/rules/{id}',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Replace a rule (takeovers it already started keep running until their alert ends)',
    params: IdParams,
    body: RuleInput,
    responses: {
      200: { description: 'The rule', data: RuleDto },
      400: { description: 'validation_failed: a field is wrong or a target names nothing (details.issues)' },
    },
    handler: async (ctx, { params, body }) => {
      const { db } = ctx.deps;
      if (!(await ruleRow(db, params.id))) throw notFound('Rule');
      await checkTargets(db, body.targets);
      await updateRule(db, params.id, { ...ruleValues(body), updated_at: nowIso() });
      await reconcileNow(ctx.deps);
      return ok(ruleDto((await ruleRow(db, params.id))!));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/alerts/weather/rules/{id}',
    auth: 'session',
    minRole: 'publisher',
    tags: TAGS,
    summary: 'Delete a rule; the takeovers it started end',
    params: IdParams,
    responses: { 204: { description: 'Deleted' } },
    handler: async (ctx, { params }) => {
      const { db } = ctx.deps;
      if (!(await deleteRule(db, params.id))) throw notFound('Rule');
      await reconcileNow(ctx.deps);
      return noContent();
    },
  }),
];
