/**
 * Takeovers and presentation overrides (issue 21, docs/takeovers.md): windows stronger than
 * every schedule, kept in `takeovers` (kind 'takeover' | 'override'). Starting one tells the
 * target screens (`takeover.started`, then `manifest.changed`); cancelling, stopping or its
 * `endsAt` passing tells them again (`takeover.ended`). State is derived at read time from
 * `ends_at`, so a restart loses nothing; a tick announces natural ends and audits them.
 */
import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import type { TakeoversTable } from '../../platform/db/schema/takeovers.js';
import { ApiError, invalidReference, notFound, type Reference } from '../../platform/http/errors.js';
import { contentChanged } from '../content/index.js';
import type { ProvidedWindow, WindowTarget } from '../content/index.js';
import {
  activeRows,
  type CONTENT_TABLES,
  claimEnd,
  contentExists,
  dueEnds,
  eventsOf,
  insertEvent,
  insertTakeover,
  listIds,
  markEnded,
  screensOfTakeover,
  takeoverRow,
  userLabel,
} from './takeovers.repo.js';
import type { OverrideDto, OverrideInput, Severity, TakeoverDto, TakeoverInput } from './takeovers.schemas.js';
import { unknownTargets } from '../screens/index.js';

export type Actor = { userId: string | null; label: string };
export type Origin = { kind: 'weather-alert'; alertId: string; ruleId: string };
type Kind = 'takeover' | 'override';

const SEVERITY_RANK: Record<string, number> = { emergency: 2, warning: 1, info: 0 };

const invalid = (path: string, message: string) =>
  new ApiError('validation_failed', message, { details: { issues: [{ location: 'body', path: [path], message, code: 'custom' }] } });

/** Checks a body's content, message, targets and times; answers the severity. */
async function check(
  db: Db,
  input: { content?: { type: keyof typeof CONTENT_TABLES; id: string }; message?: { text: string; severity: Severity }; targets: TakeoverInput['targets'] },
  startsAt: number,
  endsAt: string | null | undefined,
  now: number,
): Promise<Severity> {
  if (Boolean(input.content) === Boolean(input.message)) throw invalid('content', 'Send exactly one of content and message');
  const t = input.targets;
  if (!t.all && !t.screenIds?.length && !t.groupIds?.length && !t.locationIds?.length)
    throw invalid('targets', 'Name at least one target: all, screenIds, groupIds or locationIds');
  if (endsAt != null) {
    const end = Date.parse(endsAt);
    if (end <= now) throw invalid('endsAt', 'endsAt must be in the future');
    if (end <= startsAt) throw invalid('endsAt', 'endsAt must be after startsAt');
  }
  const refs: Reference[] = [];
  if (input.content && !(await contentExists(db, input.content.type, input.content.id)))
    refs.push({ path: ['content', 'id'], message: `no such ${input.content.type}` });
  refs.push(...(await unknownTargets(db, t)));
  if (refs.length) throw invalidReference('The body names something that does not exist', refs);
  return input.message?.severity ?? 'warning';
}

/** Tells the target screens: the socket message first, then the manifest push (a new revision). */
async function announce(deps: AppDeps, id: string, type: 'takeover.started' | 'takeover.ended'): Promise<void> {
  try {
    const screens = await screensOfTakeover(deps.db, id);
    for (const s of screens) deps.realtime?.send(s, { type, takeoverId: id });
    await contentChanged(deps, [], screens);
  } catch (err) {
    deps.logger.error({ err, takeoverId: id }, 'could not announce a takeover change');
  }
}

async function insert(
  deps: AppDeps,
  kind: Kind,
  input: TakeoverInput | OverrideInput,
  severity: Severity,
  startsAt: string,
  endsAt: string | null,
  reason: string,
  actor: Actor,
  origin: Origin | undefined,
  now: string,
): Promise<string> {
  const id = randomUUID();
  const t = input.targets;
  const targets = [
    ...(t.all ? [{ type: 'all', id: '' }] : []),
    ...[...new Set(t.screenIds ?? [])].map((x) => ({ type: 'screen', id: x })),
    ...[...new Set(t.groupIds ?? [])].map((x) => ({ type: 'group', id: x })),
    ...[...new Set(t.locationIds ?? [])].map((x) => ({ type: 'location', id: x })),
  ];
  await insertTakeover(
    deps.db,
    {
      id,
      kind,
      content_type: input.content?.type ?? null,
      content_id: input.content?.id ?? null,
      message_text: input.message?.text ?? null,
      message_severity: input.message?.severity ?? null,
      severity,
      audio: input.audio,
      targets: JSON.stringify(t),
      starts_at: startsAt,
      ends_at: endsAt,
      reason,
      state: 'active',
      ended_at: null,
      ended_by: null,
      end_reason: null,
      end_announced: 0,
      origin_kind: origin?.kind ?? null,
      origin_id: origin?.alertId ?? null,
      origin_rule_id: origin?.ruleId ?? null,
      created_by: actor.userId,
      created_by_label: actor.label,
      created_at: now,
    },
    targets,
    { action: kind === 'takeover' ? 'started' : 'created', by: actor },
  );
  return id;
}

/** Starts a takeover now (the weather-alerts module calls this with its origin). */
export async function startTakeover(deps: AppDeps, input: TakeoverInput, actor: Actor, origin?: Origin): Promise<TakeoverDto> {
  const nowMs = Date.now();
  const now = new Date(nowMs).toISOString();
  const severity = await check(deps.db, input, nowMs, input.endsAt, nowMs);
  const endsAt = input.endsAt ? new Date(input.endsAt).toISOString() : null;
  const id = await insert(deps, 'takeover', input, severity, now, endsAt, input.reason, actor, origin, now);
  await announce(deps, id, 'takeover.started');
  return (await takeoverDto(deps.db, id, 'takeover')) as TakeoverDto;
}

/** Creates a presentation override (from startsAt, default now, to endsAt). */
export async function createOverride(deps: AppDeps, input: OverrideInput, actor: Actor): Promise<OverrideDto> {
  const nowMs = Date.now();
  const now = new Date(nowMs).toISOString();
  const startsMs = input.startsAt ? Date.parse(input.startsAt) : nowMs;
  const severity = await check(deps.db, input, startsMs, input.endsAt, nowMs);
  const startsAt = new Date(startsMs).toISOString();
  const id = await insert(deps, 'override', input, severity, startsAt, new Date(input.endsAt).toISOString(), input.reason, actor, undefined, now);
  await announce(deps, id, 'takeover.started');
  return (await takeoverDto(deps.db, id, 'override')) as OverrideDto;
}

/**
 * Ends an active takeover (cancel) or override (stop): null when there is none by that id;
 * one already over is answered as it is (nothing changes).
 */
export async function endTakeover(
  deps: AppDeps,
  id: string,
  how: { by: Actor; reason: string; state?: 'ended' | 'cancelled' },
  kind: Kind = 'takeover',
): Promise<TakeoverDto | null> {
  const now = new Date().toISOString();
  const row = await takeoverRow(deps.db, id, kind);
  if (!row) return null;
  if (liveState(row, Date.parse(now)) === 'active' || (kind === 'override' && liveState(row, Date.parse(now)) === 'scheduled')) {
    const state = kind === 'override' ? 'stopped' : (how.state ?? 'cancelled');
    if (await markEnded(deps.db, id, state, now, how.by.userId, how.reason)) {
      await insertEvent(deps.db, id, state === 'ended' ? 'ended' : kind === 'override' ? 'stopped' : 'cancelled', how.by, how.reason, now);
      await announce(deps, id, 'takeover.ended');
    }
  }
  return (await takeoverDto(deps.db, id, kind)) as TakeoverDto;
}

/** What a row is now: a passed ends_at ends it; an override before its start is scheduled. */
function liveState(row: Pick<TakeoversTable, 'state' | 'ends_at' | 'starts_at'>, now: number): string {
  if (row.state !== 'active') return row.state;
  if (row.ends_at && Date.parse(row.ends_at) <= now) return 'ended';
  if (Date.parse(row.starts_at) > now) return 'scheduled';
  return 'active';
}

/**
 * Announces the natural ends (ends_at passed) not yet announced, and overrides that began:
 * `takeover.ended` and an audit entry by the system. Runs on a tick; idempotent.
 */
export async function endsTick(deps: AppDeps): Promise<void> {
  const now = new Date().toISOString();
  for (const { id, ends_at } of await dueEnds(deps.db, now)) {
    if (!(await claimEnd(deps.db, id))) continue;
    await insertEvent(deps.db, id, 'ended', { userId: null, label: 'system' }, 'its end time passed', ends_at ?? now);
    await announce(deps, id, 'takeover.ended');
  }
}

export async function takeoverDto(db: Db, id: string, kind: Kind): Promise<TakeoverDto | OverrideDto> {
  const row = await takeoverRow(db, id, kind);
  if (!row) throw notFound(kind === 'takeover' ? 'Takeover' : 'Presentation override');
  const events = await eventsOf(db, id);
  const state = liveState(row, Date.now());
  const base = {
    id: row.id,
    content: row.content_type && row.content_id ? { type: row.content_type, id: row.content_id } : null,
    message: row.message_text !== null ? { text: row.message_text, severity: row.message_severity as Severity } : null,
    severity: row.severity as Severity,
    audio: row.audio as 'force-on' | 'default',
    targets: JSON.parse(row.targets) as TakeoverDto['targets'],
    startedAt: row.starts_at,
    endsAt: row.ends_at,
    reason: row.reason,
    endedAt: row.ended_at ?? (state === 'ended' ? row.ends_at : null),
    endReason: row.end_reason,
    createdBy: { userId: row.created_by, label: row.created_by_label },
    origin: row.origin_kind && row.origin_id ? { kind: row.origin_kind, id: row.origin_id, ruleId: row.origin_rule_id } : null,
    events: events.map((e) => ({ action: e.action, by: { userId: e.actor_user_id, label: e.actor_label }, reason: e.reason, at: e.at })),
  };
  if (kind === 'override') return { ...base, startsAt: row.starts_at, state: state as OverrideDto['state'] };
  return { ...base, state: state as TakeoverDto['state'] };
}

/** A page of takeovers or overrides, newest first. */
export async function listTakeovers(
  db: Db,
  kind: Kind,
  cursor: string | undefined,
  limit: number,
): Promise<{ items: (TakeoverDto | OverrideDto)[]; nextCursor: string | null }> {
  const rows = await listIds(db, kind, cursor, limit);
  const page = rows.slice(0, limit);
  const items = [];
  for (const r of page) items.push(await takeoverDto(db, r.id, kind));
  const last = page.at(-1);
  return { items, nextCursor: rows.length > limit && last ? `${last.created_at}|${last.id}` : null };
}

/**
 * Where a row ranks (DESIGN.md section 5): a takeover a weather-alert rule started ranks as
 * that rule, below overrides and above schedules; a person's takeover above everything.
 */
function windowType(r: Pick<TakeoversTable, 'kind' | 'origin_kind'>): 'takeover' | 'override' | 'alert' {
  if (r.kind === 'override') return 'override';
  return r.origin_kind === 'weather-alert' ? 'alert' : 'takeover';
}
const WINDOW_RANK = { takeover: 0, override: 1, alert: 2 } as const;

/**
 * The windows reaching a subject's targets over [from, to) (content/windows.ts provider):
 * one query; takeovers, overrides, then weather-alert takeovers, each by severity, then newest first.
 */
export async function activeWindows(db: Db, targets: readonly WindowTarget[], from: number, to: number): Promise<ProvidedWindow[]> {
  const fromIso = new Date(from).toISOString();
  const toIso = new Date(to).toISOString();
  const rows = await activeRows(db, targets, fromIso, toIso);
  rows.sort(
    (a, b) =>
      WINDOW_RANK[windowType(a)] - WINDOW_RANK[windowType(b)] ||
      (SEVERITY_RANK[b.severity] ?? 0) - (SEVERITY_RANK[a.severity] ?? 0) ||
      b.starts_at.localeCompare(a.starts_at) ||
      b.created_at.localeCompare(a.created_at) ||
      b.id.localeCompare(a.id),
  );
  return rows.map((r) => ({
    source: { type: windowType(r), id: r.id },
    content: r.content_type ? { type: r.content_type as 'asset', id: r.content_id! } : { type: 'message', id: r.id },
    start: Math.max(Date.parse(r.starts_at), from),
    end: r.ends_at ? Math.min(Date.parse(r.ends_at), to) : to,
    message: r.message_text !== null ? { text: r.message_text, severity: r.message_severity as Severity } : null,
    audio: r.audio === 'force-on' ? 'force-on' : 'default',
    name: r.reason || r.message_text || null,
  }));
}

/** Who acts, for the audit trail: the signed-in user and their name. */
export async function actorOf(db: Db, userId: string): Promise<Actor> {
  return { userId, label: await userLabel(db, userId) };
}
