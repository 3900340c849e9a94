import { addConsoleScriptHash } from '../../platform/http/console.js';
import type { PlacardModule } from '../../platform/module.js';
import { addContentDefinitions, addDataChangeHook, addDataSourceUsageFinder, addOutputChangeHook } from '../data-sources/index.js';
import { pruneDrawnPreviews } from './preview.js';
import { RUNTIME_SHA256 } from './runtime.js';
import { widgetDefinitions } from './types.js';
import { onSourceChange, widgetSourceUsages } from './widgets.service.js';
import { widgetRoutes } from './widgets.routes.js';

/**
 * Widgets (issue 19, spec 4.5, docs/widgets.md): templates plus settings, optionally bound to
 * a data-source view, compiled on the server into self-contained HTML bundles that players
 * render offline. The contract other modules code against is below (content: manifests,
 * playlists, layouts).
 */
export const widgetsModule: PlacardModule = {
  name: 'widgets',
  routes: [...widgetRoutes],
  install({ deps }) {
    // The editor's preview frame inherits the console page's policy: let the runtime run there too.
    addConsoleScriptHash(deps, RUNTIME_SHA256);
    // Drawn preview images of bundle versions no longer kept leave the data directory.
    deps.periodic.every('widgets.preview-prune', 60 * 60_000, () => pruneDrawnPreviews(deps).then(() => undefined));
    // A source a widget shows cannot be deleted from under it (409 naming the widget).
    addDataSourceUsageFinder(deps, widgetSourceUsages);
    // GET /content-definitions lists the widget types (widget:<type>) with their settings.
    addContentDefinitions(deps, widgetDefinitions);
    // Outputs are rebuilt first (data-sources' own hook); then the widgets showing them.
    addOutputChangeHook(deps, (deps, change) => (change.deleted ? undefined : onSourceChange(deps, change.sourceId, change.viewKeys)));
    addDataChangeHook(deps, (deps, change) => (change.change === 'data' ? onSourceChange(deps, change.sourceId, null) : undefined));
  },
};

export {
  addPlayerWidgetGuard,
  addWidgetBundleChangeHook,
  addWidgetUsageFinder,
  type PlayerWidgetGuard,
  type WidgetBundleChange,
  type WidgetBundleChangeHook,
  type WidgetUsage,
  type WidgetUsageFinder,
} from './hooks.js';
export { existingWidgetIds, publishedWidgetIds, type WidgetBundleAnswer, type WidgetBundleRef, widgetBundleFor, widgetOfBundle } from './widgets.service.js';
export { widgetPublishable } from './widgets.publishable.js';
export type { WidgetSnapshot } from './widgets.edits.js';
