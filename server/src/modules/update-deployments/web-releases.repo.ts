import type { Db } from '../../platform/db/database.js';

/** The web release of `version` (semver-clean) whose build archive is stored: its id, stored path and sha256. */
export async function storedWebRelease(db: Db, version: string): Promise<{ id: string; storedPath: string | null; sha256: string } | undefined> {
  return db
    .selectFrom('player_releases as r')
    .innerJoin('player_release_artifacts as a', 'a.release_id', 'r.id')
    .select(['r.id as id', 'a.stored_path as storedPath', 'a.sha256 as sha256'])
    .where('r.family', '=', 'web')
    .where('r.version', '=', version)
    .where('a.kind', '=', 'web')
    .where('a.stored_path', 'is not', null)
    .executeTakeFirst();
}
