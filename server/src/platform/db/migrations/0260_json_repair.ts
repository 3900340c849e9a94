import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';
import type { Migration } from './migration.js';

/**
 * Issue 15: before JSON bodies were bounded, a heartbeat could store a status document nested
 * beyond what SQLite's JSON functions read (about 1000 levels); every later query with
 * json_extract over the row failed, so that screen's heartbeats, manifest, assignment and
 * previews answered 500 for good. This clears what SQLite cannot read, where client
 * documents were stored unbounded: the screen's last status (the next heartbeat writes it
 * again), a command's params (emptied) and result (kept as its status with a note).
 * json_valid answers 0 for such text, it does not fail.
 */
export const m0260_json_repair: Migration = {
  version: 260,
  name: 'json_repair',
  async up(db: Kysely<any>) {
    if (isPostgres(db)) return; // repairs rows of SQLite's; a PostgreSQL database has none yet (migration.ts)
    await sql`update screens set last_status = null where last_status is not null and not json_valid(last_status)`.execute(db);
    await sql`update screen_commands set params = '{}' where not json_valid(params)`.execute(db);
    await sql`
      update screen_commands
      set result = json_object('status', state, 'message', 'The stored result could not be read and was dropped', 'output', null)
      where result is not null and not json_valid(result)`.execute(db);
  },
};
