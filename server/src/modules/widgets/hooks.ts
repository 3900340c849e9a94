import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';

/**
 * The seams other modules (content) code against, per app (deps.scope), as in data-sources'
 * hooks: each add returns a function that removes the entry.
 */

export interface WidgetUsage {
  widgetId: string;
  type: string;
  id: string;
  name: string | null;
}
export type WidgetUsageFinder = (db: Db, widgetIds: readonly string[]) => Promise<WidgetUsage[]>;

export interface WidgetBundleChange {
  widgetIds: string[];
  deleted: boolean;
}
export type WidgetBundleChangeHook = (deps: AppDeps, change: WidgetBundleChange) => Promise<void> | void;

export type PlayerWidgetGuard = (deps: AppDeps, screenId: string, widgetId: string) => Promise<boolean>;

interface Hooks {
  usageFinders: Set<WidgetUsageFinder>;
  bundleHooks: Set<WidgetBundleChangeHook>;
  playerGuards: Set<PlayerWidgetGuard>;
}

const HOOKS = new ScopeKey<Hooks>('widgets.hooks', () => ({ usageFinders: new Set(), bundleHooks: new Set(), playerGuards: new Set() }));
const hooksOf = (deps: AppDeps) => deps.scope.get(HOOKS);

function add<T>(set: Set<T>, entry: T): () => void {
  set.add(entry);
  return () => set.delete(entry);
}

/** DELETE /widgets/{id} answers 409 with details.usedBy = every finder's answers. */
export function addWidgetUsageFinder(deps: AppDeps, finder: WidgetUsageFinder): () => void {
  return add(hooksOf(deps).usageFinders, finder);
}

export async function findWidgetUsages(deps: AppDeps, widgetIds: readonly string[], db: Db = deps.db): Promise<WidgetUsage[]> {
  if (widgetIds.length === 0) return [];
  const all: WidgetUsage[][] = [];
  for (const find of hooksOf(deps).usageFinders) all.push(await find(db, widgetIds));
  return all.flat();
}

/** Fired after commit when widgets' current bundles changed (edit, data change, delete). */
export function addWidgetBundleChangeHook(deps: AppDeps, hook: WidgetBundleChangeHook): () => void {
  return add(hooksOf(deps).bundleHooks, hook);
}

export async function fireWidgetBundleChange(deps: AppDeps, change: WidgetBundleChange): Promise<void> {
  if (change.widgetIds.length === 0) return;
  for (const hook of hooksOf(deps).bundleHooks) {
    try {
      await hook(deps, change);
    } catch (err) {
      deps.logger.error({ err, widgetIds: change.widgetIds }, 'widget bundle change hook failed');
    }
  }
}

/** GET /player/widget-bundles/{bundleId} answers 404 unless a guard says the screen's manifest uses the widget. */
export function addPlayerWidgetGuard(deps: AppDeps, guard: PlayerWidgetGuard): () => void {
  return add(hooksOf(deps).playerGuards, guard);
}

export async function screenMayDownloadWidget(deps: AppDeps, screenId: string, widgetId: string): Promise<boolean> {
  for (const guard of hooksOf(deps).playerGuards) if (await guard(deps, screenId, widgetId)) return true;
  return false;
}
