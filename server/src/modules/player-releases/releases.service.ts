import type { Db } from '../../platform/db/database.js';
import { releaseRows, sourceRow } from './releases.repo.js';
import type { Release, ReleaseSourceView } from './releases.schemas.js';
import { releaseViews, sourceView } from './views.js';

/** `GET /player-releases`: the releases (family ascending, newest first) and the release source. */
export async function listReleases(
  db: Db,
  filter: { family?: string; channel?: string },
): Promise<{ releases: Release[]; releaseSource: ReleaseSourceView | null }> {
  const [rows, source] = await Promise.all([releaseRows(db, filter), sourceRow(db)]);
  return { releases: await releaseViews(db, rows), releaseSource: sourceView(source) };
}
