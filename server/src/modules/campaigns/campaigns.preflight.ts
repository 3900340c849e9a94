import type { Db } from '../../platform/db/database.js';
import { contentRefs, type LayoutContent } from '../content/index.js';
import { occurrences, scheduleInput, screensOf } from '../schedules/index.js';
import { approvalsRequired } from '../system/index.js';
import { approvedDraftRevisions, type CampaignRow, draftOf, mediaOf, missingContent, screensStatus, strongerScheduleCandidates } from './campaigns.repo.js';
import { itemsOf, missingTargetRefs, targetsOfPlacement } from './campaigns.service.js';
import { CONTENT_ADAPTERS } from './registry.js';

/**
 * Preflight (issue 20, docs/campaigns.md "Preflight"): what would stop a release (errors) and
 * what may surprise (warnings), on the draft.
 */

export interface Finding {
  code: string;
  message: string;
  [key: string]: unknown;
}

const DAY_MS = 86_400_000;

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MiB`;

/** A screen's free cache from its last status document (`storage.freeBytes`), or null when it never said. */
export function freeBytesOf(lastStatus: string | null): number | null {
  if (!lastStatus) return null;
  try {
    const free = (JSON.parse(lastStatus) as { storage?: { freeBytes?: unknown } }).storage?.freeBytes;
    return typeof free === 'number' && Number.isFinite(free) && free >= 0 ? free : null;
  } catch {
    return null;
  }
}

export async function preflight(db: Db, row: CampaignRow): Promise<{ ok: boolean; errors: Finding[]; warnings: Finding[] }> {
  const draft = draftOf(row);
  const errors: Finding[] = [];
  const warnings: Finding[] = [];
  const now = Date.now();
  if (!draft.window) errors.push({ code: 'no_window', message: 'The campaign has no window (startsAt, endsAt)' });
  else if (Date.parse(draft.window.endsAt) <= now) errors.push({ code: 'window_past', message: `The window ended at ${draft.window.endsAt}` });
  if (!draft.show) errors.push({ code: 'no_show', message: 'The campaign has no show: nothing would play' });
  const items = itemsOf(draft);
  const missing = new Set(await missingContent(db, items));
  for (const m of missing) errors.push({ code: 'content_missing', message: `No ${m}`, ref: m });
  for (const r of await missingTargetRefs(db, draft)) errors.push({ code: 'target_missing', message: r.message, path: r.path });
  if (draft.placements.length === 0) warnings.push({ code: 'no_placements', message: 'No placement: the release would schedule it nowhere' });

  // The content: unpublished and unapproved drafts; the media it plays (playlists' items, layouts' zones and backgrounds).
  const approvals = await approvalsRequired(db);
  const present = items.filter((i) => !missing.has(`${i.type} ${i.id}`));
  const approved = approvals ? await approvedDraftRevisions(db, present) : new Map<string, number>();
  const playlistIds = new Set<string>();
  const assetIds = new Set<string>();
  for (const item of present) {
    const state = await CONTENT_ADAPTERS[item.type].state(db, item.id);
    if (state.unpublishedChanges) {
      warnings.push({ code: 'unpublished_changes', message: `${item.type} "${state.name}" has unpublished changes: the release publishes them`, ...item });
      if (approvals && approved.get(`${item.type}:${item.id}`) !== state.revision) {
        warnings.push({
          code: 'not_approved',
          message: `${item.type} "${state.name}": its draft has no approved submission (approvals are on; approving the campaign publishes it as it is)`,
          ...item,
        });
      }
    }
    if (item.type === 'playlist') playlistIds.add(item.id);
    if (item.type === 'layout') {
      const refs = contentRefs(state.draft as LayoutContent);
      for (const id of refs.playlistIds) playlistIds.add(id);
      for (const id of refs.assetIds) assetIds.add(id);
    }
  }
  const media = await mediaOf(db, [...playlistIds], [...assetIds]);
  const reported = new Set<string>();
  for (const a of media) {
    if (a.state === 'ready' || reported.has(a.id)) continue;
    reported.add(a.id);
    warnings.push({ code: 'asset_not_ready', message: `Asset "${a.name}" is ${a.state}`, assetId: a.id, playlistId: a.playlist_id });
  }
  const sizes = new Map(media.map((a) => [a.id, a.size_bytes ?? 0]));
  const mediaBytes = [...sizes.values()].reduce((x, y) => x + y, 0);

  // The targets: offline for more than a day; too little free cache; stronger schedules over the window.
  const placed = await Promise.all(draft.placements.map(async (p) => ({ priority: p.priority, screens: await screensOf(db, targetsOfPlacement(p)) })));
  const screens = new Set(placed.flatMap((p) => p.screens));
  if (!screens.size) return { ok: errors.length === 0, errors, warnings };
  const unknown: string[] = [];
  for (const s of await screensStatus(db, [...screens])) {
    if (s.last_seen_ms === null || s.last_seen_ms < now - DAY_MS) {
      warnings.push({
        code: 'target_offline',
        message: `Screen "${s.name}" has not been seen for more than a day`,
        screenId: s.id,
        lastSeenAt: s.last_seen_at,
      });
    }
    const free = freeBytesOf(s.last_status);
    if (free === null) unknown.push(s.name);
    else if (mediaBytes > free) {
      warnings.push({
        code: 'cache_too_small',
        message: `Screen "${s.name}" reports ${mib(free)} of free cache; the campaign's media is ${mib(mediaBytes)} (what it has cached already needs no room)`,
        screenId: s.id,
        freeBytes: free,
        mediaBytes,
      });
    }
  }
  if (unknown.length && mediaBytes > 0) {
    warnings.push({
      code: 'cache_unknown',
      message: `${unknown.length === 1 ? 'Screen' : 'Screens'} ${unknown.map((n) => `"${n}"`).join(', ')} never reported free cache: the campaign's ${mib(mediaBytes)} of media is not checked there`,
      screens: unknown,
    });
  }
  if (draft.window) {
    const from = Date.parse(draft.window.startsAt);
    const to = Date.parse(draft.window.endsAt);
    const minPriority = Math.min(...placed.map((p) => p.priority));
    for (const { row: s, targets } of await strongerScheduleCandidates(db, row.id, minPriority, draft.window.endsAt)) {
      // The screens where a placement of lower priority than the schedule puts the campaign.
      const weaker = new Set(placed.filter((p) => p.priority < s.priority).flatMap((p) => p.screens));
      const hit = (await screensOf(db, targets)).filter((id) => weaker.has(id));
      if (!hit.length) continue;
      // The schedule's own zone (a follow-the-screen one is taken in it too: an approximation of a day at most).
      const input = { ...scheduleInput({ ...s, follow_screen_zone: 0 }, s.time_zone), enabled: true };
      if (!occurrences(input, from, to, { limit: 1 }).length) continue;
      warnings.push({
        code: 'outranked',
        message: `Schedule "${s.name}" (priority ${s.priority}) plays during the window on ${hit.length} of its screens and would hide it there`,
        scheduleId: s.id,
        screenIds: hit,
      });
    }
  }
  return { ok: errors.length === 0, errors, warnings };
}
