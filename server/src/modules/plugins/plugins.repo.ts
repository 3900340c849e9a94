import { sql } from 'kysely';
/** The plugins' queries (migration 0430): installations, instances and their targets. */
import type { Db } from '../../platform/db/database.js';
import { dialectOf, sqlText } from '../../platform/db/dialect.js';
import { afterCursor } from '../../platform/http/pagination.js';
import type { PluginInstallationsTable, PluginInstancesTable } from '../../platform/db/schema/plugins.js';

export type TargetRow = { type: string; id: string };

export async function installations(db: Db): Promise<PluginInstallationsTable[]> {
  return db.selectFrom('plugin_installations').selectAll().execute();
}

export async function installation(db: Db, pluginId: string): Promise<PluginInstallationsTable | undefined> {
  return db.selectFrom('plugin_installations').selectAll().where('plugin_id', '=', pluginId).executeTakeFirst();
}

export async function instanceCounts(db: Db): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('plugin_instances')
    .select(['plugin_id', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('plugin_id')
    .execute();
  return new Map(rows.map((r) => [r.plugin_id, Number(r.n)]));
}

export async function instanceRow(db: Db, pluginId: string, id: string): Promise<PluginInstancesTable | undefined> {
  return db.selectFrom('plugin_instances').selectAll().where('id', '=', id).where('plugin_id', '=', pluginId).executeTakeFirst();
}

/** A page of a plugin's instances by name (fetch `limit + 1` for toPage). */
export async function instanceRows(db: Db, pluginId: string, cursor: string | undefined, limit: number): Promise<PluginInstancesTable[]> {
  return db
    .selectFrom('plugin_instances')
    .selectAll()
    .where('plugin_id', '=', pluginId)
    .where(afterCursor('name', 'id', 'asc', cursor))
    .orderBy('name')
    .orderBy('id')
    .limit(limit + 1)
    .execute();
}

export async function targetsOf(db: Db, instanceIds: readonly string[]): Promise<Map<string, TargetRow[]>> {
  const out = new Map<string, TargetRow[]>();
  if (instanceIds.length === 0) return out;
  const rows = await db
    .selectFrom('plugin_instance_targets')
    .selectAll()
    .where('instance_id', 'in', instanceIds)
    .orderBy('target_type')
    .orderBy('target_id')
    .execute();
  for (const r of rows) out.set(r.instance_id, [...(out.get(r.instance_id) ?? []), { type: r.target_type, id: r.target_id }]);
  return out;
}

export async function instanceIdsOf(db: Db, pluginId: string): Promise<string[]> {
  return (await db.selectFrom('plugin_instances').select('id').where('plugin_id', '=', pluginId).execute()).map((r) => r.id);
}

/** Inserts or replaces an instance with its targets, in one transaction. */
export async function saveInstance(db: Db, row: PluginInstancesTable, targets: readonly TargetRow[], replace: boolean): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (replace) {
      await trx
        .updateTable('plugin_instances')
        .set({ name: row.name, config: row.config, revision: row.revision, updated_at: row.updated_at })
        .where('id', '=', row.id)
        .execute();
      await trx.deleteFrom('plugin_instance_targets').where('instance_id', '=', row.id).execute();
    } else await trx.insertInto('plugin_instances').values(row).execute();
    if (targets.length)
      await trx
        .insertInto('plugin_instance_targets')
        .values(targets.map((t) => ({ instance_id: row.id, target_type: t.type, target_id: t.id })))
        .execute();
  });
}

/** Bumps an instance's revision when it is still `revision`; false when another change won. */
export async function claimRevision(db: Db, id: string, revision: number): Promise<boolean> {
  const r = await db
    .updateTable('plugin_instances')
    .set({ revision: revision + 1 })
    .where('id', '=', id)
    .where('revision', '=', revision)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function deleteInstances(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length) await db.deleteFrom('plugin_instances').where('id', 'in', ids).execute();
}

/** Instances of installed plugins whose targets reach any of `targets` (or all), ordered by plugin, name, id. */
export async function reachingInstances(db: Db, targets: readonly TargetRow[]): Promise<PluginInstancesTable[]> {
  return db
    .selectFrom('plugin_instances as i')
    .innerJoin('plugin_installations as p', 'p.plugin_id', 'i.plugin_id')
    .selectAll('i')
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('plugin_instance_targets as t')
          .select('t.instance_id')
          .whereRef('t.instance_id', '=', 'i.id')
          .where((e) => e.or([e('t.target_type', '=', 'all'), ...targets.map((x) => e.and([e('t.target_type', '=', x.type), e('t.target_id', '=', x.id)]))])),
      ),
    )
    .orderBy('i.plugin_id')
    .orderBy('i.name')
    .orderBy('i.id')
    .execute();
}

/** Brand-bug instances naming any of the assets (for the asset's DELETE 409). */
export async function brandBugsUsing(db: Db, assetIds: readonly string[]): Promise<{ id: string; name: string; assetId: string }[]> {
  const rows = await db
    .selectFrom('plugin_instances')
    .select(['id', 'name', sql<string>`${sql.raw(sqlText.jsonValue(dialectOf(db), 'config', '$.assetId'))}`.as('asset_id')])
    .where('plugin_id', '=', 'brand-bug')
    .execute();
  const wanted = new Set(assetIds);
  return rows.filter((r) => wanted.has(r.asset_id)).map((r) => ({ id: r.id, name: r.name, assetId: r.asset_id }));
}

/**
 * Installs the plugins not installed yet (in order, dependencies first) in one transaction;
 * `named` was asked for by name (a dependency asked for by name stops being one). Answers those added.
 */
export async function insertInstallations(
  db: Db,
  plugins: readonly { id: string; version: string }[],
  named: string,
  by: string,
  at: string,
): Promise<string[]> {
  const added: string[] = [];
  await db.transaction().execute(async (trx) => {
    for (const p of plugins) {
      const existing = await installation(trx, p.id);
      if (existing) {
        if (p.id === named && existing.as_dependency === 1)
          await trx.updateTable('plugin_installations').set({ as_dependency: 0 }).where('plugin_id', '=', p.id).execute();
        continue;
      }
      await trx
        .insertInto('plugin_installations')
        .values({ plugin_id: p.id, version: p.version, installed_at: at, installed_by: by, as_dependency: p.id === named ? 0 : 1 })
        .execute();
      added.push(p.id);
    }
  });
  return added;
}

/** Removes an installation; with `purge`, its instances too, and `alsoPurge` runs in the same transaction. */
export async function deleteInstallation(db: Db, pluginId: string, purge: boolean, alsoPurge: (trx: Db) => Promise<void>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('plugin_installations').where('plugin_id', '=', pluginId).execute();
    if (purge) {
      await trx.deleteFrom('plugin_instances').where('plugin_id', '=', pluginId).execute();
      await alsoPurge(trx);
    }
  });
}

/** The raw noise buckets, all of them (purging noise-meter). */
export async function deleteNoiseBuckets(db: Db): Promise<void> {
  await db.deleteFrom('noise_buckets').execute();
}

export async function assetKind(db: Db, assetId: string): Promise<{ kind: string; name: string } | undefined> {
  return db.selectFrom('assets').select(['kind', 'name']).where('id', '=', assetId).executeTakeFirst();
}

/** Forgets a deleted screen, group or location in the instances' targets. */
export async function forgetTarget(db: Db, kind: string, id: string): Promise<void> {
  await db.deleteFrom('plugin_instance_targets').where('target_type', '=', kind).where('target_id', '=', id).execute();
}

/** Every screen an instance names by its id (content's manifest sharing; a superset: installation is not read). */
export async function screensNamedByInstances(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('plugin_instance_targets').select('target_id').distinct().where('target_type', '=', 'screen').execute();
  return rows.map((r) => r.target_id);
}
