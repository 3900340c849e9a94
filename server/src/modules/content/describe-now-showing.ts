/**
 * The screens module's `nowShowing` (screens/now-showing.ts): names for what a player
 * reported, and, for a screen that reported nothing current, what the resolver (the same
 * one the manifest and the preview use) says plays now.
 */
import { windowSource, type WindowSourceFn } from './windows.js';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';
import type { NowShowing, NowShowingRequest, registerNowShowingDescriber } from '../screens/index.js';
import { defaultTimeZone, type ScreenContext } from './screen-context.js';
import { schedulesNamingScreens } from '../schedules/index.js';
import { assignmentsOf } from './assignments.repo.js';
import { namesOf } from './names.repo.js';
import { widgetInfos } from './refs.repo.js';
import { groupIdsByScreen, screenZoneRows } from './screen-context.repo.js';
import { resolveSubject } from './resolve.js';

/**
 * The screens' contexts at once, and which of them a schedule or an assignment targets
 * directly. Screens with the same zone, location, groups, own schedules and own assignment
 * play the same thing (the resolver reads nothing else of a screen), so the plan is
 * resolved once per such set: a fleet of 500 screens in a few groups costs a few
 * resolutions, not 500.
 */
async function planKeys(db: Db, screenIds: readonly string[]): Promise<Map<string, { screen: ScreenContext; key: string }>> {
  const out = new Map<string, { screen: ScreenContext; key: string }>();
  if (screenIds.length === 0) return out;
  const ids = [...screenIds];
  const rows = await screenZoneRows(db, ids);
  const groups = await groupIdsByScreen(db, ids);
  // What targets a screen directly (its own schedules, its own assignment) is part of the key.
  const direct = new Map<string, string[]>();
  const add = (id: string, what: string) => direct.set(id, [...(direct.get(id) ?? []), what]);
  for (const r of await schedulesNamingScreens(db, ids)) add(r.screenId, `s:${r.scheduleId}`);
  for (const r of await assignmentsOf(db, 'screen', ids)) add(r.target_id, `a:${r.playlist_id}`);
  const fallbackZone = await defaultTimeZone(db);
  for (const r of rows) {
    const screen: ScreenContext = {
      id: r.id,
      name: r.name,
      timeZone: r.time_zone ?? fallbackZone,
      locationId: r.location_id,
      groupIds: groups.get(r.id) ?? [],
      manifestRevision: r.manifest_revision,
      display: null,
    }; // the resolver does not read display (media picking does)
    const key = `${screen.timeZone}|${screen.locationId ?? ''}|${screen.groupIds.join(',')}|${(direct.get(r.id) ?? []).join(',')}`;
    out.set(r.id, { screen, key });
  }
  return out;
}

type Found = Omit<NowShowing, 'assetName' | 'playlistName' | 'layoutName' | 'scheduleName'>;
interface Plan {
  plan: Found | null;
  /** Valid until the planned segment ends (at most an hour ahead). */
  until: number;
  from: number;
}

/** How far ahead one resolution looks: the answer is kept until its segment ends, at most this long. */
const PLAN_AHEAD_MS = 3600_000;

/**
 * Plans kept across requests, per screen (the app's, in its scope): valid while the screen's
 * manifest revision (bumped by every content change that reaches it), its plan key and the
 * planned segment hold. The fleet page asks every 15 s; an RRULE expansion costs
 * milliseconds per schedule.
 */
const PLANS = new ScopeKey('content.now-showing-plans', () => new Map<string, Plan & { tag: string }>());

async function resolvePlan(db: Db, screen: ScreenContext, now: number, windows: WindowSourceFn): Promise<Plan> {
  const seg = (await resolveSubject(db, { kind: 'screen', screen }, now, now + PLAN_AHEAD_MS, { windows })).segments[0];
  const content = seg?.content;
  const until = seg ? Date.parse(seg.endsAt) : now + PLAN_AHEAD_MS;
  if (!seg || !content || content.type === 'campaign') return { plan: null, from: now, until };
  return {
    from: now,
    until,
    plan: {
      planned: true,
      reportedAt: null,
      assetId: content.type === 'asset' ? content.id : null,
      playlistId: content.type === 'playlist' ? content.id : null,
      layoutId: content.type === 'layout' ? content.id : null,
      scheduleId: seg.source.type === 'schedule' ? seg.source.id : null,
    },
  };
}

/** The app's describer for the screens module (its plans cached in the app's scope). */
export function nowShowingDescriber(deps: AppDeps): Parameters<typeof registerNowShowingDescriber>[1] {
  return (db, requests, now) => describeNowShowing(db, requests, now, deps.scope.get(PLANS), windowSource(deps, db));
}

async function describeNowShowing(
  db: Db,
  requests: readonly NowShowingRequest[],
  now: number,
  cache: Map<string, Plan & { tag: string }>,
  windows: WindowSourceFn,
): Promise<Map<string, NowShowing | null>> {
  const found = new Map<string, Found | null>();
  const keys = await planKeys(
    db,
    requests.filter((q) => !q.reported).map((q) => q.screenId),
  );
  const plans = new Map<string, Plan>();
  for (const q of requests) {
    if (q.reported) {
      const { reportedAt, ...ids } = q.reported;
      found.set(q.screenId, { planned: false, reportedAt, ...ids });
      continue;
    }
    const k = keys.get(q.screenId);
    if (!k) {
      found.set(q.screenId, null);
      continue;
    }
    const tag = `${k.screen.manifestRevision}|${k.key}`;
    const hit = cache.get(q.screenId);
    if (hit && hit.tag === tag && now >= hit.from && now < hit.until) {
      found.set(q.screenId, hit.plan);
      continue;
    }
    let plan = plans.get(k.key);
    if (!plan) plans.set(k.key, (plan = await resolvePlan(db, k.screen, now, windows)));
    cache.set(q.screenId, { ...plan, tag });
    found.set(q.screenId, plan.plan);
  }
  // Screens gone from the fleet leave the cache when it grows past the fleet's size.
  if (cache.size > 4 * Math.max(requests.length, 1000)) cache.clear();
  const ids = { assets: new Set<string>(), playlists: new Set<string>(), layouts: new Set<string>(), schedules: new Set<string>() };
  for (const f of found.values()) {
    if (!f) continue;
    if (f.assetId) ids.assets.add(f.assetId);
    if (f.playlistId) ids.playlists.add(f.playlistId);
    if (f.layoutId) ids.layouts.add(f.layoutId);
    if (f.scheduleId) ids.schedules.add(f.scheduleId);
  }
  const [assets, playlists, layouts, schedules] = await Promise.all([
    namesOf(db, 'assets', ids.assets),
    namesOf(db, 'playlists', ids.playlists),
    namesOf(db, 'layouts', ids.layouts),
    namesOf(db, 'schedules', ids.schedules),
  ]);
  // A player showing a widget item may report the widget's id as its current asset: name it.
  const unnamed = [...ids.assets].filter((id) => !assets.has(id));
  for (const [id, w] of await widgetInfos(db, unnamed)) assets.set(id, w.name);
  const out = new Map<string, NowShowing | null>();
  for (const [screenId, f] of found) {
    out.set(
      screenId,
      f && {
        ...f,
        assetName: f.assetId ? (assets.get(f.assetId) ?? null) : null,
        playlistName: f.playlistId ? (playlists.get(f.playlistId) ?? null) : null,
        layoutName: f.layoutId ? (layouts.get(f.layoutId) ?? null) : null,
        scheduleName: f.scheduleId ? (schedules.get(f.scheduleId) ?? null) : null,
      },
    );
  }
  return out;
}
