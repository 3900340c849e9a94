import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { PlayerReleaseArtifactsTable, PlayerReleasesTable, ReleaseSourceTable } from '../../platform/db/schema.js';

/** The player releases' queries (migration 0460). */

export type ReleaseRow = Selectable<PlayerReleasesTable>;
export type ArtifactRow = Selectable<PlayerReleaseArtifactsTable>;
export type SourceRow = Selectable<ReleaseSourceTable>;

export async function releaseRows(db: Db, filter: { family?: string; channel?: string } = {}): Promise<ReleaseRow[]> {
  let q = db.selectFrom('player_releases').selectAll();
  if (filter.family) q = q.where('family', '=', filter.family as ReleaseRow['family']);
  if (filter.channel) q = q.where('channel', '=', filter.channel as ReleaseRow['channel']);
  return q.execute();
}

export async function releaseRow(db: Db, id: string): Promise<ReleaseRow | undefined> {
  return db.selectFrom('player_releases').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function releaseOf(db: Db, family: string, version: string): Promise<ReleaseRow | undefined> {
  return db
    .selectFrom('player_releases')
    .selectAll()
    .where('family', '=', family as ReleaseRow['family'])
    .where('version', '=', version)
    .executeTakeFirst();
}

export async function artifactRows(db: Db, releaseIds: readonly string[]): Promise<ArtifactRow[]> {
  if (releaseIds.length === 0) return [];
  return db.selectFrom('player_release_artifacts').selectAll().where('release_id', 'in', releaseIds).orderBy('architecture').execute();
}

export async function artifactRow(db: Db, releaseId: string, architecture: string): Promise<ArtifactRow | undefined> {
  return db.selectFrom('player_release_artifacts').selectAll().where('release_id', '=', releaseId).where('architecture', '=', architecture).executeTakeFirst();
}

/** Inserts the release when new (its row given), then the artifact; in one transaction. False when the artifact's architecture exists. */
export async function insertArtifact(
  db: Db,
  release: Insertable<PlayerReleasesTable> | null,
  artifact: Insertable<PlayerReleaseArtifactsTable>,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (release) await trx.insertInto('player_releases').values(release).execute();
    const taken = await trx
      .selectFrom('player_release_artifacts')
      .select('architecture')
      .where('release_id', '=', artifact.release_id)
      .where('architecture', '=', artifact.architecture)
      .executeTakeFirst();
    if (taken) return false;
    await trx.insertInto('player_release_artifacts').values(artifact).execute();
    await trx.updateTable('player_releases').set({ updated_at: artifact.updated_at }).where('id', '=', artifact.release_id).execute();
    return true;
  });
}

/** A release the source offers, with its artifacts (all `remote`); nothing when the family and version are known. */
export async function insertRemoteRelease(
  db: Db,
  release: Insertable<PlayerReleasesTable>,
  artifacts: Insertable<PlayerReleaseArtifactsTable>[],
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const known = await trx
      .selectFrom('player_releases')
      .select('id')
      .where('family', '=', release.family)
      .where('version', '=', release.version)
      .executeTakeFirst();
    if (known) return false;
    await trx.insertInto('player_releases').values(release).execute();
    if (artifacts.length) await trx.insertInto('player_release_artifacts').values(artifacts).execute();
    return true;
  });
}

export async function updateArtifact(db: Db, releaseId: string, architecture: string, patch: Updateable<PlayerReleaseArtifactsTable>): Promise<void> {
  await db.updateTable('player_release_artifacts').set(patch).where('release_id', '=', releaseId).where('architecture', '=', architecture).execute();
}

/** Artifacts left `downloading` with nobody downloading them (a restart), to resume. */
export async function downloadingArtifacts(db: Db): Promise<ArtifactRow[]> {
  return db.selectFrom('player_release_artifacts').selectAll().where('cache_state', '=', 'downloading').execute();
}

export async function sourceRow(db: Db): Promise<SourceRow | undefined> {
  return db.selectFrom('release_source').selectAll().where('id', '=', 1).executeTakeFirst();
}

export async function saveSource(db: Db, row: Omit<Insertable<ReleaseSourceTable>, 'id'>): Promise<void> {
  await db
    .insertInto('release_source')
    .values({ ...row, id: 1 })
    .onConflict((oc) => oc.column('id').doUpdateSet(row))
    .execute();
}

export async function updateSource(db: Db, patch: Updateable<ReleaseSourceTable>): Promise<void> {
  await db.updateTable('release_source').set(patch).where('id', '=', 1).execute();
}

export async function deleteSource(db: Db): Promise<boolean> {
  const res = await db.deleteFrom('release_source').where('id', '=', 1).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** What the screens run: family, architecture and version of every screen that reported (revoked ones left out). */
export async function screenPlayers(db: Db): Promise<{ player_family: string | null; player_architecture: string | null; player_version: string | null }[]> {
  return db
    .selectFrom('screens')
    .select(['player_family', 'player_architecture', 'player_version'])
    .where('revoked_at', 'is', null)
    .where('player_version', 'is not', null)
    .execute();
}

/** Moves next_poll_at from `from` to `to` when nobody else did: true when this caller may ask the token endpoint. */
export async function claimPoll(db: Db, from: string | null, to: string): Promise<boolean> {
  let q = db.updateTable('release_source').set({ next_poll_at: to }).where('id', '=', 1).where('state', '=', 'pending');
  q = from === null ? q.where('next_poll_at', 'is', null) : q.where('next_poll_at', '=', from);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
