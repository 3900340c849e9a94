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

/** The architectures a player may ask for (`?architecture=`), as the heartbeat knows them. */
export const PLAYER_ARCHITECTURES = ['x86_64', 'aarch64'] as const;
export type PlayerArchitecture = (typeof PLAYER_ARCHITECTURES)[number];

/**
 * The artifact fitting a recorded architecture: the exact one first, then `any`. Without one
 * (only edge players report it): `any`, else the release's only artifact. Null when none fits.
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

/**
 * The artifacts a screen could be served (docs/update-deployments.md "Architectures"): with a
 * recorded architecture, the one fitting it; without one (desktop-linux, android, web), every
 * artifact of the release, since the player names its architecture when it asks. Empty: the
 * screen is skipped (`architecture_mismatch`).
 */
export function usableArtifacts(artifacts: readonly ArtifactRow[], recorded: string | null): ArtifactRow[] {
  if (!recorded) return [...artifacts];
  const fit = fitArtifact(artifacts, recorded);
  return fit ? [fit] : [];
}

/** Why no artifact is answered: 404 (none for that architecture) or 400 (the player must say which). */
export type ArtifactChoice = { artifact: ArtifactRow } | { missing: string } | { ambiguous: string[] };

/**
 * The artifact a player asking with `?architecture=` (or not) gets. A recorded architecture
 * (edge) must be the one asked for, if any. Asked: the exact one, then `any`. Not asked: the
 * recorded one's fit, else `any`, else the only artifact, else ambiguous (the choices).
 */
export function chooseArtifact(artifacts: readonly ArtifactRow[], recorded: string | null, requested: string | undefined): ArtifactChoice {
  if (recorded && requested && requested !== recorded) return { missing: requested };
  const wanted = requested ?? recorded;
  if (wanted) {
    const fit = artifacts.find((a) => a.architecture === wanted) ?? artifacts.find((a) => a.architecture === 'any');
    return fit ? { artifact: fit } : { missing: wanted };
  }
  const fit = fitArtifact(artifacts, null);
  if (fit) return { artifact: fit };
  return { ambiguous: artifacts.map((a) => a.architecture).sort() };
}
