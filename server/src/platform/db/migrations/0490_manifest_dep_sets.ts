import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * A screen's manifest dependencies become a shared set (issue 24). `manifest_deps` held every
 * screen's refs as rows of its own: the screens of one shared build (a group showing the same
 * content) held the same rows, and a change that altered the set made every one of them
 * rewrite its rows (10,000 screens, a third of the SQL of a change's refetch burst). Now a
 * set of refs is stored once (`manifest_dep_sets`, named by a hash of its sorted refs) and a
 * screen names its set (`manifest_screen_deps`): a screen whose set changed writes one row.
 * The screen's own assignment (`assignment:<screen id>`, in every screen's refs) is implied by
 * the screen's row rather than kept in its set, so the screens of one build share one set.
 *
 * Existing rows move: each screen's refs, without its own assignment, become its set
 * (the hash is the one content/manifest.repo.ts `depSetOf` makes).
 */
export const m0490_manifest_dep_sets: Migration = {
  version: 490,
  name: 'manifest_dep_sets',
  async up(db: Kysely<any>) {
    await sql`
      create table manifest_dep_sets (
        set_id text not null,
        kind text not null,
        ref_id text not null,
        primary key (set_id, kind, ref_id)
      ) strict, without rowid`.execute(db);
    await sql`create index manifest_dep_sets_ref on manifest_dep_sets(kind, ref_id)`.execute(db);
    await sql`
      create table manifest_screen_deps (
        screen_id text primary key,
        set_id text not null
      ) strict, without rowid`.execute(db);
    await sql`create index manifest_screen_deps_set on manifest_screen_deps(set_id)`.execute(db);
    const rows = await sql<{ screen_id: string; kind: string; ref_id: string }>`
      select screen_id, kind, ref_id from manifest_deps order by screen_id`.execute(db);
    const byScreen = new Map<string, string[]>();
    for (const r of rows.rows) {
      let refs = byScreen.get(r.screen_id);
      if (!refs) byScreen.set(r.screen_id, (refs = []));
      if (!(r.kind === 'assignment' && r.ref_id === r.screen_id)) refs.push(`${r.kind}\u0000${r.ref_id}`);
    }
    const written = new Set<string>();
    for (const [screenId, refs] of byScreen) {
      const key = [...new Set(refs)].sort().join('\n');
      const setId = createHash('sha256').update(key).digest('base64url').slice(0, 22);
      if (!written.has(setId)) {
        written.add(setId);
        for (const ref of key ? key.split('\n') : []) {
          const [kind, refId] = ref.split('\u0000') as [string, string];
          await sql`insert into manifest_dep_sets (set_id, kind, ref_id) values (${setId}, ${kind}, ${refId})`.execute(db);
        }
      }
      await sql`insert into manifest_screen_deps (screen_id, set_id) values (${screenId}, ${setId})`.execute(db);
    }
    await sql`drop table manifest_deps`.execute(db);
  },
};
