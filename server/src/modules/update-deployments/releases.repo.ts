// TODO(merge): use player-releases' releaseArtifact/releaseView
/**
 * The release a deployment rolls out, read straight from migration 0460's tables: this file
 * only stands in for the player-releases module's releaseArtifact/releaseView until that
 * branch lands. `fitArtifact` (the choice for a screen without an architecture) may stay.
 */
import type { Db } from '../../platform/db/database.js';
import type { PlayerReleaseArtifactsTable, PlayerReleasesTable } from '../../platform/db/schema/releases.js';

export type ReleaseRow = Pick<PlayerReleasesTable, 'id' | 'family' | 'version' | 'channel' | 'notes'>;
export type ArtifactRow = PlayerReleaseArtifactsTable;

export async function releaseRow(db: Db, id: string): Promise<ReleaseRow | null> {
  return (await db.selectFrom('player_releases').select(['id', 'family', 'version', 'channel', 'notes']).where('id', '=', id).executeTakeFirst()) ?? null;
}

/** Several releases by id (for lists). */
export async function releaseRows(db: Db, ids: readonly string[]): Promise<Map<string, ReleaseRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('player_releases')
    .select(['id', 'family', 'version', 'channel', 'notes'])
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Map(rows.map((r) => [r.id, r]));
}

export async function releaseArtifacts(db: Db, releaseId: string): Promise<ArtifactRow[]> {
  return db.selectFrom('player_release_artifacts').selectAll().where('release_id', '=', releaseId).orderBy('architecture').execute();
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
