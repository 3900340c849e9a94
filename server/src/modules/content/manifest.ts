/**
 * The player manifest (DESIGN.md sections 6.3 and 11; shape in docs/content.md): for one
 * screen, the resolved timeline of the next 48 hours in its time zone, each segment with
 * its layout or playlist flattened to playable items, every media variant, data output and
 * widget bundle to cache, and warnings for what was left out. Built on demand, cached per (screen, manifest
 * revision, hour), and its dependencies recorded (manifest.repo.ts) so a change bumps exactly
 * the screens it alters.
 */
import { createHash } from 'node:crypto';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';
import { contentChangeCount, type DepRef } from './changes.js';
import { bumpManifestRevision, type UpdateOffer, updateOfferOf } from '../screens/index.js';
import { type ScreenContext, screenContext } from './screen-context.js';
import { type ManifestNetwork, manifestNetworkOf } from './manifest-network.js';
import { keptBytes, manifestCache, type CachedManifest } from './manifest.cache.js';
import { type DepSet, depSetOf, recordManifestDeps } from './manifest.repo.js';
import { hasOwnInputs } from './manifest-own.js';
import { forgetAllParts } from './playlist-parts.js';
import { ContentLoader } from './playable.js';
import { campaignOfSegment, resolveSubject, screenTargets } from './resolve.js';
import { outputFor } from '../data-sources/index.js';
import { widgetBundleFor } from '../widgets/index.js';
import { Builder, DEFAULT_BOX } from './manifest.builder.js';
import { playlistText } from './playlist-built.js';
import { windowSource, type WindowSourceFn } from './windows.js';
import { overlaySource, type OverlaySourceFn } from './overlays.js';
import type { Manifest, ManifestPlaylist, OutputResolver, WidgetResolver } from './manifest.shapes.js';

export type {
  Manifest,
  ManifestData,
  ManifestItem,
  ManifestMedia,
  ManifestPlaylist,
  ManifestWidget,
  OutputResolver,
  WidgetResolver,
} from './manifest.shapes.js';
export { variantUrl } from './manifest.shapes.js';

export const HORIZON_MS = 48 * 3_600_000;
const HOUR_MS = 3_600_000;

export interface BuiltManifest {
  manifest: Manifest;
  deps: DepRef[];
}

/** Builds a screen's manifest for the 48 hours from the start of the hour of `nowMs`. */
export async function buildManifest(
  db: Db,
  screen: ScreenContext,
  nowMs = Date.now(),
  outputs: OutputResolver | null = null,
  widgets: WidgetResolver | null = null,
  windows?: WindowSourceFn,
  network: ManifestNetwork | null = null,
  overlays?: OverlaySourceFn,
  update?: (screenId: string) => Promise<UpdateOffer | null>,
): Promise<BuiltManifest> {
  const from = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
  const to = from + HORIZON_MS;
  const loader = new ContentLoader(db);
  // A network member plays its leader's timeline (its own display size still picks variants);
  // takeovers and overrides reach exactly the screens they target, so its windows stay its own.
  const leader = network?.leaderScreenId && network.leaderScreenId !== screen.id ? await screenContext(db, network.leaderScreenId) : undefined;
  const own = leader && windows ? screenTargets(screen) : null;
  const resolution = await resolveSubject(db, { kind: 'screen', screen: leader ?? screen }, from, to, {
    loader,
    windows: own && windows ? (_leaders, f, t) => windows(own, f, t) : windows,
  });
  const b = new Builder(loader, resolution.timeZone, from, to, outputs, widgets);
  for (const d of resolution.deps) b.dep(d.kind, d.id);
  for (const w of resolution.warnings) b.warn(`${w.code}:${JSON.stringify(w)}`, w);
  const playlists = new Map<string, ManifestPlaylist>();
  const layouts = new Map<string, Awaited<ReturnType<Builder['layout']>>>();
  const timeline: Manifest['timeline'] = [];
  for (const seg of resolution.segments) {
    const entry: Manifest['timeline'][number] = {
      startsAt: seg.startsAt,
      endsAt: seg.endsAt,
      source: seg.source,
      content: seg.content ? { type: seg.content.type, id: seg.content.id } : null,
      campaign: campaignOfSegment(resolution, seg),
    };
    const window = seg.source.id ? resolution.windows.get(seg.source.id) : undefined;
    if (window) entry.audio = window.audio;
    const muted = window?.audio !== 'force-on';
    if (window && seg.content?.type === 'message' && window.message) entry.message = window.message;
    else if (window && (seg.content?.type === 'asset' || seg.content?.type === 'widget')) {
      entry.playlist = await b.single(seg.content.type, seg.content.id, `${seg.source.type}:${window.source.id}`, screen.display ?? DEFAULT_BOX, muted);
    } else if (window && seg.content?.type === 'playlist' && !muted) {
      entry.playlist = await b.playlist(seg.content.id, screen.display ?? DEFAULT_BOX, 'contain', false);
    } else if (seg.content?.type === 'playlist') {
      if (!playlists.has(seg.content.id)) playlists.set(seg.content.id, await b.playlist(seg.content.id, screen.display ?? DEFAULT_BOX));
      entry.playlist = playlists.get(seg.content.id)!;
    } else if (seg.content?.type === 'layout') {
      if (!layouts.has(seg.content.id)) layouts.set(seg.content.id, await b.layout(seg.content.id));
      const layout = layouts.get(seg.content.id);
      if (layout) entry.layout = layout;
      else entry.content = null;
    }
    timeline.push(entry);
  }
  const widgetList = await b.widgetList();
  // Overlays reach the screen by its own targets (a network member's too), drawn above the content.
  const overlayList = overlays
    ? await overlays({
        screen: { id: screen.id, timeZone: resolution.timeZone, display: screen.display ?? DEFAULT_BOX },
        targets: screenTargets(screen),
        image: (assetId, box, source) => b.overlayImage(assetId, box, source),
        dep: (kind, id) => b.dep(kind, id),
        warn: (w) => b.warn(`${w.code}:${JSON.stringify(w)}`, w),
      })
    : [];
  const manifest: Manifest = {
    screenId: screen.id,
    revision: screen.manifestRevision,
    generatedAt: new Date(nowMs).toISOString(),
    validUntil: new Date(to).toISOString(),
    refreshAfter: new Date(from + HOUR_MS).toISOString(),
    timeZone: resolution.timeZone,
    timeline,
    media: [...b.media.values()].sort((x, y) => x.assetId.localeCompare(y.assetId) || x.variantId.localeCompare(y.variantId)),
    data: [...b.data.values()].sort((x, y) => x.sourceId.localeCompare(y.sourceId) || (x.viewKey ?? '').localeCompare(y.viewKey ?? '')),
    widgets: widgetList,
    overlays: overlayList,
    warnings: b.warnings,
    // The offer is the screen's own (a network member updates on its own).
    update: update ? await update(screen.id) : null,
    presentationNetwork: network
      ? {
          id: network.id,
          name: network.name,
          epoch: network.epoch,
          leaderScreenId: network.leaderScreenId,
          position: network.position,
          memberCount: network.memberCount,
        }
      : null,
  };
  return { manifest, deps: [...b.deps.values()] };
}

/** Builds tried while content keeps changing under the build, before giving up on a quiet one. */
const MAX_BUILDS = 3;

/**
 * The screen's manifest for this hour: cached per (revision, hour), else built and recorded.
 * A screen nothing reaches by its own id (manifest-own.ts) gets its context's shared build
 * (`sharedEntry`), with its id and revision stamped in; any other builds its own.
 *
 * A change that commits while the manifest is being built may be missed by the build
 * (read before it) and by the change push (the build's dependencies are recorded only at
 * its end). So the content change count is read before each build and after its
 * dependencies are recorded: if it moved, the build is done again (at most 3 times); if
 * content is still changing then, the last build is served but not cached, and the
 * screen's revision is bumped so the player fetches again (`manifest.changed`).
 */
export async function currentManifest(deps: AppDeps, screen: ScreenContext, nowMs = Date.now()): Promise<CachedManifest> {
  const windowStart = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
  const cache = manifestCache(deps);
  const network = await manifestNetworkOf(deps, screen);
  const contextKey = `${screen.timeZone}|${screen.locationId ?? ''}|${screen.groupIds.join(',')}|${network?.key ?? ''}`;
  const hit = cache.get(screen.id);
  if (hit && hit.revision === screen.manifestRevision && hit.windowStart === windowStart && hit.contextKey === contextKey) return hit;
  // Requests for the same screen while its build runs (its manifest and its media downloads'
  // guards, right after a change) wait for that build rather than each making its own.
  const key = `${screen.manifestRevision}|${windowStart}|${contextKey}`;
  const flights = deps.scope.get(BUILDS);
  const flying = flights.get(screen.id);
  if (flying?.key === key) return flying.entry;
  const entry = buildAndCache(deps, screen, nowMs, windowStart, contextKey, network);
  flights.set(screen.id, { key, entry });
  try {
    return await entry;
  } finally {
    if (flights.get(screen.id)?.entry === entry) flights.delete(screen.id);
  }
}

/** buildManifest with this app's data outputs, widget bundles, windows, overlays and update offers. */
function buildWithApp(deps: AppDeps, screen: ScreenContext, nowMs: number, network: ManifestNetwork | null): Promise<BuiltManifest> {
  return buildManifest(
    deps.db,
    screen,
    nowMs,
    (sourceId, view) => outputFor(deps, sourceId, view, new Date(nowMs)),
    (widgetId) => widgetBundleFor(deps, widgetId),
    windowSource(deps),
    network,
    overlaySource(deps),
    (screenId) => updateOfferOf(deps, screenId),
  );
}

/** Builds in progress, per screen, with the (revision, hour, context) they build for. */
const BUILDS = new ScopeKey('content.manifest-builds', () => new Map<string, { key: string; entry: Promise<CachedManifest> }>());

async function buildAndCache(
  deps: AppDeps,
  screen: ScreenContext,
  nowMs: number,
  windowStart: number,
  contextKey: string,
  network: ManifestNetwork | null,
): Promise<CachedManifest> {
  // A network member plays its leader's timeline and carries its own position: always its own build.
  if (!network) {
    const shared = await sharedEntry(deps, screen, nowMs, windowStart, contextKey);
    if (shared) return shared;
  }
  const cache = manifestCache(deps);
  let built: BuiltManifest;
  let quiet = false;
  for (let attempt = 0; attempt < MAX_BUILDS && !quiet; attempt++) {
    const before = contentChangeCount(deps);
    built = await buildWithApp(deps, screen, nowMs, network);
    await recordDeps(deps, screen.id, depSetOf(screen.id, built.deps));
    quiet = contentChangeCount(deps) === before;
  }
  const entry = cachedEntry(screen, windowStart, contextKey, built!);
  if (quiet) cache.set(screen.id, entry);
  else {
    deps.logger.warn({ screenId: screen.id }, 'content kept changing during manifest builds; serving the last one uncached and bumping the screen');
    // A direct bump, not contentChanged: that would count as one more change and send every
    // other build in progress round again.
    await bumpManifestRevision(deps, [screen.id]).catch((err: unknown) => deps.logger.error({ err }, 'could not bump a manifest'));
  }
  return entry;
}

function cachedEntry(screen: ScreenContext, windowStart: number, contextKey: string, built: BuiltManifest): CachedManifest {
  const { body, stable } = serialise(built.manifest);
  const entry: CachedManifest = {
    revision: screen.manifestRevision,
    windowStart,
    contextKey,
    etag: etagOf(screen.manifestRevision, contentHash(stable)),
    bytes: keptBytes(body),
    get body() {
      return this.bytes.toString();
    },
    assetIds: new Set(built.manifest.media.map((m) => m.assetId)),
    dataSourceIds: new Set(built.manifest.data.map((d) => d.sourceId)),
    widgetIds: new Set(built.manifest.widgets.map((w) => w.widgetId)),
  };
  return entry;
}

/**
 * The ETag: the screen's revision and a hash of the manifest without `screenId`, `revision`
 * and `generatedAt` (`JSON.stringify` of the rest, in order). The screen's id never changes
 * and its revision is in the tag, so the tag changes whenever the screen's bytes do (apart
 * from `generatedAt`: a rebuild of the same content keeps its tag); and one hash serves every
 * screen of a shared build.
 */
function contentHash(stable: readonly string[]): string {
  const hash = createHash('sha256').update('{').update(stable[1]!.slice(1));
  for (const part of stable.slice(2)) hash.update(part);
  return hash.digest('base64url').slice(0, 27);
}

const etagOf = (revision: number, hash: string) => `"m${revision}-${hash}"`;

/** A build shared by the screens of one context that nothing reaches by their own id. */
interface SharedBuild {
  /** The body after `{"data":{"screenId":..,"revision":..,"generatedAt":..`: from `,"validUntil"` to the end. */
  tail: Buffer;
  hash: string;
  /** What the build used, without the building screen's own assignment (implied for each screen). */
  deps: DepSet;
  assetIds: Set<string>;
  dataSourceIds: Set<string>;
  widgetIds: Set<string>;
}

/**
 * Shared builds by (context, display size, hour, content change count). Every content change
 * counts one, so a build is only shared while nothing changed since it began: the next
 * request after a change builds again, once per context.
 */
const SHARED = new ScopeKey('content.shared-manifests', () => new Map<string, Promise<SharedBuild | null>>());
/**
 * Per screen, the dependency set recorded for it (`recordManifestDeps`), as last written or
 * found there; the screen's deletion (`forgetRecordedDeps`) forgets it. Only this module
 * records dependencies, so after a change that left a screen's set as it was, nothing is read.
 * Not when instances share the database: another one may have recorded another set since
 * (recordManifestDeps then reads what is recorded, and writes only when it differs).
 */
const RECORDED = new ScopeKey('content.recorded-manifest-deps', () => new Map<string, string>());

/**
 * Records the screen's dependency set unless it is the one recorded last. When instances
 * share the database and it wrote, it waits for the messages the others committed before
 * (cluster.sync): a change made through another instance, whose lookup of the screens to
 * bump ran before this record committed, is announced before that lookup
 * (changes.ts contentChanged), so it is counted here before the caller compares the counts.
 */
async function recordDeps(deps: AppDeps, screenId: string, set: DepSet): Promise<void> {
  const recorded = deps.scope.get(RECORDED);
  if (recorded.get(screenId) === set.id && !deps.cluster.shared) return;
  recorded.delete(screenId);
  if ((await recordManifestDeps(deps.db, screenId, set)) && deps.cluster.shared) await deps.cluster.sync();
  recorded.set(screenId, set.id);
}

/** The screen's recorded dependencies are being deleted (the screen is). */
export function forgetRecordedDeps(deps: AppDeps, screenId: string): void {
  deps.scope.get(RECORDED).delete(screenId);
}

/**
 * The database was replaced (a restore): nothing kept from the old one may serve a manifest.
 * The cached and shared builds and the recorded dependency sets are dropped; the caller then
 * counts a change for every screen (`contentChanged`), which also pushes `manifest.changed`.
 */
export function forgetAllManifests(deps: AppDeps): void {
  manifestCache(deps).clear();
  deps.scope.get(SHARED).clear();
  deps.scope.get(RECORDED).clear();
  forgetAllParts(deps.db);
}

/** Distinct contexts kept at once (beyond: forgotten, built again when asked). */
const MAX_SHARED = 512;

/**
 * The context's shared build stamped with the screen's id and revision, recorded in the
 * screen's dependencies and cached for it; null when the screen has inputs of its own or a
 * change came between (the caller then builds the screen its own, with its retries).
 */
async function sharedEntry(deps: AppDeps, screen: ScreenContext, nowMs: number, windowStart: number, contextKey: string): Promise<CachedManifest | null> {
  const count = contentChangeCount(deps);
  if (await hasOwnInputs(deps, screen, windowStart, windowStart + HORIZON_MS)) return null;
  const box = screen.display ? `${screen.display.width}x${screen.display.height}` : '';
  const when = `|${windowStart}|${count}`;
  const key = `${contextKey}|${box}${when}`;
  const builds = deps.scope.get(SHARED);
  let shared = builds.get(key);
  if (!shared) {
    // Builds of an earlier change or hour are never asked for again.
    for (const k of builds.keys()) if (!k.endsWith(when)) builds.delete(k);
    if (builds.size >= MAX_SHARED) builds.clear();
    const mine = buildShared(deps, screen, nowMs, count);
    builds.set(key, mine);
    const forget = () => {
      if (builds.get(key) === mine) builds.delete(key);
    };
    mine.then((s) => s ?? forget(), forget);
    shared = mine;
  }
  const s = await shared;
  if (!s || contentChangeCount(deps) !== count) return null;
  // The same dependencies as a build of its own would record, one set for the whole context.
  await recordDeps(deps, screen.id, s.deps);
  if (contentChangeCount(deps) !== count) return null;
  const entry: CachedManifest = {
    revision: screen.manifestRevision,
    windowStart,
    contextKey,
    etag: etagOf(screen.manifestRevision, s.hash),
    // The screen's own head, made when it is stamped, then the shared text.
    bytes: keptBytes(
      `{"data":${JSON.stringify({ screenId: screen.id, revision: screen.manifestRevision, generatedAt: new Date(nowMs).toISOString() }).slice(0, -1)}`,
      s.tail,
    ),
    get body() {
      return this.bytes.toString();
    },
    assetIds: s.assetIds,
    dataSourceIds: s.dataSourceIds,
    widgetIds: s.widgetIds,
  };
  manifestCache(deps).set(screen.id, entry);
  return entry;
}

/** Builds `screen`'s manifest to share; null when a change came during the build or it used anything of the screen's own. */
async function buildShared(deps: AppDeps, screen: ScreenContext, nowMs: number, count: number): Promise<SharedBuild | null> {
  const built = await buildWithApp(deps, screen, nowMs, null);
  if (contentChangeCount(deps) !== count) return null;
  const m = built.manifest;
  // Checked before the build; what shows in the result is checked again (an offer or the screen's own assignment).
  if (m.update || m.presentationNetwork || m.timeline.some((seg) => seg.source.type === 'assignment')) return null;
  const { stable } = serialise(m);
  return {
    tail: Buffer.from(`${stable[1]}${stable[2]}${stable[3]}}`),
    hash: contentHash(stable),
    deps: depSetOf(screen.id, built.deps),
    assetIds: new Set(m.media.map((x) => x.assetId)),
    dataSourceIds: new Set(m.data.map((x) => x.sourceId)),
    widgetIds: new Set(m.widgets.map((x) => x.widgetId)),
  };
}

/**
 * The response body, `JSON.stringify({ data: manifest })`, made in one pass, and the parts of
 * it that are the manifest without `generatedAt` (`JSON.stringify` of it, in order: what the
 * ETag hashes, so a rebuild of the same content keeps its ETag). A playlist shown by several
 * segments is serialised once (it is the same object in each: buildManifest shares it).
 */
function serialise(manifest: Manifest): { body: string; stable: string[] } {
  const { screenId, revision, generatedAt, validUntil, refreshAfter, timeZone, timeline, ...tail } = manifest;
  // `{"screenId":..,"revision":..` + `,"generatedAt":..` + `,"validUntil":..,"timeZone":..` + `,"timeline":[..]` + `,"media":..}`
  const head = JSON.stringify({ screenId, revision });
  const when = JSON.stringify({ generatedAt });
  const zone = JSON.stringify({ validUntil, refreshAfter, timeZone });
  const playlists = new Map<ManifestPlaylist, string>();
  const segments: string[] = [];
  for (const entry of timeline) {
    const { playlist, ...rest } = entry;
    // Spliced only where `playlist` is the segment's last key (set after the others), so the text is JSON.stringify's.
    if (!playlist || Object.keys(entry).at(-1) !== 'playlist') {
      segments.push(JSON.stringify(entry));
      continue;
    }
    let text = playlists.get(playlist);
    if (text === undefined) playlists.set(playlist, (text = playlistText(playlist)));
    const other = JSON.stringify(rest);
    segments.push(`${other.length > 2 ? `${other.slice(0, -1)},` : '{'}"playlist":${text}}`);
  }
  const stable = [head.slice(0, -1), `,${zone.slice(1, -1)},"timeline":[`, segments.join(','), `],${JSON.stringify(tail).slice(1)}`];
  const body = `{"data":${stable[0]},${when.slice(1, -1)}${stable[1]}${stable[2]}${stable[3]}}`;
  return { body, stable };
}
