import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

export const m0001_meta: Migration = {
  version: 1,
  name: 'meta',
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('meta')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .modifyEnd(sql`strict`)
      .execute();
  },
};
