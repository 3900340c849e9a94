import { createHash } from 'node:crypto';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import { conflict } from '../../platform/http/errors.js';
import { OutboundError, safeFetch } from '../../platform/http/outbound.js';
import { fetchPolicy } from '../media/index.js';
import { type FeedFormat, FeedParseError, type ParsedAlert, type ParsedFeed, parseFeed } from './parse.js';
import { endTakeover, startTakeover } from '../takeovers/index.js';
import type { Db } from '../../platform/db/database.js';
import {
  type ActionRow,
  type AlertRow,
  actionOf,
  actionRuleIds,
  activeAlertRows,
  alertByIdentifier,
  alertRow,
  alertsByIdentifiers,
  carriedConfirmation,
  carriedHold,
  endActiveAlert,
  insertAction,
  insertAlert,
  openActionRows,
  ruleRow,
  updateAction,
  updateMonitor,
  userLabel,
  alertZones,
  monitorRow,
  type MonitorRow,
  parseJson,
  type RuleRow,
  ruleMatch,
  ruleRows,
  ruleTargets,
} from './weather.repo.js';

/** Limits of one feed fetch (DESIGN.md section 9). */
export const FEED_LIMITS = { timeoutMs: 15_000, maxBytes: 5 * 1024 * 1024, maxRedirects: 5 } as const;
export const MIN_POLL_SEC = 30;
export const TICK_MS = 5_000;
/** A successful poll is scheduled up to this fraction of the interval later. */
const JITTER = 0.1;
/** After failures: 30 s, doubling, at most an hour (or the interval when longer). */
export function nextPollDelaySec(intervalSec: number, failures: number, random: () => number = Math.random): number {
  const base = failures === 0 ? intervalSec : Math.min(MIN_POLL_SEC * 2 ** Math.min(failures - 1, 20), Math.max(3600, intervalSec));
  return base * (1 + JITTER * random());
}

/** Everything that changes alerts, actions or the monitor runs one at a time per app (a poll, the tick, a confirmation, a rule change). */
const SERIAL = new ScopeKey('weather-alerts.serial', () => ({ chain: Promise.resolve() as Promise<unknown> }));
export function serial<T>(deps: AppDeps, fn: () => Promise<T>): Promise<T> {
  const s = deps.scope.get(SERIAL);
  const run = s.chain.then(fn, fn);
  s.chain = run.catch(() => undefined);
  return run;
}

export const AUTOMATIC = { userId: null, label: 'Weather alerts' } as const;

export interface Changes {
  alerts: { alertId: string; identifier: string; change: 'new' | 'updated' | 'cancelled' | 'expired' | 'superseded' }[];
  started: { alertId: string; ruleId: string; takeoverId: string }[];
  ended: { alertId: string; ruleId: string; takeoverId: string; reason: string }[];
  pendingConfirmation: { alertId: string; ruleId: string }[];
  failed: { alertId: string; ruleId: string; error: string }[];
}
const noChanges = (): Changes => ({ alerts: [], started: [], ended: [], pendingConfirmation: [], failed: [] });

export type PollOutcome = 'data' | 'unchanged' | 'failed' | 'disabled' | 'not_configured' | 'skipped';

/* ---------- matching and the takeover template ---------- */

const eq = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export function ruleMatches(rule: RuleRow, alert: AlertRow): boolean {
  const m = ruleMatch(rule);
  if (m.events && !m.events.some((e) => eq(e, alert.event))) return false;
  if (m.severities && !m.severities.some((e) => eq(e, alert.severity))) return false;
  if (m.urgencies && !m.urgencies.some((e) => eq(e, alert.urgency))) return false;
  if (m.certainties && !m.certainties.some((e) => eq(e, alert.certainty))) return false;
  if (m.zones) {
    const zones = new Set(alertZones(alert).map((z) => z.toUpperCase()));
    if (!m.zones.some((z) => zones.has(z.toUpperCase()))) return false;
  }
  return true;
}

/** An alert without `expires` or `ends` is over this long after it was sent (or first seen). */
export const DEFAULT_LIFETIME_MS = 24 * 3600_000;

/** When an alert is over: its message's `expires` or the hazard's `ends`, whichever comes first; without either, a day after it was sent. */
export function alertEnd(a: { expires: string | null; ends: string | null; sent: string | null }, seenAt: string): string {
  const times = [a.expires, a.ends].filter((t): t is string => Boolean(t)).sort();
  return times[0] ?? new Date(Date.parse(a.sent ?? seenAt) + DEFAULT_LIFETIME_MS).toISOString();
}

export function takeoverSeverity(capSeverity: string): 'info' | 'warning' | 'emergency' {
  const s = capSeverity.toLowerCase();
  return s === 'extreme' || s === 'severe' ? 'emergency' : s === 'moderate' ? 'warning' : 'info';
}

const utc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

/** The full-screen message: headline, description, instruction, until when, who issued it. */
export function takeoverText(a: AlertRow): string {
  const end = alertEnd(a, a.first_seen_at);
  const parts = [a.headline || a.event, a.description, a.instruction, `Until ${utc(end)}`, a.sender_name ? `Issued by ${a.sender_name}` : ''].filter(Boolean);
  return parts.join('\n\n').slice(0, 8000);
}

/* ---------- the feed ---------- */

type Fetched =
  | { kind: 'unchanged' }
  | { kind: 'data'; feed: ParsedFeed; etag: string | null; lastModified: string | null; sha: string }
  | { kind: 'failed'; code: string; error: string };

async function fetchFeed(deps: AppDeps, m: MonitorRow): Promise<Fetched> {
  const headers: Record<string, string> = {
    accept: m.format === 'nws-geojson' ? 'application/geo+json, application/json' : 'application/atom+xml, application/xml, text/xml',
    'user-agent': 'Placard digital signage (weather alerts)',
  };
  if (m.etag) headers['if-none-match'] = m.etag;
  if (m.last_modified) headers['if-modified-since'] = m.last_modified;
  let res: Awaited<ReturnType<typeof safeFetch>>;
  try {
    res = await safeFetch(m.feed_url, await fetchPolicy(deps), {
      timeoutMs: FEED_LIMITS.timeoutMs,
      maxBytes: FEED_LIMITS.maxBytes + 1,
      maxRedirects: FEED_LIMITS.maxRedirects,
      headers,
    });
  } catch (err) {
    if (err instanceof OutboundError) return { kind: 'failed', code: err.code, error: err.message };
    throw err;
  }
  if (res.status === 304) return { kind: 'unchanged' };
  if (res.status < 200 || res.status > 299) return { kind: 'failed', code: 'http_status', error: `The feed answered HTTP ${res.status}` };
  if (res.truncated || res.body.length > FEED_LIMITS.maxBytes)
    return { kind: 'failed', code: 'too_large', error: 'The feed is larger than 5 MB; it was not read' };
  const sha = createHash('sha256').update(res.body).digest('hex');
  if (m.body_sha256 && sha === m.body_sha256) return { kind: 'unchanged' };
  const header = (name: string) => {
    const v = res.headers[name];
    return (Array.isArray(v) ? v[0] : v) ?? null;
  };
  try {
    return { kind: 'data', feed: await parseFeed(m.format as FeedFormat, res.body), etag: header('etag'), lastModified: header('last-modified'), sha };
  } catch (err) {
    if (err instanceof FeedParseError) return { kind: 'failed', code: 'parse_failed', error: `The feed could not be read: ${err.message}` };
    throw err;
  }
}

/* ---------- polling ---------- */

/** Polls the feed now (`force`: whether due or not) and applies what it says; then reconciles takeovers. */
export function poll(deps: AppDeps, force: boolean): Promise<{ outcome: PollOutcome; error: string | null; changes: Changes }> {
  return serial(deps, async () => {
    const changes = noChanges();
    const m = await monitorRow(deps.db);
    if (!m) return { outcome: 'not_configured' as const, error: null, changes };
    if (!m.enabled) return { outcome: 'disabled' as const, error: null, changes };
    if (!force && m.next_poll_at && m.next_poll_at > nowIso()) return { outcome: 'skipped' as const, error: null, changes };
    const fetched = await fetchFeed(deps, m);
    const at = nowIso();
    let outcome: PollOutcome = fetched.kind;
    let error: string | null = null;
    await deps.db.transaction().execute(async (trx) => {
      const now = await monitorRow(trx);
      if (now?.updated_at !== m.updated_at) {
        outcome = 'skipped'; // the settings changed while we fetched: the answer belongs to the old feed
        return;
      }
      if (fetched.kind === 'failed') {
        const failures = m.consecutive_failures + 1;
        error = fetched.error;
        await updateMonitor(trx, {
          consecutive_failures: failures,
          last_poll_at: at,
          last_error: fetched.error.slice(0, 2000),
          last_error_code: fetched.code,
          next_poll_at: nowIso(Date.now() + nextPollDelaySec(m.poll_interval_sec, failures) * 1000),
        });
        return;
      }
      const success = {
        consecutive_failures: 0,
        last_poll_at: at,
        last_success_at: at,
        last_error: null,
        last_error_code: null,
        next_poll_at: nowIso(Date.now() + nextPollDelaySec(m.poll_interval_sec, 0) * 1000),
      };
      if (fetched.kind === 'unchanged') {
        await updateMonitor(trx, success);
        return;
      }
      await applyAlerts(trx, fetched.feed.alerts, parseJson<string[]>(m.zones, []), at, changes);
      await updateMonitor(trx, {
        ...success,
        etag: fetched.etag,
        last_modified: fetched.lastModified,
        body_sha256: fetched.sha,
        zones_seen: JSON.stringify(fetched.feed.zones.slice(0, 5000)),
      });
    });
    await expire(deps, changes);
    await reconcile(deps, changes);
    return { outcome, error, changes };
  });
}

/** New alerts inserted (deduplicated by identifier); Update and Cancel applied to the alerts they reference. */
async function applyAlerts(db: Db, alerts: ParsedAlert[], watched: string[], at: string, changes: Changes): Promise<void> {
  const watchedSet = new Set(watched.map((z) => z.toUpperCase()));
  const inZones = (a: ParsedAlert) => watchedSet.size === 0 || a.zones.some((z) => watchedSet.has(z.toUpperCase()));
  // Oldest first, so an update applies after what it updates.
  const ordered = [...alerts].sort((a, b) => (a.sent ?? '').localeCompare(b.sent ?? ''));
  for (const a of ordered) {
    if (await alertByIdentifier(db, a.identifier)) continue;
    const referenced = await alertsByIdentifiers(db, a.references);
    // Outside the watched zones: ignored, unless it updates or cancels an alert we keep.
    if (!inZones(a) && referenced.length === 0) continue;
    const id = newId();
    const end = alertEnd(a, at);
    const state = a.msgType === 'Cancel' ? 'cancel' : end <= at ? 'expired' : 'active';
    await insertAlert(db, {
      id,
      identifier: a.identifier,
      sender: a.sender,
      sender_name: a.senderName,
      msg_type: a.msgType,
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
      area_desc: a.areaDesc,
      zones: JSON.stringify(a.zones),
      refs: JSON.stringify(a.references),
      state,
      superseded_by: null,
      first_seen_at: at,
      updated_at: at,
      ended_at: state === 'active' ? null : at,
    });
    if (state !== 'cancel')
      changes.alerts.push({ alertId: id, identifier: a.identifier, change: state === 'expired' ? 'expired' : a.msgType === 'Update' ? 'updated' : 'new' });
    for (const old of referenced) {
      if (old.state !== 'active') continue;
      const cancelled = a.msgType === 'Cancel';
      await endActiveAlert(db, old.id, { state: cancelled ? 'cancelled' : 'superseded', superseded_by: cancelled ? null : id, updated_at: at, ended_at: at });
      changes.alerts.push({ alertId: old.id, identifier: old.identifier, change: cancelled ? 'cancelled' : 'superseded' });
    }
  }
}

/** Active alerts past their end become expired (the tick runs this even when no poll is due). */
async function expire(deps: AppDeps, changes: Changes): Promise<void> {
  const at = nowIso();
  for (const a of await activeAlertRows(deps.db)) {
    if (alertEnd(a, a.first_seen_at) > at) continue;
    if (!(await endActiveAlert(deps.db, a.id, { state: 'expired', updated_at: at, ended_at: at }))) continue;
    changes.alerts.push({ alertId: a.id, identifier: a.identifier, change: 'expired' });
  }
}

const END_REASONS: Record<string, string> = {
  expired: 'The weather alert expired',
  cancelled: 'The weather alert was cancelled',
  superseded: 'The weather alert was updated',
};

/**
 * Brings takeovers in line with alerts and rules: ends those whose alert is over or whose
 * rule is gone; starts one for every active alert and matching rule that has no action yet
 * (or records that it waits for a person when the rule asks for confirmation).
 */
export async function reconcile(deps: AppDeps, changes: Changes): Promise<void> {
  const { db } = deps;
  const rules = await ruleRows(db);
  const ruleIds = new Set(rules.map((r) => r.id));
  const open = await openActionRows(db);
  for (const x of open) {
    // A person cancelled the alert's takeover: the action is over, by that person (never restarted).
    if (x.state === 'active' && x.cancelled_takeover) {
      const who = x.cancelled_by ? await userLabel(db, x.cancelled_by) : 'a person';
      await updateAction(db, x.id, {
        state: 'ended',
        ended_at: x.cancelled_at ?? nowIso(),
        end_reason: `Takeover cancelled by ${who}${x.cancel_reason ? `: ${x.cancel_reason}` : ''}`.slice(0, 1000),
        error: null,
      });
      continue;
    }
    const why =
      x.alert_state !== 'active'
        ? (END_REASONS[x.alert_state] ?? 'The weather alert ended')
        : !ruleIds.has(x.rule_id)
          ? 'The weather alert rule was deleted'
          : null;
    if (!why) continue;
    const at = nowIso();
    if (x.state === 'pending_confirmation') {
      await updateAction(db, x.id, { state: 'ended', ended_at: at, end_reason: `${why} before anyone confirmed it` });
      continue;
    }
    try {
      if (x.takeover_id) await endTakeover(deps, x.takeover_id, { by: AUTOMATIC, reason: why, state: 'ended' });
      await updateAction(db, x.id, { state: 'ended', ended_at: nowIso(), end_reason: why, error: null });
      if (x.takeover_id) changes.ended.push({ alertId: x.alert_id, ruleId: x.rule_id, takeoverId: x.takeover_id, reason: why });
    } catch (err) {
      // Kept active: the next tick tries to end it again.
      deps.logger.warn({ err, actionId: x.id }, 'weather alert takeover could not be ended');
      await updateAction(db, x.id, { error: `Ending the takeover failed: ${(err as Error).message}`.slice(0, 1000) });
    }
  }
  if (rules.length === 0) return;
  for (const alert of await activeAlertRows(db)) {
    const done = await actionRuleIds(db, alert.id);
    for (const rule of rules) {
      if (done.has(rule.id) || !ruleMatches(rule, alert)) continue;
      let confirmation: Pick<ActionRow, 'confirmed_by' | 'confirmed_at'> | null = null;
      // An update of an alert a person held off the air under this rule (cancelled its takeover, or it
      // waited and never went on) waits for a person again, whatever the rule says.
      if (await carriedHold(db, alert.id, rule.id)) {
        await insertAction(db, {
          id: newId(),
          alert_id: alert.id,
          rule_id: rule.id,
          rule_name: rule.name,
          state: 'pending_confirmation',
          created_at: nowIso(),
        });
        changes.pendingConfirmation.push({ alertId: alert.id, ruleId: rule.id });
        continue;
      }
      if (rule.require_confirmation) {
        // An update of an alert someone confirmed under this rule needs no second confirmation.
        confirmation = (await carriedConfirmation(db, alert.id, rule.id)) ?? null;
        if (!confirmation) {
          await insertAction(db, {
            id: newId(),
            alert_id: alert.id,
            rule_id: rule.id,
            rule_name: rule.name,
            state: 'pending_confirmation',
            created_at: nowIso(),
          });
          changes.pendingConfirmation.push({ alertId: alert.id, ruleId: rule.id });
          continue;
        }
      }
      const actionId = newId();
      await insertAction(db, {
        id: actionId,
        alert_id: alert.id,
        rule_id: rule.id,
        rule_name: rule.name,
        state: 'starting',
        created_at: nowIso(),
        ...(confirmation ?? {}),
      });
      await startFor(deps, actionId, alert, rule, AUTOMATIC, changes);
    }
  }
}

async function startFor(deps: AppDeps, actionId: string, alert: AlertRow, rule: RuleRow, actor: { userId: string | null; label: string }, changes: Changes) {
  const end = alertEnd(alert, alert.first_seen_at);
  try {
    const t = await startTakeover(
      deps,
      {
        message: { text: takeoverText(alert), severity: takeoverSeverity(alert.severity) },
        targets: ruleTargets(rule),
        endsAt: end,
        reason: `Weather alert: ${alert.event || alert.headline} (${rule.name})`.slice(0, 500),
        audio: 'default',
      },
      actor,
      { kind: 'weather-alert', alertId: alert.id, ruleId: rule.id },
    );
    await updateAction(deps.db, actionId, { state: 'active', takeover_id: t.id, started_at: nowIso(), error: null });
    changes.started.push({ alertId: alert.id, ruleId: rule.id, takeoverId: t.id });
  } catch (err) {
    const error = `Starting the takeover failed: ${(err as Error).message}`.slice(0, 1000);
    deps.logger.warn({ err, actionId }, 'weather alert takeover could not be started');
    await updateAction(deps.db, actionId, { state: 'failed', error, ended_at: nowIso() });
    changes.failed.push({ alertId: alert.id, ruleId: rule.id, error });
  }
}

/** The periodic tick: expiry and reconciliation always, a poll when one is due. */
export async function tick(deps: AppDeps): Promise<void> {
  await poll(deps, false);
  await serial(deps, async () => {
    const changes = noChanges();
    await expire(deps, changes);
    await reconcile(deps, changes);
  });
}

/** Runs reconcile alone (after a rule changes). */
export const reconcileNow = (deps: AppDeps) =>
  serial(deps, async () => {
    const changes = noChanges();
    await reconcile(deps, changes);
    return changes;
  });

export interface Decision {
  alertId: string;
  ruleId: string;
}

/** A person's answer to alerts waiting for confirmation: confirmed ones start their takeover, dismissed ones never do. All checked before any applies. */
export function decide(deps: AppDeps, user: { id: string; label: string }, confirm: Decision[], dismiss: Decision[]): Promise<Changes> {
  return serial(deps, async () => {
    const changes = noChanges();
    // An alert past its end, not yet seen by the tick, must not go on air now.
    await expire(deps, changes);
    await reconcile(deps, changes);
    const all = [...confirm.map((d) => ({ ...d, confirm: true })), ...dismiss.map((d) => ({ ...d, confirm: false }))];
    const rows: { d: (typeof all)[number]; action: ActionRow }[] = [];
    const problems: { alertId: string; ruleId: string }[] = [];
    const seen = new Set<string>();
    for (const d of all) {
      const key = `${d.alertId}/${d.ruleId}`;
      const action = await actionOf(deps.db, d.alertId, d.ruleId);
      if (action?.state !== 'pending_confirmation' || seen.has(key)) problems.push({ alertId: d.alertId, ruleId: d.ruleId });
      else rows.push({ d, action });
      seen.add(key);
    }
    if (problems.length)
      throw conflict('Some alerts named are not waiting for confirmation under that rule (or are named twice); nothing was applied', { notPending: problems });
    for (const { d, action } of rows) {
      const at = nowIso();
      if (!d.confirm) {
        await updateAction(deps.db, action.id, {
          state: 'dismissed',
          confirmed_by: user.id,
          confirmed_at: at,
          ended_at: at,
          end_reason: `Dismissed by ${user.label}`,
        });
        continue;
      }
      const alert = await alertRow(deps.db, action.alert_id);
      const rule = await ruleRow(deps.db, action.rule_id);
      if (!alert || !rule) continue; // gone meanwhile: reconcile ended the action
      await updateAction(deps.db, action.id, { state: 'starting', confirmed_by: user.id, confirmed_at: at });
      await startFor(deps, action.id, alert, rule, { userId: user.id, label: user.label }, changes);
    }
    return changes;
  });
}
