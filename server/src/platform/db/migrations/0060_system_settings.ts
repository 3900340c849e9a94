import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/** The server's settings: one JSON document with a revision (If-Match). */
export const m0060_system_settings: Migration = {
  version: 60,
  name: 'system_settings',
  async up(db: Kysely<any>) {
    await sql`
      create table settings (
        id integer primary key check (id = 1),
        data text not null,
        revision integer not null,
        updated_at text not null,
        updated_by text
      ) strict`.execute(db);
  },
};
