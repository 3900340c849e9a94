import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';

/**
 * The seams other modules (content, widgets) code against, per app (deps.scope): each add
 * returns a function that removes the entry.
 */

/** One place a data source is used, for DELETE's 409 answer and diagnostics. */
export interface DataSourceUsage {
  sourceId: string;
  /** What uses it: 'widget', 'output', ... */
  type: string;
  id: string;
  name: string | null;
}

export type DataSourceUsageFinder = (db: Db, sourceIds: readonly string[]) => Promise<DataSourceUsage[]>;

/** A module whose things use data sources registers a finder; deleting a used source answers 409 naming the uses. */
export function addDataSourceUsageFinder(deps: AppDeps, finder: DataSourceUsageFinder): () => void {
  return add(hooksOf(deps).usageFinders, finder);
}

/** Every use of the sources, from every finder; `db` is the transaction when called inside one. */
export async function findDataSourceUsages(deps: AppDeps, sourceIds: readonly string[], db: Db = deps.db): Promise<DataSourceUsage[]> {
  if (sourceIds.length === 0) return [];
  const all = [];
  for (const find of hooksOf(deps).usageFinders) all.push(await find(db, sourceIds));
  return all.flat();
}

/** A source's data changed (a fetch brought new rows, a table's rows or columns were edited), or the source was deleted. */
export interface DataChange {
  sourceId: string;
  change: 'data' | 'deleted';
  /** The snapshot's new revision (null when deleted). */
  revision: number | null;
}

/** Called after the change is committed (outputs rebuild from the snapshot). Errors are logged, never thrown back. */
export type DataChangeHook = (deps: AppDeps, change: DataChange) => Promise<void> | void;

export function addDataChangeHook(deps: AppDeps, hook: DataChangeHook): () => void {
  return add(hooksOf(deps).changeHooks, hook);
}

export async function fireDataChange(deps: AppDeps, change: DataChange): Promise<void> {
  for (const hook of hooksOf(deps).changeHooks) {
    try {
      await hook(deps, change);
    } catch (err) {
      deps.logger.error({ err, sourceId: change.sourceId }, 'data change hook failed');
    }
  }
}

/**
 * Outputs whose current version changed (rebuilt with other rows), or every output of a
 * deleted source (`viewKeys` empty then): the manifests of the screens using them change.
 */
export interface OutputChange {
  sourceId: string;
  /** The view keys whose version changed ('' is the whole source). */
  viewKeys: string[];
  deleted: boolean;
}

export type OutputChangeHook = (deps: AppDeps, change: OutputChange) => Promise<void> | void;

export function addOutputChangeHook(deps: AppDeps, hook: OutputChangeHook): () => void {
  return add(hooksOf(deps).outputHooks, hook);
}

export async function fireOutputChange(deps: AppDeps, change: OutputChange): Promise<void> {
  for (const hook of hooksOf(deps).outputHooks) {
    try {
      await hook(deps, change);
    } catch (err) {
      deps.logger.error({ err, sourceId: change.sourceId }, 'output change hook failed');
    }
  }
}

/**
 * Decides whether a screen may download a source's output (`GET /player/data-outputs/{id}`):
 * the content module answers whether the screen's current manifest uses the source. With
 * none registered, no screen may (outputs are only for manifests that list them).
 */
export type PlayerDataGuard = (deps: AppDeps, screenId: string, sourceId: string) => Promise<boolean>;

export function addPlayerDataGuard(deps: AppDeps, guard: PlayerDataGuard): () => void {
  return add(hooksOf(deps).playerGuards, guard);
}

export async function screenMayDownloadData(deps: AppDeps, screenId: string, sourceId: string): Promise<boolean> {
  for (const guard of hooksOf(deps).playerGuards) if (await guard(deps, screenId, sourceId)) return true;
  return false;
}

/** The screens whose current manifest shows a source (the content module answers; diagnostics list them). */
export type DataSourceScreenFinder = (db: Db, sourceId: string) => Promise<{ id: string; name: string }[]>;

export function addDataSourceScreenFinder(deps: AppDeps, finder: DataSourceScreenFinder): () => void {
  return add(hooksOf(deps).screenFinders, finder);
}

export async function screensShowing(deps: AppDeps, sourceId: string): Promise<{ id: string; name: string }[]> {
  const all = await Promise.all([...hooksOf(deps).screenFinders].map((f) => f(deps.db, sourceId)));
  return all.flat();
}

/** More kinds of content for GET /content-definitions (the widgets module lists its types). */
export interface ContentDefinition {
  id: string;
  category: 'asset' | 'data' | 'widget';
  name: string;
  description: string;
  schema: Record<string, unknown>;
  settingsSchema?: Record<string, unknown>;
}
export type ContentDefinitionLister = () => ContentDefinition[];

export function addContentDefinitions(deps: AppDeps, lister: ContentDefinitionLister): () => void {
  return add(hooksOf(deps).definitionListers, lister);
}

export function moreContentDefinitions(deps: AppDeps): ContentDefinition[] {
  return [...hooksOf(deps).definitionListers].flatMap((l) => l());
}

interface Hooks {
  definitionListers: Set<ContentDefinitionLister>;
  usageFinders: Set<DataSourceUsageFinder>;
  changeHooks: Set<DataChangeHook>;
  outputHooks: Set<OutputChangeHook>;
  playerGuards: Set<PlayerDataGuard>;
  screenFinders: Set<DataSourceScreenFinder>;
}

const HOOKS = new ScopeKey<Hooks>('data-sources.hooks', () => ({
  definitionListers: new Set(),
  usageFinders: new Set(),
  changeHooks: new Set(),
  outputHooks: new Set(),
  playerGuards: new Set(),
  screenFinders: new Set(),
}));
const hooksOf = (deps: AppDeps) => deps.scope.get(HOOKS);

function add<T>(set: Set<T>, entry: T): () => void {
  set.add(entry);
  return () => set.delete(entry);
}
