/**
 * `POST /api/v1/schedules/preview`: what plays on a screen (or for a group) over a window,
 * and a sentence for each stretch saying why. It explains content's resolver (schedules,
 * then playlist assignments, then idle; sources with nothing to play passed over), the one
 * the manifest uses, so it lives with it rather than in the schedules module below.
 */
import type { WindowSourceFn } from './windows.js';
import type { Db } from '../../platform/db/database.js';
import { invalidField as invalid, invalidReference } from '../../platform/http/errors.js';
import { pacer } from '../../platform/pace.js';
import { namesOf } from './names.repo.js';
import { groupZone, screenContext } from './screen-context.js';
import { groupExists } from './screen-context.repo.js';
import { campaignOfSegment, resolveSubject, type Skipped } from './resolve.js';

const WINDOW_WORDS: Partial<Record<string, string>> = {
  takeover: 'A takeover',
  override: 'A presentation override',
  alert: 'A weather alert takeover',
};

export const MAX_PREVIEW_MS = 62 * 86_400_000;
/**
 * A preview answers at most this many segments: a month of the densest rule allowed (48
 * occurrences a day, each with the source below it between) fits; 62 days of it make 6 000.
 */
export const MAX_PREVIEW_SEGMENTS = 3000;

export interface PreviewRequest {
  screenId?: string | undefined;
  groupId?: string | undefined;
  /** Instants, normalised to UTC. */
  from: string;
  to: string;
}

const quoted = (name: string | null | undefined) => (name ? `"${name}"` : '(deleted)');

/** A sentence for one source passed over. */
function skippedSentence(s: Skipped, contentName: string | null, subject: 'screen' | 'group'): string {
  if (s.type === 'schedule') {
    return s.reason === 'layout_unpublished'
      ? `schedule ${quoted(s.name)} (priority ${s.priority}) is skipped because its layout ${quoted(contentName)} has never been published`
      : `schedule ${quoted(s.name)} (priority ${s.priority}) is skipped because its playlist ${quoted(contentName)} has nothing to play here`;
  }
  if (s.type === 'assignment') return `the screen’s own playlist assignment ${quoted(contentName)} has nothing to play here`;
  return `${subject === 'group' ? 'the group’s' : `group ${quoted(s.name)}’s`} playlist assignment ${quoted(contentName)} has nothing to play here`;
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** The timeline of a screen or a group between two instants, each segment with its reason. */
export async function previewTimeline(db: Db, body: PreviewRequest, windows?: WindowSourceFn) {
  const from = Date.parse(body.from);
  const to = Date.parse(body.to);
  if (to <= from) throw invalid('to', 'to must be after from');
  if (to - from > MAX_PREVIEW_MS) throw invalid('to', 'A preview covers at most 62 days');
  let resolution;
  if (body.screenId) {
    const screen = await screenContext(db, body.screenId);
    if (!screen) throw invalidReference(`No screen ${body.screenId}`, { path: ['screenId'], message: 'no such screen' });
    resolution = await resolveSubject(db, { kind: 'screen', screen }, from, to, { explain: true, maxSegments: MAX_PREVIEW_SEGMENTS, windows });
  } else {
    const group = await groupExists(db, body.groupId!);
    if (!group) throw invalidReference(`No group ${body.groupId}`, { path: ['groupId'], message: 'no such group' });
    resolution = await resolveSubject(db, { kind: 'group', groupId: group.id, timeZone: await groupZone(db, group.id) }, from, to, {
      explain: true,
      maxSegments: MAX_PREVIEW_SEGMENTS,
      windows,
    });
  }
  const playlistIds = new Set<string>();
  const layoutIds = new Set<string>();
  const assetIds = new Set<string>();
  const widgetIds = new Set<string>();
  for (const s of resolution.segments) {
    for (const c of [s.content, ...s.skipped.map((k) => k.content)]) {
      if (c?.type === 'playlist') playlistIds.add(c.id);
      if (c?.type === 'layout') layoutIds.add(c.id);
      if (c?.type === 'asset') assetIds.add(c.id);
      if (c?.type === 'widget') widgetIds.add(c.id);
    }
  }
  const names = new Map([
    ...(await namesOf(db, 'playlists', playlistIds)),
    ...(await namesOf(db, 'layouts', layoutIds)),
    ...(await namesOf(db, 'assets', assetIds)),
    ...(await namesOf(db, 'widgets', widgetIds)),
  ]);
  const subject = body.groupId ? 'group' : 'screen';
  const pace = pacer();
  const timeline = [];
  for (const s of resolution.segments) {
    await pace();
    const schedule = s.source.type === 'schedule' && s.source.id ? resolution.schedules.get(s.source.id) : undefined;
    const contentName = s.content ? (names.get(s.content.id) ?? null) : null;
    const passedOver = s.skipped.map((k) => skippedSentence(k, names.get(k.content.id) ?? null, subject));
    let reason: string;
    const window = s.source.id ? resolution.windows.get(s.source.id) : undefined;
    if (window) {
      const what = window.message ? `the ${window.message.severity} message "${window.message.text}"` : `${s.content?.type} ${quoted(contentName)}`;
      reason = `${WINDOW_WORDS[s.source.type] ?? 'A takeover'} ${quoted(s.sourceName)} is active and outranks schedules and assignments: ${what} plays`;
    } else if (schedule) {
      reason = `Schedule "${schedule.name}" (priority ${schedule.priority}) applies`;
      if (s.outranked.length) {
        const lost = s.outranked.map((o) => `"${o.name}" (priority ${o.priority}${o.priority === schedule.priority ? ', changed earlier' : ''})`);
        reason += ` and beats ${lost.join(', ')}`;
      }
      if (passedOver.length) reason += `; ${passedOver.join('; ')}`;
    } else {
      let plays: string;
      if (s.source.type === 'assignment') plays = `the screen’s own playlist assignment ${quoted(contentName)} plays`;
      else if (s.source.type === 'group-assignment') {
        plays =
          subject === 'group'
            ? `the group’s playlist assignment ${quoted(contentName)} plays`
            : `group ${quoted(s.sourceName)}’s playlist assignment ${quoted(contentName)} plays`;
        if (subject === 'screen' && !s.skipped.some((k) => k.type === 'assignment')) plays = `the screen has no assignment of its own: ${plays}`;
      } else plays = 'the idle slide shows';
      const why =
        s.source.type === 'idle' && !passedOver.length
          ? 'Nothing is scheduled or assigned'
          : s.skipped.some((k) => k.type === 'schedule')
            ? ''
            : 'No schedule applies';
      reason = [why, ...passedOver].filter(Boolean).join('; ');
      reason = `${capitalised(reason)}: ${plays}`;
    }
    timeline.push({
      startsAt: s.startsAt,
      endsAt: s.endsAt,
      source: { type: s.source.type, id: s.source.id, name: s.sourceName, campaignId: campaignOfSegment(resolution, s)?.id ?? null },
      content: s.content ? { type: s.content.type, id: s.content.id, name: contentName } : null,
      reason,
      outranked: s.outranked,
      skipped: s.skipped.map((k) => ({ ...k, content: { ...k.content, name: names.get(k.content.id) ?? null } })),
    });
  }
  const warnings = [...resolution.warnings];
  if (resolution.truncatedAt)
    warnings.push({
      code: 'preview_truncated',
      message: `The preview stops at ${resolution.truncatedAt}: it answers at most ${MAX_PREVIEW_SEGMENTS} segments; ask for a shorter span to see the rest`,
    });
  return { timeZone: resolution.timeZone, from: body.from, to: body.to, timeline, warnings };
}
