/**
 * Content's registrations in the media, screens and system modules' seams (for one app):
 * - deleting an asset a playlist or layout uses answers 409 naming them;
 * - deleting a screen or group drops its playlist assignment, and a screen its manifest
 *   dependencies (the screens module's seam; the schedules module refuses deleting a target);
 * - a schedule created, changed or deleted bumps the screens it reached or reaches;
 * - a screen downloads only variants of assets its current manifest uses;
 * - an asset that becomes ready, fails, is archived, restored, replaced, retagged or
 *   deleted bumps the manifests of the screens that used it (and of tag-rule playlists);
 * - (widgets module) deleting a widget a playlist or layout uses answers 409 naming them; a
 *   screen downloads only bundles of widgets its current manifest lists; a widget's new
 *   bundle (edited, rebuilt with new data, deleted) bumps exactly the screens using it.
 */
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { addAssetChangeHook, addAssetUsageFinder, addPlayerAssetGuard, type Usage } from '../media/index.js';
import { contentChanged, type DepRef } from './changes.js';
import { screenContext } from './screen-context.js';
import { everyScreenId, screensWithoutLocation } from './screen-context.repo.js';
import { deleteAssignment } from './assignments.repo.js';
import { deleteManifestDeps, screensDependingOnSource } from './manifest.repo.js';
import { currentManifest, forgetAllManifests, forgetRecordedDeps } from './manifest.js';
import { layoutsReferencing, playlistsWithAssets, playlistsWithWidgets } from './playlists.repo.js';
import { registerNowShowingDescriber } from '../screens/index.js';
import { nowShowingDescriber } from './describe-now-showing.js';
import { onSettingsChanged, registerRestoreParticipant } from '../system/index.js';
import { manifestCache } from './manifest.cache.js';
import { bumpManifestRevision } from '../screens/index.js';
import { registerTargetReferences } from '../screens/index.js';
import { addScheduleChangeHook } from '../schedules/index.js';
import { addDataSourceScreenFinder, addDataSourceUsageFinder, addOutputChangeHook, addPlayerDataGuard, type DataSourceUsage } from '../data-sources/index.js';
import { addPlayerWidgetGuard, addWidgetBundleChangeHook, addWidgetUsageFinder } from '../widgets/index.js';

export async function assetUsages(db: Db, assetIds: readonly string[]): Promise<Usage[]> {
  if (assetIds.length === 0) return [];
  const out: Usage[] = [];
  for (const r of await playlistsWithAssets(db, assetIds)) out.push({ assetId: r.asset_id!, type: 'playlist', id: r.id, name: r.name });
  for (const assetId of assetIds)
    for (const l of await layoutsReferencing(db, 'assetId', assetId)) out.push({ assetId, type: 'layout', id: l.id, name: l.name ?? '' });
  return out;
}

export async function dataSourceUsages(db: Db, sourceIds: readonly string[]): Promise<DataSourceUsage[]> {
  const out: DataSourceUsage[] = [];
  for (const sourceId of sourceIds)
    for (const l of await layoutsReferencing(db, 'sourceId', sourceId)) out.push({ sourceId, type: 'layout', id: l.id, name: l.name ?? '' });
  return out;
}

/** The playlists (items) and layouts (draft or published zones) that show any of the widgets. */
export async function widgetUsages(db: Db, widgetIds: readonly string[]): Promise<{ widgetId: string; type: string; id: string; name: string | null }[]> {
  if (widgetIds.length === 0) return [];
  const out: { widgetId: string; type: string; id: string; name: string | null }[] = [];
  for (const r of await playlistsWithWidgets(db, widgetIds)) out.push({ widgetId: r.widget_id!, type: 'playlist', id: r.id, name: r.name });
  for (const widgetId of widgetIds)
    for (const l of await layoutsReferencing(db, 'widgetId', widgetId)) out.push({ widgetId, type: 'layout', id: l.id, name: l.name ?? '' });
  return out;
}

/** Registers content's hooks with the media, screens and system modules (the content module's install). */
export function installContentHooks(deps: AppDeps): void {
  addAssetUsageFinder(deps, assetUsages);
  registerNowShowingDescriber(deps, nowShowingDescriber(deps));
  addPlayerAssetGuard(deps, async (deps, screenId, assetId) => {
    const screen = await screenContext(deps.db, screenId);
    if (!screen) return false;
    return (await currentManifest(deps, screen)).assetIds.has(assetId);
  });
  // A screen's or group's playlist assignment, and a screen's manifest dependencies, go with
  // it (the schedules module refuses deleting a screen, group or location schedules target).
  registerTargetReferences(deps, 'content', {
    async usages() {
      return [];
    },
    async forget(db, kind, id) {
      if (kind !== 'location') await deleteAssignment(db, kind, id);
      if (kind === 'screen') {
        forgetRecordedDeps(deps, id);
        await deleteManifestDeps(db, id);
      }
    },
  });
  // A restore replaces the database under the caches: manifests, shared builds and recorded
  // dependency sets of the old one are dropped, and every screen is told to fetch again.
  registerRestoreParticipant(deps, {
    key: 'content-manifests',
    pause: async () => {},
    resume: async (deps) => {
      forgetAllManifests(deps);
      await contentChanged(deps, [], await everyScreenId(deps.db));
    },
  });
  // Screens without a location run in the server's default zone: when it moves, so do they.
  onSettingsChanged(deps, async (deps, before, after) => {
    if (before.timeZone === after.timeZone) return;
    const ids = await screensWithoutLocation(deps.db);
    for (const id of ids) manifestCache(deps).delete(id);
    await bumpManifestRevision(deps, ids);
  });
  addScheduleChangeHook(deps, (deps, scheduleId, screenIds) => contentChanged(deps, [{ kind: 'schedule', id: scheduleId }], screenIds));
  // Data: a layout zone showing a source keeps it from being deleted; a screen downloads the
  // outputs of the sources its manifest shows; a changed output bumps exactly the screens using it.
  addDataSourceUsageFinder(deps, dataSourceUsages);
  addDataSourceScreenFinder(deps, screensDependingOnSource);
  addPlayerDataGuard(deps, async (deps, screenId, sourceId) => {
    const screen = await screenContext(deps.db, screenId);
    if (!screen) return false;
    return (await currentManifest(deps, screen)).dataSourceIds.has(sourceId);
  });
  addOutputChangeHook(deps, (deps, change) =>
    contentChanged(
      deps,
      change.deleted
        ? [{ kind: 'data-source', id: change.sourceId }]
        : change.viewKeys.map((key) => ({ kind: 'data-output', id: `${change.sourceId}/${key}` })),
    ),
  );
  // Widgets: a playlist item or a layout zone keeps a widget from being deleted; a screen
  // downloads the bundles its manifest lists; a new bundle bumps exactly the screens using the widget.
  addWidgetUsageFinder(deps, widgetUsages);
  addPlayerWidgetGuard(deps, async (deps, screenId, widgetId) => {
    const screen = await screenContext(deps.db, screenId);
    if (!screen) return false;
    return (await currentManifest(deps, screen)).widgetIds.has(widgetId);
  });
  addWidgetBundleChangeHook(deps, (deps, change) =>
    contentChanged(
      deps,
      change.widgetIds.map((id) => ({ kind: 'widget', id })),
    ),
  );
  addAssetChangeHook(deps, async (deps, event) => {
    const refs: DepRef[] = event.assetIds.map((id) => ({ kind: 'asset', id }));
    refs.push({ kind: 'tag-rule', id: '*' });
    await contentChanged(deps, refs);
  });
}
