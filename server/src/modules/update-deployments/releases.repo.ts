/**
 * The release a deployment rolls out, through the player-releases module's reads (installed
 * before this one), and the deployments' own rule for which artifact fits a screen.
 */
import type { Db } from '../../platform/db/database.js';
import { type ArtifactRow, artifactRows, type ReleaseRow, releaseRow as storedRelease } from '../player-releases/index.js';

export type { ArtifactRow, ReleaseRow };

export async function releaseRow(db: Db, id: string): Promise<ReleaseRow | null> {
  return (await storedRelease(db, id)) ?? null;
}

/** Several releases by id (for lists). */
export async function releaseRows(db: Db, ids: readonly string[]): Promise<Map<string, ReleaseRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('player_releases')
    .selectAll()
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Map(rows.map((r) => [r.id, r]));
}

export function releaseArtifacts(db: Db, releaseId: string): Promise<ArtifactRow[]> {
  return artifactRows(db, [releaseId]);
}

/**
 * The artifact fitting a screen's architecture: the exact one first, then `any`; a screen
 * that reports no architecture (only edge players do) takes `any`, else the release's only
 * artifact when it has one. Null when none fits.
 */
export function fitArtifact(artifacts: readonly ArtifactRow[], architecture: string | null): ArtifactRow | null {
  if (architecture) {
    const exact = artifacts.find((a) => a.architecture === architecture);
    if (exact) return exact;
  }
  const any = artifacts.find((a) => a.architecture === 'any');
  if (any) return any;
  if (!architecture && artifacts.length === 1) return artifacts[0]!;
  return null;
}
