import type { Db } from '../../platform/db/database.js';

/** The web release of `version` (semver-clean) whose build archive is stored: its id and stored path. */
export async function storedWebRelease(db: Db, version: string): Promise<{ id: string; storedPath: string | null } | undefined> {
  return db
    .selectFrom('player_releases as r')
    .innerJoin('player_release_artifacts as a', 'a.release_id', 'r.id')
    .select(['r.id as id', 'a.stored_path as storedPath'])
    .where('r.family', '=', 'web')
    .where('r.version', '=', version)
    .where('a.kind', '=', 'web')
    .where('a.stored_path', 'is not', null)
    .executeTakeFirst();
}
