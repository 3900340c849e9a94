import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';
import { ApiError } from '../../platform/http/errors.js';

/** What other modules may point at: a screen, a group or a location (schedules target all three). */
export type TargetKind = 'screen' | 'group' | 'location';

/** One thing that names a screen, group or location (a schedule targeting it, ...), for DELETE's 409. */
export interface TargetUsage {
  type: string;
  id: string;
  name: string | null;
}

/**
 * What other modules keep about a screen, group or location, registered by them (the
 * screens module does not read their tables): `usages` block a delete (409 naming them);
 * `forget` removes their leftovers (assignments, manifest dependencies) with it. A delete
 * runs both in its transaction (`db`), so nothing can start naming what is being deleted
 * between the check and the delete.
 */
export interface TargetReferences {
  usages(db: Db, kind: TargetKind, id: string): Promise<TargetUsage[]>;
  forget(db: Db, kind: TargetKind, id: string): Promise<void>;
}

const REGISTRY = new ScopeKey('screens.references', () => new Map<string, TargetReferences>());

/** A key registered again replaces the earlier entry. */
export function registerTargetReferences(deps: AppDeps, key: string, refs: TargetReferences): void {
  deps.scope.get(REGISTRY).set(key, refs);
}

export async function targetUsages(deps: AppDeps, db: Db, kind: TargetKind, id: string): Promise<TargetUsage[]> {
  const all: TargetUsage[] = [];
  for (const r of deps.scope.get(REGISTRY).values()) all.push(...(await r.usages(db, kind, id)));
  return all;
}

export async function forgetTarget(deps: AppDeps, db: Db, kind: TargetKind, id: string): Promise<void> {
  for (const r of deps.scope.get(REGISTRY).values()) await r.forget(db, kind, id);
}

/**
 * Refuses (409 `conflict`, `details.usedBy`) to delete a screen, group or location that
 * something still names; `what` is how the message calls it ('Group "Lobby"').
 */
export async function refuseIfUsed(deps: AppDeps, db: Db, kind: TargetKind, id: string, what: string): Promise<void> {
  const usedBy = await targetUsages(deps, db, kind, id);
  if (!usedBy.length) return;
  const names = usedBy.slice(0, 5).map((u) => `${u.type} ${u.name ? `"${u.name}"` : u.id}`);
  throw new ApiError('conflict', `${what} is named by ${names.join(', ')}${usedBy.length > 5 ? ` and ${usedBy.length - 5} more` : ''}; change those first`, {
    details: { usedBy },
  });
}
