/** Presentation networks' queries (migration 0410). */
import type { Db } from '../../platform/db/database.js';
import { prepared } from '../../platform/db/prepared.js';
import { afterCursor } from '../../platform/http/pagination.js';
import type { PresentationNetworksTable } from '../../platform/db/schema.js';

export type NetworkRow = PresentationNetworksTable;
export interface MemberRow {
  network_id: string;
  screen_id: string;
  position: number;
  leader: number;
  name: string;
  manifest_revision: number;
  last_seen_ms: number | null;
  expected_interval_sec: number;
}

export function getNetworkRow(db: Db, id: string) {
  return db.selectFrom('presentation_networks').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listNetworkRows(db: Db, cursor: string | undefined, limit: number) {
  return db
    .selectFrom('presentation_networks')
    .selectAll()
    .where(afterCursor('name', 'id', 'asc', cursor))
    .orderBy('name')
    .orderBy('id')
    .limit(limit + 1)
    .execute();
}

export async function insertNetwork(db: Db, row: NetworkRow): Promise<void> {
  await db.insertInto('presentation_networks').values(row).execute();
}

/** Writes name (and a new epoch when given) if the revision is still `revision`; answers whether it did. */
export async function updateNetwork(db: Db, id: string, revision: number, set: { name?: string; epoch?: string; updated_at: string }): Promise<boolean> {
  const r = await db
    .updateTable('presentation_networks')
    .set({ ...set, revision: revision + 1 })
    .where('id', '=', id)
    .where('revision', '=', revision)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function bumpNetworkRevision(db: Db, id: string, updatedAt: string): Promise<void> {
  await db
    .updateTable('presentation_networks')
    .set((eb) => ({ revision: eb('revision', '+', 1), updated_at: updatedAt }))
    .where('id', '=', id)
    .execute();
}

export async function deleteNetworkRow(db: Db, id: string): Promise<void> {
  await db.deleteFrom('presentation_networks').where('id', '=', id).execute();
}

export function memberRows(db: Db, networkId: string): Promise<MemberRow[]> {
  return db
    .selectFrom('presentation_network_members as m')
    .innerJoin('screens as s', 's.id', 'm.screen_id')
    .select(['m.network_id', 'm.screen_id', 'm.position', 'm.leader', 's.name', 's.manifest_revision', 's.last_seen_ms', 's.expected_interval_sec'])
    .where('m.network_id', '=', networkId)
    .orderBy('m.position')
    .execute();
}

const membershipByScreen = prepared((db: Db, screenId: string) => db.selectFrom('presentation_network_members').selectAll().where('screen_id', '=', screenId));

/** The screen's network membership, if any: every manifest request asks, so it is prepared. */
export async function membershipOf(db: Db, screenId: string) {
  return (await membershipByScreen(db, screenId)).rows[0];
}

export async function replaceMembers(db: Db, networkId: string, rows: { screen_id: string; position: number; leader: number }[]): Promise<void> {
  await db.deleteFrom('presentation_network_members').where('network_id', '=', networkId).execute();
  if (rows.length)
    await db
      .insertInto('presentation_network_members')
      .values(rows.map((r) => ({ ...r, network_id: networkId })))
      .execute();
}

export async function deleteMembership(db: Db, screenId: string): Promise<void> {
  await db.deleteFrom('presentation_network_members').where('screen_id', '=', screenId).execute();
}

/** Member rows naming any of the screens, with their network's name. */
export function membershipsOf(db: Db, screenIds: readonly string[]) {
  if (screenIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('presentation_network_members as m')
    .innerJoin('presentation_networks as n', 'n.id', 'm.network_id')
    .select(['m.screen_id', 'm.network_id', 'n.name'])
    .where('m.screen_id', 'in', screenIds)
    .execute();
}

/** Which of the ids are screens. */
export async function existingScreens(db: Db, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('screens').select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

/** The networks whose leader is one of the screens, and their other members. */
export async function followersOfLeaders(db: Db, screenIds: readonly string[]): Promise<string[]> {
  if (screenIds.length === 0) return [];
  const rows = await db
    .selectFrom('presentation_network_members as m')
    .innerJoin('presentation_network_members as l', 'l.network_id', 'm.network_id')
    .select('m.screen_id')
    .where('l.leader', '=', 1)
    .where('l.screen_id', 'in', screenIds)
    .where('m.leader', '=', 0)
    .execute();
  return rows.map((r) => r.screen_id);
}
