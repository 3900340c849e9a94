/**
 * What to show at an instant: the manifest's timeline segment, then the playlist items
 * valid at that instant in the screen's time zone (validity window, day-parts), in order.
 * Pure functions over the model of manifest.ts; `now` is always passed in.
 */
import type { DayPart, PlayerManifest, PlaylistItem, Segment } from './manifest.js';

/** The segment that covers `now` (start inclusive, end exclusive); the latest-starting wins an overlap. */
export function segmentAt(timeline: readonly Segment[], now: number): Segment | null {
  let found: Segment | null = null;
  for (const s of timeline) if (s.start <= now && now < s.end && (!found || s.start >= found.start)) found = s;
  return found;
}

/**
 * What to show at `now`: the covering segment; past the end of the whole timeline (the
 * player has been cut off from the server for longer than the manifest covers) the last
 * segment carries on, because stale content is better than a blank screen.
 */
export function segmentToShow(timeline: readonly Segment[], now: number): Segment | null {
  const hit = segmentAt(timeline, now);
  if (hit || timeline.length === 0) return hit;
  let last: Segment | null = null;
  for (const s of timeline) if (!last || s.end > last.end) last = s;
  return last && now >= last.end ? last : null;
}

/** The next instant after `now` where the timeline changes (a segment starts or ends), or null. */
export function nextBoundary(timeline: readonly Segment[], now: number): number | null {
  let next: number | null = null;
  for (const s of timeline) {
    for (const t of [s.start, s.end]) if (t > now && (next === null || t < next)) next = t;
  }
  return next;
}

/** A stable key for "the same thing is on": the segment's source and content ids. */
export function segmentKey(segment: Segment | null): string {
  if (!segment) return 'none';
  const c = segment.content;
  const contentId =
    c.type === 'playlist'
      ? `playlist:${c.playlist.id}`
      : c.type === 'layout'
        ? `layout:${c.layout.id}`
        : c.type === 'message'
          ? `message:${c.message.severity}:${c.message.text}`
          : 'idle';
  return `${segment.source.type}:${segment.source.id ?? ''}|${contentId}`;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Wall-clock weekday (ISO, 1 = Monday) and minutes after midnight of `instant` in `zone`. */
export function localClock(instant: number, zone: string): { weekday: number; minutes: number } {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formatters.set(zone, f);
  }
  let weekday = 1;
  let hour = 0;
  let minute = 0;
  for (const part of f.formatToParts(new Date(instant))) {
    if (part.type === 'weekday') weekday = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(part.value) + 1;
    else if (part.type === 'hour') hour = Number(part.value) % 24;
    else if (part.type === 'minute') minute = Number(part.value);
  }
  return { weekday, minutes: hour * 60 + minute };
}

function inDayPart(part: DayPart, clock: { weekday: number; minutes: number }): boolean {
  const today = part.days.length === 0 || part.days.includes(clock.weekday);
  if (part.end > part.start) return today && clock.minutes >= part.start && clock.minutes < part.end;
  // Crosses midnight: the evening belongs to the listed day, the early morning to the day after.
  const yesterday = clock.weekday === 1 ? 7 : clock.weekday - 1;
  const startedYesterday = part.days.length === 0 || part.days.includes(yesterday);
  return (today && clock.minutes >= part.start) || (startedYesterday && clock.minutes < part.end);
}

/** Whether an item may play at `now` in `zone`: inside its validity window and one of its day-parts (if any). */
export function itemPlayableAt(item: PlaylistItem, now: number, zone: string): boolean {
  // The server's windows already combine validity and day-parts (nested playlists too),
  // but only within its horizon: past the last window's end, fall back to the rules.
  if (item.windows !== null && (item.windowsUntil === null || now < item.windowsUntil)) {
    return item.windows.some((w) => w.start <= now && now < w.end);
  }
  if (item.validFrom !== null && now < item.validFrom) return false;
  if (item.validUntil !== null && now >= item.validUntil) return false;
  if (item.dayParts.length === 0) return true;
  const clock = localClock(now, zone);
  return item.dayParts.some((p) => inDayPart(p, clock));
}

export const DEFAULT_IMAGE_MS = 10_000;
export const DEFAULT_WEBSITE_MS = 30_000;

/**
 * How long an item stays on. Images and websites: their duration (or the default).
 * Videos play to their `ended` event; this is the safety limit after which the player
 * moves on anyway (a stalled decoder never freezes the screen).
 */
export function itemDurationMs(item: PlaylistItem): number {
  const d = item.durationMs !== null && item.durationMs > 0 ? item.durationMs : null;
  switch (item.kind) {
    case 'video':
    case 'audio':
      return (d ?? 15 * 60_000) + 10_000;
    case 'website':
    case 'pdf':
      return d ?? DEFAULT_WEBSITE_MS;
    default:
      return d ?? DEFAULT_IMAGE_MS;
  }
}

/**
 * Plays a playlist's items in order, round and round, skipping those not playable now
 * (validity, day-parts) or not ready (media not fully cached and verified: the player
 * never switches to a half-downloaded file).
 */
export class PlaylistSequencer {
  private index = -1;

  constructor(readonly items: readonly PlaylistItem[]) {}

  next(now: number, zone: string, ready: (item: PlaylistItem) => boolean): PlaylistItem | null {
    const n = this.items.length;
    for (let step = 1; step <= n; step++) {
      const i = (this.index + step) % n;
      const item = this.items[i];
      if (item && itemPlayableAt(item, now, zone) && ready(item)) {
        this.index = i;
        return item;
      }
    }
    return null;
  }

  get position(): number {
    return this.index;
  }
}

/** Every media entry the manifest needs (the cache keeps these and evicts the rest). */
export function neededMediaUrls(manifest: Pick<PlayerManifest, 'media'>): string[] {
  return [...new Set(manifest.media.map((m) => m.url))];
}
