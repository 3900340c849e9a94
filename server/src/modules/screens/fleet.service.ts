import { DateTime } from 'luxon';
import { z } from 'zod';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { storableJson } from '../../platform/db/json.js';
import type { RealtimeHub } from '../../platform/realtime/hub.js';
import { cachedSettings } from '../system/index.js';
import { queueCommand } from './commands.service.js';
import { updateGroup } from './groups.repo.js';
import type { PolicyDocument } from './policies.js';
import { bumpManifestRevision } from './revision.js';
import {
  allScreens,
  contactsBetween,
  deriveStatus,
  nowIso,
  onlineWindowMs,
  PLAYER_FAMILIES,
  powerAssistedScreens,
  type ScreenRow,
  updateScreen,
} from './screens.repo.js';
import { groupMemberIds, screenTimeZone } from './targets.repo.js';

/** The fleet views: reliability, power assist, policies by screen or group, fleet health. */

// ---- Reliability ----

export const WINDOWS = { '24h': 24 * 3600_000, '7d': 7 * 24 * 3600_000, '30d': 30 * 24 * 3600_000 } as const;
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
  const rows = await contactsBetween(db, screen.id, start - grace, now);
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

/** The reliability of each window, measured at one instant with the retention as it is now. */
export async function reliabilityWindows(db: Db, screen: ScreenRow, windows: readonly (keyof typeof WINDOWS)[]) {
  const out = [];
  const now = Date.now(); // one instant for every window
  const { heartbeatDays } = (await cachedSettings(db)).retention;
  for (const w of windows) out.push(await reliability(db, screen, w, now, heartbeatDays));
  return out;
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
  const rows = await powerAssistedScreens(deps.db);
  let queued = 0;
  for (const s of rows) {
    const pa = PowerAssist.safeParse(JSON.parse(s.power_assist!));
    if (!pa.success || !pa.data.enabled) continue;
    const zone = (await screenTimeZone(deps.db, s.id)) ?? 'UTC';
    const desired = powerDesired(pa.data, zone, now);
    if (s.power_assist_state === desired) continue;
    await queueCommand(deps, { screenId: s.id, type: desired === 'on' ? 'display_on' : 'display_off', ttlSec: 30 * 60, source: 'power-assist' });
    await updateScreen(deps.db, s.id, { power_assist_state: desired });
    queued++;
  }
  return queued;
}

/** The power-assist settings with the zone they run in, the state they ask for now and the last one applied. */
export async function powerReply(db: Db, screenId: string, pa: PowerAssist, state: string | null) {
  const zone = (await screenTimeZone(db, screenId)) ?? 'UTC';
  return { screenId, ...pa, timeZone: zone, desiredState: powerDesired(pa, zone), lastAppliedState: state === 'on' || state === 'off' ? state : null };
}

/** PUT /screens/{id}/power-assist: replaces the settings; the next run applies them whatever was applied before. */
export async function setPowerAssist(db: Db, screenId: string, pa: PowerAssist) {
  await updateScreen(db, screenId, { power_assist: storableJson(pa, 'Power assist'), power_assist_state: null, updated_at: nowIso() });
  return powerReply(db, screenId, pa, null);
}

/** The screen's power-assist settings as powerReply answers them, or null when never set (or unreadable). */
export async function powerAssistOf(db: Db, screen: ScreenRow) {
  const pa = screen.power_assist ? PowerAssist.safeParse(JSON.parse(screen.power_assist)) : null;
  return pa?.success ? await powerReply(db, screen.id, pa.data, screen.power_assist_state) : null;
}

// ---- Policies ----

/**
 * Sets (or, with null, removes) a screen's or group's own policy: the screens it applies to
 * get their manifests bumped and `config.changed` on their sockets.
 */
export async function setPolicy(deps: AppDeps, realtime: RealtimeHub, kind: 'screens' | 'screen-groups', id: string, policy: PolicyDocument | null) {
  const set = { policy: policy === null ? null : storableJson(policy, 'The policy'), updated_at: nowIso() };
  if (kind === 'screens') await updateScreen(deps.db, id, set);
  else await updateGroup(deps.db, id, set);
  const screenIds = kind === 'screens' ? [id] : await groupMemberIds(deps.db, id);
  await bumpManifestRevision(deps, screenIds);
  for (const s of screenIds) realtime.send(s, { type: 'config.changed' });
}

// ---- Fleet health ----

/** Counts by status and every screen's status, by name (GET /fleet-health). */
export async function fleetHealth(db: Db) {
  const rows = await allScreens(db);
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
  return { generatedAt: nowIso(now), totals, screens };
}
