import path from 'node:path';
import semver from 'semver';
import { type Db, openedDatabaseOf } from '../../platform/db/database.js';
import { type ArtifactRow, artifactRow, artifactRows, type ReleaseRow, releaseRow, type SourceRow } from './releases.repo.js';
import type { Release, ReleaseSourceView } from './releases.schemas.js';

/** Release and release source views (the contract's shapes) and where a stored artifact is. */

function view(r: ReleaseRow, artifacts: ArtifactRow[]): Release {
  return {
    id: r.id,
    family: r.family,
    version: r.version,
    channel: r.channel,
    notes: r.notes,
    source: r.source,
    sourceReleaseId: r.source_release_id,
    cached: artifacts.length > 0 && artifacts.every((a) => a.cache_state === 'cached'),
    architectures: artifacts.map((a) => ({
      architecture: a.architecture,
      kind: a.kind,
      fileName: a.file_name,
      sizeBytes: a.size_bytes,
      sha256: a.sha256,
      signed: a.signature !== null,
      cacheState: a.cache_state,
      cachedBytes: a.cache_state === 'cached' ? a.size_bytes : a.cache_bytes,
      error: a.cache_error,
    })),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Family ascending, then the newest version (semver) first. */
export function byFamilyThenNewest(a: { family: string; version: string }, b: { family: string; version: string }): number {
  if (a.family !== b.family) return a.family < b.family ? -1 : 1;
  return semver.rcompare(a.version, b.version);
}

export async function releaseViews(db: Db, rows: ReleaseRow[]): Promise<Release[]> {
  const artifacts = await artifactRows(
    db,
    rows.map((r) => r.id),
  );
  return [...rows].sort(byFamilyThenNewest).map((r) =>
    view(
      r,
      artifacts.filter((a) => a.release_id === r.id),
    ),
  );
}

/** One release in the contract's shape, or null. */
export async function releaseView(db: Db, id: string): Promise<Release | null> {
  const row = await releaseRow(db, id);
  if (!row) return null;
  return view(row, await artifactRows(db, [id]));
}

export function sourceView(s: SourceRow | undefined): ReleaseSourceView | null {
  if (!s) return null;
  const pending = s.state === 'pending';
  return {
    url: s.url,
    state: s.state,
    userCode: pending ? s.user_code : null,
    verificationUri: pending ? s.verification_uri : null,
    verificationUriComplete: pending ? s.verification_uri_complete : null,
    expiresAt: pending ? s.expires_at : null,
    intervalSec: pending ? s.interval_sec : null,
    connectedAt: s.connected_at,
    checkedAt: s.checked_at,
    error: s.error,
  };
}

/** `releases/<releaseId>/<architecture>/<file_name>`, relative to the data directory. */
export const storedPathOf = (releaseId: string, architecture: string, fileName: string) => path.posix.join('releases', releaseId, architecture, fileName);

/**
 * The stored, verified artifact of a release fitting `architecture` (exact match first, then
 * `any`) with its absolute path; null when none is stored. `dataDir` defaults to the
 * directory of the database file (`<data>/placard.db` wherever the server opens it).
 */
export async function releaseArtifact(
  db: Db,
  releaseId: string,
  architecture: string,
  dataDir?: string,
): Promise<{ row: ArtifactRow; absolutePath: string } | null> {
  const file = openedDatabaseOf(db)?.file;
  const dir = dataDir ?? (file ? path.dirname(file) : null);
  if (!dir) throw new Error('releaseArtifact: the data directory is unknown (pass dataDir)');
  for (const arch of architecture === 'any' ? ['any'] : [architecture, 'any']) {
    const row = await artifactRow(db, releaseId, arch);
    if (row?.stored_path && row.cache_state === 'cached') return { row, absolutePath: path.join(dir, row.stored_path) };
  }
  return null;
}
