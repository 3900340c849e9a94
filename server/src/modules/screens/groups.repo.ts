import type { Db } from '../../platform/db/database.js';
import { prepared } from '../../platform/db/prepared.js';
import type { ScreenGroupsTable } from '../../platform/db/schema.js';
import { afterCursor } from '../../platform/http/pagination.js';

export function findGroup(db: Db, id: string): Promise<ScreenGroupsTable | undefined> {
  return db.selectFrom('screen_groups').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The groups of one screen with their policies (JSON text or null), by name (then id). */
const groupPolicies = prepared((db: Db, screenId: string) =>
  db
    .selectFrom('screen_group_members')
    .innerJoin('screen_groups', 'screen_groups.id', 'screen_group_members.group_id')
    .select(['screen_groups.id', 'screen_groups.name', 'screen_groups.policy'])
    .where('screen_group_members.screen_id', '=', screenId)
    .orderBy('screen_groups.name')
    .orderBy('screen_groups.id'),
);

/** The policies of a screen's groups, first-sorting first (every heartbeat asks: prepared). */
export async function groupPoliciesOfScreen(db: Db, screenId: string): Promise<Pick<ScreenGroupsTable, 'id' | 'name' | 'policy'>[]> {
  return (await groupPolicies(db, screenId)).rows;
}

/** Groups by name (then id) after `cursor`, names containing `q` (case-insensitive): `limit + 1` rows, for toPage. */
export function listGroups(db: Db, filter: { q?: string; cursor?: string; limit: number }): Promise<ScreenGroupsTable[]> {
  let q = db
    .selectFrom('screen_groups')
    .selectAll()
    .where(afterCursor('name', 'id', 'asc', filter.cursor));
  if (filter.q) {
    const needle = filter.q.toLowerCase();
    q = q.where((eb) => eb(eb.fn('instr', [eb.fn('lower', ['name']), eb.val(needle)]), '>', 0));
  }
  return q
    .orderBy('name')
    .orderBy('id')
    .limit(filter.limit + 1)
    .execute();
}

/** The members of many groups at once, each group's by screen name (then id). */
export async function membersOfGroups(db: Db, groupIds: readonly string[]): Promise<Map<string, string[]>> {
  const members = new Map<string, string[]>(groupIds.map((id) => [id, []]));
  if (groupIds.length === 0) return members;
  const rows = await db
    .selectFrom('screen_group_members')
    .innerJoin('screens', 'screens.id', 'screen_group_members.screen_id')
    .select(['screen_group_members.group_id', 'screen_group_members.screen_id'])
    .where('group_id', 'in', [...groupIds])
    .orderBy('screens.name')
    .orderBy('screens.id')
    .execute();
  for (const r of rows) members.get(r.group_id)?.push(r.screen_id);
  return members;
}

/** A new group and its members, in one transaction. */
export async function insertGroup(db: Db, row: ScreenGroupsTable, screenIds: readonly string[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('screen_groups').values(row).execute();
    for (const s of screenIds) await trx.insertInto('screen_group_members').values({ group_id: row.id, screen_id: s, added_at: row.created_at }).execute();
  });
}

export async function updateGroup(db: Db, id: string, set: Partial<ScreenGroupsTable>): Promise<void> {
  await db.updateTable('screen_groups').set(set).where('id', '=', id).execute();
}

export async function deleteGroupRow(db: Db, id: string): Promise<void> {
  await db.deleteFrom('screen_groups').where('id', '=', id).execute();
}

/** Adds screens to a group (members already are fine) and touches it, in one transaction; answers the screens that joined. */
export async function addGroupMembers(db: Db, groupId: string, screenIds: readonly string[], now: string): Promise<string[]> {
  const added: string[] = [];
  await db.transaction().execute(async (trx) => {
    for (const s of screenIds) {
      const r = await trx
        .insertInto('screen_group_members')
        .values({ group_id: groupId, screen_id: s, added_at: now })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      if (Number(r.numInsertedOrUpdatedRows ?? 0n) > 0) added.push(s);
    }
    await trx.updateTable('screen_groups').set({ updated_at: now }).where('id', '=', groupId).execute();
  });
  return added;
}

/** Removes a screen from a group; answers whether it was a member. */
export async function removeGroupMember(db: Db, groupId: string, screenId: string): Promise<boolean> {
  const r = await db.deleteFrom('screen_group_members').where('group_id', '=', groupId).where('screen_id', '=', screenId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Which of `ids` name a group. */
export async function existingGroupIds(db: Db, ids: readonly string[]): Promise<Set<string>> {
  const rows = await db
    .selectFrom('screen_groups')
    .select('id')
    .where('id', 'in', [...ids])
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Adds one screen to groups (a membership that exists stays as it is). */
export async function joinGroups(db: Db, screenId: string, groupIds: readonly string[], now: string): Promise<void> {
  for (const g of groupIds) {
    await db
      .insertInto('screen_group_members')
      .values({ group_id: g, screen_id: screenId, added_at: now })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}

/** Every group, by name (then id). */
export function allGroups(db: Db): Promise<ScreenGroupsTable[]> {
  return db.selectFrom('screen_groups').selectAll().orderBy('name').orderBy('id').execute();
}

/** Creates the group `id` with `values`, or updates it to them (the settings import). */
export async function upsertGroup(db: Db, id: string, values: Omit<ScreenGroupsTable, 'id' | 'created_at'>, createdAt: string): Promise<void> {
  await db
    .insertInto('screen_groups')
    .values({ id, ...values, created_at: createdAt })
    .onConflict((oc) => oc.column('id').doUpdateSet(values))
    .execute();
}
