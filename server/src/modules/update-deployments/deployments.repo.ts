/** The update deployments' queries (migration 0460): deployments, their screens, offers. */
import type { Updateable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { prepared } from '../../platform/db/prepared.js';
import type { DeploymentScreenState, UpdateDeploymentScreensTable, UpdateDeploymentsTable } from '../../platform/db/schema/releases.js';

export type DeploymentRow = UpdateDeploymentsTable;
export type DeploymentScreenRow = UpdateDeploymentScreensTable;

/** States in which the screen holds the offer (it may download and install). */
export const OFFERED_STATES: readonly DeploymentScreenState[] = ['offered', 'downloading', 'downloaded', 'installing'];
/** States not yet settled: the screen is still to be offered or has the offer. */
export const OPEN_STATES: readonly DeploymentScreenState[] = ['pending', ...OFFERED_STATES];

/** What the rollout needs to know of a screen. */
export interface ScreenFacts {
  id: string;
  name: string;
  family: string | null;
  architecture: string | null;
  version: string | null;
  /** The location's time zone; null without a location. */
  timeZone: string | null;
}

export async function screenFacts(db: Db, ids: readonly string[]): Promise<ScreenFacts[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('screens')
    .leftJoin('locations', 'locations.id', 'screens.location_id')
    .select(['screens.id', 'screens.name', 'screens.player_family', 'screens.player_architecture', 'screens.player_version', 'locations.time_zone'])
    .where('screens.id', 'in', [...ids])
    .orderBy('screens.name')
    .orderBy('screens.id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    family: r.player_family,
    architecture: r.player_architecture,
    version: r.player_version,
    timeZone: r.time_zone ?? null,
  }));
}

/**
 * Inserts a deployment and its screens in one transaction. The eligible screens leave any
 * other running or paused deployment where they are not settled (`cancelled`, `superseded`):
 * answers those deployments' ids.
 */
export async function insertDeployment(db: Db, row: DeploymentRow, screens: DeploymentScreenRow[]): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    const eligible = screens.filter((s) => s.state !== 'skipped').map((s) => s.screen_id);
    let superseded: string[] = [];
    if (eligible.length) {
      const others = await trx
        .selectFrom('update_deployment_screens')
        .innerJoin('update_deployments', 'update_deployments.id', 'update_deployment_screens.deployment_id')
        .select('update_deployment_screens.deployment_id')
        .distinct()
        .where('update_deployment_screens.screen_id', 'in', eligible)
        .where('update_deployment_screens.state', 'in', OPEN_STATES)
        .where('update_deployments.state', 'in', ['running', 'paused'])
        .execute();
      superseded = others.map((o) => o.deployment_id);
      if (superseded.length) {
        await trx
          .updateTable('update_deployment_screens')
          .set({ state: 'cancelled', error: 'superseded', updated_at: row.created_at })
          .where('deployment_id', 'in', superseded)
          .where('screen_id', 'in', eligible)
          .where('state', 'in', OPEN_STATES)
          .execute();
        await trx
          .updateTable('update_deployments')
          .set((eb) => ({ revision: eb('revision', '+', 1), updated_at: row.created_at }))
          .where('id', 'in', superseded)
          .execute();
      }
    }
    await trx.insertInto('update_deployments').values(row).execute();
    for (let i = 0; i < screens.length; i += 200)
      await trx
        .insertInto('update_deployment_screens')
        .values(screens.slice(i, i + 200))
        .execute();
    return superseded;
  });
}

export async function deploymentRow(db: Db, id: string): Promise<DeploymentRow | null> {
  return (await db.selectFrom('update_deployments').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

/** Every deployment, newest first. */
export async function deploymentRows(db: Db): Promise<DeploymentRow[]> {
  return db.selectFrom('update_deployments').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

/** The deployments the tick looks at. */
export async function liveDeploymentIds(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('update_deployments').select('id').where('state', 'in', ['running', 'paused']).orderBy('created_at').execute();
  return rows.map((r) => r.id);
}

export type ScreenEntry = DeploymentScreenRow & { name: string; current_version: string | null; time_zone: string | null };

/** A deployment's screens with their names, what they run now and their time zone. */
export async function deploymentScreens(db: Db, deploymentId: string): Promise<ScreenEntry[]> {
  return db
    .selectFrom('update_deployment_screens as d')
    .innerJoin('screens', 'screens.id', 'd.screen_id')
    .leftJoin('locations', 'locations.id', 'screens.location_id')
    .selectAll('d')
    .select(['screens.name', 'screens.player_version as current_version', 'locations.time_zone'])
    .where('d.deployment_id', '=', deploymentId)
    .orderBy('d.wave')
    .orderBy('screens.name')
    .orderBy('d.screen_id')
    .execute();
}

/** Counts of each screen state in several deployments. */
export async function stateCounts(db: Db, ids: readonly string[]): Promise<Map<string, Map<string, number>>> {
  const out = new Map<string, Map<string, number>>();
  if (ids.length === 0) return out;
  const rows = await db
    .selectFrom('update_deployment_screens')
    .select(['deployment_id', 'state', (eb) => eb.fn.countAll<number>().as('n')])
    .where('deployment_id', 'in', [...ids])
    .groupBy(['deployment_id', 'state'])
    .execute();
  for (const r of rows) {
    if (!out.has(r.deployment_id)) out.set(r.deployment_id, new Map());
    out.get(r.deployment_id)!.set(r.state, Number(r.n));
  }
  return out;
}

export async function deploymentScreen(db: Db, deploymentId: string, screenId: string): Promise<DeploymentScreenRow | null> {
  return (
    (await db
      .selectFrom('update_deployment_screens')
      .selectAll()
      .where('deployment_id', '=', deploymentId)
      .where('screen_id', '=', screenId)
      .executeTakeFirst()) ?? null
  );
}

/** Changes a deployment and bumps its revision. */
export async function updateDeployment(db: Db, id: string, patch: Updateable<DeploymentRow>, now: string): Promise<void> {
  await db
    .updateTable('update_deployments')
    .set((eb) => ({ ...patch, revision: eb('revision', '+', 1), updated_at: now }))
    .where('id', '=', id)
    .execute();
}

/**
 * Changes screens of a deployment that are in one of `from` (all states when empty):
 * answers the screens changed.
 */
export async function updateScreens(
  db: Db,
  deploymentId: string,
  screenIds: readonly string[] | null,
  from: readonly DeploymentScreenState[],
  patch: Updateable<DeploymentScreenRow>,
): Promise<string[]> {
  if (screenIds && screenIds.length === 0) return [];
  let q = db.updateTable('update_deployment_screens').set(patch).where('deployment_id', '=', deploymentId);
  if (screenIds) q = q.where('screen_id', 'in', [...screenIds]);
  if (from.length) q = q.where('state', 'in', [...from]);
  const rows = await q.returning('screen_id').execute();
  return rows.map((r) => r.screen_id);
}

/** A screen's newest offer: its offered row in a running or paused deployment (one row). */
function offerQuery(db: Db, screenId: string) {
  return db
    .selectFrom('update_deployment_screens as d')
    .innerJoin('update_deployments as u', 'u.id', 'd.deployment_id')
    .innerJoin('player_releases as r', 'r.id', 'u.release_id')
    .select(['u.id as deploymentId', 'r.id as releaseId', 'r.version', 'r.family', 'r.channel', 'r.notes'])
    .where('d.screen_id', '=', screenId)
    .where('d.state', 'in', OFFERED_STATES)
    .where('u.state', 'in', ['running', 'paused'])
    .orderBy('d.offered_at', 'desc')
    .orderBy('u.created_at', 'desc')
    .limit(1);
}

// Every manifest build asks for the screen's offer (and a refetch burst after a change asks
// for 10,000 of them): compiled once.
const offerOfScreen = prepared((db: Db, screenId: string) => offerQuery(db, screenId));
const offerOfRelease = prepared((db: Db, screenId: string, releaseId: string) => offerQuery(db, screenId).where('r.id', '=', releaseId));

// Whether the screen has an offered row at all: an index probe (~2 µs), where the offer query
// itself costs ~11 µs even when it finds nothing (its ORDER BY sets up a sorter). Most screens
// have no offer most of the time.
const anyOffered = prepared((db: Db, screenId: string) =>
  db.selectFrom('update_deployment_screens').select('screen_id').where('screen_id', '=', screenId).where('state', 'in', OFFERED_STATES).limit(1),
);

/** The update offered to the screen (of `releaseId` when given), or null. */
export async function offerRow(db: Db, screenId: string, releaseId?: string) {
  if ((await anyOffered(db, screenId)).rows.length === 0) return null;
  return (releaseId ? await offerOfRelease(db, screenId, releaseId) : await offerOfScreen(db, screenId)).rows[0] ?? null;
}

/** The web releases a screen installed through deployments. */
export async function installedWebReleases(db: Db, screenId: string): Promise<{ id: string; version: string }[]> {
  return db
    .selectFrom('update_deployment_screens as d')
    .innerJoin('update_deployments as u', 'u.id', 'd.deployment_id')
    .innerJoin('player_releases as r', 'r.id', 'u.release_id')
    .select(['r.id', 'r.version'])
    .where('d.screen_id', '=', screenId)
    .where('d.state', '=', 'installed')
    .where('r.family', '=', 'web')
    .execute();
}
