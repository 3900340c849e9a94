import type { components } from '../../api-schema';
import { api, ApiError, type Page } from '../../api';
import type { Group, LayoutSummary, Location, PlaylistSummary, Screen } from '../../types';
import type { Widget } from '../widgets/model';
import { wallClock } from '../schedule-rules';

/** Campaigns as the console reads them (docs/campaigns.md): the server's own shapes. */
export type Campaign = components['schemas']['Campaign'];
export type CampaignRelease = components['schemas']['CampaignRelease'];
export type Draft = Campaign['draft'];
export type Placement = Draft['placements'][number];
export type ContentRef = { type: 'playlist' | 'layout' | 'widget'; id: string };
export interface Finding {
  code: string;
  message: string;
  [key: string]: unknown;
}
export interface Preflight {
  ok: boolean;
  errors: Finding[];
  warnings: Finding[];
}

/** What a campaign can pick from: content and targets (loaded once per page). */
export interface Lists {
  playlists: PlaylistSummary[];
  layouts: LayoutSummary[];
  widgets: Widget[];
  screens: Screen[];
  groups: Group[];
  locations: Location[];
}

export async function loadLists(): Promise<Lists> {
  const [playlists, layouts, widgets, screens, groups, locations] = await Promise.all([
    api.get<Page<PlaylistSummary>>('playlists?limit=500'),
    api.get<Page<LayoutSummary>>('layouts?limit=500'),
    api.get<Page<Widget>>('widgets?limit=500'),
    api.get<Page<Screen>>('screens?limit=500'),
    api.get<Page<Group>>('screen-groups?limit=500'),
    api.get<Page<Location>>('locations?limit=500'),
  ]);
  return {
    playlists: playlists.items,
    layouts: layouts.items,
    widgets: widgets.items,
    screens: screens.items,
    groups: groups.items,
    locations: locations.items,
  };
}

/** The name of a content item or target, else a plain "a deleted …". */
export function nameOf(lists: Lists | undefined, type: string, id: string): string {
  const find = (items: { id: string; name: string }[] | undefined) => items?.find((i) => i.id === id)?.name;
  const found =
    type === 'playlist'
      ? find(lists?.playlists)
      : type === 'layout'
        ? find(lists?.layouts)
        : type === 'widget'
          ? find(lists?.widgets)
          : type === 'screen'
            ? find(lists?.screens)
            : type === 'group'
              ? find(lists?.groups)
              : type === 'location'
                ? find(lists?.locations)
                : undefined;
  return found ? `${type} “${found}”` : `a ${type} that no longer exists`;
}

/** A window in the browser's local time, for a datetime-local input. */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;
export const toLocalInput = (iso: string | null | undefined) => (iso ? wallClock(iso, browserZone()) : '');
/** A datetime-local value (browser-local wall clock) as an ISO instant; null when empty or not a date. */
export function fromLocalInput(value: string): string | null {
  if (!value) return null;
  const d = new Date(value.length === 16 ? `${value}:00` : value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** A state in words for the list and the editor's heading. */
export function stateOf(c: Campaign): { label: string; tone: 'muted' | 'ok' | 'warn' } {
  if (!c.publication) return { label: 'Draft (never released)', tone: 'muted' };
  if (c.unpublishedChanges) return { label: 'Unpublished changes', tone: 'warn' };
  return { label: 'Published', tone: 'ok' };
}

/** An API refusal in plain words for the campaign pages (409/403/412 said for what they mean here). */
export function explain(err: unknown, action: string): unknown {
  if (!(err instanceof ApiError)) return err;
  if (err.status === 412)
    return new ApiError(412, err.code, 'Someone else changed this campaign since you opened it. Reload to see their version.', err.details);
  // 409 (approvals on, something missing) and 403 (a released campaign while approvals are on): the server's words say why.
  if (err.status === 409 || (err.status === 403 && err.code === 'forbidden'))
    return new ApiError(err.status, err.code, `Could not ${action}: ${err.message}`, err.details);
  return err;
}

/** The finding's subject in words: the placement, content item, screen or schedule it names. */
export function concerns(f: Finding, lists: Lists | undefined, draft: Draft | undefined): string {
  const path = Array.isArray(f.path) ? (f.path as (string | number)[]) : null;
  if (path && path[0] === 'placements' && typeof path[1] === 'number') {
    const p = draft?.placements[path[1]];
    return `Placement ${path[1] + 1}${p?.name ? ` (${p.name})` : ''}`;
  }
  if (typeof f.type === 'string' && typeof f.id === 'string') return nameOf(lists, f.type, f.id);
  if (typeof f.playlistId === 'string') return nameOf(lists, 'playlist', f.playlistId);
  if (typeof f.screenId === 'string') return nameOf(lists, 'screen', f.screenId);
  if (typeof f.scheduleId === 'string') return 'Another schedule';
  if (f.code === 'no_window' || f.code === 'window_past') return 'The window';
  if (f.code === 'no_show') return 'What it plays';
  if (f.code === 'no_placements') return 'Placements';
  if (typeof f.ref === 'string') return 'Content';
  return 'The campaign';
}

/** A finding's message in plain words (the server's message, made friendlier where it names raw values). */
export function findingWords(f: Finding): string {
  switch (f.code) {
    case 'no_window':
      return 'Not set: choose when it starts and ends.';
    case 'window_past':
      return 'It has already ended: move the end into the future.';
    case 'no_show':
      return 'Nothing is chosen: pick a playlist or layout under “Plays”.';
    case 'no_placements':
      return 'None yet, so a release would show it on no screen.';
    default:
      return f.message.endsWith('.') ? f.message : `${f.message}.`;
  }
}
