import type { Db } from '../../platform/db/database.js';
import type { SettingsTable } from '../../platform/db/schema.js';

/** The settings row (there is one, id 1, once anything was stored). */
export function settingsRow(db: Db): Promise<Pick<SettingsTable, 'data' | 'revision' | 'updated_at'> | undefined> {
  return db.selectFrom('settings').select(['data', 'revision', 'updated_at']).where('id', '=', 1).executeTakeFirst();
}

/** Writes the settings document with its revision, when and by whom (creating the row the first time). */
export async function storeSettings(db: Db, row: Omit<SettingsTable, 'id'>): Promise<void> {
  const { data, revision, updated_at, updated_by } = row;
  await db
    .insertInto('settings')
    .values({ id: 1, data, revision, updated_at, updated_by })
    .onConflict((oc) => oc.column('id').doUpdateSet({ data, revision, updated_at, updated_by }))
    .execute();
}

/** A write by the server itself (the first start's time zone): a row that exists keeps its `updated_by`. */
export async function storeSettingsByServer(db: Db, data: string, revision: number, at: string): Promise<void> {
  await db
    .insertInto('settings')
    .values({ id: 1, data, revision, updated_at: at, updated_by: null })
    .onConflict((oc) => oc.column('id').doUpdateSet({ data, revision, updated_at: at }))
    .execute();
}

/** How many users there are (whatever their state): the first start tells a fresh install from an upgrade by it. */
export async function countAllUsers(db: Db): Promise<number> {
  const users = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(users?.n ?? 0);
}
