import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';

/**
 * The seams other modules (widgets, outputs) code against, per app (deps.scope): each add
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

interface Hooks {
  usageFinders: Set<DataSourceUsageFinder>;
  changeHooks: Set<DataChangeHook>;
}

const HOOKS = new ScopeKey<Hooks>('data-sources.hooks', () => ({ usageFinders: new Set(), changeHooks: new Set() }));
const hooksOf = (deps: AppDeps) => deps.scope.get(HOOKS);

function add<T>(set: Set<T>, entry: T): () => void {
  set.add(entry);
  return () => set.delete(entry);
}
