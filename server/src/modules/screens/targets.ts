/**
 * Targets as bodies name them (takeovers, overrides, plugin instances, weather rules): every
 * screen, or screens, groups and locations. One schema and one existence check for all.
 */
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import type { Reference } from '../../platform/http/errors.js';
import { uuidParam as Uuid } from '../../platform/http/route.js';
import { knownTargetIds } from './targets.repo.js';

export const TargetsInput = z
  .object({
    all: z.boolean().optional(),
    screenIds: z.array(Uuid).max(1000).optional(),
    groupIds: z.array(Uuid).max(1000).optional(),
    locationIds: z.array(Uuid).max(1000).optional(),
  })
  .describe('every screen (all), or screens, groups and locations; at least one');
export type Targets = z.infer<typeof TargetsInput>;

/** The ids of `targets` that name nothing, as invalid_reference entries under `targets`. */
export async function unknownTargets(db: Db, targets: Omit<Targets, 'all'>): Promise<Reference[]> {
  const refs: Reference[] = [];
  for (const field of ['screenIds', 'groupIds', 'locationIds'] as const) {
    const ids = targets[field];
    if (!ids?.length) continue;
    const known = await knownTargetIds(db, field, ids);
    ids.forEach((id, i) => {
      if (!known.has(id)) refs.push({ path: ['targets', field, i], message: 'no such id' });
    });
  }
  return refs;
}
