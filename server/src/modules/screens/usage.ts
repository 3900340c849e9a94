import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';

/** One thing that names a screen (a schedule targeting it directly, ...), for DELETE's 409. */
export interface ScreenUsage {
  type: string;
  id: string;
  name: string | null;
}

/**
 * What other modules keep about a screen, registered by them (the screens module does not
 * read their tables): `usages` block a delete (409 naming them); `forget` removes their
 * leftovers (assignments, manifest dependencies) once the screen is gone.
 */
export interface ScreenReferences {
  usages(db: Db, screenId: string): Promise<ScreenUsage[]>;
  forget(db: Db, screenId: string): Promise<void>;
}

const REGISTRY = new ScopeKey('screens.references', () => new Map<string, ScreenReferences>());

/** A key registered again replaces the earlier entry. */
export function registerScreenReferences(deps: AppDeps, key: string, refs: ScreenReferences): void {
  deps.scope.get(REGISTRY).set(key, refs);
}

export async function screenUsages(deps: AppDeps, screenId: string): Promise<ScreenUsage[]> {
  return (await Promise.all([...deps.scope.get(REGISTRY).values()].map((r) => r.usages(deps.db, screenId)))).flat();
}

export async function forgetScreen(deps: AppDeps, screenId: string): Promise<void> {
  for (const r of deps.scope.get(REGISTRY).values()) await r.forget(deps.db, screenId);
}
