/**
 * The manifest_deps table: what each screen's last manifest build used (playlists, layouts,
 * assets, schedules, tag rules, assignments, data sources and their outputs, widgets), so a change bumps exactly the screens it alters.
 */
import { CompiledQuery } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { groupCommit } from '../screens/index.js';

/**
 * 'data-source': a source's id (deleted: every screen showing it); 'data-output': `<sourceId>/<viewKey>` (that output changed);
 * 'widget': a widget's id (its current bundle changed: edited, rebuilt with new data, deleted).
 */
export type DepKind = 'playlist' | 'layout' | 'asset' | 'schedule' | 'tag-rule' | 'assignment' | 'data-source' | 'data-output' | 'widget' | 'campaign';
export interface DepRef {
  kind: DepKind;
  id: string;
}

/** The screens whose last manifest used any of `refs`. */
export async function screensDependingOn(db: Db, refs: readonly DepRef[]): Promise<string[]> {
  if (refs.length === 0) return [];
  const rows = await db
    .selectFrom('manifest_deps')
    .select('screen_id')
    .where((eb) => eb.or(refs.map((r) => eb.and([eb('kind', '=', r.kind), eb('ref_id', '=', r.id)]))))
    .distinct()
    .execute();
  return rows.map((r) => r.screen_id);
}

/** The screens whose last manifest showed a data source, by name. */
export async function screensDependingOnSource(db: Db, sourceId: string): Promise<{ id: string; name: string }[]> {
  return db
    .selectFrom('manifest_deps as d')
    .innerJoin('screens as s', 's.id', 'd.screen_id')
    .select(['s.id', 's.name'])
    .where('d.kind', '=', 'data-source')
    .where('d.ref_id', '=', sourceId)
    .distinct()
    .orderBy('s.name')
    .execute();
}

/**
 * Replaces what the screen's manifest depends on. After one content change every screen
 * rebuilds at once, so the writes share commits (the heartbeat's group commit) instead of one
 * fsync per screen, and a set that did not change writes nothing: that is read first, outside
 * the group commit, so the usual rebuild (the same set) waits for no batch and opens no transaction.
 */
export async function replaceManifestDeps(db: Db, screenId: string, deps: readonly DepRef[]): Promise<void> {
  const want = new Set(deps.map((d) => `${d.kind}\u0000${d.id}`));
  const same = (have: readonly { kind: string; ref_id: string }[]) => have.length === want.size && have.every((r) => want.has(`${r.kind}\u0000${r.ref_id}`));
  if (same((await db.executeQuery<{ kind: string; ref_id: string }>(CompiledQuery.raw(DEPS_SQL, [screenId]))).rows)) return;
  await groupCommit(db, async (trx) => {
    if (same((await trx.executeQuery<{ kind: string; ref_id: string }>(CompiledQuery.raw(DEPS_SQL, [screenId]))).rows)) return;
    await trx.deleteFrom('manifest_deps').where('screen_id', '=', screenId).execute();
    for (let i = 0; i < deps.length; i += 300) {
      await trx
        .insertInto('manifest_deps')
        .values(deps.slice(i, i + 300).map((d) => ({ screen_id: screenId, kind: d.kind, ref_id: d.id })))
        .execute();
    }
  });
}

const DEPS_SQL = 'select kind, ref_id from manifest_deps where screen_id = ?';

/** Forgets a screen's manifest dependencies (the screen is being deleted). */
export async function deleteManifestDeps(db: Db, screenId: string): Promise<void> {
  await db.deleteFrom('manifest_deps').where('screen_id', '=', screenId).execute();
}

const NAMED_SQL = `select target_id from schedule_targets where target_type = 'screen'
  union select target_id from playlist_assignments where target_type = 'screen'`;

/** Every screen a schedule (enabled or not) or a playlist assignment names by its own id. */
export async function screensNamedDirectly(db: Db): Promise<string[]> {
  return (await db.executeQuery<{ target_id: string }>(CompiledQuery.raw(NAMED_SQL, []))).rows.map((r) => r.target_id);
}
