/**
 * What plays on a screen (or for a group) over a window, and why: the schedules that
 * reach it, in its time zone, with the precedence of timeline.ts, falling back to the
 * screen's then its groups' playlist assignment, then idle. The manifest and
 * `schedules/preview` both use this, so the preview shows exactly what screens play.
 *
 * A source with nothing to play is passed over: a schedule of a layout never published,
 * and a schedule or assignment whose playlist has no item that can play (none enabled,
 * valid, in its day-parts, with a ready asset) for a while. The next source plays there;
 * a source passed over for the whole window is named in `warnings`, and every segment
 * lists the stronger sources it passed over (`skipped`).
 */
import type { Db } from '../../platform/db/database.js';
import type { SchedulesTable } from '../../platform/db/schema.js';
import { pacer } from '../../platform/pace.js';
import {
  clipOccurrences,
  compareSchedules,
  enabledSchedulesTargeting,
  expand,
  type Expansion,
  overlapsAny,
  resolveTimeline,
  scheduleInput,
  type FallbackSource,
  type Interval,
  type Occurrence,
  type ScheduleInput,
  type Segment,
} from '../schedules/index.js';
import { assignmentsOf } from './assignments.repo.js';
import { releasedCampaigns } from './campaigns.repo.js';
import type { DepRef } from './changes.js';
import { publishedLayoutIds } from './layouts.repo.js';
import type { ScreenContext } from './screen-context.js';
import { groupNames } from './screen-context.repo.js';
import { ContentLoader, type Warning } from './playable.js';
import type { ProvidedWindow, WindowSourceFn, WindowTarget } from './windows.js';

export type { Warning } from './playable.js';

/** A source that would have played over a segment but had nothing to play there. */
export interface Skipped {
  type: 'schedule' | 'assignment' | 'group-assignment';
  id: string;
  /** The schedule's name; for assignments, the screen's or group's. */
  name: string | null;
  priority: number | null;
  reason: 'layout_unpublished' | 'playlist_empty';
  content: { type: 'playlist' | 'layout'; id: string };
}

export interface ResolvedSegment extends Segment {
  /** The source's name: the schedule's, or the screen's or group's for assignments. */
  sourceName: string | null;
  /** Other schedules active during this segment that lost to the winner (strongest first). */
  outranked: { id: string; name: string; priority: number }[];
  /** Stronger sources passed over here because they had nothing to play (strongest first). */
  skipped: Skipped[];
}

export interface Resolution {
  timeZone: string;
  segments: ResolvedSegment[];
  /**
   * The schedules that reach the subject; a campaign's schedule as its released show
   * (content_type, playlist_id/layout_id of the show; campaign_id kept).
   */
  schedules: Map<string, SchedulesTable>;
  /** The campaigns those schedules show, by id. */
  campaigns: Map<string, { id: string; name: string }>;
  warnings: Warning[];
  deps: DepRef[];
  /** Where the segments stop short of the window (`maxSegments` reached), else null. */
  truncatedAt: string | null;
  /** The takeovers and overrides reaching the subject (content/windows.ts), by id. */
  windows: Map<string, ProvidedWindow>;
}

export type Subject = { kind: 'screen'; screen: ScreenContext } | { kind: 'group'; groupId: string; timeZone: string };

/** A schedule as the resolution sees it: every occurrence, and the parts during which it can play. */
interface Candidate {
  row: SchedulesTable;
  input: ScheduleInput;
  raw: Occurrence[];
  playing: Occurrence[];
  reason: Skipped['reason'];
}

export interface ResolveOptions {
  /** Shares what is read with a manifest build. */
  loader?: ContentLoader;
  /**
   * Splits segments where what they outrank or pass over changes, so each one's "why" is
   * exact (the preview). The manifest keeps one segment per stretch of the same content.
   */
  explain?: boolean;
  /** At most this many segments (the rest of the window is left out: `truncatedAt`). */
  maxSegments?: number;
  /** Takeovers and overrides (content/windows.ts `windowSource(deps)`); absent: none. */
  windows?: WindowSourceFn;
}

/**
 * A schedule's expansion over [from, to) (recurrence.ts `expand`, a pure function of the
 * schedule's timing and the window), answered once per schedule version and window: every
 * screen the schedule reaches, and every rebuild within the hour, asks for the same one.
 * Frozen: callers share it.
 */
function expandOnce(input: ScheduleInput, from: number, to: number): Expansion {
  const key = `${input.id}|${input.startsAt}|${input.endsAt}|${input.rrule}|${input.timeZone}|${input.enabled}|${from}|${to}`;
  let expansion = expansions.get(key);
  if (!expansion) {
    const e = expand(input, from, to);
    expansion = Object.freeze({ ...e, occurrences: Object.freeze(e.occurrences.map((o) => Object.freeze(o))) as Occurrence[] });
    if (expansions.size >= 2000) expansions.clear();
    expansions.set(key, expansion);
  }
  return expansion;
}

const expansions = new Map<string, Expansion>();

/** What reaches a screen: itself, its groups, its location. */
export function screenTargets(screen: Pick<ScreenContext, 'id' | 'groupIds' | 'locationId'>): WindowTarget[] {
  return [
    { type: 'screen', id: screen.id },
    ...screen.groupIds.map((id) => ({ type: 'group' as const, id })),
    ...(screen.locationId ? [{ type: 'location' as const, id: screen.locationId }] : []),
  ];
}

export async function resolveSubject(db: Db, subject: Subject, from: number, to: number, options: ResolveOptions = {}): Promise<Resolution> {
  const loader = options.loader ?? new ContentLoader(db);
  const zone = subject.kind === 'screen' ? subject.screen.timeZone : subject.timeZone;
  const warnings: Warning[] = [];
  const deps: DepRef[] = [];
  const targets: WindowTarget[] = subject.kind === 'screen' ? screenTargets(subject.screen) : [{ type: 'group', id: subject.groupId }];

  const targeting = await enabledSchedulesTargeting(db, targets);
  for (const r of targeting) deps.push({ kind: 'schedule', id: r.id });
  // A campaign plays the show of its published release (docs/campaigns.md); one never
  // released, or whose show is gone, falls through.
  const campaignIds = [...new Set(targeting.flatMap((r) => (r.campaign_id ? [r.campaign_id] : [])))];
  for (const id of campaignIds) deps.push({ kind: 'campaign', id });
  const released = await releasedCampaigns(db, campaignIds);
  const campaigns = new Map([...released.values()].map((c) => [c.id, { id: c.id, name: c.name }]));
  const rows: SchedulesTable[] = [];
  for (const r of targeting) {
    if (r.content_type !== 'campaign') {
      rows.push(r);
      continue;
    }
    const show = r.campaign_id ? released.get(r.campaign_id)?.show : null;
    if (!show) {
      warnings.push({
        code: 'campaign_unavailable',
        message: `Schedule "${r.name}" shows a campaign that has no released show to play (never released, or its show was deleted); it is skipped`,
        scheduleId: r.id,
        campaignId: r.campaign_id,
      });
      continue;
    }
    rows.push({ ...r, content_type: show.type, playlist_id: show.type === 'playlist' ? show.id : null, layout_id: show.type === 'layout' ? show.id : null });
  }
  const schedules = new Map(rows.map((r) => [r.id, r]));

  // Layouts that have never been published cannot play: their schedules fall through.
  const layoutIds = [...new Set(rows.flatMap((r) => (r.layout_id ? [r.layout_id] : [])))];
  const published = await publishedLayoutIds(db, layoutIds);
  const inputs: ScheduleInput[] = [];
  const availability = new Map<string, Interval[]>();
  const expanded = new Map<string, Occurrence[]>();
  const candidates: Candidate[] = [];
  // Expansions are bounded (schedules/rrule-check.ts) but a screen may have many schedules:
  // give the event loop a turn between them when one took a while.
  const pace = pacer();
  // What the schedules' playlists need, read in a few queries rather than a few per playlist.
  await loader.prefetch(
    rows.flatMap((r) => (r.playlist_id ? [r.playlist_id] : [])),
    { zone, from, to },
  );
  for (const r of rows) {
    await pace();
    if (r.layout_id) deps.push({ kind: 'layout', id: r.layout_id });
    const input = scheduleInput(r, zone);
    const expansion = expandOnce(input, from, to);
    const raw = expansion.occurrences;
    expanded.set(r.id, raw);
    if (expansion.refused)
      warnings.push({
        code: 'rrule_unsupported',
        message: `Schedule "${r.name}" has a repeat rule schedules no longer accept (${expansion.refused}); it is skipped until its rule is changed`,
        scheduleId: r.id,
      });
    else if (expansion.truncated)
      warnings.push({
        code: 'recurrence_truncated',
        message: `Schedule "${r.name}" repeats more often than schedules allow; only its first occurrences here are used until its rule is changed`,
        scheduleId: r.id,
      });
    if (r.layout_id && !published.has(r.layout_id)) {
      if (raw.length)
        warnings.push({
          code: 'layout_unpublished',
          message: `Schedule "${r.name}" shows a layout that has no published revision; it is skipped`,
          scheduleId: r.id,
          layoutId: r.layout_id,
        });
      candidates.push({ row: r, input, raw, playing: [], reason: 'layout_unpublished' });
      continue;
    }
    let playing = raw;
    if (r.playlist_id && raw.length) {
      const windows = await loader.playableWindows(r.playlist_id, zone, from, to);
      availability.set(r.id, windows);
      playing = clipOccurrences(raw, windows);
      if (playing.length === 0)
        warnings.push({
          code: 'playlist_empty',
          message: loader.unpublished.has(r.playlist_id)
            ? `Schedule "${r.name}" shows a playlist that was never published; it is skipped and what is below it plays`
            : `Schedule "${r.name}" shows a playlist that has nothing to play when it is scheduled; it is skipped and what is below it plays`,
          scheduleId: r.id,
          playlistId: r.playlist_id,
          ...(loader.unpublished.has(r.playlist_id) ? { unpublished: true } : {}),
        });
    }
    candidates.push({ row: r, input, raw, playing, reason: 'playlist_empty' });
    inputs.push(input);
  }

  // The screen's assignment, then its groups' (the most recently assigned first), each while it has something to play.
  const fallbacks: FallbackSource[] = [];
  const assignmentTargets =
    subject.kind === 'screen'
      ? [
          { type: 'screen' as const, ids: [subject.screen.id] },
          { type: 'group' as const, ids: subject.screen.groupIds },
        ]
      : [{ type: 'group' as const, ids: [subject.groupId] }];
  let reachable = true;
  for (const t of assignmentTargets) {
    for (const id of t.ids) deps.push({ kind: 'assignment', id });
    if (t.ids.length === 0) continue;
    // Several groups: the most recently assigned wins (like schedules' recency rule).
    const assigned = await assignmentsOf(db, t.type, t.ids);
    for (const a of assigned) {
      const windows = await loader.playableWindows(a.playlist_id, zone, from, to);
      const whole = windows.length === 1 && windows[0]!.start <= from && windows[0]!.end >= to;
      if (reachable && windows.length === 0) {
        warnings.push({
          code: 'playlist_empty',
          message: `The ${t.type === 'screen' ? 'screen’s own' : 'group’s'} playlist assignment has nothing to play${loader.unpublished.has(a.playlist_id) ? ' (its playlist was never published)' : ''}; it is skipped`,
          assignment: t.type,
          targetId: a.target_id,
          playlistId: a.playlist_id,
          ...(loader.unpublished.has(a.playlist_id) ? { unpublished: true } : {}),
        });
      }
      if (whole) reachable = false; // what follows never plays
      fallbacks.push({
        source: { type: t.type === 'screen' ? 'assignment' : 'group-assignment', id: a.target_id },
        content: { type: 'playlist', id: a.playlist_id },
        availability: whole ? undefined : windows,
      });
    }
  }
  await pace();
  // Takeovers and overrides (registered by their module): one query for the subject's targets.
  const windows = options.windows ? await options.windows(targets, from, to) : [];
  const segments = resolveTimeline({ schedules: inputs, windows, fallbacks, availability, expanded }, from, to);
  await pace();
  for (const d of loader.deps.values()) deps.push(d);

  // Names of the sources: schedules', and the screen's or groups' for assignments.
  const targetNames = new Map<string, string>();
  if (subject.kind === 'screen') targetNames.set(subject.screen.id, subject.screen.name);
  const groupIds = subject.kind === 'screen' ? subject.screen.groupIds : [subject.groupId];
  for (const g of await groupNames(db, groupIds)) targetNames.set(g.id, g.name);

  // Why: which other schedules were active and lost, and which stronger sources were passed over.
  const byId = new Map(inputs.map((s) => [s.id, s]));
  // The preview cuts segments further where what they outrank or pass over changes.
  const points: number[] = [];
  if (options.explain) {
    const cuts = new Set<number>();
    for (const c of candidates) for (const o of [...c.raw, ...c.playing]) for (const x of [o.start, o.end]) if (x > from && x < to) cuts.add(x);
    points.push(...[...cuts].sort((x, y) => x - y));
    await pace();
  }
  /** The pieces of the segments, in order (segments are in order: one pass over the points). */
  function* piecesOf(): Generator<Segment> {
    let p = 0;
    for (const seg of segments) {
      const a = Date.parse(seg.startsAt);
      const b = Date.parse(seg.endsAt);
      while (p < points.length && points[p]! <= a) p++;
      let start = a;
      for (; p < points.length && points[p]! < b; p++) {
        yield { ...seg, startsAt: new Date(start).toISOString(), endsAt: new Date(points[p]!).toISOString() };
        start = points[p]!;
      }
      yield start === a ? seg : { ...seg, startsAt: new Date(start).toISOString() };
    }
  }
  const explain = (seg: Segment): ResolvedSegment => {
    const a = Date.parse(seg.startsAt);
    const b = Date.parse(seg.endsAt);
    const winner = seg.source.type === 'schedule' && seg.source.id ? byId.get(seg.source.id) : undefined;
    const outranked = candidates
      .filter((c) => c.row.id !== seg.source.id && overlapsAny(c.playing, a, b))
      .map((c) => c.input)
      .sort(compareSchedules)
      .map((s) => ({ id: s.id, name: schedules.get(s.id)?.name ?? s.id, priority: s.priority }));
    const byWindow = seg.source.type === 'takeover' || seg.source.type === 'override' || seg.source.type === 'alert';
    const skipped: Skipped[] = (byWindow ? [] : candidates)
      .filter((c) => overlapsAny(c.raw, a, b) && !overlapsAny(c.playing, a, b) && (!winner || compareSchedules(c.input, winner) < 0))
      .sort((x, y) => compareSchedules(x.input, y.input))
      .map((c) => ({
        type: 'schedule',
        id: c.row.id,
        name: c.row.name,
        priority: c.row.priority,
        reason: c.reason,
        content: { type: c.row.layout_id ? 'layout' : 'playlist', id: (c.row.layout_id ?? c.row.playlist_id)! },
      }));
    if (seg.source.type !== 'schedule' && !byWindow) {
      for (const f of fallbacks) {
        if (f.source.type === seg.source.type && f.source.id === seg.source.id) break;
        skipped.push({
          type: f.source.type,
          id: f.source.id,
          name: targetNames.get(f.source.id) ?? null,
          priority: null,
          reason: 'playlist_empty',
          content: { type: 'playlist', id: f.content.id },
        });
      }
    }
    const windowName = seg.source.id ? windows.find((w) => w.source.id === seg.source.id)?.name : undefined;
    const sourceName = winner
      ? (schedules.get(winner.id)?.name ?? null)
      : windowName !== undefined
        ? windowName
        : seg.source.id
          ? (targetNames.get(seg.source.id) ?? null)
          : null;
    return { ...seg, sourceName, outranked, skipped };
  };
  // Pieces that say the same thing join again; at most `maxSegments` (a dense rule over a
  // long preview makes thousands), with a turn for the event loop now and then.
  const key = (s: ResolvedSegment) => JSON.stringify([s.source, s.content, s.outranked.map((o) => o.id), s.skipped.map((k) => `${k.type}:${k.id}`)]);
  const resolved: ResolvedSegment[] = [];
  let lastKey = '';
  let truncatedAt: string | null = null;
  for (const piece of piecesOf()) {
    await pace();
    const seg = explain(piece);
    const k = key(seg);
    const prev = resolved.at(-1);
    if (prev && prev.endsAt === seg.startsAt && lastKey === k) {
      prev.endsAt = seg.endsAt;
      continue;
    }
    if (resolved.length >= (options.maxSegments ?? Number.POSITIVE_INFINITY)) {
      truncatedAt = seg.startsAt;
      break;
    }
    resolved.push(seg);
    lastKey = k;
  }
  return { timeZone: zone, segments: resolved, schedules, campaigns, warnings, deps, truncatedAt, windows: new Map(windows.map((w) => [w.source.id, w])) };
}

/** The campaign a segment plays (its schedule shows one), else null. */
export function campaignOfSegment(resolution: Pick<Resolution, 'schedules' | 'campaigns'>, seg: Segment): { id: string; name: string } | null {
  if (seg.source.type !== 'schedule' || !seg.source.id) return null;
  const campaignId = resolution.schedules.get(seg.source.id)?.campaign_id;
  return campaignId ? (resolution.campaigns.get(campaignId) ?? null) : null;
}
