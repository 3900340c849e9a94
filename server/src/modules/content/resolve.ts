/**
 * What plays on a screen (or for a group) over a window, and why: the schedules that
 * reach it, in its time zone, with the precedence of timeline.ts, falling back to the
 * screen's then its groups' playlist assignment, then idle. The manifest and
 * `schedules/preview` both use this, so the preview shows exactly what screens play.
 */
import type { Db } from '../../platform/db/database.js';
import type { SchedulesTable } from '../../platform/db/schema.js';
import { compareSchedules, inZone, occurrences, resolveTimeline, type FallbackSource, type ScheduleInput, type Segment } from '../schedules/timeline.js';
import type { DepRef } from './changes.js';
import type { ScreenContext } from './fleet.js';

export interface Warning {
  code: string;
  message: string;
  [key: string]: unknown;
}

export interface ResolvedSegment extends Segment {
  /** Other schedules active during this segment that lost to the winner (strongest first). */
  outranked: { id: string; name: string; priority: number }[];
}

export interface Resolution {
  timeZone: string;
  segments: ResolvedSegment[];
  schedules: Map<string, SchedulesTable>;
  warnings: Warning[];
  deps: DepRef[];
}

export type Subject = { kind: 'screen'; screen: ScreenContext } | { kind: 'group'; groupId: string; timeZone: string };

/** A schedule row as the engine's input, on the wall clock of `zone` when it follows the screen's zone. */
export function scheduleInput(row: SchedulesTable, zone: string): ScheduleInput {
  const input: ScheduleInput = {
    id: row.id,
    content: { type: row.content_type, id: (row.playlist_id ?? row.layout_id ?? row.campaign_id)! },
    startsAt: row.starts_at,
    endsAt: row.ends_at,
    rrule: row.rrule,
    timeZone: row.time_zone,
    priority: row.priority,
    enabled: row.enabled === 1,
    updatedAt: row.updated_at,
  };
  return row.follow_screen_zone === 1 ? inZone(input, zone) : input;
}

export async function resolveSubject(db: Db, subject: Subject, from: number, to: number): Promise<Resolution> {
  const zone = subject.kind === 'screen' ? subject.screen.timeZone : subject.timeZone;
  const warnings: Warning[] = [];
  const deps: DepRef[] = [];
  const targets: { type: 'screen' | 'group' | 'location'; id: string }[] =
    subject.kind === 'screen'
      ? [{ type: 'screen', id: subject.screen.id }, ...subject.screen.groupIds.map((id) => ({ type: 'group' as const, id })), ...(subject.screen.locationId ? [{ type: 'location' as const, id: subject.screen.locationId }] : [])]
      : [{ type: 'group', id: subject.groupId }];

  const rows = await db
    .selectFrom('schedules')
    .selectAll('schedules')
    .where('enabled', '=', 1)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('schedule_targets as t')
          .select('t.schedule_id')
          .whereRef('t.schedule_id', '=', 'schedules.id')
          .where((eb2) => eb2.or(targets.map((t) => eb2.and([eb2('t.target_type', '=', t.type), eb2('t.target_id', '=', t.id)])))),
      ),
    )
    .execute();
  const schedules = new Map(rows.map((r) => [r.id, r]));
  for (const r of rows) deps.push({ kind: 'schedule', id: r.id });

  // Layouts that have never been published cannot play: their schedules fall through.
  const layoutIds = [...new Set(rows.flatMap((r) => (r.layout_id ? [r.layout_id] : [])))];
  const published = new Set<string>();
  if (layoutIds.length) {
    for (const l of await db.selectFrom('layouts').select(['id', 'published_revision_id']).where('id', 'in', layoutIds).execute()) if (l.published_revision_id) published.add(l.id);
  }
  const inputs: ScheduleInput[] = [];
  for (const r of rows) {
    if (r.layout_id) deps.push({ kind: 'layout', id: r.layout_id });
    if (r.content_type === 'campaign') {
      warnings.push({ code: 'campaign_unavailable', message: `Schedule "${r.name}" shows a campaign; campaigns are not available yet`, scheduleId: r.id });
      continue;
    }
    if (r.layout_id && !published.has(r.layout_id)) {
      const input = scheduleInput(r, zone);
      if (occurrences(input, from, to).length) warnings.push({ code: 'layout_unpublished', message: `Schedule "${r.name}" shows a layout that has no published revision; it is skipped`, scheduleId: r.id, layoutId: r.layout_id });
      continue;
    }
    inputs.push(scheduleInput(r, zone));
  }

  const fallbacks: FallbackSource[] = [];
  const assignmentTargets = subject.kind === 'screen' ? [{ type: 'screen' as const, ids: [subject.screen.id] }, { type: 'group' as const, ids: subject.screen.groupIds }] : [{ type: 'group' as const, ids: [subject.groupId] }];
  for (const t of assignmentTargets) {
    for (const id of t.ids) deps.push({ kind: 'assignment', id });
    if (t.ids.length === 0) continue;
    // Several groups: the most recently assigned wins (like schedules' recency rule).
    const assigned = await db.selectFrom('playlist_assignments').selectAll().where('target_type', '=', t.type).where('target_id', 'in', t.ids).orderBy('updated_at', 'desc').orderBy('target_id').execute();
    for (const a of assigned) fallbacks.push({ source: { type: t.type === 'screen' ? 'assignment' : 'group-assignment', id: a.target_id }, content: { type: 'playlist', id: a.playlist_id } });
  }
  const segments = resolveTimeline({ schedules: inputs, fallbacks }, from, to);

  // Why: which other schedules were active and lost, for each scheduled segment.
  const occ = inputs.flatMap((s) => occurrences(s, from, to));
  const byId = new Map(inputs.map((s) => [s.id, s]));
  const resolved: ResolvedSegment[] = segments.map((seg) => {
    const a = Date.parse(seg.startsAt);
    const b = Date.parse(seg.endsAt);
    const active = [...new Set(occ.filter((o) => o.start < b && o.end > a).map((o) => o.scheduleId))]
      .filter((id) => id !== seg.source.id)
      .map((id) => byId.get(id)!)
      .sort(compareSchedules);
    return { ...seg, outranked: active.map((s) => ({ id: s.id, name: schedules.get(s.id)?.name ?? s.id, priority: s.priority })) };
  });
  return { timeZone: zone, segments: resolved, schedules, warnings, deps };
}
