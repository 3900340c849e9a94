import { v7 as uuidv7 } from 'uuid';
import type { Db } from './database.js';

/** This installation's id, made once and kept in the database (and so in its backups). */
export async function ensureInstanceId(db: Db): Promise<string> {
  await db
    .insertInto('meta')
    .values({ key: 'instance_id', value: uuidv7() })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db.selectFrom('meta').select('value').where('key', '=', 'instance_id').executeTakeFirstOrThrow();
  return row.value;
}
